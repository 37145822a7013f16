"""Split-conformal critical scores with a Bonferroni correction over H horizons (CF-RNN; docs/guide/methods.md)."""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.validation import check_alpha
from pibench.methods.calibration.quantile import linear_quantile


def uncapped_bonferroni_level(n: int, alpha: float, horizon: int) -> float:
    """(n + 1)(1 - alpha / H) / n: the level split conformal asks of each horizon's n scores so that
    all H intervals hold jointly with probability >= 1 - alpha (union bound over horizons). Above 1
    (n < H / alpha - 1, e.g. COVID-19's 100 calibration sequences at H = 50) no finite quantile of
    n scores gives that guarantee: the conformal critical score is +inf."""
    if n < 1 or horizon < 1:
        raise ValueError(f"need at least one calibration score and one horizon; got n={n}, H={horizon}.")
    return (n + 1) * (1 - check_alpha(alpha) / horizon) / n


def bonferroni_level(n: int, alpha: float, horizon: int) -> float:
    """min(:func:`uncapped_bonferroni_level`, 1) (docs/guide/methods.md, CF-RNN's and the paper's convention): where
    the uncapped level passes 1 the largest score is taken, a finite interval without the joint
    guarantee."""
    return min(uncapped_bonferroni_level(n, alpha, horizon), 1.0)


def bonferroni_critical_scores(scores: np.ndarray, alpha: float) -> np.ndarray:
    """(H,) critical scores: per horizon, the linearly interpolated quantile of the (n, H)
    calibration scores at :func:`bonferroni_level`."""
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2:
        raise ValueError(f"scores must be (n, H); got shape {scores.shape}.")
    n, horizon = scores.shape
    level = bonferroni_level(n, alpha, horizon)
    return linear_quantile(np.sort(scores, axis=0), np.full(horizon, level))
