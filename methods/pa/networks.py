"""Networks PA trains (paper section 5): MLP (fesp), Elman RNN (order selection), LSTM (sets).

Each maps a batch of inputs to (m,) or (m, H) outputs, so that the PA trainer and
the interval construction treat them alike.
"""

from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    """x (m, p) -> (m,) or (m, H): one hidden layer (paper fesp: 100 sigmoid units)."""

    def __init__(self, n_features: int, hidden: int = 100, outputs: int = 1, activation: str = "sigmoid"):
        super().__init__()
        self.hidden = nn.Linear(n_features, hidden)
        self.out = nn.Linear(hidden, outputs)
        self.act = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu}[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.out(self.act(self.hidden(x)))
        return y.squeeze(-1) if y.shape[-1] == 1 else y


class StackedMLPs(nn.Module):
    """G independent one-output MLPs trained as one module: x (m, G, p) -> (m, G).

    Group g's weights are slice g of every parameter, each initialised like the
    ``nn.Linear`` layers of :class:`MLP`. ``n_independent = G`` tells the PA trainer to
    sum the G per-group mean losses (so each group's gradient is its own); prior,
    noise, thresholding and masks act entry by entry, so training the stack is
    training G separate networks in one pass. :meth:`group` returns group g as an
    :class:`MLP` (for the interval construction).
    """

    def __init__(self, groups: int, n_features: int, hidden: int = 100, activation: str = "sigmoid"):
        super().__init__()
        self.n_independent = groups
        self.activation = activation
        self.act = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu}[activation]
        b_in, b_out = n_features ** -0.5, hidden ** -0.5
        self.hidden_weight = nn.Parameter(torch.empty(groups, hidden, n_features).uniform_(-b_in, b_in))
        self.hidden_bias = nn.Parameter(torch.empty(groups, hidden).uniform_(-b_in, b_in))
        self.out_weight = nn.Parameter(torch.empty(groups, hidden).uniform_(-b_out, b_out))
        self.out_bias = nn.Parameter(torch.empty(groups).uniform_(-b_out, b_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(torch.einsum("mgp,ghp->mgh", x, self.hidden_weight) + self.hidden_bias)
        return (h * self.out_weight).sum(-1) + self.out_bias

    def group(self, g: int) -> MLP:
        """Group g as a standalone :class:`MLP` (a copy) with parameter names hidden.* / out.*."""
        groups, hidden, p = self.hidden_weight.shape
        mlp = MLP(p, hidden, activation=self.activation).to(self.hidden_weight.dtype)
        with torch.no_grad():
            mlp.hidden.weight.copy_(self.hidden_weight[g])
            mlp.hidden.bias.copy_(self.hidden_bias[g])
            mlp.out.weight.copy_(self.out_weight[g][None])
            mlp.out.bias.copy_(self.out_bias[g][None])
        return mlp

    def group_masks(self, masks: dict[str, torch.Tensor], g: int) -> dict[str, torch.Tensor]:
        """The stack's masks restricted to group g, named as in :meth:`group`'s MLP."""
        return {"hidden.weight": masks["hidden_weight"][g], "hidden.bias": masks["hidden_bias"][g],
                "out.weight": masks["out_weight"][g][None], "out.bias": masks["out_bias"][g][None]}


class ElmanRNN(nn.Module):
    """x (m, T, k) -> (m,): h_t = tanh(W x_t + V h_{t-1} + b), output from the last state.

    Input k is the window of lags fed at each step (the paper's window size); the
    hidden-to-hidden matrix V is what order selection counts ("#hidden link").
    Initialisation as ``torch.nn.RNN``: every recurrent-cell weight and bias
    U(-b, b) with b = ``init_bound`` (default 1/sqrt(hidden)), whatever the window;
    the read-out is an ``nn.Linear``. Pruning depends on this scale: the spike prior
    pulls only weights inside its inclusion region, so PA-RNN starts the cell there
    (``pibench.methods.pa.rnn_method.PARNN``).
    """

    def __init__(self, window: int, hidden: int = 1000, outputs: int = 1, init_bound: float | None = None):
        super().__init__()
        self.input = nn.Linear(window, hidden)
        self.recurrent = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Linear(hidden, outputs)
        bound = hidden ** -0.5 if init_bound is None else float(init_bound)
        with torch.no_grad():
            for p in (self.input.weight, self.input.bias, self.recurrent.weight):
                p.uniform_(-bound, bound)

    def forward_sequence(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs at every step: x (m, T, k) -> (m, T), the state starting at 0."""
        h = torch.zeros(x.shape[0], self.recurrent.in_features, dtype=x.dtype, device=x.device)
        drive = self.input(x)  # (m, T, hidden)
        states = []
        for t in range(x.shape[1]):
            h = torch.tanh(drive[:, t] + self.recurrent(h))
            states.append(h)
        return self.out(torch.stack(states, dim=1)).squeeze(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_sequence(x)[:, -1]


class StackedElmanRNNs(nn.Module):
    """B independent :class:`ElmanRNN` s trained as one module, outputs after ``burn_in`` steps:
    x (m, B, T, k) -> (m, B, T - burn_in), member b reading x[:, b].

    Member b's weights are slice b of every parameter, listed in :class:`ElmanRNN`'s
    parameter order, so that SGHMC draws each member's noise in the order it would
    alone; every product is a batched matmul over the members, so a member's numbers
    do not depend on how many others train beside it (``tests/test_pa_rnn_cell.py``).
    Built from the members' initial networks (:meth:`from_members`); :meth:`member`
    and :meth:`member_masks` hand member b back as an ElmanRNN and its masks.
    """

    def __init__(self, members: int, window: int, hidden: int, burn_in: int):
        super().__init__()
        self.n_independent, self.burn_in = members, burn_in
        self.input_weight = nn.Parameter(torch.zeros(members, hidden, window))
        self.input_bias = nn.Parameter(torch.zeros(members, hidden))
        self.recurrent_weight = nn.Parameter(torch.zeros(members, hidden, hidden))
        self.out_weight = nn.Parameter(torch.zeros(members, 1, hidden))
        self.out_bias = nn.Parameter(torch.zeros(members, 1))

    #: (stacked parameter, the ElmanRNN parameter it stacks), in ElmanRNN's order
    PARTS = (("input_weight", "input.weight"), ("input_bias", "input.bias"),
             ("recurrent_weight", "recurrent.weight"), ("out_weight", "out.weight"), ("out_bias", "out.bias"))

    @classmethod
    def from_members(cls, rnns: list[ElmanRNN], burn_in: int) -> StackedElmanRNNs:
        first = rnns[0]
        if first.out.out_features != 1:
            raise ValueError("stacked Elman RNNs have one output each.")
        stack = cls(len(rnns), first.input.in_features, first.recurrent.in_features, burn_in)
        with torch.no_grad():
            for stacked, single in cls.PARTS:
                getattr(stack, stacked).copy_(torch.stack([r.get_parameter(single) for r in rnns]))
        return stack

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, B, T, k = x.shape
        drive = torch.baddbmm(self.input_bias[:, None, :], x.transpose(0, 1).reshape(B, m * T, k),
                              self.input_weight.transpose(1, 2)).view(B, m, T, -1)
        h = torch.zeros(B, m, self.recurrent_weight.shape[1], dtype=x.dtype, device=x.device)
        recurrent_t = self.recurrent_weight.transpose(1, 2)
        states = []
        for t in range(T):
            h = torch.tanh(drive[:, :, t] + torch.bmm(h, recurrent_t))
            if t >= self.burn_in:
                states.append(h)
        S = torch.stack(states, dim=2)  # (B, m, T', hidden)
        # a product-sum, not a matrix-vector product: its kernel does not change with B
        out = (S * self.out_weight[:, None]).sum(-1) + self.out_bias[:, None]
        return out.transpose(0, 1)

    def member(self, b: int) -> ElmanRNN:
        """Member b as a standalone :class:`ElmanRNN` (a copy, same dtype)."""
        _, hidden, window = self.input_weight.shape
        rnn = ElmanRNN(window, hidden).to(self.input_weight.dtype)
        with torch.no_grad():
            for stacked, single in self.PARTS:
                rnn.get_parameter(single).copy_(getattr(self, stacked)[b])
        return rnn

    def member_masks(self, masks: dict[str, torch.Tensor], b: int, prefix: str = "rnn.") -> dict[str, torch.Tensor]:
        """The stack's masks restricted to member b, named ``prefix`` + ElmanRNN parameter name."""
        return {prefix + single: masks[stacked][b] for stacked, single in self.PARTS}


class AfterBurnIn(nn.Module):
    """Training view of a recurrent net: outputs of the steps after the first ``burn_in``
    (the paper uses outputs only once the state has accumulated enough past)."""

    def __init__(self, rnn: ElmanRNN, burn_in: int):
        super().__init__()
        self.rnn, self.burn_in = rnn, burn_in

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn.forward_sequence(x)[:, self.burn_in :]


class LastStep(nn.Module):
    """Prediction view: the output of the last step only (same parameter names as AfterBurnIn)."""

    def __init__(self, rnn: ElmanRNN):
        super().__init__()
        self.rnn = rnn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rnn(x)


class LSTMForecaster(nn.Module):
    """x (m, T, d) -> (m, H): an LSTM encoder and a linear head on the last hidden state."""

    def __init__(self, n_features: int = 1, hidden: int = 20, horizon: int = 1):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)
        self.out = nn.Linear(hidden, horizon)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, (h, _) = self.lstm(x)
        y = self.out(h[-1])
        return y.squeeze(-1) if y.shape[-1] == 1 else y
