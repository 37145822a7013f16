"""AgACI: online aggregation of ACI experts over a grid of gammas (Zaffran et al. 2022; docs/guide/methods.md)."""

from __future__ import annotations

import numpy as np

from pibench.methods.base import Interval, register
from pibench.methods.calibration.aci import aci_errors, aci_next_alpha, aci_width
from pibench.methods.calibration.boa import BernsteinOnlineAggregation
from pibench.methods.split_conformal import SplitConformalMethod

#: Zaffran et al. (2022): 0, 5e-6, 5e-5, 1e-4..9e-4, 1e-3..9e-3, 0.01..0.09 (30 values).
GAMMA_GRID = (
    (0.0, 5e-6, 5e-5)
    + tuple(k * 1e-4 for k in range(1, 10))
    + tuple(k * 1e-3 for k in range(1, 10))
    + tuple(k * 1e-2 for k in range(1, 10))
)


@register
class AgACI(SplitConformalMethod):
    """Aggregated ACI: experts at every gamma of the grid, combined by online aggregation.

    The experts' lower and upper bounds are aggregated separately by BOA on the
    pinball loss (levels alpha/2 and 1 - alpha/2).

    Infinite expert bounds are replaced before aggregating by a finite cap: the
    current window's target range widened by its span on each side (per series),
    or the widest finite expert's bound where that is wider, so that an expert
    covering everything is never the narrowest. Finite bounds are aggregated as
    they are (docs/guide/methods.md).
    """

    name = "agaci"
    may_cross = True  # its bounds are estimated apart; diagnostics count the crossings

    def __init__(self, alpha: float = 0.1, random_state: int = 0, gammas: tuple = GAMMA_GRID, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.gammas = gammas

    def _check_param_values(self) -> None:
        super()._check_param_values()
        gammas = np.asarray(self.gammas, dtype=float)
        if gammas.ndim != 1 or len(gammas) < 1 or not (gammas >= 0).all():
            raise ValueError(f"gammas={self.gammas!r} must list the experts' gammas, each >= 0.")

    def _reset_online_state(self, data) -> None:
        K, G = len(self.gammas), data.y.shape[1]
        self.gamma_ = np.asarray(self.gammas, dtype=float)[:, None]  # (K, 1)
        self.alpha_t_ = np.full((K, G), float(self.alpha))
        self.boa_lower_ = BernsteinOnlineAggregation(K, (G,), self.alpha / 2)
        self.boa_upper_ = BernsteinOnlineAggregation(K, (G,), 1 - self.alpha / 2)
        self.n_crossed_ = 0

    def _on_refit(self, data) -> None:
        lo, hi = data.y.min(axis=0), data.y.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        self.cap_ = (lo - span, hi + span)

    def predict_interval(self, X: np.ndarray) -> Interval:
        if X.shape[0] != 1:
            raise ValueError("agaci predicts one step at a time; call update(y) between steps.")
        point = self._point(X)[0]  # (G,)
        width, empty = aci_width(self.sorted_scores_, self.alpha_t_)  # (K, G)
        width = self._to_raw_width(width)
        infinite = np.isinf(width)  # only infinite bounds are capped (a NaN stays, and the interval says so)
        lower_k, upper_k = point - width, point + width
        # the cap, widened to the widest finite expert: an expert that covers everything is never the narrowest
        cap_lower = np.fmin(self.cap_[0], np.where(infinite, np.inf, lower_k).min(axis=0))
        cap_upper = np.fmax(self.cap_[1], np.where(infinite, -np.inf, upper_k).max(axis=0))
        lower_k = np.where(infinite, cap_lower, lower_k)
        upper_k = np.where(infinite, cap_upper, upper_k)
        lower, upper = self.boa_lower_.predict(lower_k), self.boa_upper_.predict(upper_k)
        self.n_crossed_ += int((lower > upper).sum())
        self.experts_ = (point - width, point + width, empty, lower_k, upper_k, lower, upper)
        self.last_point_ = point[None]
        return Interval(lower=lower[None], upper=upper[None], point=point[None])

    def _observe(self, y: np.ndarray) -> None:
        y = np.asarray(y, dtype=float)[0]
        raw_lower, raw_upper, empty, lower_k, upper_k, lower, upper = self.experts_
        err = aci_errors(y, raw_lower, raw_upper, empty)
        self.alpha_t_ = aci_next_alpha(self.alpha_t_, self.alpha, self.gamma_, err)
        self.boa_lower_.update(lower_k, y, forecast=lower)
        self.boa_upper_.update(upper_k, y, forecast=upper)

    def diagnostics(self) -> dict:
        return {"n_crossed": int(getattr(self, "n_crossed_", 0))}
