"""Shared skeleton of split-conformal methods on a sliding window (docs/guide/protocols.md).

The window is split sequentially: the first half trains the base forecaster,
the second half gives the scores: absolute residuals |y - y_hat|, or with
``score = "normalized"`` those residuals over a causal scale
(:mod:`pibench.methods.calibration.score_scale`), the widths then scaled back. With
``base = "pa"`` and ``scale = "model"`` the scale is PA's own predictive sd(x_t), so the
calibrator fixes the scale of PA's band (conformalised PA). Subclasses
turn the sorted scores into half-widths (ACI, NexCP, ...) and see revealed steps in
:meth:`SplitConformalMethod._observe`; the scores and the scale live here alone.
"""

from __future__ import annotations

import itertools

import numpy as np

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.base import Interval, IntervalMethod
from pibench.methods.calibration.score_scale import EWMAScale, GARCHScale, ModelScale, RunningScale
from pibench.methods.forecasters.registry import WITH_OWN_SD, check_forecaster
from pibench.methods.forecasters.split import PrecomputedForecasts, SplitForecaster, proper_training_size
from pibench.methods.param_checks import in_range, one_of


class SplitConformalMethod(IntervalMethod):
    """Base forecaster on the first part of the window, scores on the rest.

    ``base``: "mlp" (the paper's), "linear" (least squares: the network settings change nothing) or "pa"
    (PA's sparse MLPs; their settings other
    than hidden / epochs / lr / momentum / batch_size go in ``base_params``). ``score``:
    "absolute" or "normalized" by ``scale`` "ewma", "garch" or "model" (the base's own sd).

    The base fits come from a :class:`SplitForecaster` (trained on demand) unless
    the runner hands over precomputed ones with :meth:`use_forecasts`; both give
    the same numbers.
    """

    shape = "series"

    def __init__(
        self,
        alpha: float = 0.1,
        random_state: int = 0,
        base: str = "mlp",
        calibration_fraction: float = 0.5,
        hidden: int = 100,
        epochs: int = 300,
        lr: float = 1e-3,
        momentum: float = 0.9,
        batch_size: int = 100,
        score: str = "absolute",
        scale: str = "ewma",
        scale_decay: float = 0.9,
        base_params: dict | None = None,
    ):
        super().__init__(alpha=alpha, random_state=random_state)
        self.base = base
        self.calibration_fraction = calibration_fraction
        self.hidden, self.epochs, self.lr = hidden, epochs, lr
        self.momentum, self.batch_size = momentum, batch_size
        self.score, self.scale, self.scale_decay = score, scale, scale_decay
        self.base_params = base_params

    def split_forecaster(self) -> SplitForecaster:
        """The base-model configuration; methods with equal ones can share fits."""
        params = {} if self.base == "linear" else dict(
            hidden=self.hidden, epochs=self.epochs, lr=self.lr, momentum=self.momentum, batch_size=self.batch_size,
            **(self.base_params or {}))
        return SplitForecaster(base=self.base, base_params=tuple(sorted(params.items())),
                               calibration_fraction=self.calibration_fraction, random_state=int(self.random_state))

    def _check_param_values(self) -> None:
        super()._check_param_values()
        in_range("calibration_fraction", self.calibration_fraction, 0, 1)
        one_of("score", self.score, ("absolute", "normalized"))
        one_of("scale", self.scale, ("ewma", "garch", "model"))
        if self.scale != "ewma" and self.score != "normalized":
            raise ValueError(f"scale={self.scale!r} divides normalized scores; set score = \"normalized\" too.")
        if self.scale == "model" and self.base not in WITH_OWN_SD:
            raise ValueError(f"scale=\"model\" is the base forecaster's own predictive sd; base={self.base!r} has "
                             f"none. Use base = {' or '.join(repr(b) for b in WITH_OWN_SD)}, or another scale.")
        in_range("scale_decay", self.scale_decay, 0, 1, closed_high=True)
        check_forecaster(self)

    @property
    def shares_base_fits(self) -> bool:
        """Whether the runner may hand over precomputed base fits (they carry points, not a model's sd)."""
        return not (self.score == "normalized" and self.scale == "model")

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        proper_training_size(n_steps, self.calibration_fraction)

    #: Whether the intervals are a quantile of the window's calibration scores (ACI, NexCP: a window of too few
    #: scores for the level cannot cover), not an online radius the scores only start.
    reads_a_score_quantile = True

    def window_note(self, n_steps: int) -> str | None:
        """Where a window's calibration part has fewer scores than the (1 - alpha) quantile of split conformal
        needs to be finite, ceil((n + 1)(1 - alpha)) <= n (Lei et al. 2018), i.e. n >= (1 - alpha) / alpha
        (:meth:`_score_weight`: their weight in the quantile): the quantile is then below the conformal one (too
        short, ACI at gamma = 0 covering 37% for 90%) or, as ACI's level moves, infinite."""
        need = (1 - self.alpha) / self.alpha - 1e-9
        have = self._calibration_scores(n_steps)
        if not self.reads_a_score_quantile or self._score_weight(have) >= need:
            return None
        enough = next(w for w in itertools.count(n_steps + 1)
                      if self._score_weight(self._calibration_scores(w)) >= need)
        return (f"window={n_steps} leaves {self.name} {have} calibration scores (calibration_fraction="
                f"{self.calibration_fraction:g}){self._weight_words(have)}, fewer than the "
                f"{(1 - self.alpha) / self.alpha:.3g} that a finite {1 - self.alpha:.0%} conformal quantile needs: its "
                f"intervals will be too short, or infinite; give a window of at least {enough} steps or a larger "
                "calibration_fraction")

    def _calibration_scores(self, n_steps: int) -> int:
        """How many calibration scores a window of ``n_steps`` steps gives."""
        return n_steps - proper_training_size(n_steps, self.calibration_fraction)

    def _score_weight(self, n_scores: int) -> float:
        """The weight ``n_scores`` calibration scores carry in the quantile, the test point's being 1 (n)."""
        return float(n_scores)

    def _weight_words(self, n_scores: int) -> str:
        """How :meth:`window_note` says their weight where it is not their number ("")."""
        return ""

    def use_forecasts(self, forecasts: PrecomputedForecasts) -> SplitConformalMethod:
        self.forecasts_ = forecasts
        return self

    def refit(self, data: SeriesData) -> SplitConformalMethod:
        """Fit (or look up) the base model of this window and sort its calibration scores."""
        self.check_params()
        source = getattr(self, "forecasts_", None) or self.split_forecaster()
        self.window_fit_ = source.fit(data)
        residuals = self.window_fit_.residuals  # (n_cal, G), time order
        scale = self._score_scale()
        if isinstance(scale, ModelScale):
            if self.window_fit_.calibration_sd is None:
                raise RuntimeError(f"{self.name}: scale=\"model\" needs a base fit with its own sd.")
            scale.use_window(self.window_fit_.calibration_sd)
        self.calibration_scores_ = residuals if scale is None else scale.score(residuals)
        self.sorted_scores_ = np.sort(self.calibration_scores_, axis=0)
        self.ahead_: _Ahead | None = None
        self._on_refit(data)
        return self

    def anticipate(self, X: np.ndarray) -> None:
        """With ``scale = "model"``, the base's points and sds of the coming steps in one batch (on a GPU one
        pass instead of one per step; equal to the step-by-step values up to float rounding). They are
        used only for the very inputs anticipated, in order (:meth:`_point`)."""
        fit = self.window_fit_
        if isinstance(self._score_scale(), ModelScale) and fit.predict_sd is not None and len(X):
            self.ahead_ = _Ahead(X.copy(), fit.predict(X), fit.predict_sd(X))

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> SplitConformalMethod:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        scales = {"ewma": lambda: EWMAScale(self.scale_decay), "garch": GARCHScale, "model": ModelScale}
        self.scale_ = None if self.score == "absolute" else scales[self.scale]()
        self._reset_online_state(data)
        return self.refit(data)

    # -- scores: absolute residuals, or normalized by a causal scale (methods.calibration.score_scale) --
    def _score_scale(self) -> RunningScale | None:
        """The running scale of normalized scores (None: absolute scores, or before ``fit``)."""
        return getattr(self, "scale_", None)

    def _to_raw_width(self, width: np.ndarray) -> np.ndarray:
        """A half-width on the score scale -> target units (times the current scale when normalized)."""
        scale = self._score_scale()
        return width if scale is None else width * scale.current()

    def revealed_scores(self, y: np.ndarray) -> np.ndarray:
        """(G,) the scores of the revealed step: |y - y_hat|, over the scale when normalized."""
        residual = np.abs(np.asarray(y, dtype=float)[0] - self.last_point_[0])
        scale = self._score_scale()
        return residual if scale is None else residual / scale.current()

    def update(self, y: np.ndarray) -> None:
        """Reveal y to the method's calibrator (:meth:`_observe`), then to the score scale."""
        self._observe(y)
        scale = self._score_scale()
        if scale is not None:
            scale.update(np.abs(np.asarray(y, dtype=float)[0] - self.last_point_[0]))

    def _observe(self, y: np.ndarray) -> None:
        """The method's online update with the revealed y (nothing by default)."""

    def _reset_online_state(self, data: SeriesData) -> None:
        """Start the online state afresh (nothing by default)."""

    def _on_refit(self, data: SeriesData) -> None:
        """Hook after each new base fit (nothing by default)."""

    def _half_width(self) -> tuple[np.ndarray, np.ndarray]:
        """(G,) half-widths and (G,) empty-interval mask for the next step."""
        raise NotImplementedError

    def _point(self, X: np.ndarray) -> np.ndarray:
        """(m, G) the base forecasts of X; with ``scale = "model"`` (one row) also hands the model's sd for
        that step to the scale (every ``predict_interval`` goes through here)."""
        scale = self._score_scale()
        if isinstance(scale, ModelScale):
            if X.shape[0] != 1:
                raise ValueError(f"{self.name} with scale=\"model\" predicts one step at a time; call update(y) "
                                 "between steps.")
            if self.window_fit_.predict_sd is None:
                raise RuntimeError(f"{self.name}: scale=\"model\" needs a base fit with its own sd.")
            if self.ahead_ is not None and self.ahead_.is_next(X):  # refit set it: None, or anticipate's
                point, sd = self.ahead_.take()
                scale.at(sd)
                return point[None]
            scale.at(self.window_fit_.predict_sd(X)[0])
        return self.window_fit_.predict(X)

    def predict_interval(self, X: np.ndarray) -> Interval:
        point = self._point(X)
        width, empty = self._half_width()
        width = self._to_raw_width(width)
        self.last_ = (point - width, point + width, np.broadcast_to(empty, point.shape))
        self.last_point_ = point
        return Interval(lower=point - width, upper=point + width, point=point)


class _Ahead:
    """Base points and sds computed ahead for the inputs X (m, G, p) of the coming steps, served in order."""

    def __init__(self, X: np.ndarray, points: np.ndarray, sds: np.ndarray) -> None:
        self.X, self.points, self.sds, self.next = X, points, sds, 0

    def is_next(self, X: np.ndarray) -> bool:
        """Whether X (1, G, p) is the next anticipated step's input."""
        return self.next < len(self.X) and np.array_equal(X[0], self.X[self.next])

    def take(self) -> tuple[np.ndarray, np.ndarray]:
        self.next += 1
        return self.points[self.next - 1], self.sds[self.next - 1]
