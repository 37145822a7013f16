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


def _log_choose(a: np.ndarray, b: np.ndarray, log_factorial: np.ndarray) -> np.ndarray:
    """log C(a, b) of whole numbers from a table of log k! (k = 0 .. at least max a), -inf where b < 0 or b > a."""
    ok = (b >= 0) & (b <= a)
    a, b = np.where(ok, a, 0), np.where(ok, b, 0)
    return np.where(ok, log_factorial[a] - log_factorial[b] - log_factorial[a - b], -np.inf)


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


def _cells(n: int, misses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (n1, R, x1, xn) of n steps for each n1 of ``misses`` (module docstring), all at once: n1 of each
    cell, its LR_ind and its probability given its n1 (cells below 1e-30 of their n1's likeliest left out)."""
    misses = np.asarray(misses, dtype=np.int64)
    most = np.where((misses == 0) | (misses == n), 1, np.minimum(misses, n - misses + 1))  # runs 1..most
    runs = np.arange(most.sum()) - np.repeat(np.cumsum(most) - most, most) + 1  # 1..most for each n1
    ones, runs = np.repeat(np.repeat(misses, most), 4), np.repeat(runs, 4)
    x1, xn = np.tile([0, 0, 1, 1], len(ones) // 4), np.tile([0, 1, 0, 1], len(ones) // 4)
    zeros = n - ones
    log_factorial = gammaln(np.arange(n + 1) + 1.0)
    log_count = (_log_choose(ones - 1, runs - 1, log_factorial) + _log_choose(zeros - 1, runs - x1 - xn, log_factorial)
                 - _log_choose(np.full_like(ones, n), ones, log_factorial))
    one_state = (ones == 0) | (zeros == 0)  # one arrangement, no transition between states: its first cell
    first = np.r_[True, np.diff(ones) != 0]
    log_count = np.where(one_state, np.where(first, 0.0, -np.inf), log_count)
    best = np.maximum.reduceat(log_count, np.flatnonzero(first))[np.cumsum(first) - 1]
    keep = log_count > best - _NEGLIGIBLE_LOG
    ones, runs, x1, xn, prob = ones[keep], runs[keep], x1[keep], xn[keep], np.exp(log_count[keep])
    stat = np.zeros(len(ones))
    moves = ~one_state[keep]
    n11, n01, n10 = ones[moves] - runs[moves], runs[moves] - x1[moves], runs[moves] - xn[moves]
    stat[moves] = lr_ind_of_transitions(n - 1 - n01 - n10 - n11, n01, n10, n11)
    return ones, stat, prob


@lru_cache(maxsize=1024)
def arrangements(n: int, n1: int) -> tuple[np.ndarray, np.ndarray]:
    """The law of LR_ind given n1 misses in n steps (module docstring): its values sorted, and the
    probability of a value at least each of them (the upper tail, same order)."""
    _, stat, prob = _cells(n, np.array([n1]))
    return _sorted_law(stat, prob)


def _sorted_law(values: np.ndarray, prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values sorted, P(value >= each)) of a law given by its atoms."""
    order = np.argsort(values, kind="stable")
    values, prob = values[order], prob[order]
    tail = np.minimum(np.cumsum(prob[::-1])[::-1] / prob.sum(), 1.0)
    values.flags.writeable = tail.flags.writeable = False  # cached: no caller may change them
    return values, tail


def _upper_tail(values: np.ndarray, tail: np.ndarray, observed):
    """P(statistic >= observed) of a law given as :func:`arrangements` gives it, ties included; ``observed`` a
    number (a float back) or an array (an array of the tails)."""
    seen = np.asarray(observed, dtype=float)
    i = np.searchsorted(values, seen - _TIE * np.maximum(1.0, np.abs(seen)), side="left")
    out = np.where(i < len(values), tail[np.minimum(i, len(values) - 1)], 0.0)
    return float(out) if out.ndim == 0 else out


def lr_uc_of_misses(n: int, n1, alpha: float) -> np.ndarray:
    """Kupiec's LR_uc of n1 (a number or an array) misses in n steps, 0 log 0 = 0."""
    n1 = np.asarray(n1, dtype=float)
    pi = n1 / n
    return -2.0 * (xlogy(n - n1, 1 - alpha) + xlogy(n1, alpha) - xlogy(n - n1, 1 - pi) - xlogy(n1, pi))


def p_uc(n: int, lr, alpha: float):
    """P(LR_uc(N1) >= lr), N1 ~ Binomial(n, alpha): a float for a number ``lr``, an array for an array."""
    k = np.arange(n + 1)
    return _upper_tail(*_sorted_law(lr_uc_of_misses(n, k, alpha), binom.pmf(k, n, alpha)), lr)


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
    ones, ind, prob = _cells(n, k)
    at = np.searchsorted(k, ones)
    return _sorted_law(lr_uc_of_misses(n, k, alpha)[at] + ind, pmf[at] * prob)


def p_cc(n: int, lr: float, alpha: float) -> float:
    """P(LR_uc + LR_ind >= lr) under i.i.d. Bernoulli(alpha) misses; chi-square(2) where the exact law would
    take more than :data:`MAX_CELLS` terms."""
    law = _cc_law(n, alpha)
    return float(chi2.sf(lr, 2)) if law is None else _upper_tail(*law, lr)
