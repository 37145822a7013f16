"""Comparisons of rows on a proper score: Diebold-Mariano against a reference, the Model Confidence Set.

The interval score is proper for central (1 - alpha) intervals (Gneiting & Raftery
2007), so lower is better and differences of its mean are what a comparison can rest
on. The loss of a row is its interval score per resampling unit (a series' test step,
a set's test sequence; :mod:`pibench.reports.bootstrap_ci`).

* Diebold & Mariano (1995): d_t = L_row,t - L_ref,t, DM = mean(d) / se(mean(d)) with a
  HAC (Newey-West, Bartlett kernel) standard error from statsmodels for a series, none for
  exchangeable sequences. Its lag is the larger of the usual floor(4 (n / 100)^(2/9)) and
  Andrews' (1991) AR(1) plug-in bandwidth for the Bartlett kernel, S = 1.1447 (a n)^(1/3)
  with a = 4 rho^2 / ((1 - rho)^2 (1 + rho)^2) and rho the lag-1 autoregression of d
  (|rho| at most 0.99), as lag ceil(S) - 1: interval scores of sliding-window methods
  are persistent (rho 0.9 and more), where the fixed lag rejects a true null about a
  quarter of the time at 5%; with Harvey, Leybourne & Newbold's (1997)
  small-sample correction for one-step forecasts, DM* = DM sqrt((n - 1) / n), against
  Student's t with n - 1 degrees of freedom (two-sided).
* The Model Confidence Set of Hansen, Lunde & Nason (2011), ``arch.bootstrap.MCS`` with
  the range statistic, the stationary bootstrap (block 1 for sequences) and a seed:
  the rows not significantly worse than the best at size 1 - level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import statsmodels.api as sm
from arch.bootstrap import MCS
from scipy.stats import t as student_t

#: The MCS keeps the rows whose elimination p-value exceeds 1 - MCS_LEVEL.
MCS_LEVEL = 0.9


def newey_west_lags(n: int) -> int:
    """The usual automatic truncation lag floor(4 (n / 100)^(2/9))."""
    return int(math.floor(4 * (n / 100) ** (2 / 9)))


def andrews_lags(d: np.ndarray) -> int:
    """Andrews' (1991) AR(1) plug-in bandwidth for the Bartlett kernel as a lag (module docstring)."""
    x = np.asarray(d, dtype=float) - float(np.mean(d))
    denominator = float(x[:-1] @ x[:-1])
    rho = float(np.clip(x[1:] @ x[:-1] / denominator, -0.99, 0.99)) if denominator > 0 else 0.0
    a = 4 * rho ** 2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    return max(0, math.ceil(1.1447 * (a * len(x)) ** (1 / 3)) - 1)


def hac_lags(d: np.ndarray) -> int:
    """The HAC lag of Diebold-Mariano on a series (module docstring), at most n - 2."""
    return min(max(newey_west_lags(len(d)), andrews_lags(d)), max(0, len(d) - 2))


@dataclass(frozen=True)
class DieboldMariano:
    """A row's mean loss difference to the reference, its CI at ``level``, DM* and its p-value."""

    mean_difference: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    n: int


def diebold_mariano(loss: np.ndarray, reference: np.ndarray, dependent: bool = True,
                    level: float = 0.9) -> DieboldMariano:
    """Diebold-Mariano with HAC variance and the HLN correction (module docstring), for losses (n,) of a
    row and of the reference on the same units."""
    d = np.asarray(loss, dtype=float) - np.asarray(reference, dtype=float)
    n = len(d)
    mean = float(d.mean())
    if n < 3 or np.ptp(d) == 0:
        return DieboldMariano(mean, mean, mean, 0.0 if mean == 0 else math.copysign(math.inf, mean),
                              1.0 if mean == 0 else 0.0, n)
    lags = hac_lags(d) if dependent else 0
    fit = sm.OLS(d, np.ones(n)).fit(cov_type="HAC", cov_kwds={"maxlags": lags})
    se = float(fit.bse[0]) / math.sqrt((n - 1) / n)  # HLN: DM* = DM sqrt((n - 1) / n)
    statistic = mean / se
    p = float(2 * student_t.sf(abs(statistic), n - 1))
    half = float(student_t.ppf(0.5 + level / 2, n - 1)) * se
    return DieboldMariano(mean, mean - half, mean + half, float(statistic), p, n)


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
