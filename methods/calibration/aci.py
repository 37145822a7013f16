"""Adaptive conformal inference (Gibbs & Candes 2021; docs/guide/methods.md) as array functions.

alpha_1 = alpha; width_t = the (1 - alpha_t) quantile of the calibration scores
(infinite if alpha_t <= 0, an empty interval if alpha_t >= 1);
alpha_{t+1} = alpha_t + gamma (alpha - err_t). alpha_t is never clipped, and
gamma = 0 is online split conformal. Every function broadcasts over leading axes
so that a grid of gammas shares one set of scores.
"""

from __future__ import annotations

import numpy as np

from pibench.methods.calibration.quantile import linear_quantile


def aci_width(sorted_scores: np.ndarray, alpha_t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Half-widths (..., G) and the mask of empty intervals for levels alpha_t (..., G)."""
    alpha_t = np.asarray(alpha_t, dtype=float)
    inside = (alpha_t > 0) & (alpha_t < 1)
    width = linear_quantile(sorted_scores, np.where(inside, 1.0 - alpha_t, 0.5))
    width = np.where(alpha_t <= 0, np.inf, np.where(alpha_t >= 1, 0.0, width))
    return width, alpha_t >= 1


def aci_errors(y: np.ndarray, lower: np.ndarray, upper: np.ndarray, empty: np.ndarray) -> np.ndarray:
    """err_t = 1{y_t not in [lower, upper]}; an empty interval is always a miss."""
    return ((y < lower) | (y > upper) | empty).astype(float)


def aci_next_alpha(alpha_t: np.ndarray, alpha: float, gamma: float | np.ndarray, err: np.ndarray) -> np.ndarray:
    """alpha_{t+1} = alpha_t + gamma (alpha - err_t)."""
    return alpha_t + gamma * (alpha - err)


def aci_online(
    points: np.ndarray,
    y: np.ndarray,
    sorted_scores: np.ndarray,
    alpha: float,
    gammas: np.ndarray,
    fit_of_step: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Run ACI for K gammas at once over T steps: bounds (K, T, G).

    points, y: (T, G); sorted_scores: (n, G), or (F, n, G) with ``fit_of_step``
    (T,) naming the score set in force at each step. The same three functions
    as the step-by-step method, so both give the same intervals.
    """
    gammas = np.asarray(gammas, dtype=float)[:, None]
    T, G = points.shape
    alpha_t = np.full((gammas.shape[0], G), float(alpha))
    lower = np.empty((gammas.shape[0], T, G))
    upper = np.empty_like(lower)
    for t in range(T):
        scores = sorted_scores if fit_of_step is None else sorted_scores[fit_of_step[t]]
        width, empty = aci_width(scores, alpha_t)
        lower[:, t], upper[:, t] = points[t] - width, points[t] + width
        alpha_t = aci_next_alpha(alpha_t, alpha, gammas, aci_errors(y[t], lower[:, t], upper[:, t], empty))
    return lower, upper
