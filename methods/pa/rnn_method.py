"""PA with an Elman RNN on a single series: intervals plus autoregressive order selection.

Paper section 5.2 (order selection). The input at step t is the window
of lags x_t = (y_{t-1}, ..., y_{t-k}); the RNN runs over subsequences of
``seq_len`` consecutive steps and its outputs after ``burn_in`` steps are fitted
to y. Training samples are all subsequences of the training window; one
schedule unit is one iteration (a batch drawn at random). After sparsification,
lag j is selected iff an input weight of lag j survives, and the hidden-to-hidden
weights left are the "#hidden link" count (``diagnostics``). A prediction for
step t runs the RNN over the last ``seq_len`` inputs ending at x_t, so the
interval of paper section 3.2 applies with one observation per subsequence.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import torch

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.base import Interval, IntervalMethod, register
from pibench.methods.forecasters.scaling import Standardizer
from pibench.methods.pa.intervals import HessianKind, fit_asymptotic_normal
from pibench.methods.pa.networks import AfterBurnIn, ElmanRNN, LastStep, StackedElmanRNNs
from pibench.methods.pa.order_readout import estimated_order, hidden_links, selected_lags
from pibench.methods.pa.structure import drop_idle_units
from pibench.methods.pa.trainer import PASettings, train_pa
from pibench.methods.param_checks import one_of, positive, positive_int


@register
class PARNN(IntervalMethod):
    """Prior-annealed sparse Elman RNN: asymptotic-normal intervals and selected AR lags.

    ``init_bound`` (default 0.003): the cell's weights start U(+-init_bound), inside the
    spike's inclusion region at ``s0_init`` (the paper's priors: threshold 0.009-0.019). The
    initial phase grows what the likelihood needs and the prior holds the rest at 0; from
    torch's default scale 1/sqrt(hidden) irrelevant lags and hidden links survive
    (docs/reproductions/order-selection.md). ``None`` uses that default.
    """

    name = "pa_rnn"
    shape = "series"
    serves_spans = True
    #: left by :meth:`fit_together` for the next :meth:`fit` of that window: (window start, network, masks,
    #: what train_pa said of how it trained)
    trained_together_: tuple[int, ElmanRNN, dict[str, torch.Tensor], dict]

    def __init__(self, alpha: float = 0.1, random_state: int = 0, hidden: int = 1000, seq_len: int = 20,
                 burn_in: int = 5, iterations: int = 25000, lr: float = 1e-3, momentum: float = 0.9,
                 batch_size: int = 36, T1: int = 5000, T2: int = 10000, T3: int = 25000, s1: float = 0.05,
                 s0_init: float = 4e-6, s0_end: float = 1e-7, lam: float = 1e-7, tau: float = 0.1,
                 refine_iterations: int = 2000, hessian: str = "ggn", init_bound: float | None = 0.003):
        super().__init__(alpha=alpha, random_state=random_state)
        self.hidden, self.seq_len, self.burn_in, self.iterations = hidden, seq_len, burn_in, iterations
        self.lr, self.momentum, self.batch_size = lr, momentum, batch_size
        self.T1, self.T2, self.T3, self.s1, self.s0_init, self.s0_end = T1, T2, T3, s1, s0_init, s0_end
        self.lam, self.tau, self.refine_iterations, self.hessian = lam, tau, refine_iterations, hessian
        self.init_bound = init_bound

    def _subsequences(self, X: np.ndarray) -> np.ndarray:
        """(n, k) inputs -> (n - seq_len + 1, seq_len, k) windows of consecutive steps."""
        windows = np.lib.stride_tricks.sliding_window_view(X, self.seq_len, axis=0)
        return np.array(windows.transpose(0, 2, 1), order="C")  # a copy: the view is read-only

    def _settings(self) -> PASettings:
        return PASettings(epochs=self.iterations, lr=self.lr, momentum=self.momentum, batch_size=self.batch_size,
                          T1=self.T1, T2=self.T2, T3=self.T3, s1=self.s1, s0_init=self.s0_init,
                          s0_end=self.s0_end, lam=self.lam, tau=self.tau, refine_epochs=self.refine_iterations,
                          unit="iteration")

    def _check_param_values(self) -> None:
        super()._check_param_values()
        positive_int("hidden", self.hidden)
        positive_int("seq_len", self.seq_len)
        if not 0 <= self.burn_in < self.seq_len:
            raise ValueError(f"need 0 <= burn_in < seq_len; got burn_in={self.burn_in}, seq_len={self.seq_len}.")
        one_of("hessian", self.hessian, ("auto", "exact", "ggn"))
        if self.init_bound is not None:
            positive("init_bound", self.init_bound)
        self._settings().check()

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        if n_groups != 1:
            raise ValueError(f"pa_rnn models a single series (G = 1); this problem has {n_groups} series.")
        if self.seq_len > n_steps // 2:
            raise ValueError(f"pa_rnn needs seq_len <= n/2; got seq_len={self.seq_len} for a window of {n_steps} "
                             "steps. Use a longer window or a shorter seq_len.")

    def _training_set(self, data: SeriesData) -> tuple[torch.Tensor, torch.Tensor, int]:
        """Check, fit the scalers; the window's subsequences (N, seq_len, k), their targets (N, seq_len)
        and the fit's seed."""
        self.check_params()
        self.check_window(data.n_steps, data.y.shape[1])
        X, y = data.X[:, 0, :], data.y[:, 0]
        self.x_scaler_, self.y_scaler_ = Standardizer().fit(X), Standardizer().fit(y)
        Xs, ys = self.x_scaler_.transform(X), self.y_scaler_.transform(y)
        seqs = torch.as_tensor(self._subsequences(Xs), dtype=torch.float32)
        targets = torch.as_tensor(np.array(np.lib.stride_tricks.sliding_window_view(ys, self.seq_len), order="C"),
                                  dtype=torch.float32)
        self.history_ = Xs[-(self.seq_len - 1):] if self.seq_len > 1 else Xs[:0]
        return seqs, targets, int(np.random.SeedSequence([self.random_state, data.start]).generate_state(1)[0])

    def _initial_rnn(self, window: int, seed: int) -> ElmanRNN:
        torch.manual_seed(seed)
        return ElmanRNN(window, self.hidden, init_bound=self.init_bound)

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> PARNN:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        seqs, targets, seed = self._training_set(data)
        from_cell = self._take_from_cell(data.start)
        info: dict = {}
        if from_cell is not None:
            rnn, masks, info = from_cell
        else:
            rnn = self._initial_rnn(seqs.shape[2], seed)
            masks = train_pa(AfterBurnIn(rnn, self.burn_in), seqs, targets[:, self.burn_in :], self._settings(),
                             seed=seed, info=info)
        self.train_step_ = info.get("train_step", "eager")
        compact, compact_masks = drop_idle_units(rnn, masks)  # same function and kept weights, fewer units
        hessian = cast(HessianKind, self.hessian)  # checked against the kinds by check_params
        self.fitted_ = fit_asymptotic_normal(LastStep(compact), compact_masks, seqs.double(), targets[:, -1].double(),
                                             hessian=hessian)
        self.window_ = seqs.shape[2]
        self.lags_ = selected_lags(masks["rnn.input.weight"].numpy())
        self.hidden_links_ = hidden_links(masks["rnn.recurrent.weight"].numpy())
        with torch.no_grad():
            point = LastStep(rnn)(seqs).numpy().astype(float)
        y = data.y[self.seq_len - 1 :, 0]
        self.msfe_ = float(np.mean((self.y_scaler_.inverse_transform(point) - y) ** 2))
        return self

    @classmethod
    def fit_together(cls, methods: list[PARNN], datas: list[SeriesData]) -> None:
        """Train the networks of several fits as one batched network (an order-selection cell on a GPU).

        Member b keeps its own seed, initial weights, minibatches and SGHMC noise
        (:class:`~pibench.methods.pa.networks.StackedElmanRNNs`), so it gets the network it would get
        alone up to the rounding of the batched kernels; ``methods[b].fit(datas[b])`` then
        uses it. The fits must share every setting but the seed, and their data shapes.
        """
        cls._check_cell(methods)
        sets = [m._training_set(d) for m, d in zip(methods, datas)]
        if len({s[0].shape for s in sets}) > 1:
            raise ValueError("pa_rnn fits train together only on equally long windows.")
        first = methods[0]
        rnns = [m._initial_rnn(seqs.shape[2], seed) for m, (seqs, _, seed) in zip(methods, sets)]
        stack = StackedElmanRNNs.from_members(rnns, first.burn_in)
        X = torch.stack([seqs for seqs, _, _ in sets], dim=1)
        Y = torch.stack([targets[:, first.burn_in :] for _, targets, _ in sets], dim=1)
        info: dict = {}
        masks = train_pa(stack, X, Y, first._settings(), seed=[seed for _, _, seed in sets], info=info)
        for b, (method, data) in enumerate(zip(methods, datas)):
            method.trained_together_ = (data.start, stack.member(b), stack.member_masks(masks, b), info)

    def predict_interval(self, X: np.ndarray) -> Interval:
        """Intervals for consecutive steps X (m, 1, k): step t's subsequence is the ``seq_len`` inputs ending at
        x_t (the fit window's last ones first), all m in one batch (``serves_spans``)."""
        if X.ndim != 3 or X.shape[1:] != (1, self.window_):
            raise ValueError(f"pa_rnn predicts steps of one series: X must be (m, 1, {self.window_}), got "
                             f"{X.shape}.")
        inputs = np.concatenate([self.history_, self.x_scaler_.transform(X[:, 0, :])])
        seqs = torch.as_tensor(self._subsequences(inputs), dtype=torch.float64)
        point, lower, upper = (self.y_scaler_.inverse_transform(np.asarray(v, dtype=float).reshape(-1, 1))
                               for v in self.fitted_.predict(seqs, self.alpha))
        self.history_ = inputs[len(inputs) - (self.seq_len - 1):]
        return Interval(lower=lower, upper=upper, point=point)

    def diagnostics(self) -> dict:
        if not hasattr(self, "lags_"):
            return {}
        return {"selected_lags": ",".join(str(j) for j in sorted(self.lags_)),
                "ar_order": estimated_order(self.lags_), "hidden_links": self.hidden_links_,
                "msfe": self.msfe_, "kept_weights": int(self.fitted_.n_kept), "candidate_lags": self.window_,
                # how training ran on a GPU (CUDA graphs, or why not); absent on the CPU
                **({"train_step": step} if (step := getattr(self, "train_step_", "eager")) != "eager" else {})}
