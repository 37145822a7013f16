"""The exact laws of Kupiec's and Christoffersen's statistics (reports/exact_coverage.py): against every
sequence of a short span enumerated, their level computed exactly (no simulation) beside the chi-squares',
and the chi-square where the exact sum would be too long."""

import itertools

import numpy as np
import pytest
from scipy.stats import binom, chi2

from pibench.reports.exact_coverage import MAX_CELLS, arrangements, lr_uc_of_misses, p_cc, p_ind, p_uc
from pibench.reports.interval_tests import (
    clustered_coverage_tests,
    coverage_tests,
    lr_ind,
    lr_uc,
    miss_counts,
    step_clusters,
)


def test_the_p_values_equal_an_enumeration_of_every_sequence():
    """All 4,096 miss sequences of 12 steps at alpha 0.2: each p-value is the probability (under i.i.d.
    Bernoulli misses) of the sequences whose statistic is at least the one seen; independence's among the
    sequences with as many misses, all equally likely."""
    n, alpha = 12, 0.2
    seqs = np.array(list(itertools.product([False, True], repeat=n)))
    counts = [miss_counts(s) for s in seqs]
    uc = np.array([lr_uc(c, alpha) for c in counts])
    ind = np.array([lr_ind(c) for c in counts])
    ones = seqs.sum(axis=1)
    prob = alpha ** ones * (1 - alpha) ** (n - ones)
    assert prob.sum() == pytest.approx(1.0)
    for i in range(0, len(seqs), 7):
        tests = coverage_tests(counts[i], alpha)
        same = ones == ones[i]
        assert tests.p_uc == pytest.approx(prob[uc >= uc[i] - 1e-9].sum(), abs=1e-12)
        assert tests.p_ind == pytest.approx(np.mean(ind[same] >= ind[i] - 1e-9), abs=1e-12)
        assert tests.p_cc == pytest.approx(prob[uc + ind >= uc[i] + ind[i] - 1e-9].sum(), abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 7, 60])
def test_every_miss_count_has_a_whole_law(n):
    for ones in range(n + 1):
        values, tail = arrangements(n, ones)
        assert tail[0] == pytest.approx(1.0) and np.all(np.diff(values) >= 0) and np.all(np.diff(tail) <= 1e-15)


def rejection_rates(n: int, alpha: float, level: float = 0.05) -> dict[str, dict[str, float]]:
    """The exact probability, under i.i.d. Bernoulli(alpha) misses of n steps, that each test rejects at
    ``level``: with the exact p-values and with the chi-square ones."""
    rates = {"exact": {"uc": 0.0, "ind": 0.0, "cc": 0.0}, "chi2": {"uc": 0.0, "ind": 0.0, "cc": 0.0}}
    for k in range(n + 1):
        weight = binom.pmf(k, n, alpha)
        if weight < 1e-12:
            continue
        uc = float(lr_uc_of_misses(n, k, alpha))
        values, tail = arrangements(n, k)
        cell = -np.diff(np.r_[tail, 0.0])  # the probability of each sorted value
        rates["exact"]["uc"] += weight * (p_uc(n, uc, alpha) <= level)
        rates["chi2"]["uc"] += weight * (chi2.sf(uc, 1) <= level)
        rates["exact"]["ind"] += weight * sum(c for v, c in zip(values, cell) if p_ind(n, k, v) <= level)
        rates["chi2"]["ind"] += weight * cell[chi2.sf(values, 1) <= level].sum()
        rates["exact"]["cc"] += weight * sum(c for v, c in zip(values, cell) if p_cc(n, uc + v, alpha) <= level)
        rates["chi2"]["cc"] += weight * cell[chi2.sf(uc + values, 2) <= level].sum()
    return rates


@pytest.mark.parametrize(("n", "alpha"), [(100, 0.05), (250, 0.1), (250, 0.05), (600, 0.1)])
def test_the_exact_tests_never_reject_a_true_null_more_than_their_level(n, alpha):
    rates = rejection_rates(n, alpha)
    for name, rate in rates["exact"].items():
        assert rate <= 0.05 + 1e-9, (name, rates)
    assert rates["exact"]["cc"] > 0.03, rates  # and the lattice is fine enough to come near it


def test_the_chi_squares_missed_their_level_on_a_few_hundred_steps():
    """What the exact laws replace: at 250 steps and alpha 0.1 independence rejected a true null 7.5% of the
    time at 5%, at 1,000 steps and alpha 0.05 8.2%; at 100 steps and alpha 0.05 Kupiec's test 6.5%."""
    assert rejection_rates(250, 0.1)["chi2"]["ind"] > 0.07
    assert rejection_rates(1000, 0.05)["chi2"]["ind"] > 0.07
    assert rejection_rates(100, 0.05)["chi2"]["uc"] > 0.06


def test_a_long_span_keeps_the_chi_square_and_it_agrees_with_the_exact_law_below_the_limit():
    n = 4000
    for lr in (2.0, 6.0, 10.0):
        assert p_cc(n, lr, 0.1) == pytest.approx(chi2.sf(lr, 2), abs=0.01)
    long = 40 * MAX_CELLS // 100  # far more terms than MAX_CELLS
    assert p_cc(long, 6.0, 0.1) == chi2.sf(6.0, 2)


def test_independence_is_exact_whatever_the_miss_rate():
    """Conditional on the number of misses the permutation law does not depend on their rate: a series
    missing 30% of the time (asked 10%) is still tested for independence at its level."""
    n = 200
    rate = 0.0
    for k in range(n + 1):
        values, tail = arrangements(n, k)
        cell = -np.diff(np.r_[tail, 0.0])
        rate += binom.pmf(k, n, 0.3) * sum(c for v, c in zip(values, cell) if p_ind(n, k, v) <= 0.05)
    assert 0.02 < rate <= 0.05


def test_isolated_misses_of_seeds_side_by_side_are_not_taken_for_clustered_ones():
    """Three seeds of 500 steps, one or two isolated misses: the counts have 1,497 transitions, where one
    series of 1,500 steps has 1,499; referred to that series' law, a single isolated miss scored above every
    arrangement and p_ind was 0 (the chi-square said 0.97). Referred to the law of as many transitions, it is
    the series' own p-value."""
    misses = np.zeros((500, 3), dtype=bool)
    misses[200, 1] = True
    one_series = np.zeros(1498, dtype=bool)
    one_series[700] = True
    pooled = clustered_coverage_tests(step_clusters(misses), 0.01)
    assert pooled.p_ind == pytest.approx(coverage_tests(miss_counts(one_series), 0.01).p_ind) and pooled.p_ind > 0.99
    misses[300, 2] = True
    assert clustered_coverage_tests(step_clusters(misses), 0.01).p_ind > 0.99
    # ten series of three steps, two isolated misses: the law of one series with as many transitions (21 steps)
    # and the misses' share (1.4, rounded to 1) had no room for the two 1 -> 0 transitions seen: p_ind 0
    panel = np.zeros((3, 10), dtype=bool)
    panel[1, 6] = panel[0, 8] = True
    assert clustered_coverage_tests(step_clusters(panel), 0.1).p_ind > 0.9


def test_the_tests_of_a_panel_hold_their_level():
    """Panels whose series (or seeds) miss independently at the nominal rate: 100 series of 10 steps, 3 of 500."""
    rng = np.random.default_rng(0)
    for steps, series, alpha in ((10, 100, 0.1), (500, 3, 0.05)):
        rejected = np.zeros(3)
        for _ in range(400):
            tests = clustered_coverage_tests(step_clusters(rng.random((steps, series)) < alpha), alpha)
            rejected += np.array([tests.p_uc, tests.p_ind, tests.p_cc]) < 0.05
        assert (rejected / 400 <= 0.075).all(), (steps, series, rejected / 400)  # about 0.03-0.05 each
