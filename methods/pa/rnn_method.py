"""PA with an Elman RNN on a single series: intervals plus autoregressive order selection.

SPEC §3.1 (order selection; paper section 5.2). The input at step t is the window
of lags x_t = (y_{t-1}, ..., y_{t-k}); the RNN runs over subsequences of
``seq_len`` consecutive steps and its outputs after ``burn_in`` steps are fitted
to y. Training samples are all subsequences of the training window; one
schedule unit is one iteration (a batch drawn at random). After sparsification,
lag j is selected iff an input weight of lag j survives, and the hidden-to-hidden
weights left are the "#hidden link" count (``diagnostics``). A prediction for
step t runs the RNN over the last ``seq_len`` inputs ending at x_t, so the
interval of SPEC §3.1 applies with one observation per subsequence.
"""

from __future__ import annotations

import numpy as np
import torch

from data_loaders.problems import SeriesData
from methods.base import Interval, IntervalMethod, register
from methods.forecasters.scaling import Standardizer
from methods.pa.intervals import fit_asymptotic_normal
from methods.pa.networks import AfterBurnIn, ElmanRNN, LastStep
from methods.pa.order_readout import estimated_order, hidden_links, selected_lags
from methods.pa.structure import drop_idle_units
from methods.pa.trainer import PASettings, train_pa
from methods.param_checks import one_of, positive, positive_int


@register
class PARNN(IntervalMethod):
    """Prior-annealed sparse Elman RNN: asymptotic-normal intervals and selected AR lags.

    ``init_bound`` (default 0.003): the cell's weights start U(+-init_bound), inside the
    spike's inclusion region at ``s0_init`` (the paper's priors: threshold 0.009-0.019). The
    initial phase grows what the likelihood needs and the prior holds the rest at 0; from
    torch's default scale 1/sqrt(hidden) irrelevant lags and hidden links survive (README,
    "Order selection"). ``None`` uses that default.
    """

    name = "pa_rnn"
    shape = "series"

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
        return np.ascontiguousarray(np.lib.stride_tricks.sliding_window_view(X, self.seq_len, axis=0).transpose(0, 2, 1))

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

    def fit(self, data: SeriesData) -> PARNN:
        self.check_params()
        self.check_window(data.n_steps, data.y.shape[1])
        settings = self._settings()
        X, y = data.X[:, 0, :], data.y[:, 0]
        self.x_scaler_, self.y_scaler_ = Standardizer().fit(X), Standardizer().fit(y)
        Xs, ys = self.x_scaler_.transform(X), self.y_scaler_.transform(y)
        seqs = torch.as_tensor(self._subsequences(Xs), dtype=torch.float32)
        targets = torch.as_tensor(np.ascontiguousarray(np.lib.stride_tricks.sliding_window_view(ys, self.seq_len)),
                                  dtype=torch.float32)
        seed = int(np.random.SeedSequence([self.random_state, data.start]).generate_state(1)[0])
        torch.manual_seed(seed)
        rnn = ElmanRNN(X.shape[1], self.hidden, init_bound=self.init_bound)
        masks = train_pa(AfterBurnIn(rnn, self.burn_in), seqs, targets[:, self.burn_in :], settings, seed=seed)
        compact, compact_masks = drop_idle_units(rnn, masks)  # same function and kept weights, fewer units
        self.fitted_ = fit_asymptotic_normal(LastStep(compact), compact_masks, seqs.double(), targets[:, -1].double(),
                                             hessian=self.hessian)
        self.window_ = X.shape[1]
        self.lags_ = selected_lags(masks["rnn.input.weight"].numpy())
        self.hidden_links_ = hidden_links(masks["rnn.recurrent.weight"].numpy())
        with torch.no_grad():
            point = LastStep(rnn)(seqs).numpy().astype(float)
        self.msfe_ = float(np.mean((self.y_scaler_.inverse_transform(point) - y[self.seq_len - 1 :]) ** 2))
        self.history_ = Xs[-(self.seq_len - 1):] if self.seq_len > 1 else Xs[:0]
        return self

    def predict_interval(self, X: np.ndarray) -> Interval:
        if X.shape[:2] != (1, 1):
            raise ValueError("pa_rnn predicts one step of one series at a time: X must be (1, 1, k).")
        self.history_ = np.concatenate([self.history_, self.x_scaler_.transform(X[:, 0, :])])[-self.seq_len:]
        seq = torch.as_tensor(self.history_[None], dtype=torch.float64)
        point, lower, upper = (self.y_scaler_.inverse_transform(np.asarray(v, dtype=float)).reshape(1, 1)
                               for v in self.fitted_.predict(seq, self.alpha))
        self.history_ = self.history_[1:]
        return Interval(lower=lower, upper=upper, point=point)

    def diagnostics(self) -> dict:
        if not hasattr(self, "lags_"):
            return {}
        return {"selected_lags": ",".join(str(j) for j in sorted(self.lags_)),
                "ar_order": estimated_order(self.lags_), "hidden_links": self.hidden_links_,
                "msfe": self.msfe_, "kept_weights": int(self.fitted_.n_kept), "candidate_lags": self.window_}
