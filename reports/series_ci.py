"""Confidence intervals of a series row's headline metrics: fixed-smoothing t intervals from the per-step values.

A series' per-step values (hit, capped length, interval score; :func:`~pibench.reports.bootstrap_ci.unit_values`)
are persistent: sliding-window methods' lengths and scores move with their window, their lag-1 correlation
0.9 and more. The CI of a mean is mean +/- t_(df, (1 + level) / 2) se, se from the equal-weighted cosine
long-run variance and df its nu terms (:func:`~pibench.reports.comparisons.mean_standard_error`, the
estimator the Diebold-Mariano test uses; Lazarus, Lewis, Stock & Watson 2018). The stationary bootstrap with
Politis-White's block, used before, held an AR(1) 0.9 mean in its 90% CI 76% of the time over a year of
steps (86% over 3,000), and on the stored fesp and realworld runs its CIs of mean length were a third to two
thirds as wide as these.

Several seeds see the same test steps: the row's value is the mean of the seeds' means, which is the mean of
the step-wise seed average u_t. Where they share the data (a file, a dataset whose seed is pinned), its
variance is the EWC variance of u (the test data, and what the seeds do differently step by step) plus the
spread of the seeds' means, var_s(m_s) / S (a seed that is better throughout), with Welch-Satterthwaite's
degrees of freedom: seeds that predict alike give one seed's CI, seeds that differ step by step count that
twice, a little conservative. Where each seed draws its own data (a generated series), the EWC variance of
u is that of the data's mean already, and var_s(m_s) / S estimates it again with the seeds' own effects:
the CI takes the larger, with its own degrees of freedom (summing both, three seeds' "90%" CIs held the
truth 97-98% of the time; adding the excess of the second with Welch's degrees, 83-87% where the seeds had
effects of their own: the excess has the S - 1 degrees of the spread, not more). A share (coverage) takes
that variance and those degrees of freedom into Korn & Graubard's Clopper-Pearson interval
(:func:`_share_interval`), and a metric never negative (the interval score; the length where no interval
crossed) is cut at 0: a short persistent span has few degrees of freedom (120 monthly steps: t with 1, 6.3
times the standard error), and its interval may reach below what the metric can be.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import t as student_t
from statsmodels.stats.proportion import proportion_confint

from pibench.reports.bootstrap_ci import CI_LEVEL
from pibench.reports.comparisons import mean_standard_error


def _moments(seeds: list[np.ndarray], shared: bool) -> tuple[float, float, float]:
    """(the row's value, its variance, their degrees of freedom) for one metric whose per-step values are ``seeds``
    (one (n,) array per seed), the seeds on the same data or not (``shared``; module docstring)."""
    means = np.array([float(np.mean(x)) for x in seeds])
    centre, count = float(means.mean()), len(seeds)
    parts: list[tuple[float, float]] = []  # (variance, degrees of freedom)
    if len({len(x) for x in seeds}) == 1:
        average = np.mean(seeds, axis=0)
        if np.ptp(average) > 0:
            se, degrees = mean_standard_error(average)
            parts.append((se ** 2, degrees))
    else:  # seeds over other steps (never in a row of one dataset): independent data, seed by seed
        shared = False
        for x in (x for x in seeds if np.ptp(x) > 0):
            se, degrees = mean_standard_error(x)
            parts.append((se ** 2 / count ** 2, degrees))
    if count > 1 and np.ptp(means) > 0:
        spread = float(means.var(ddof=1)) / count
        if shared:
            parts.append((spread, count - 1))
        elif spread > sum(v for v, _ in parts):  # the seeds' own effects show: the spread, with its S - 1
            parts = [(spread, count - 1)]
    variance = sum(v for v, _ in parts)
    if variance <= 0:
        return centre, 0.0, math.inf
    return centre, variance, variance ** 2 / sum(v ** 2 / d for v, d in parts)  # Welch-Satterthwaite's df


def _interval(seeds: list[np.ndarray], level: float, shared: bool) -> tuple[float, float]:
    """(low, high): the t interval of one metric (:func:`_moments`)."""
    centre, variance, degrees = _moments(seeds, shared)
    if variance <= 0:
        return centre, centre
    half = float(student_t.ppf(0.5 + level / 2, degrees)) * math.sqrt(variance)
    return centre - half, centre + half


def _share_interval(seeds: list[np.ndarray], level: float, shared: bool) -> tuple[float, float]:
    """(low, high) of a share (coverage) by Korn & Graubard's (1998) Clopper-Pearson interval at the effective
    number of steps n* = p(1 - p) / var, times (t_(n - 1) / t_df)^2 for the variance's degrees of freedom: near 0
    or 1 the t interval of a few misses is too short (at 99% over 365 i.i.d. steps its 90% CI held the truth
    87.5% of the time) and not monotone in them (one miss in 365 had a higher lower bound than none, whose
    interval is Clopper & Pearson's); away from them the two agree. A share of 0 or 1, or no variance: the t
    interval (every step alike: Clopper & Pearson's, :mod:`pibench.reports.statistics`)."""
    centre, variance, degrees = _moments(seeds, shared)
    if variance <= 0 or not 0 < centre < 1:
        return _interval(seeds, level, shared)
    q = 0.5 + level / 2
    steps = min(len(x) for x in seeds)
    n = centre * (1 - centre) / variance * (student_t.ppf(q, max(steps - 1, 1)) / student_t.ppf(q, degrees)) ** 2
    low, high = proportion_confint(n * centre, n, alpha=1 - level, method="beta")  # Clopper & Pearson's at n*
    return float(low), float(high)


def series_ci(seeds: list[np.ndarray], shares: tuple[int, ...] = (0,), level: float = CI_LEVEL,
              shared: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(low, high), each (k,), of the CIs of a row's metrics from its seeds' per-step values (each (n, k)), the
    seeds on the same data (``shared``) or each on its own; the columns ``shares`` (coverage) cut to [0, 1], a
    column never negative cut at 0."""
    k = seeds[0].shape[1]
    bounds = np.array([(_share_interval if j in shares else _interval)([x[:, j] for x in seeds], level, shared)
                       for j in range(k)])
    low, high = bounds[:, 0], bounds[:, 1]
    never_negative = np.min([x.min(axis=0) for x in seeds], axis=0) >= 0  # scores; lengths of uncrossed bands
    low[never_negative] = np.maximum(low[never_negative], 0.0)
    for j in shares:
        high[j] = min(high[j], 1.0)
    return low, high
