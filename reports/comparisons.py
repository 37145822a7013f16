"""Comparisons of rows on a proper score: Diebold-Mariano against a reference, the Model Confidence Set.

The interval score is proper for central (1 - alpha) intervals (Gneiting & Raftery
2007), so lower is better and differences of its mean are what a comparison can rest
on. The loss of a row is its interval score per resampling unit (a series' test step,
a set's test sequence; :mod:`pibench.reports.bootstrap_ci`).

* Diebold & Mariano (1995): d_t = L_row,t - L_ref,t, DM = mean(d) / se(mean(d)), two-sided. For
  exchangeable sequences se is the sample standard deviation over sqrt(n), against Student's t with
  n - 1 degrees of freedom. For a series the long-run variance is the equal-weighted cosine (EWC)
  estimator of Lazarus, Lewis, Stock & Watson (2018), the mean of the squared first nu cosine transforms
  Lambda_j = sqrt(2 / n) sum_t cos(pi j (t - 1/2) / n) (d_t - mean(d)), against Student's t with nu
  degrees of freedom (fixed-smoothing asymptotics, exact for Gaussian white noise at a given nu; Coroneo &
  Iacone 2020 recommend it for DM). nu is their floor(0.4 n^(2/3)), made smaller for persistent differences: at most
  floor(n / S) with S Andrews' (1991) AR(1) plug-in bandwidth 1.1447 (a n)^(1/3),
  a = 4 rho^2 / ((1 - rho)^2 (1 + rho)^2), rho the lag-1 autoregression of d (|rho| at most 0.99).
  Interval scores of sliding-window methods are persistent (rho 0.9 and more), where the Newey-West
  estimator with the usual lag rejected a true null about a quarter of the time at 5% and with Andrews'
  lag 9-16% (rho 0.9-0.97, n = 1,000); this rule 6-7% and 8-9% (``tests/test_clustered_tests.py``).
* The Model Confidence Set of Hansen, Lunde & Nason (2011), ``arch.bootstrap.MCS`` with
  the range statistic, the stationary bootstrap (its block Politis-White's for the rows' loss differences
  from their mean; block 1 for sequences) and a seed:
  the rows not significantly worse than the best at size 1 - level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from arch.bootstrap import MCS
from scipy.fft import dct
from scipy.stats import t as student_t

from pibench.reports.bootstrap_ci import block_length

#: The MCS keeps the rows whose elimination p-value exceeds 1 - MCS_LEVEL.
MCS_LEVEL = 0.9


def andrews_bandwidth(d: np.ndarray) -> float:
    """Andrews' (1991) AR(1) plug-in bandwidth S for the Bartlett kernel (module docstring)."""
    x = np.asarray(d, dtype=float) - float(np.mean(d))
    denominator = float(x[:-1] @ x[:-1])
    rho = float(np.clip(x[1:] @ x[:-1] / denominator, -0.99, 0.99)) if denominator > 0 else 0.0
    a = 4 * rho ** 2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    return 1.1447 * (a * len(x)) ** (1 / 3)


def ewc_degrees(d: np.ndarray) -> int:
    """The EWC estimator's number of cosine terms nu for the differences ``d`` (module docstring), at least 1."""
    n = len(d)
    usual = math.floor(0.4 * n ** (2 / 3))
    bandwidth = andrews_bandwidth(d)
    persistent = math.floor(n / bandwidth) if bandwidth > 0 else usual
    return max(1, min(usual, persistent, n - 1))


def ewc_variance(d: np.ndarray, nu: int) -> float:
    """The EWC long-run variance of ``d`` from its first ``nu`` cosine transforms (module docstring)."""
    x = np.asarray(d, dtype=float)
    transforms = dct(x - x.mean(), type=2, norm="ortho")[1:nu + 1]
    return float(np.mean(transforms ** 2))


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
    docstring)."""
    d = np.asarray(loss, dtype=float) - np.asarray(reference, dtype=float)
    n = len(d)
    mean = float(d.mean())
    if n < 3 or np.ptp(d) == 0:
        return DieboldMariano(mean, mean, mean, 0.0 if mean == 0 else math.copysign(math.inf, mean),
                              1.0 if mean == 0 else 0.0, n, n - 1)
    if dependent:
        degrees = ewc_degrees(d)
        variance = ewc_variance(d, degrees)
    else:
        degrees, variance = n - 1, float(d.var(ddof=1))
    if variance <= 1e-12 * float(d.var(ddof=1)):
        # nothing but rounding at the nu lowest frequencies (a palindrome has nothing at j = 1): the plain variance
        variance = float(d.var(ddof=1))
    se = math.sqrt(variance / n)
    statistic = mean / se
    p = float(2 * student_t.sf(abs(statistic), degrees))
    half = float(student_t.ppf(0.5 + level / 2, degrees)) * se
    return DieboldMariano(mean, mean - half, mean + half, float(statistic), p, n, degrees)


def _degenerate_pairs(losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the columns of ``losses`` (n, k): each column's representative among exact duplicates (the
    first of them), and which columns are worse than another by the same amount at every unit. Their loss
    differences have zero variance, which the MCS statistic divides by."""
    k = losses.shape[1]
    representative, dominated = np.arange(k), np.zeros(k, dtype=bool)
    for j in range(k):
        for i in range(j):
            d = losses[:, j] - losses[:, i]
            if np.ptp(d) != 0:
                continue
            if d[0] == 0:
                representative[j] = representative[i]
            else:
                dominated[j if d[0] > 0 else i] = True
    return representative, dominated


def mcs_block(losses: np.ndarray) -> int:
    """The MCS's mean block length for losses (n, k) of a series: Politis-White's for the columns' differences
    from their mean at each unit, which the MCS statistics are made of (module docstring)."""
    return block_length(losses - losses.mean(axis=1, keepdims=True))


def model_confidence_set(losses: np.ndarray, block: int, seed: int, level: float = MCS_LEVEL,
                         reps: int = 1000) -> np.ndarray:
    """(k,) booleans: which of the k columns of ``losses`` (n, k) are in the MCS at ``level``.

    Columns equal at every unit (two settings that select the same model) share one place in the
    MCS and its verdict; a column worse than another by the same amount at every unit is out. The
    MCS runs on the rest (with one column left, that one is in)."""
    k = losses.shape[1]
    representative, dominated = _degenerate_pairs(losses)
    candidates = np.flatnonzero((representative == np.arange(k)) & ~dominated)
    kept = np.zeros(k, dtype=bool)
    if len(candidates) == 1:
        kept[candidates] = True
    else:
        mcs = MCS(losses[:, candidates], size=1 - level, reps=reps, block_size=max(1, int(block)), method="R",
                  bootstrap="stationary", seed=np.random.default_rng(seed))
        mcs.compute()
        kept[candidates[np.asarray(mcs.included, dtype=int)]] = True
    return kept[representative] & ~dominated[representative]
