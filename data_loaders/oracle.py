"""The oracle of a synthetic series: the true conditional mean and scale of each step given the past.

Built-in generators record them in the problem's metadata: ``conditional_mean`` (one per
row) and the innovation's scale, either one ``oracle_noise_std`` for every row (ar, nlar,
expar: Gaussian innovations) or an ``oracle_scale`` per row (regime). The oracle
interval of a step is then mean +/- z_{alpha/2} scale: the shortest interval that
covers at exactly 1 - alpha given the past. Problems read from files have no oracle.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from data_loaders.problems import SeriesProblem


def series_oracle(problem: SeriesProblem) -> tuple[np.ndarray, np.ndarray] | None:
    """(mean, scale), each (n_steps, G), of every row of ``problem``; None without an oracle."""
    meta = problem.metadata
    if "conditional_mean" not in meta or not ({"oracle_scale", "oracle_noise_std"} & set(meta)):
        return None
    mean = np.asarray(meta["conditional_mean"], dtype=float).reshape(problem.n_steps, -1)
    scale = np.asarray(meta.get("oracle_scale", meta.get("oracle_noise_std")), dtype=float)
    return mean, np.broadcast_to(scale.reshape(-1, 1) if scale.ndim else scale, mean.shape).copy()


def oracle_mean_length(problem: SeriesProblem, alpha: float, n_steps: int) -> float | None:
    """The oracle's mean interval length over the first ``n_steps`` test steps, 2 z_{alpha/2} mean(scale)
    (the denominator of a method's ``length_ratio_oracle``); None without an oracle."""
    truth = series_oracle(problem)
    if truth is None:
        return None
    scale = truth[1][problem.test_start:problem.test_start + n_steps]
    return float(2 * norm.ppf(1 - alpha / 2) * scale.mean())
