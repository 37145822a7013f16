"""The standard tests of interval forecasts, from the sequence of misses.

* Kupiec (1995), unconditional coverage: misses are Bernoulli(alpha). With n0 covered
  and n1 missed points and pi = n1 / (n0 + n1),
  LR_uc = -2 [n0 log(1 - alpha) + n1 log(alpha) - n0 log(1 - pi) - n1 log(pi)] ~ chi2(1).
* Christoffersen (1998), independence: misses follow a first-order Markov chain with
  n_ij transitions from state i to j (1 = miss); pi_01 = n01 / (n00 + n01),
  pi_11 = n11 / (n10 + n11), pi = (n01 + n11) / (n00 + n01 + n10 + n11),
  LR_ind = -2 [(n00 + n10) log(1 - pi) + (n01 + n11) log(pi)
               - n00 log(1 - pi_01) - n01 log(pi_01) - n10 log(1 - pi_11) - n11 log(pi_11)] ~ chi2(1);
  conditional coverage LR_cc = LR_uc + LR_ind ~ chi2(2). 0 log 0 = 0.
* Sets of sequences: the exact binomial test of the number of jointly covered
  sequences against 1 - alpha.

A panel (fesp's 24 hourly series) pools the counts of its series: each series' misses
in time order give its transitions, summed over series (and over seeds for a row).
No well-kept library implements these tests (arch and statsmodels do not); scipy's
chi2 and binomtest do the distributions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import xlogy
from scipy.stats import binomtest, chi2


@dataclass(frozen=True)
class MissCounts:
    """Counts of a miss sequence: covered and missed points, and the first-order transitions."""

    n0: int
    n1: int
    n00: int
    n01: int
    n10: int
    n11: int

    def __add__(self, other: MissCounts) -> MissCounts:
        return MissCounts(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def as_tuple(self) -> tuple[int, int, int, int, int, int]:
        return self.n0, self.n1, self.n00, self.n01, self.n10, self.n11


def miss_counts(misses: ArrayLike) -> MissCounts:
    """Counts of misses (n_steps,) or (n_steps, G), 1 = the interval missed; transitions are counted
    along time within each series (column)."""
    m = np.asarray(misses, dtype=bool)
    if m.ndim == 1:
        m = m[:, None]
    before, after = m[:-1], m[1:]
    return MissCounts(n0=int((~m).sum()), n1=int(m.sum()), n00=int((~before & ~after).sum()),
                      n01=int((~before & after).sum()), n10=int((before & ~after).sum()),
                      n11=int((before & after).sum()))


def _loglik(zeros: float, ones: float, p: float) -> float:
    """log likelihood of ``zeros`` failures and ``ones`` successes of a Bernoulli(p), 0 log 0 = 0."""
    return float(xlogy(zeros, 1 - p) + xlogy(ones, p))


def lr_uc(counts: MissCounts, alpha: float) -> float:
    """Kupiec's unconditional coverage statistic (module docstring)."""
    n = counts.n0 + counts.n1
    pi = counts.n1 / n
    return -2.0 * (_loglik(counts.n0, counts.n1, alpha) - _loglik(counts.n0, counts.n1, pi))


def lr_ind(counts: MissCounts) -> float:
    """Christoffersen's independence statistic (module docstring); 0 when a state is never left."""
    n00, n01, n10, n11 = counts.n00, counts.n01, counts.n10, counts.n11
    total = n00 + n01 + n10 + n11
    if total == 0:
        return 0.0
    pi = (n01 + n11) / total
    pi01 = n01 / (n00 + n01) if n00 + n01 else 0.0
    pi11 = n11 / (n10 + n11) if n10 + n11 else 0.0
    restricted = _loglik(n00 + n10, n01 + n11, pi)
    unrestricted = _loglik(n00, n01, pi01) + _loglik(n10, n11, pi11)
    return max(0.0, -2.0 * (restricted - unrestricted))


@dataclass(frozen=True)
class CoverageTests:
    """p-values of Kupiec's and Christoffersen's tests."""

    p_uc: float
    p_ind: float
    p_cc: float


def coverage_tests(counts: MissCounts, alpha: float) -> CoverageTests:
    """p-values of LR_uc (chi2(1)), LR_ind (chi2(1)) and LR_cc = LR_uc + LR_ind (chi2(2))."""
    uc, ind = lr_uc(counts, alpha), lr_ind(counts)
    return CoverageTests(p_uc=float(chi2.sf(uc, 1)), p_ind=float(chi2.sf(ind, 1)), p_cc=float(chi2.sf(uc + ind, 2)))


def joint_coverage_test(covered: int, n: int, alpha: float) -> float:
    """Two-sided p-value of the exact binomial test of ``covered`` of ``n`` sequences against 1 - alpha."""
    return float(binomtest(int(covered), int(n), 1 - alpha).pvalue)
