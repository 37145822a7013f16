"""Non-exchangeable split conformal (Barber et al. 2023; docs/guide/methods.md) as an array function."""

from __future__ import annotations

import numpy as np


def nexcp_width(residuals: np.ndarray, alpha: float, decay: float = 0.99) -> np.ndarray:
    """Half-widths (G,) from time-ordered calibration residuals (n, G), oldest first.

    Weights w_i = decay^(n + 1 - i), normalised with the test point's weight 1:
    w~_i = w_i / (sum_j w_j + 1). The width is the smallest residual R with
    sum_{R_i <= R} w~_i >= 1 - alpha; it is +inf when the finite mass never
    reaches 1 - alpha (the remaining mass sits on +inf).
    """
    n = residuals.shape[0]
    if not 0 < decay <= 1:
        raise ValueError(f"decay={decay} must lie in (0, 1].")
    w = decay ** (n + 1 - np.arange(1, n + 1, dtype=float))
    w_norm = w / (w.sum() + 1.0)
    order = np.argsort(residuals, axis=0, kind="stable")
    sorted_r = np.take_along_axis(residuals, order, axis=0)
    cum = np.cumsum(w_norm[order], axis=0)  # (n, G)
    reached = cum >= 1 - alpha - 1e-12
    first = np.argmax(reached, axis=0)
    width = sorted_r[first, np.arange(residuals.shape[1])]
    return np.where(reached.any(axis=0), width, np.inf)
