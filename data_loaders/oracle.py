"""The oracle of a synthetic series: the true conditional mean and scale of each step given the past.

Built-in generators record them in the problem's metadata: ``conditional_mean`` (one per
row) and the innovation's scale, either one ``oracle_noise_std`` for every row (ar, nlar,
expar: Gaussian innovations) or an ``oracle_scale`` per row (regime). The oracle
interval of a step is then mean +/- z_{alpha/2} scale: the shortest interval that
covers at exactly 1 - alpha given the past. The sets of ``seasonal_sets`` record each
test sequence's conditional mean per horizon; their oracle takes the joint level as
the set methods do, Bonferroni's z_{1 - alpha/(2H)} per horizon
(:func:`pibench.data_loaders.synthetic.seasonal_ar_oracle`). Problems read from files have no oracle.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from pibench.data_loaders.problems import SeriesProblem, SetProblem
from pibench.data_loaders.synthetic import seasonal_ar_oracle


def series_oracle(problem: SeriesProblem) -> tuple[np.ndarray, np.ndarray] | None:
    """(mean, scale), each (n_steps, G), of every row of ``problem``; None without an oracle."""
    meta = problem.metadata
    if "conditional_mean" not in meta or not ({"oracle_scale", "oracle_noise_std"} & set(meta)):
        return None
    mean = np.asarray(meta["conditional_mean"], dtype=float).reshape(problem.n_steps, -1)
    scale = np.asarray(meta.get("oracle_scale", meta.get("oracle_noise_std")), dtype=float)
    return mean, np.broadcast_to(scale.reshape(-1, 1) if scale.ndim else scale, mean.shape).copy()


def set_oracle(problem: SetProblem, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(lower, upper, mean), each (n_test, H), of every test sequence at the joint level 1 - alpha by
    Bonferroni; None without an oracle."""
    if "test_conditional_mean" not in problem.metadata:
        return None
    lower, upper = seasonal_ar_oracle(problem, alpha, joint=True)
    return lower, upper, np.asarray(problem.metadata["test_conditional_mean"], dtype=float)


def oracle_test_lengths(problem: SeriesProblem | SetProblem, alpha: float, n_steps: int) -> np.ndarray | None:
    """The oracle's interval length at each test point: (n_steps, G), 2 z_{alpha/2} scale_t at the first
    ``n_steps`` test steps of a series; (n_test, H) for sets (``n_steps`` unused). The denominators of a
    method's ``length_ratio_oracle`` and ``length_ratio_vol_*``; None without an oracle."""
    if isinstance(problem, SetProblem):
        bounds = set_oracle(problem, alpha)
        return None if bounds is None else bounds[1] - bounds[0]
    truth = series_oracle(problem)
    if truth is None:
        return None
    return 2 * norm.ppf(1 - alpha / 2) * truth[1][problem.test_start:problem.test_start + n_steps]
