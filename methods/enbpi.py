"""EnbPI-V2: ensemble batch prediction intervals (Xu & Xie 2021; docs/guide/methods.md).

B base models are fitted once, on bootstrap resamples of the training window
(iid resampling, or moving blocks of ``block_length``). The leave-one-out
prediction of training point i averages the models whose resample excludes i;
its absolute error is i's residual. A test point's prediction is the mean over
i of the leave-one-out predictions (V2: mean, where the original EnbPI takes an
order statistic); that is a fixed weighted mean of the B models. The half-width
is the (1 - alpha) quantile (linear interpolation) of the n most recent
residuals; each revealed y_t appends |y_t - y_hat_t| and drops the oldest.
The models are not refitted between steps (``refit`` keeps them) unless
``refit_models=True``.
"""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.base import Interval, IntervalMethod, register
from pibench.methods.forecasters.registry import check_forecaster, make_forecaster
from pibench.methods.param_checks import positive_int


def bootstrap_indices(n: int, n_models: int, rng: np.random.Generator, block_length: int = 1) -> np.ndarray:
    """(B, n) resampled indices: iid, or moving blocks of ``block_length`` consecutive steps."""
    if block_length <= 1:
        return rng.integers(0, n, size=(n_models, n))
    n_blocks = -(-n // block_length)
    starts = rng.integers(0, n - block_length + 1, size=(n_models, n_blocks))
    return (starts[:, :, None] + np.arange(block_length)).reshape(n_models, -1)[:, :n]


def loo_weights(indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out averaging: out (B, n) = 1{i not in resample b} and the test weights (B,).

    f_{-i} = mean over b with out[b, i]; the test prediction (1/n') sum_i f_{-i}
    over the n' points with at least one such model = sum_b v_b f_b.
    """
    B = indices.shape[0]
    inside = np.zeros((B, n), dtype=bool)
    inside[np.arange(B)[:, None], indices] = True
    out = ~inside
    counts = out.sum(axis=0)
    usable = counts > 0
    per_point = np.where(usable, out / np.maximum(counts, 1), 0.0)  # (B, n): b's share in f_{-i}
    return out, per_point[:, usable].sum(axis=1) / usable.sum()


@register
class EnbPI(IntervalMethod):
    """EnbPI-V2 with an MLP (or linear) base model."""

    name = "enbpi"
    shape = "series"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, n_models: int = 20, block_length: int = 1,
                 refit_models: bool = False, base: str = "mlp", hidden: int = 100, epochs: int = 300,
                 lr: float = 1e-3, momentum: float = 0.9, batch_size: int = 100):
        super().__init__(alpha=alpha, random_state=random_state)
        self.n_models, self.block_length, self.refit_models = n_models, block_length, refit_models
        self.base, self.hidden, self.epochs, self.lr = base, hidden, epochs, lr
        self.momentum, self.batch_size = momentum, batch_size

    def _check_param_values(self) -> None:
        super()._check_param_values()
        if self.n_models < 2:
            raise ValueError(f"n_models={self.n_models}: EnbPI needs at least 2 bootstrap models.")
        positive_int("block_length", self.block_length)
        check_forecaster(self)

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        if n_steps < max(2, self.block_length):
            raise ValueError(f"enbpi needs a window of at least max(2, block_length={self.block_length}) steps; "
                             f"got {n_steps}.")

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> EnbPI:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        self.check_params()
        n, G = data.y.shape
        rng = np.random.default_rng([self.random_state, data.start])
        idx = bootstrap_indices(n, self.n_models, rng, self.block_length)  # shared by the G series
        params = {} if self.base == "linear" else dict(hidden=self.hidden, epochs=self.epochs, lr=self.lr,
                                                       momentum=self.momentum, batch_size=self.batch_size)
        seeds = np.random.SeedSequence([self.random_state, data.start]).generate_state(self.n_models * G)
        self.model_ = make_forecaster(self.base, **params).fit(
            data.X[idx], data.y[idx], seeds=seeds.reshape(self.n_models, G).astype(np.int64))
        fitted = self.model_.predict(np.broadcast_to(data.X, (self.n_models, *data.X.shape)))  # (B, n, G)
        out, self.test_weights_ = loo_weights(idx, n)
        usable = out.any(axis=0)
        loo = np.einsum("bn,bng->ng", out / np.maximum(out.sum(axis=0), 1), fitted)[usable]
        self.residuals_ = np.abs(data.y[usable] - loo)  # (n', G), time order
        return self

    def refit(self, data: SeriesData) -> EnbPI:
        if self.refit_models:
            residuals = self.residuals_
            self.fit(data)
            self.residuals_ = residuals  # the residual stream continues
        return self

    def predict_interval(self, X: np.ndarray) -> Interval:
        per_model = self.model_.predict(np.broadcast_to(X, (self.n_models, *X.shape)))  # (B, m, G)
        point = np.einsum("b,bmg->mg", self.test_weights_, per_model)
        width = np.quantile(self.residuals_, 1 - self.alpha, axis=0)
        self.last_point_ = point
        return Interval(lower=point - width, upper=point + width, point=point)

    def update(self, y: np.ndarray) -> None:
        new = np.abs(np.asarray(y, dtype=float) - self.last_point_)
        self.residuals_ = np.concatenate([self.residuals_, new])[len(new):]
