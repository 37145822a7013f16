"""The standard tests of interval forecasts, from the sequence of misses.

* Kupiec (1995), unconditional coverage: misses are Bernoulli(alpha). With n0 covered
  and n1 missed points and pi = n1 / (n0 + n1),
  LR_uc = -2 [n0 log(1 - alpha) + n1 log(alpha) - n0 log(1 - pi) - n1 log(pi)], asymptotically chi2(1).
* Christoffersen (1998), independence: misses follow a first-order Markov chain with
  n_ij transitions from state i to j (1 = miss); pi_01 = n01 / (n00 + n01),
  pi_11 = n11 / (n10 + n11), pi = (n01 + n11) / (n00 + n01 + n10 + n11),
  LR_ind = -2 [(n00 + n10) log(1 - pi) + (n01 + n11) log(pi)
               - n00 log(1 - pi_01) - n01 log(pi_01) - n10 log(1 - pi_11) - n11 log(pi_11)],
  asymptotically chi2(1); conditional coverage LR_cc = LR_uc + LR_ind, asymptotically chi2(2). 0 log 0 = 0.
  Their p-values come from the exact laws (:mod:`~pibench.reports.exact_coverage`), not the chi-squares,
  which on a few hundred steps rejected a true null up to 7.5% of the time at 5%, or under 2%.
* Sets of sequences: the exact binomial test of the number of jointly covered
  sequences against 1 - alpha.

A panel (fesp's 24 hourly series) pools the counts of its series: each series' misses
in time order give its transitions, summed over series (and over seeds for a row).
The misses of one time step (its series, a row's seeds) are not independent (a price
spike misses many hours of a day; two seeds of one method on one series miss alike),
so the counts are taken as clustered binary data, a time step (a test sequence) one
cluster, and each statistic is divided by its design effect (Rao & Scott 1992, "A
simple method for the analysis of clustered binary data"): for a proportion
p = sum x_j / sum n_j over clusters j of n_j indicators with x_j ones,
deff = sum (x_j - n_j p)^2 / (p (1 - p) sum n_j) (their variance estimate without its
m / (m - 1) factor for m clusters: hundreds here), at least 1 (the tests are never made
bolder than independence allows), exactly 1 where every cluster holds one indicator (a
single series of one seed: the plain tests), and sum n_j^2 / sum n_j, as if each cluster
moved as one, where p is 0 or 1 and the clusters tell nothing of their spread. LR_uc is
divided by the deff of the misses and referred to the exact law of n / deff steps with
n1 / deff misses (rounded); joint coverage is the binomial test on the covered and total
sequences divided by their deff, rounded. Identical seeds give exactly the one seed's
Kupiec and joint-coverage tests (deff = the number of seeds), and its independence and
conditional coverage tests up to the permutations' simulation error.

The independence test of several columns (a panel's series, a row's seeds) permutes whole
time steps (:func:`permutation_tests`): under the null the steps are exchangeable, whatever
ties the columns of one step, so the law of the pooled LR_ind over the steps' orders is
exact (2,000 of them drawn; a single series of one seed keeps the exact law of every
arrangement of its misses). Dividing LR_ind by the misses' deff instead, as pibench did,
overcorrected: a shock common to a step hits the steps after a miss and after a cover alike
and cancels in the contrast, so 24 series of a year whose misses share a day factor
(correlation 0.25-0.64) were rejected 0-0.75% of the time at 5% (permuting steps:
about 5%), and a weak day-to-day dependence (AR(1) 0.2 of the day factor) was found 5% of
the time (permuting: 25%). LR_cc = (LR_uc + LR_ind) / deff is referred to the permutation
draws / deff plus Kupiec's exact law at n / deff steps, independent of them.
No well-kept library implements these tests (arch and statsmodels do not); scipy's
binom and binomtest do the binomial laws.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binomtest

from pibench.reports.exact_coverage import lr_ind_of_transitions, lr_uc_of_misses, p_cc, p_ind, p_uc


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


def lr_uc(counts: MissCounts, alpha: float) -> float:
    """Kupiec's unconditional coverage statistic (module docstring)."""
    return float(lr_uc_of_misses(counts.n0 + counts.n1, counts.n1, alpha))


def lr_ind(counts: MissCounts) -> float:
    """Christoffersen's independence statistic (module docstring); 0 when a state is never left."""
    return float(lr_ind_of_transitions(counts.n00, counts.n01, counts.n10, counts.n11))


@dataclass(frozen=True)
class CoverageTests:
    """p-values of Kupiec's and Christoffersen's tests."""

    p_uc: float
    p_ind: float
    p_cc: float


def kupiec_scaled(counts: MissCounts, alpha: float, deff: float) -> tuple[int, float]:
    """(the steps of Kupiec's law, n / deff rounded; LR_uc / deff): the test of clustered misses."""
    return max(1, round((counts.n0 + counts.n1) / deff)), lr_uc(counts, alpha) / deff


def coverage_tests(counts: MissCounts, alpha: float, deff: float = 1.0) -> CoverageTests:
    """Exact p-values (:mod:`~pibench.reports.exact_coverage`) of LR_uc, LR_ind and LR_cc = LR_uc + LR_ind,
    the statistics divided by ``deff``. Kupiec's law is that of n / deff steps with n1 / deff misses; the
    laws with transitions, that of one series with as many transitions as were counted, divided by deff
    (series of a panel or seeds side by side have one fewer each than their steps), the misses in the same
    share (at least as many as its transitions need) and LR_uc scaled to its length (rounded; one series of
    one seed: n steps and n1 misses, exact). For a panel this is an approximation: at 5% independent misses
    were rejected 3-6% of the time on 24 series of 30 steps and 3 of 500, up to 8% on series of 2-3 steps."""
    steps, uc = kupiec_scaled(counts, alpha, deff)
    ind, n = lr_ind(counts) / deff, counts.n0 + counts.n1
    series = max(1, round((counts.n00 + counts.n01 + counts.n10 + counts.n11) / deff) + 1)
    ones = min(series, round(counts.n1 * series / n)) if n else 0
    # as many misses (and covered steps) as the transitions counted need, or the statistic seen lies outside
    # the law (two isolated misses of a 10-series panel: one miss in the law, p_ind 0)
    fewest = round((max(counts.n01, counts.n10) + counts.n11) / deff)
    most = series - round((max(counts.n01, counts.n10) + counts.n00) / deff)
    if fewest <= most:
        ones = min(max(ones, fewest), most)
    return CoverageTests(p_uc=p_uc(steps, uc, alpha), p_ind=p_ind(series, ones, ind),
                         p_cc=p_cc(series, uc * series / steps + ind, alpha))


def joint_coverage_test(covered: int, n: int, alpha: float) -> float:
    """Two-sided p-value of the exact binomial test of ``covered`` of ``n`` sequences against 1 - alpha."""
    return float(binomtest(int(covered), int(n), 1 - alpha).pvalue)


#: The columns of a series' clusters (:func:`step_clusters`): per time step t, the miss indicators observed
#: (series x seeds), the misses, of the transitions from t to t + 1 those 0 -> 1 and 1 -> 1, and the
#: indicators that have a step t + 1 (none at a series' last step, so that seeds of other lengths, side by
#: side, never make a transition from one's end to the other's start).
CLUSTER_COLUMNS = ("observed", "missed", "n01", "n11", "continued")


def step_clusters(misses: ArrayLike) -> np.ndarray:
    """(n_steps, 5) int counts per time step of misses (n_steps,) or (n_steps, G), in the order of
    :data:`CLUSTER_COLUMNS`. Summed over seeds step by step, they are a row's clusters."""
    m = np.asarray(misses, dtype=bool)
    if m.ndim == 1:
        m = m[:, None]
    out = np.zeros((len(m), 5), dtype=np.int64)
    out[:, 0], out[:, 1] = m.shape[1], m.sum(axis=1)
    out[:-1, 2] = (~m[:-1] & m[1:]).sum(axis=1)
    out[:-1, 3] = (m[:-1] & m[1:]).sum(axis=1)
    out[:-1, 4] = m.shape[1]
    return out


def counts_of(clusters: np.ndarray) -> MissCounts:
    """The pooled counts of a series' clusters (:func:`step_clusters`), as :func:`miss_counts` gives them."""
    observed, missed, n01, n11, continued = (clusters[:, j] for j in range(5))
    from1 = np.where(continued > 0, missed, 0)  # misses with a next step
    from0 = continued - from1
    return MissCounts(n0=int(observed.sum() - missed.sum()), n1=int(missed.sum()), n00=int(from0.sum() - n01.sum()),
                      n01=int(n01.sum()), n10=int(from1.sum() - n11.sum()), n11=int(n11.sum()))


def design_effect(ones: ArrayLike, trials: ArrayLike) -> float:
    """Rao & Scott's (1992) design effect of a proportion over clusters with ``trials`` (n_j,) indicators of
    which ``ones`` (n_j,) are 1 (module docstring): at least 1; 1 where every cluster has at most one
    indicator; sum n_j^2 / sum n_j where the proportion is 0 or 1."""
    x, n = np.asarray(ones, dtype=float), np.asarray(trials, dtype=float)
    total = n.sum()
    if total == 0 or n.max() <= 1:
        return 1.0
    p = x.sum() / total
    if p <= 0 or p >= 1:  # no spread to estimate it from: as if each cluster moved as one
        return float((n ** 2).sum() / total)
    return max(1.0, float(((x - n * p) ** 2).sum() / (p * (1 - p) * total)))


@dataclass(frozen=True)
class ClusteredTests(CoverageTests):
    """:class:`CoverageTests` of clustered misses, with the design effect of the misses."""

    design_effect: float


#: Permutations of whole time steps for the independence test of several series or seeds side by side.
PERMUTATIONS = 2000


def pooled_lr_ind(misses: np.ndarray, orders: np.ndarray | None = None) -> np.ndarray:
    """LR_ind of the transitions pooled over the columns of ``misses`` (n, C), its steps in their order, or in
    each of ``orders`` (k, n) (then one per order): a step's columns packed into bits, the 1 -> 1 transitions
    between consecutive steps counted by popcount."""
    m = np.asarray(misses, dtype=bool)
    order = np.arange(len(m))[None] if orders is None else orders
    rows, words = m.sum(axis=1), np.packbits(m, axis=1)[order]  # (k, n, C / 8)
    total, transitions = int(rows.sum()), (len(m) - 1) * m.shape[1]
    n11 = np.bitwise_count(words[:, :-1] & words[:, 1:]).sum(axis=(1, 2), dtype=np.int64)
    from1, to1 = total - rows[order[:, -1]], total - rows[order[:, 0]]  # misses with a next, a previous step
    lr = lr_ind_of_transitions(transitions - from1 - (to1 - n11), to1 - n11, from1 - n11, n11)
    return lr if orders is not None else lr[0]


def permutation_tests(misses: np.ndarray, alpha: float, deff: float, kupiec: tuple[int, float],
                      reps: int = PERMUTATIONS, chunk: int = 250) -> tuple[float, float]:
    """(p_ind, p_cc) of misses (n, C) of series or seeds side by side by permuting whole time steps (module
    docstring): LR_ind of the pooled transitions against its law over ``reps`` orders of the steps, exact
    where the steps are exchangeable whatever ties a step's columns; LR_cc = (LR_uc + LR_ind) / ``deff``
    against the same draws / deff plus Kupiec's exact law at n / deff steps (``kupiec``: those steps and
    LR_uc / deff, :func:`kupiec_scaled`), independent of them (an
    approximation, as LR_ind's law is given the misses counted: three identical seeds of 365 steps rejected
    at 5% 6.0% of the time where the one seed's exact test did 4.5%, 1,500 draws). The draws are seeded by the misses
    themselves, whatever their columns' order: equal misses, equal p-values, whatever row they are of."""
    m = np.asarray(misses, dtype=bool)
    columns = sorted(column.tobytes() for column in np.packbits(m, axis=0).T)
    digest = hashlib.sha256(str(m.shape).encode() + b"".join(columns)).digest()  # whatever the columns' order
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    observed = float(pooled_lr_ind(m))
    steps_in_order = np.broadcast_to(np.arange(len(m)), (chunk, len(m)))
    draws = np.concatenate([pooled_lr_ind(m, rng.permuted(steps_in_order[:min(chunk, reps - start)], axis=1))
                            for start in range(0, reps, chunk)])
    tolerance = 1e-9 * max(1.0, observed)  # the observed order is one of the orders: counted once more
    p_ind = (1 + int(np.sum(draws >= observed - tolerance))) / (reps + 1)
    # LR_ind on LR_uc's scale (both / deff; identical columns give the one column's LR_cc), and for each order
    # drawn the exact chance that Kupiec's statistic makes up the rest: no floor of 1 / (reps + 1) under p_uc
    steps, uc = kupiec
    p_cc = float(np.mean(p_uc(steps, uc + (observed - np.r_[observed, draws]) / deff, alpha)))
    return p_ind, p_cc


def clustered_coverage_tests(clusters: np.ndarray, alpha: float, misses: np.ndarray | None = None
                             ) -> ClusteredTests:
    """Kupiec's and Christoffersen's tests of a series' clusters (:func:`step_clusters`), LR_uc divided by the
    design effect of the misses; LR_ind too, unless ``misses`` (n, C), the columns side by side (series,
    seeds), are given with two columns or more: then the independence and conditional coverage tests
    permute whole time steps (:func:`permutation_tests`; module docstring)."""
    deff, counts = design_effect(clusters[:, 1], clusters[:, 0]), counts_of(clusters)
    if misses is not None and misses.ndim == 2 and misses.shape[1] > 1 and len(misses) > 1:
        kupiec = kupiec_scaled(counts, alpha, deff)
        return ClusteredTests(p_uc(*kupiec, alpha), *permutation_tests(misses, alpha, deff, kupiec),
                              design_effect=deff)
    tests = coverage_tests(counts, alpha, deff)
    return ClusteredTests(p_uc=tests.p_uc, p_ind=tests.p_ind, p_cc=tests.p_cc, design_effect=deff)


def clustered_joint_coverage_test(covered: ArrayLike, seeds: ArrayLike, alpha: float) -> tuple[float, float]:
    """(p-value, design effect) of the binomial test of joint coverage, a test sequence one cluster:
    ``covered`` (n,) of its ``seeds`` (n,) cover it jointly; the counts divided by the design effect and
    rounded (module docstring)."""
    x, n = np.asarray(covered, dtype=float), np.asarray(seeds, dtype=float)
    deff = design_effect(x, n)
    total = max(1, round(n.sum() / deff))
    return joint_coverage_test(min(total, round(x.sum() / deff)), total, alpha), deff
