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
