"""NexCP on a split-conformal base forecaster (Barber, Candes, Ramdas & Tibshirani 2023; docs/guide/methods.md)."""

from __future__ import annotations

import numpy as np

from pibench.methods.base import register
from pibench.methods.calibration.nexcp import nexcp_width
from pibench.methods.param_checks import in_range
from pibench.methods.split_conformal import SplitConformalMethod


@register
class NexCP(SplitConformalMethod):
    """Weighted split conformal: calibration residuals weighted by decay^(age)."""

    name = "nexcp"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, decay: float = 0.99, **base_params):
        super().__init__(alpha=alpha, random_state=random_state, **base_params)
        self.decay = decay

    def _check_param_values(self) -> None:
        super()._check_param_values()
        in_range("decay", self.decay, 0, 1, closed_high=True)
        if self.decay <= 1 - self.alpha:  # sum of decay^i < decay / (1 - decay) <= (1 - alpha) / alpha
            raise ValueError(f"decay={self.decay:g} at alpha={self.alpha:g}: the calibration scores' weights sum to "
                             f"less than {self.decay / (1 - self.decay):.3g} however many, short of the (1 - alpha) "
                             f"/ alpha = {(1 - self.alpha) / self.alpha:.3g} a finite {1 - self.alpha:.0%} quantile "
                             f"needs, so every interval would be infinite; give decay above {1 - self.alpha:g}.")

    def _score_weight(self, n_scores: int) -> float:
        """sum_{i=1..n} decay^i, the weights of n scores beside the test point's 1 (:func:`nexcp_width`)."""
        return float(n_scores) if self.decay == 1 else self.decay * (1 - self.decay ** n_scores) / (1 - self.decay)

    def _weight_words(self, n_scores: int) -> str:
        return "" if self.decay == 1 else f" weighing {self._score_weight(n_scores):.3g} at decay={self.decay:g}"

    def _reset_online_state(self, data) -> None:
        self.n_infinite_ = 0

    def _on_refit(self, data) -> None:
        self.width_ = nexcp_width(self.calibration_scores_, self.alpha, self.decay)

    def _half_width(self) -> tuple[np.ndarray, np.ndarray]:
        self.n_infinite_ += int(np.isinf(self.width_).sum())
        return self.width_, np.zeros(self.width_.shape, dtype=bool)

    def diagnostics(self) -> dict:
        return {"n_infinite_widths": int(getattr(self, "n_infinite_", 0))}
