"""Exact p-values of Kupiec's and Christoffersen's tests (:mod:`pibench.reports.interval_tests`) for one series.

Their chi-square laws are asymptotic, and on a few hundred steps the statistics' lattice is coarse: at
n = 250 and alpha = 0.1, Christoffersen's independence test rejected a true null 7.5% of the time at 5%,
at alpha = 0.05 only 1.7% of it (at n = 1,000, 8.2%). The exact laws below need no simulation.

Under the null the misses of n steps are i.i.d. Bernoulli. Given their number n1 (n0 = n - n1 covered),
every arrangement is equally likely, and an arrangement's transition counts depend only on its number R of
runs of misses and on whether its first and last steps miss (x1, xn):
n11 = n1 - R, n01 = R - x1, n10 = R - xn, n00 = n - 1 - n01 - n10 - n11.
Of the C(n, n1) arrangements, C(n1 - 1, R - 1) C(n0 - 1, R - x1 - xn) have a given (R, x1, xn): the misses
split into R non-empty runs, placed in R of the n0 + 1 gaps around the covered steps, the first (last) gap
taken exactly when x1 (xn) is 1, the others among the n0 - 1 inner gaps (the runs test of Wald and
Wolfowitz, 1940, counts the same arrangements).

* Kupiec (unconditional coverage): p = P(LR_uc(N1) >= LR_uc(n1)), N1 ~ Binomial(n, alpha).
* Christoffersen (independence): p = P(LR_ind >= observed | n1), over the arrangements of the n1 misses:
  a permutation test, exact whatever the miss rate (it is the conditional law of every i.i.d. null).
* Conditional coverage: p = sum over k of P(N1 = k) P(LR_uc(k) + LR_ind >= observed | k).

Each p-value is the probability of a statistic at least as large as the one observed, so a test at level a
rejects a true null at most a of the time (less where the lattice is coarse). The clustered tests
(:func:`~pibench.reports.interval_tests.coverage_tests`) pass the statistics divided by the design effect
with effective numbers of steps and misses, as the binomial test of joint coverage does. Where the
conditional-coverage law would take more than :data:`MAX_CELLS` terms (from about 1,000 misses expected),
its chi-square(2) law is used: there the lattice is fine (its level at 5% is 5.0-5.1%).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln, xlogy
from scipy.stats import binom, chi2

#: The most (n1, R, x1, xn) terms the exact conditional-coverage law is summed over.
MAX_CELLS = 2_000_000
#: Binomial probabilities below this times the largest one are left out of the conditional-coverage sum.
_NEGLIGIBLE = 1e-16
#: Arrangements less likely than exp(-this) times the likeliest given their miss count are left out.
_NEGLIGIBLE_LOG = 69.0
#: Statistics within this (relative) of the observed one are taken as equal to it: the same lattice point.
_TIE = 1e-9


def _log_choose(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """log C(a, b), -inf where b < 0 or b > a."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    ok = (b >= 0) & (b <= a)
    out = np.full(a.shape, -np.inf)
    out[ok] = gammaln(a[ok] + 1) - gammaln(b[ok] + 1) - gammaln(a[ok] - b[ok] + 1)
    return out


def lr_ind_of_transitions(n00, n01, n10, n11) -> np.ndarray:
    """Christoffersen's LR_ind of transition counts (arrays or numbers), 0 log 0 = 0, never below 0."""
    n00, n01, n10, n11 = (np.asarray(x, dtype=float) for x in (n00, n01, n10, n11))
    total = n00 + n01 + n10 + n11
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.where(total > 0, (n01 + n11) / total, 0.0)
        pi01 = np.where(n00 + n01 > 0, n01 / (n00 + n01), 0.0)
        pi11 = np.where(n10 + n11 > 0, n11 / (n10 + n11), 0.0)
    restricted = xlogy(n00 + n10, 1 - pi) + xlogy(n01 + n11, pi)
    unrestricted = xlogy(n00, 1 - pi01) + xlogy(n01, pi01) + xlogy(n10, 1 - pi11) + xlogy(n11, pi11)
    return np.maximum(0.0, -2.0 * (restricted - unrestricted))


@lru_cache(maxsize=1024)
def arrangements(n: int, n1: int) -> tuple[np.ndarray, np.ndarray]:
    """The law of LR_ind given n1 misses in n steps (module docstring): its values sorted, and the
    probability of a value at least each of them (the upper tail, same order)."""
    n0 = n - n1
    if n1 == 0 or n0 == 0:  # one arrangement, no transition between states
        return _sorted_law(np.zeros(1), np.ones(1))
    runs = np.arange(1, min(n1, n0 + 1) + 1)
    r, x1, xn = (a.ravel() for a in np.meshgrid(runs, [0, 1], [0, 1], indexing="ij"))
    log_count = _log_choose(n1 - 1, r - 1) + _log_choose(n0 - 1, r - x1 - xn) - _log_choose(n, n1)
    keep = log_count > log_count.max() - _NEGLIGIBLE_LOG  # atoms below 1e-30 of the likeliest change no p-value
    r, x1, xn, prob = r[keep], x1[keep], xn[keep], np.exp(log_count[keep])
    n11, n01, n10 = n1 - r, r - x1, r - xn
    return _sorted_law(lr_ind_of_transitions(n - 1 - n01 - n10 - n11, n01, n10, n11), prob)


def _sorted_law(values: np.ndarray, prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values sorted, P(value >= each)) of a law given by its atoms."""
    order = np.argsort(values, kind="stable")
    values, prob = values[order], prob[order]
    tail = np.minimum(np.cumsum(prob[::-1])[::-1] / prob.sum(), 1.0)
    values.flags.writeable = tail.flags.writeable = False  # cached: no caller may change them
    return values, tail


def _upper_tail(values: np.ndarray, tail: np.ndarray, observed: float) -> float:
    """P(statistic >= observed) of a law given as :func:`arrangements` gives it, ties included."""
    i = int(np.searchsorted(values, observed - _TIE * max(1.0, abs(observed)), side="left"))
    return float(tail[i]) if i < len(values) else 0.0


def lr_uc_of_misses(n: int, n1, alpha: float) -> np.ndarray:
    """Kupiec's LR_uc of n1 (a number or an array) misses in n steps, 0 log 0 = 0."""
    n1 = np.asarray(n1, dtype=float)
    pi = n1 / n
    return -2.0 * (xlogy(n - n1, 1 - alpha) + xlogy(n1, alpha) - xlogy(n - n1, 1 - pi) - xlogy(n1, pi))


def p_uc(n: int, lr: float, alpha: float) -> float:
    """P(LR_uc(N1) >= lr), N1 ~ Binomial(n, alpha)."""
    k = np.arange(n + 1)
    tail = lr_uc_of_misses(n, k, alpha) >= lr - _TIE * max(1.0, abs(lr))
    return float(min(1.0, binom.pmf(k[tail], n, alpha).sum()))


def p_ind(n: int, n1: int, lr: float) -> float:
    """P(LR_ind >= lr | n1 misses in n steps): the permutation test of independence."""
    return _upper_tail(*arrangements(n, n1), lr)


@lru_cache(maxsize=4)
def _cc_law(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The law of LR_uc + LR_ind under i.i.d. Bernoulli(alpha) misses of n steps, as :func:`arrangements`
    gives one; None where it would take more than :data:`MAX_CELLS` terms."""
    k = np.arange(n + 1)
    pmf = binom.pmf(k, n, alpha)
    keep = pmf >= _NEGLIGIBLE * pmf.max()
    k, pmf = k[keep], pmf[keep]
    if 4 * np.minimum(k, n - k + 1).sum() > MAX_CELLS:
        return None
    values, prob = [], []
    for j, weight, uc in zip(k, pmf, lr_uc_of_misses(n, k, alpha)):
        ind, tail = arrangements(n, int(j))
        values.append(uc + ind)
        prob.append(weight * -np.diff(np.r_[tail, 0.0]))
    return _sorted_law(np.concatenate(values), np.concatenate(prob))


def p_cc(n: int, lr: float, alpha: float) -> float:
    """P(LR_uc + LR_ind >= lr) under i.i.d. Bernoulli(alpha) misses; chi-square(2) where the exact law would
    take more than :data:`MAX_CELLS` terms."""
    law = _cc_law(n, alpha)
    return float(chi2.sf(lr, 2)) if law is None else _upper_tail(*law, lr)
