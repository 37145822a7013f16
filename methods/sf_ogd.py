"""SF-OGD: scale-free online gradient descent on the pinball loss of the radius (Bhatnagar et al., ICML 2023)."""

from __future__ import annotations

from pibench.methods.base import register
from pibench.methods.calibration.online_quantile import ScaleFreeOGD
from pibench.methods.online_radius import OnlineRadiusMethod


@register
class SFOGD(OnlineRadiusMethod):
    """Scale-free OGD on the radius: delta <- max(0, delta - D g / sqrt(3 sum g^2))."""

    name = "sf_ogd"

    def _new_calibrator(self, calibration_scores):
        return ScaleFreeOGD(calibration_scores, self.alpha)
