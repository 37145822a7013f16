"""Empirical quantiles of conformity scores, vectorised over levels."""

from __future__ import annotations

import numpy as np


def linear_quantile(sorted_scores: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Quantile with linear interpolation (numpy's default, Hyndman-Fan type 7).

    sorted_scores: (n, G) scores sorted along axis 0; levels: (..., G) in [0, 1].
    Returns (..., G): s[k] + (h - k) (s[k+1] - s[k]) with h = (n - 1) q, k = floor(h).
    """
    n = sorted_scores.shape[0]
    levels = np.asarray(levels, dtype=float)
    h = np.clip(levels, 0.0, 1.0) * (n - 1)
    k = np.floor(h).astype(int)
    k1 = np.minimum(k + 1, n - 1)
    G = sorted_scores.shape[1]
    cols = np.broadcast_to(np.arange(G), levels.shape)
    lo, hi = sorted_scores[k, cols], sorted_scores[k1, cols]
    return lo + (h - k) * (hi - lo)


def conformal_quantile(scores: np.ndarray, alpha: float) -> float:
    """Split conformal's finite-sample quantile (Vovk, Gammerman & Shafer 2005; Lei et al. 2018, eq. 3):
    the ceil((n + 1)(1 - alpha))-th smallest of the n calibration scores, +inf when that rank exceeds n.

    For a test score exchangeable with the n calibration scores, P(score <= q) >= 1 - alpha,
    and <= 1 - alpha + 1 / (n + 1) when the scores have no ties.
    """
    scores = np.asarray(scores, dtype=float).ravel()
    if scores.size < 1 or not np.isfinite(scores).all():
        raise ValueError(f"need at least one finite calibration score; got {scores.size} with "
                         f"{int((~np.isfinite(scores)).sum())} not finite.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha} must lie in (0, 1).")
    n = scores.size
    rank = max(int(np.ceil((n + 1) * (1 - alpha) - 1e-9)), 1)  # the tolerance absorbs rounding of an integer
    return float(np.sort(scores)[rank - 1]) if rank <= n else float("inf")
