"""The sequence network every set method uses (docs/guide/methods.md): LSTM encoder, linear head.

x (m, T, d) -> (m, H) for one output per horizon, or (m, H, k) for k (quantile
heads): the LSTM reads the inputs, its last hidden state goes through optional
dropout (DP-RNN's, p = 0.5) and a linear layer to all H x k outputs at once.
Variable-length inputs (NaN padding at the end, see ``SetData``) are packed, so
the LSTM reads only the observed steps of each sequence.

Training uses ``torch.nn.LSTM`` (fused kernels). PA's intervals need the
Jacobian of every output of every training sequence with respect to the kept
weights, which neither the fused kernel nor ``torch.func.vmap`` over a step-by-step
LSTM delivers fast (vmap: 45 s for 64 COVID sequences). :meth:`SequenceNet.unrolled`
gives the same function written step by step, with the same parameter names
(equal to float64 rounding; tested), and its :meth:`SequenceNet.row_jacobians`
gets them from one backward pass per output or per hidden unit, whichever are
fewer: the pass gives every row's gradient with respect to each step's gate
pre-activations, and a weight's per-row gradient is a sum over steps of outer
products of those with the step's input or previous state. The head, being linear, needs no pass at all.
"""

from __future__ import annotations

import copy

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence


class UnrolledLSTM(nn.Module):
    """One ``nn.LSTM`` layer (batch_first), step by step: gates i, f, g, o as in torch.

    c_t = sigmoid(f) c_{t-1} + sigmoid(i) tanh(g);  h_t = sigmoid(o) tanh(c_t), with
    (i, f, g, o) = W_ih x_t + b_ih + W_hh h_{t-1} + b_hh. Padded steps leave h and c as
    they were, so the returned state is that after each sequence's last observed step.
    """

    def __init__(self, lstm: nn.LSTM):
        super().__init__()
        if lstm.num_layers != 1 or lstm.bidirectional or not lstm.batch_first or lstm.proj_size:
            raise ValueError("UnrolledLSTM mirrors a single-layer, unidirectional, batch_first nn.LSTM.")
        self.hidden_size = lstm.hidden_size
        for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
            setattr(self, name, nn.Parameter(getattr(lstm, name).detach().clone()))

    def forward(self, x: torch.Tensor, weights: dict[str, torch.Tensor] | None = None,
                trace: list | None = None) -> torch.Tensor:
        """x (m, T, d) -> the last hidden state (m, hidden).

        ``weights`` (optional) replaces the parameters by name; ``trace`` (optional list)
        receives (gate pre-activations (m, 4 hidden), previous state (m, hidden)) per step.
        """
        w = weights or dict(self.named_parameters())
        observed = ~torch.isnan(x).all(-1)
        x = torch.nan_to_num(x)
        drive = x @ w["weight_ih_l0"].T + (w["bias_ih_l0"] + w["bias_hh_l0"])  # (m, T, 4 hidden)
        h = x.new_zeros(x.shape[0], self.hidden_size)
        c = x.new_zeros(x.shape[0], self.hidden_size)
        for t in range(x.shape[1]):
            gates = drive[:, t] + h @ w["weight_hh_l0"].T
            if trace is not None:
                trace.append((gates, h))
            i, f, g, o = gates.chunk(4, dim=-1)
            c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h_next = torch.sigmoid(o) * torch.tanh(c_next)
            keep = observed[:, t, None]
            h, c = torch.where(keep, h_next, h), torch.where(keep, c_next, c)
        return h


class SequenceNet(nn.Module):
    """x (m, T, d) -> (m, H) (``outputs_per_step`` = 1) or (m, H, k); see the module docstring."""

    def __init__(self, n_features: int, hidden: int, horizon: int, outputs_per_step: int = 1,
                 dropout: float = 0.0):
        super().__init__()
        self.horizon, self.k = horizon, outputs_per_step
        self.lstm: nn.LSTM | UnrolledLSTM = nn.LSTM(n_features, hidden, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, horizon * outputs_per_step)
        self.padded: bool | None = None  # whether inputs hold NaN padding; None: look at each input

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """The LSTM's hidden state after each sequence's last observed step, (m, hidden)."""
        if isinstance(self.lstm, UnrolledLSTM):
            return self.lstm(x)
        padding = torch.isnan(x).all(-1)
        inputs: torch.Tensor | PackedSequence = x
        if self.padded if self.padded is not None else bool(padding.any()):  # set once by the training loop
            lengths = (~padding).sum(1).cpu()
            inputs = pack_padded_sequence(torch.nan_to_num(x), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(inputs)
        return h[-1]

    def readout(self, state: torch.Tensor) -> torch.Tensor:
        """The outputs from the LSTM's last state (m, hidden): dropout (as the mode says), then the head."""
        out = self.head(self.dropout(state))
        return out if self.k == 1 else out.view(-1, self.horizon, self.k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(self.encode(x))

    def unrolled(self) -> SequenceNet:
        """A copy computing the same function step by step, same parameter names, with row_jacobians."""
        if not isinstance(self.lstm, nn.LSTM):
            raise TypeError("this SequenceNet is already the step-by-step twin; unroll the original.")
        twin = copy.deepcopy(self)
        twin.lstm = UnrolledLSTM(self.lstm)
        return twin

    def row_jacobians(self, params: dict[str, torch.Tensor], x: torch.Tensor) -> dict[str, torch.Tensor]:
        """{name: d out_i / d parameter, shape (m, O, *parameter shape)} for every row i of x (m, T, d),
        at ``params`` (a full set by name), O = H x k outputs; dropout off. Needs :meth:`unrolled`.

        out = W e + b with e = the LSTM's last state: d out / d W[o', j] = 1{o = o'} e_j,
        d out / d b = identity, and d out_o / d lstm = sum_j W[o, j] d e_j / d lstm. With a_t the gate
        pre-activations, d c.e / d W_ih = sum_t (d c.e / d a_t) x_t', d c.e / d W_hh = sum_t (d c.e / d a_t)
        h_{t-1}', d c.e / d b = sum_t d c.e / d a_t for a cotangent c; one backward pass of sum_i c . e_i gives
        d c.e_i / d a_t for every row i at once (rows are independent). The passes, batched, take as cotangents
        the head's O rows (then no contraction is left) or the hidden units (then W contracts the unit axis),
        whichever are fewer: 10 passes instead of 100 for EEG's LSTM-100 (20-30x faster at 256 rows on a CPU),
        20 instead of 50 for COVID's LSTM-20.
        """
        if not isinstance(self.lstm, UnrolledLSTM):
            raise TypeError("row_jacobians needs the step-by-step twin: call SequenceNet.unrolled() first.")
        m = x.shape[0]
        weights = {k: params[f"lstm.{k}"].detach().clone().requires_grad_() for k, _ in self.lstm.named_parameters()}
        trace: list = []
        W = params["head.weight"].detach()  # (O, hidden)
        n_out, hidden = W.shape
        by_output = n_out < hidden
        with torch.enable_grad():
            e = self.lstm(x, weights, trace)  # (m, hidden)
            # one cotangent per output o (a row of W) or per unit j (a row of the identity)
            rows = W if by_output else torch.eye(hidden, dtype=e.dtype, device=e.device)
            deltas = torch.autograd.grad(e, [a for a, _ in trace], grad_outputs=rows[:, None, :].expand(-1, m, -1),
                                         is_grads_batched=True)
        D = torch.stack(deltas, dim=-1).permute(1, 0, 2, 3).reshape(m, -1, len(deltas))  # (m, c x 4 hidden, T)
        inputs = torch.nan_to_num(x)  # (m, T, d)
        previous = torch.stack([h.detach() for _, h in trace], dim=1)  # (m, T, hidden)
        per_cotangent = {"weight_ih_l0": D @ inputs, "weight_hh_l0": D @ previous, "bias_ih_l0": D.sum(-1)}
        out = {}
        for k, v in per_cotangent.items():
            shape = params[f"lstm.{k}"].shape
            if not by_output:  # d out / d lstm = W (d e / d lstm): contract the unit axis j
                v = W @ v.reshape(m, hidden, -1)
            out[f"lstm.{k}"] = v.reshape(m, n_out, *shape)
        out["lstm.bias_hh_l0"] = out["lstm.bias_ih_l0"]  # only their sum acts (read only: one tensor for both)
        e = e.detach()
        eye = torch.eye(n_out, dtype=x.dtype, device=x.device)
        out["head.weight"] = eye[None, :, :, None] * e[:, None, None, :]  # (m, O, O, hidden)
        out["head.bias"] = eye.expand(m, n_out, n_out)
        return out
