"""Comparisons of rows on a proper score: Diebold-Mariano against a reference, the Model Confidence Set.

The interval score is proper for central (1 - alpha) intervals (Gneiting & Raftery
2007), so lower is better and differences of its mean are what a comparison can rest
on. The loss of a row is its interval score per resampling unit (a series' test step,
a set's test sequence; :mod:`pibench.reports.bootstrap_ci`).

* Diebold & Mariano (1995): d_t = L_row,t - L_ref,t, DM = mean(d) / se(mean(d)), two-sided. For exchangeable sequences
  se is the sample standard deviation over sqrt(n), against Student's t with n - 1 degrees of freedom. For a series
  the long-run variance is the equal-weighted cosine (EWC) estimator of Lazarus, Lewis, Stock & Watson (2018), the
  mean of the squared first nu cosine transforms Lambda_j = sqrt(2 / n) sum_t cos(pi j (t - 1/2) / n) (d_t - mean(d)),
  against Student's t with nu degrees of freedom (fixed-smoothing asymptotics, exact for Gaussian white noise at a
  given nu; Coroneo & Iacone 2020 recommend it for DM). nu is floor(n^(1/3)) (pibench's choice, for the measurements
  below; at most Lazarus et al.'s floor(0.4 n^(2/3))), made smaller for persistent differences: at most floor(n / S)
  with S Andrews' (1991) AR(1) plug-in bandwidth 1.1447 (a n)^(1/3), a = 4 rho^2 / ((1 - rho)^2 (1 + rho)^2), rho the
  lag-1 autoregression of d (|rho| at most 0.999: a method's lengths refitted on a window of 500 have lag-1
  correlations of 0.99-0.999, and at most 0.99 kept 6 terms over 2,000 steps, whose 90% CIs held a moving mean of 500
  steps 75% of the time and the default suite's AutoReg lengths 76%; now 1-3 terms, 84% and 85%). Interval scores of
  sliding-window methods are persistent (rho 0.9 and more), where the Newey-West estimator with the usual lag rejected
  a true null about a quarter of the time at 5% and with Andrews' lag 9-16% (rho 0.9-0.97, n = 1,000); this rule 6%
  and 8% (2,000-4,000 draws; at 0.97 Andrews' cap binds before n^(1/3) does, so the floor(0.4 n^(2/3)) rule gave the
  same). A persistent part under the noise of the misses has a small lag-1 correlation, which Andrews' rule cannot
  see: two bands of equal expected score, one wider where a slow factor (AR(1) 0.97) is high and the other where it is
  low, over a year of days (lag-1 0.4), were told apart at 5% 33-35% of the time with Lazarus et al.'s 20 terms, 15%
  with 7; a fixed band against one scaled to a stochastic volatility (log-variance AR(1) 0.97; lag-1 0.05) 16-18% and
  9% (n = 365), 14% and 9% (n = 1,000). The price is power: a difference of 2.5 standard errors is found 55-65% of the
  time rather than 64-71% (AR(1) 0-0.9, n = 250-3,000). Andrews & Monahan's (1992) AR(1) prewhitening was measured and
  not taken: it brought DM's size at AR(1) 0.97 from 11% to 7.5-8% over 365 steps, but a lone large loss at the first
  step left the filtered series (DM p 2e-12 where 0.5), series of 3-5 steps lost their exact t law (size 20% at n =
  3), and where a high lag-1 correlation is not an AR(1)'s (a daily cycle of hourly lengths; one persistent row among
  the MCS's contrasts) the recolouring made variances 4-40 times too large.
* The Model Confidence Set of Hansen, Lunde & Nason (2011): the rows not significantly worse than the
  best at size 1 - level, by their elimination with the range statistic T_R = max_ij |t_ij|, t_ij the
  studentized difference of rows i and j's mean losses, dropping the row with the largest t_ij while the
  p-value of T_R is below 1 - level. For a series each t_ij's variance is the EWC one above (one nu for
  all rows: the smallest of each row's loss less the rows' mean), and T_R is referred to its
  fixed-smoothing law: sqrt(n) times the means as N(0, Omega) and the EWC covariance as the mean of nu
  outer products of N(0, Omega) vectors, independent of them (Lazarus et al. 2018's limit), simulated 20,000
  times with a seed, the rows in the order of their names, Omega the EWC estimate from max(nu, 2k) cosine
  terms (at least as many as rows: with fewer its rank is below k, and the law of the maximum loses its
  multiplicity). With 1,000 draws a p-value near the level moved by 0.01 with the seed, and the seed alone
  (the rows' order in the store, which follows task ids) put 2 to 17 of realworld's 19 sunspot rows in the
  set; with 20,000, 13 or 17 (a step's p-value lies within 0.003 of 0.1). Two rows are then exactly
  Diebold-Mariano's test above at 1 - level. The rates below were measured with 1,000 draws. arch's
  bootstrap MCS (``arch.bootstrap.MCS``, stationary bootstrap, Politis-White's block) dropped one of two
  equal rows with AR(1) 0.9 loss differences 19-22% of the time at 10% (n = 1,000-2,000; four rows 19%),
  some of ten equal rows over 365 days 30% (AR(1) 0.5); this one 10-13% (four rows 14%) and 11-12%, 48
  rows over 365 days 12-13% (AR(1) 0.5; 16-17% at AR(1) 0.9, with either rule's terms), two bands under a
  stochastic volatility (above) 13-15% (25% and 22% with Lazarus et al.'s terms). Exchangeable sequences
  take Hansen et al.'s bootstrap (:func:`bootstrap_mcs`: i.i.d. draws of the units, each pair's variance the
  bootstrap variance of its mean difference), and so does a series whose EWC variance of some pair is rounding
  only (stationary blocks). Its p-values count the draws at least as large as the observed statistic: arch's
  ``MCS`` counts those larger, which on the lattice law of rows that differ at a few sequences dropped a row
  whose two-row p-value is 0.63 (0.07), and it raised on rows of equal mean loss.
* Rows whose losses differ by the same amount at every unit, to :data:`ROUNDING` of their magnitude there (the same
  band computed two ways), are one row or a dominated one (:func:`_degenerate_pairs`), and DM is exact for them:
  rounding noise is no evidence, and its variance is too small to divide by.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from arch.bootstrap import IIDBootstrap, StationaryBootstrap
from scipy.fft import dct
from scipy.stats import t as student_t

from pibench.reports.bootstrap_ci import block_length
from pibench.reports.metrics import ROUNDING

#: The MCS keeps the rows whose elimination p-value exceeds 1 - MCS_LEVEL.
MCS_LEVEL = 0.9
#: Draws of the fixed-smoothing MCS's law: its p-values near 1 - MCS_LEVEL then move by about 0.003 with the seed
#: (1,000 draws: 0.01, and the sunspots' set of 19 rows held 2 to 17 of them by the draws' seed alone).
MCS_REPS = 20_000
#: Fewer resampling units than this (test sequences or groups, test steps) give no DM test and no MCS.
MIN_UNITS = 3


def andrews_bandwidth(d: np.ndarray) -> float:
    """Andrews' (1991) AR(1) plug-in bandwidth S for the Bartlett kernel (module docstring)."""
    x = np.asarray(d, dtype=float) - float(np.mean(d))
    denominator = float(x[:-1] @ x[:-1])
    rho = float(np.clip(x[1:] @ x[:-1] / denominator, -0.999, 0.999)) if denominator > 0 else 0.0
    a = 4 * rho ** 2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    return 1.1447 * (a * len(x)) ** (1 / 3)


def ewc_degrees(d: np.ndarray) -> int:
    """The EWC estimator's number of cosine terms nu for the differences ``d`` (module docstring), at least 1."""
    n = len(d)
    usual = min(math.floor(0.4 * n ** (2 / 3)), math.floor(n ** (1 / 3) + 1e-9))
    bandwidth = andrews_bandwidth(d)
    persistent = math.floor(n / bandwidth) if bandwidth > 0 else usual
    return max(1, min(usual, persistent, n - 1))


def ewc_variance(d: np.ndarray, nu: int) -> float:
    """The EWC long-run variance of ``d`` from its first ``nu`` cosine transforms (module docstring)."""
    x = np.asarray(d, dtype=float)
    transforms = dct(x - x.mean(), type=2, norm="ortho")[1:nu + 1]
    return float(np.mean(transforms ** 2))


def mean_standard_error(x: np.ndarray, dependent: bool = True) -> tuple[float, int]:
    """(the standard error of the mean of ``x`` (n,), the degrees of freedom of the Student t it goes with): the
    EWC long-run variance and nu for a series (``dependent``), the sample variance and n - 1 for exchangeable
    units. Where the EWC variance is rounding only (nothing at the nu lowest frequencies: a palindrome has
    nothing at j = 1), the sample variance and n - 1."""
    x = np.asarray(x, dtype=float)
    n, plain = len(x), float(x.var(ddof=1))
    degrees, variance = n - 1, plain
    if dependent:
        nu = ewc_degrees(x)
        long_run = ewc_variance(x, nu)
        if long_run > 1e-12 * plain:
            degrees, variance = nu, long_run
    return math.sqrt(variance / n), degrees


@dataclass(frozen=True)
class DieboldMariano:
    """A row's mean loss difference to the reference, its CI at ``level``, DM and its p-value."""

    mean_difference: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    n: int
    degrees: int  # of the Student t the statistic is referred to


def diebold_mariano(loss: np.ndarray, reference: np.ndarray, dependent: bool = True,
                    level: float = 0.9) -> DieboldMariano:
    """Diebold-Mariano for losses (n,) of a row and of the reference on the same units: EWC variance and
    t_nu for a series (``dependent``), the sample variance and t_(n-1) for exchangeable units (module
    docstring). Fewer than :data:`MIN_UNITS` units: the mean difference only, the rest NaN."""
    d = np.asarray(loss, dtype=float) - np.asarray(reference, dtype=float)
    n = len(d)
    mean = float(d.mean()) if n else math.nan
    if n < MIN_UNITS:  # one or two units are no evidence either way: no test
        return DieboldMariano(mean, math.nan, math.nan, math.nan, math.nan, n, 0)
    if _constant(d, loss, reference):  # the same difference at every unit (to rounding): exact
        mean = 0.0 if _zero(d, loss, reference) else mean
        return DieboldMariano(mean, mean, mean, 0.0 if mean == 0 else math.copysign(math.inf, mean),
                              1.0 if mean == 0 else 0.0, n, n - 1)
    se, degrees = mean_standard_error(d, dependent)
    statistic = mean / se
    p = float(2 * student_t.sf(abs(statistic), degrees))
    half = float(student_t.ppf(0.5 + level / 2, degrees)) * se
    return DieboldMariano(mean, mean - half, mean + half, float(statistic), p, n, degrees)


def _rounding(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per unit, what rounding may put between two losses: :data:`ROUNDING` of the larger magnitude there (one
    large score elsewhere must not make a real difference of small ones rounding)."""
    return ROUNDING * np.maximum(np.abs(np.asarray(a, dtype=float)), np.abs(np.asarray(b, dtype=float)))


def _constant(d: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the differences ``d = a - b`` are one value at every unit, to each unit's rounding."""
    slack = _rounding(a, b)
    return bool(np.all(np.abs(d - d[0]) <= slack + slack[0]))


def _zero(d: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the differences ``d = a - b`` are 0 at every unit, to each unit's rounding."""
    return bool(np.all(np.abs(d) <= _rounding(a, b)))


def _degenerate_pairs(losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the columns of ``losses`` (n, k): each column's representative among duplicates (the first of them;
    equal to rounding), and which columns are worse than another by the same amount at every unit. Their loss
    differences have no variance but rounding, which the MCS statistic divides by."""
    k = losses.shape[1]
    representative, dominated = np.arange(k), np.zeros(k, dtype=bool)
    for j in range(k):
        for i in range(j):
            d = losses[:, j] - losses[:, i]
            if not _constant(d, losses[:, j], losses[:, i]):
                continue
            if _zero(d, losses[:, j], losses[:, i]):
                representative[j] = representative[i]
            else:
                dominated[j if d.mean() > 0 else i] = True
    return representative, dominated


def ewc_covariance(losses: np.ndarray, nu: int) -> np.ndarray:
    """The EWC long-run covariance (k, k) of the columns of ``losses`` (n, k): the mean outer product of their
    first ``nu`` cosine transforms (:func:`ewc_variance` of each column on the diagonal)."""
    x = np.asarray(losses, dtype=float)
    transforms = dct(x - x.mean(axis=0), type=2, norm="ortho", axis=0)[1:nu + 1]
    return transforms.T @ transforms / nu


def _pair_variances(covariance: np.ndarray) -> np.ndarray:
    """var(x_i - x_j) = c_ii + c_jj - 2 c_ij over the last two axes (..., k, k) of covariances."""
    diagonal = np.diagonal(covariance, axis1=-2, axis2=-1)
    return diagonal[..., :, None] + diagonal[..., None, :] - 2 * covariance


def _pair_statistics(means: np.ndarray, covariance: np.ndarray) -> np.ndarray:
    """t_ij = (mean_i - mean_j) / sd(mean_i - mean_j) over the last two axes (..., k, k); 0 on the diagonal."""
    variance = _pair_variances(covariance)
    difference = means[..., :, None] - means[..., None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(variance > 0, difference / np.sqrt(np.maximum(variance, 0)), 0.0)


def fixed_smoothing_mcs(losses: np.ndarray, seed: int, reps: int = MCS_REPS,
                        chunk: int = 1000) -> np.ndarray | None:
    """(k,) MCS p-values of a series' rows (module docstring): Hansen, Lunde & Nason's elimination with the
    range statistic T_R = max |t_ij|, each t_ij's variance the EWC one, referred to its fixed-smoothing law
    simulated ``reps`` times (in chunks); a row's p-value is the largest of the elimination p-values up to its
    own (1 for the last row). None where some pair's EWC variance is rounding only (the caller then bootstraps)."""
    x = np.asarray(losses, dtype=float)
    x = x - x.mean(axis=1, keepdims=True)  # each step less its rows' mean: every difference as it is, and a loss all
    # rows share (a far miss of every method) no longer swamps the differences in c_ii + c_jj - 2 c_ij
    n, k = x.shape
    nu = min(ewc_degrees(x[:, j]) for j in range(k))
    covariance = ewc_covariance(x, nu)
    pairs = np.triu_indices(k, 1)
    if (_pair_variances(covariance)[pairs] <= 1e-12 * _pair_variances(np.cov(x, rowvar=False))[pairs]).any():
        return None
    observed = _pair_statistics(np.sqrt(n) * x.mean(axis=0), covariance)  # as the draws: sqrt(n) times the mean
    steps = Elimination.of(observed)
    # draws of (mean, EWC covariance) under equal means: N(0, Omega) and the mean of nu outer products of
    # N(0, Omega) vectors (a factor A with A A' = Omega; scale cancels in every t). Omega is the EWC estimate
    # from at least 2k cosine terms: with fewer than k its rank is below k, the simulated contrasts share too
    # few dimensions, and the law of their maximum loses most of its multiplicity (48 rows, nu 20: 16% for 10%)
    eigenvalues, vectors = np.linalg.eigh(ewc_covariance(x, min(n - 1, max(nu, 2 * k))))
    keep = eigenvalues > 1e-12 * eigenvalues.max()
    factor = vectors[:, keep] * np.sqrt(eigenvalues[keep])  # (k, r)
    rng = np.random.default_rng(seed)
    exceed = np.zeros(k - 1)
    for start in range(0, reps, chunk):
        m = min(chunk, reps - start)
        means = rng.standard_normal((m, factor.shape[1])) @ factor.T  # (m, k)
        transforms = rng.standard_normal((m, nu, factor.shape[1])) @ factor.T  # (m, nu, k)
        draws = np.einsum("rvi,rvj->rij", transforms, transforms) / nu  # (m, k, k)
        exceed += steps.exceedances(_pair_statistics(means, draws))
    return steps.p_values(exceed / reps)


@dataclass(frozen=True)
class Elimination:
    """Hansen, Lunde & Nason's elimination with the range statistic, from the observed t_ij (k, k): the rows in
    the order they leave (the row worst against some other first) and the statistic T_R = max |t_ij| over the
    set at each step. The order follows from the observed statistics alone; only where it stops depends on the
    law, so each step's p-value is read off the same draws."""

    eliminated: tuple[int, ...]
    statistics: np.ndarray  # (k - 1,) T_R over the set of each step
    last_first: tuple[int, ...]  # each step's set: the leading rows of this order

    @classmethod
    def of(cls, observed: np.ndarray) -> Elimination:
        eliminated, statistics, alive = [], [], list(range(len(observed)))
        while len(alive) > 1:
            sub = observed[np.ix_(alive, alive)]
            statistics.append(float(np.abs(sub).max()))
            eliminated.append(alive.pop(int(np.argmax(sub.max(axis=1)))))
        return cls(tuple(eliminated), np.asarray(statistics), tuple(alive + eliminated[::-1]))

    def exceedances(self, simulated: np.ndarray) -> np.ndarray:
        """(k - 1,) how many of the draws of t_ij (m, k, k) have a range statistic over each step's set at least
        the observed one (ties count, to rounding: a lattice law keeps its atom)."""
        k = len(self.last_first)
        order = list(self.last_first)
        ordered = np.abs(simulated)[:, order][:, :, order]
        # the maximum over each leading block: each row's maximum against the rows before it, accumulated
        below = np.tril(np.ones((k, k), dtype=bool), -1)
        block_max = np.maximum.accumulate(np.where(below, ordered, 0.0).max(axis=2), axis=1)  # (m, k)
        sizes = np.arange(k, 1, -1)  # the set's size at each step
        return (block_max[:, sizes - 1] >= self.statistics * (1 - ROUNDING)).sum(axis=0)

    def p_values(self, step_p: np.ndarray) -> np.ndarray:
        """(k,) MCS p-values from each step's: a row's is the largest up to its own step, the last row's 1."""
        mcs_p = np.ones(len(self.last_first))
        mcs_p[list(self.eliminated)] = np.maximum.accumulate(step_p)
        return mcs_p


def _resampled_means(x: np.ndarray, reps: int, block: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, k) column means of ``x`` (n, k) over rows drawn with replacement: arch's i.i.d. bootstrap (``block``
    1), or its stationary bootstrap (Politis & Romano's blocks of mean length ``block``)."""
    bootstrap = IIDBootstrap(x, seed=rng) if block <= 1 else StationaryBootstrap(block, x, seed=rng)
    return bootstrap.apply(lambda rows: rows.mean(axis=0), reps)


def bootstrap_mcs(losses: np.ndarray, seed: int, reps: int, block: int = 1) -> np.ndarray:
    """(k,) MCS p-values of the columns of ``losses`` (n, k) by Hansen, Lunde & Nason's bootstrap: t_ij the mean
    difference of rows i and j over the bootstrap standard deviation of it, the law of T_R = max |t_ij| that of
    the draws' centred differences over the same deviations (:func:`_resampled_means`, ``reps`` draws)."""
    x = np.asarray(losses, dtype=float)
    x = x - x.mean(axis=1, keepdims=True)  # each unit less its rows' mean: every difference as it is, and a spike
    # all rows share (a far miss of every method) no longer swamps the differences in c_ii + c_jj - 2 c_ij
    means = x.mean(axis=0)
    centred = _resampled_means(x, reps, block, np.random.default_rng(seed)) - means  # (reps, k)
    covariance = centred.T @ centred / reps
    steps = Elimination.of(_pair_statistics(means, covariance))
    variance = _pair_variances(covariance)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(variance > 0, 1 / np.sqrt(np.maximum(variance, 0)), 0.0)
    exceed = np.zeros(len(means) - 1)
    for start in range(0, reps, 500):
        part = centred[start:start + 500]
        exceed += steps.exceedances((part[:, :, None] - part[:, None, :]) * scaled)
    return steps.p_values(exceed / reps)


def model_confidence_set(losses: np.ndarray, seed: int, dependent: bool = True, level: float = MCS_LEVEL,
                         reps: int = 2000) -> np.ndarray:
    """(k,) booleans: which of the k columns of ``losses`` (n, k) are in the MCS at ``level``
    (:func:`mcs_p_values`)."""
    return mcs_p_values(losses, seed, dependent, level, reps)[0]


def mcs_p_values(losses: np.ndarray, seed: int, dependent: bool = True, level: float = MCS_LEVEL,
                 reps: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """(in the MCS at ``level``, MCS p-value), each (k,), of the k columns of ``losses`` (n, k): for a series
    (``dependent``) :func:`fixed_smoothing_mcs`, for exchangeable units :func:`bootstrap_mcs` with the i.i.d.
    bootstrap ``reps`` times; in: p >= 1 - level (Hansen et al.'s rule).

    Columns equal at every unit (two settings that select the same model) share one place in the
    MCS, its verdict and p-value; a column worse than another by the same amount at every unit is out
    (p-value 0). The MCS runs on the rest (with one column left, that one is in, p-value 1)."""
    k = losses.shape[1]
    representative, dominated = _degenerate_pairs(losses)
    candidates = np.flatnonzero((representative == np.arange(k)) & ~dominated)
    p_values, kept = np.zeros(k), np.zeros(k, dtype=bool)
    if len(candidates) == 1:
        p_values[candidates], kept[candidates] = 1.0, True
    else:
        chosen = losses[:, candidates]
        fixed = fixed_smoothing_mcs(chosen, seed) if dependent else None
        if fixed is not None:
            p_values[candidates], kept[candidates] = fixed, fixed >= 1 - level
        else:  # exchangeable units, or EWC variances that are rounding only: the bootstrap
            block = block_length(chosen - chosen.mean(axis=1, keepdims=True)) if dependent else 1
            booted = bootstrap_mcs(chosen, seed, reps, max(1, int(block)))
            p_values[candidates], kept[candidates] = booted, booted >= 1 - level
    out = dominated[representative]
    return kept[representative] & ~out, np.where(out, 0.0, p_values[representative])
