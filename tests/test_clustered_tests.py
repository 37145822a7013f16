"""The interval-forecast tests on clustered misses (a panel's series, a row's seeds) and Diebold-Mariano on
persistent loss differences: sizes checked by simulation against the truth (misses of known rate with a
common shock per step, AR(1) differences of mean zero), invariants (identical seeds are one seed, one series
keeps the plain tests) and hand computations; and where a user reads them (a row of several seeds on one CSV)."""

import math

import numpy as np
import pandas as pd
import pytest
from arch.bootstrap import MCS
from scipy.signal import lfilter
from scipy.stats import norm

from pibench import run
from pibench.reports.bootstrap_ci import block_length
from pibench.reports.comparisons import (
    _resampled_means,
    andrews_bandwidth,
    bootstrap_mcs,
    diebold_mariano,
    ewc_degrees,
    ewc_variance,
    mcs_p_values,
    model_confidence_set,
)
from pibench.reports.interval_tests import (
    clustered_coverage_tests,
    clustered_joint_coverage_test,
    counts_of,
    coverage_tests,
    design_effect,
    joint_coverage_test,
    miss_counts,
    step_clusters,
)


def shocked_misses(n_steps: int, series: int, miss_rate: float, shared: float, rng: np.random.Generator) -> np.ndarray:
    """(n_steps, series) misses of rate ``miss_rate``, independent over time, each step's series sharing a
    Gaussian shock with correlation ``shared`` (a price spike that every hour of a day misses)."""
    common = rng.standard_normal((n_steps, 1))
    own = rng.standard_normal((n_steps, series))
    return math.sqrt(shared) * common + math.sqrt(1 - shared) * own > norm.ppf(1 - miss_rate)


def test_the_clusters_pool_to_the_plain_counts():
    rng = np.random.default_rng(0)
    for shape in ((50,), (40, 3), (2, 5), (1, 4)):
        misses = rng.random(shape) < 0.3
        assert counts_of(step_clusters(misses)) == miss_counts(misses)


def test_the_design_effect_equals_a_hand_computation():
    # p = 6 / 12; sum (x - n p)^2 = 0.25 + 2.25 + 0.25 + 2.25 = 5; p (1 - p) sum n = 3
    assert design_effect([2, 0, 1, 3], [3, 3, 3, 3]) == pytest.approx(5 / 3, rel=1e-12)
    assert design_effect([1, 0, 1, 1], [1, 1, 1, 1]) == 1.0  # one indicator per cluster: no clustering
    assert design_effect([1, 2, 1, 2], [3, 3, 3, 3]) == 1.0  # less spread than independence: never below 1
    assert design_effect([0, 0], [3, 3]) == 3.0  # no miss: nothing tells the spread, so as if each moved as one
    assert design_effect([4, 2], [4, 2]) == pytest.approx(20 / 6)  # all missed: sum n^2 / sum n


def test_one_series_of_one_seed_keeps_the_plain_tests():
    rng = np.random.default_rng(1)
    misses = rng.random(700) < 0.12
    plain = coverage_tests(miss_counts(misses), 0.1)
    clustered = clustered_coverage_tests(step_clusters(misses), 0.1)
    assert (clustered.p_uc, clustered.p_ind, clustered.p_cc) == (plain.p_uc, plain.p_ind, plain.p_cc)
    assert clustered.design_effect == 1.0
    covered = (rng.random(150) < 0.85).astype(int)
    assert clustered_joint_coverage_test(covered, np.ones(150), 0.1) == (
        joint_coverage_test(covered.sum(), 150, 0.1), 1.0)


def test_identical_seeds_give_the_one_seeds_tests():
    """Three seeds that miss alike are one seed's evidence, not three times it."""
    rng = np.random.default_rng(2)
    misses = rng.random(600) < 0.14
    one = clustered_coverage_tests(step_clusters(misses), 0.1)
    three = clustered_coverage_tests(3 * step_clusters(misses), 0.1)
    assert three.design_effect == pytest.approx(3.0, rel=1e-12)
    for name in ("p_uc", "p_ind", "p_cc"):
        assert getattr(three, name) == pytest.approx(getattr(one, name), rel=1e-9), name
    pooled = coverage_tests(miss_counts(np.column_stack([misses] * 3)), 0.1)
    assert pooled.p_uc < one.p_uc / 10  # what counting them as independent claimed
    covered = (rng.random(120) < 0.8).astype(int)
    p_three, deff = clustered_joint_coverage_test(3 * covered, np.full(120, 3), 0.1)
    assert deff == pytest.approx(3.0) and p_three == pytest.approx(joint_coverage_test(covered.sum(), 120, 0.1))


@pytest.mark.parametrize("misses", [np.zeros(25, bool), np.r_[np.zeros(40, bool), True, np.zeros(40, bool), True,
                                                                np.zeros(19, bool)]])
def test_seeds_alike_count_once_where_a_state_is_never_left(misses):
    """No miss, or isolated misses (no miss follows a miss): a design effect per state could not be had and
    fell back to 1, so five identical seeds tested as five times the evidence (p_uc 0.022 became 2.9e-7)."""
    one = clustered_coverage_tests(step_clusters(misses), 0.1)
    five = clustered_coverage_tests(5 * step_clusters(misses), 0.1)
    for name in ("p_uc", "p_ind", "p_cc"):
        assert getattr(five, name) == pytest.approx(getattr(one, name), rel=1e-9), name
    assert clustered_joint_coverage_test(np.full(30, 5), np.full(30, 5), 0.1) == (
        pytest.approx(joint_coverage_test(30, 30, 0.1)), 5.0)  # every sequence covered by all five


def test_seeds_of_other_lengths_side_by_side_make_no_transition_between_them():
    from pibench.reports.statistics import row_clusters

    class Member:
        def __init__(self, misses):
            self.clusters = step_clusters(np.asarray(misses, bool))

    a, b = [0, 0, 1, 1], [1, 0, 0]
    assert counts_of(row_clusters([Member(a), Member(b)])) == miss_counts(np.asarray(a, bool)) + miss_counts(
        np.asarray(b, bool))


def test_a_panel_with_a_shared_shock_holds_the_level_the_pooled_counts_miss():
    """Ten series missing at the nominal 10%, each step's misses sharing a shock: the pooled counts reject
    a true null most of the time, the clustered tests about 5% of it."""
    rng = np.random.default_rng(3)
    reps = 200
    plain = {"uc": 0, "ind": 0}
    clustered = {"uc": 0, "ind": 0, "cc": 0}
    for _ in range(reps):
        misses = shocked_misses(300, 10, 0.1, 0.7, rng)
        before = coverage_tests(miss_counts(misses), 0.1)
        after = clustered_coverage_tests(step_clusters(misses), 0.1)
        plain["uc"] += before.p_uc < 0.05
        plain["ind"] += before.p_ind < 0.05
        clustered["uc"] += after.p_uc < 0.05
        clustered["ind"] += after.p_ind < 0.05
        clustered["cc"] += after.p_cc < 0.05
    assert plain["uc"] / reps > 0.2 and plain["ind"] / reps > 0.1, plain  # about 31% and 20%
    for name, count in clustered.items():
        assert count / reps <= 0.1, (name, clustered)


def test_independent_series_keep_the_power_of_the_pooled_counts():
    """Without a shared shock the design effect is about 1: ten series at 14% misses (asked 10%) reject."""
    rng = np.random.default_rng(4)
    rejected = 0
    for _ in range(50):
        misses = shocked_misses(300, 10, 0.14, 0.0, rng)
        tests = clustered_coverage_tests(step_clusters(misses), 0.1)
        assert tests.design_effect < 1.3
        rejected += tests.p_uc < 0.05
    assert rejected >= 45


def test_the_cosine_terms_follow_their_rule():
    """nu = min(floor(0.4 n^(2/3)), floor(n^(1/3)), floor(n / S)) with S Andrews' AR(1) bandwidth, checked against
    its formula."""
    rho, n = 0.8, 20000
    d = lfilter([1.0], [1.0, -rho], np.random.default_rng(5).standard_normal(n))
    a = 4 * rho ** 2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    expected = 1.1447 * (a * n) ** (1 / 3)  # 84
    assert abs(andrews_bandwidth(d) - expected) <= 0.15 * expected
    assert ewc_degrees(d) == 27  # floor(n^(1/3)), below n / S = 238 and 0.4 n^(2/3) = 294
    persistent = lfilter([1.0], [1.0, -0.98], np.random.default_rng(5).standard_normal(2000))
    assert ewc_degrees(persistent) == math.floor(2000 / andrews_bandwidth(persistent)) < 12  # n / S = 10 or so
    white = np.random.default_rng(6).standard_normal(3000)
    assert ewc_degrees(white) == 14  # no persistence: floor(3000^(1/3)), below 0.4 n^(2/3) = 83
    assert ewc_degrees(np.r_[0.0, 1.0, 0.0]) == 1
    assert ewc_degrees(np.ones(8)) == 1  # floor(0.4 * 8^(2/3)) = 1, below 8^(1/3) = 2


def test_the_cosine_variance_is_the_long_run_variance_by_hand():
    """EWC on a short series by hand: Lambda_j = sqrt(2 / n) sum_t cos(pi j (t - 1/2) / n) (d_t - mean), the
    variance the mean of the first nu squares; on white noise of variance 4 it estimates 4."""
    d = np.array([1.0, 3.0, 2.0, 6.0, 4.0, 5.0])
    x = d - d.mean()
    t = np.arange(1, 7)
    by_hand = [math.sqrt(2 / 6) * float(np.sum(np.cos(math.pi * j * (t - 0.5) / 6) * x)) for j in (1, 2)]
    assert ewc_variance(d, 2) == pytest.approx(np.mean(np.square(by_hand)), rel=1e-12)
    white = 2 * np.random.default_rng(9).standard_normal(20000)
    assert ewc_variance(white, 400) == pytest.approx(4.0, rel=0.15)  # chi2_400 / 400: sd 7%


def test_diebold_mariano_holds_its_level_on_persistent_loss_differences():
    """AR(1) differences of mean zero (rho 0.9 and 0.97, as the scores of sliding-window methods), n = 1,000:
    Newey-West with the usual lag rejects about a quarter of the time at 5% (by hand beside it); the EWC rule
    about 6% and 8% (0.051-0.064 and 0.071-0.080 over 2,000-4,000 draws of several seeds; Andrews' lag in
    Newey-West gave 9% and 16%), and a real difference is still found."""
    import statsmodels.api as sm
    from scipy.stats import t as student_t

    rng = np.random.default_rng(7)
    reps, n = 200, 1000
    with_usual_lag = 0
    rejected = {0.9: 0, 0.97: 0}
    for _ in range(reps):
        for rho in rejected:
            d = lfilter([1.0], [1.0, -rho], rng.standard_normal(n + 200))[200:]
            rejected[rho] += diebold_mariano(d, np.zeros(n)).p_value < 0.05
            if rho == 0.9:
                lag = math.floor(4 * (n / 100) ** (2 / 9))
                se = sm.OLS(d, np.ones(n)).fit(cov_type="HAC", cov_kwds={"maxlags": lag}).bse[0]
                with_usual_lag += 2 * student_t.sf(abs(d.mean() / se * math.sqrt((n - 1) / n)), n - 1) < 0.05
    assert with_usual_lag / reps > 0.15, with_usual_lag
    assert rejected[0.9] / reps <= 0.1 and rejected[0.97] / reps <= 0.15, rejected  # 0.035 and 0.10 here
    shifted = lfilter([1.0], [1.0, -0.9], rng.standard_normal(n)) + 2.0  # a real difference is still found
    assert diebold_mariano(shifted, np.zeros(n)).p_value < 0.01


def test_diebold_mariano_on_two_bands_of_equal_expected_score_that_take_turns():
    """Two bands 1.5 times the optimal width, one scaled by exp(u_t), the other by exp(-u_t), u a slow AR(1)
    (0.97, sd 0.3) over a year of days: their expected scores are equal by symmetry, and the difference of their
    scores is a persistent part under the noise of the misses (lag-1 correlation 0.4, as in real comparisons
    of a sliding-window method with an adaptive one). With nu = floor(0.4 n^(2/3)) = 20 terms DM rejected this
    true null a third of the time at 5% (0.33-0.35); with floor(n^(1/3)) = 7 terms about 15%."""
    from scipy.stats import norm

    rng = np.random.default_rng(7)
    reps, n, alpha = 200, 365, 0.1
    width = 1.5 * norm.ppf(1 - alpha / 2)

    def scores(w, y):
        return 2 * w + 2 / alpha * np.maximum(np.abs(y) - w, 0)

    rejected = 0
    for _ in range(reps):
        u = lfilter([1.0], [1.0, -0.97], 0.3 * math.sqrt(1 - 0.97 ** 2) * rng.standard_normal(n + 300))[300:]
        y = rng.standard_normal(n)
        rejected += diebold_mariano(scores(width * np.exp(u), y), scores(width * np.exp(-u), y)).p_value < 0.05
    assert rejected / reps <= 0.24, rejected  # 0.15 here (0.345 with 20 terms)


def test_a_window_long_as_a_quarter_of_the_span_gets_the_terms_of_its_persistence():
    """A moving mean of 500 steps over 2,000 (lag-1 correlation 0.998, like a method's lengths refitted on a
    window of 500): Andrews' rho capped at 0.99 kept 6 cosine terms, and 90% CIs of the mean held it 75% of the
    time; capped at 0.999, 1-3 terms in most draws and 83%."""
    rng = np.random.default_rng(12)
    held, reps, n, w, terms = 0, 400, 2000, 500, []
    for _ in range(reps):
        c = np.cumsum(rng.standard_normal(n + w))
        x = (c[w:] - c[:-w])[:n] / w
        terms.append(ewc_degrees(x))
        dm = diebold_mariano(x, np.zeros(n), level=0.9)
        held += dm.ci_low <= 0 <= dm.ci_high
    assert np.median(terms) <= 3 and held / reps >= 0.78, (np.median(terms), held / reps)


def test_differences_without_low_frequencies_keep_a_finite_statistic():
    """A palindrome's first cosine transform is zero but for rounding (2e-31 here), which made DM 8.5e15 and
    its CI 2e-15 wide: such differences take their plain variance."""
    d = np.array([5.0, 0, 0, 0, 0, 0, 5])
    dm = diebold_mariano(d, np.zeros(7))
    se = d.std(ddof=1) / math.sqrt(7)
    assert dm.statistic == pytest.approx(d.mean() / se, rel=1e-9) and dm.p_value > 0.01
    assert dm.ci_high - dm.ci_low > 1.0


def test_diebold_mariano_is_the_t_test_for_exchangeable_units():
    """Exchangeable sequences: DM is the one-sample t-test of the differences (scipy's), with n - 1 degrees."""
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(10)
    loss, reference = rng.gamma(2.0, size=80) + 0.2, rng.gamma(2.0, size=80)
    dm = diebold_mariano(loss, reference, dependent=False)
    t = ttest_1samp(loss - reference, 0.0)
    assert dm.statistic == pytest.approx(t.statistic, rel=1e-12) and dm.p_value == pytest.approx(t.pvalue, rel=1e-9)
    assert dm.degrees == 79


def test_a_dm_whose_ewc_variance_is_rounding_only_uses_the_sample_variance_and_its_degrees():
    """Differences with nothing at the lowest cosine frequencies (a cosine of frequency 20 over 64 steps): the
    EWC variance is rounding, so the sample variance stands in, with n - 1 degrees (it kept t_nu: p 0.32 where
    the sample variance's own t gives 0.27)."""
    from scipy.stats import ttest_1samp

    t = np.arange(1, 65)
    d = 0.1 + np.cos(np.pi * 20 * (t - 0.5) / 64)
    dm = diebold_mariano(d, np.zeros(64))
    expected = ttest_1samp(d, 0.0)
    assert dm.degrees == 63 and dm.p_value == pytest.approx(expected.pvalue, rel=1e-9)


def test_the_mcs_of_two_rows_is_diebold_marianos_test_at_its_level():
    """Two rows: the fixed-smoothing MCS drops one exactly when Diebold-Mariano (EWC variance, t_nu) rejects
    equal means at 10%, apart from simulation error near p = 0.1."""
    rng = np.random.default_rng(3)
    checked = 0
    for r in range(60):
        base = 3 * rng.gamma(2.0, size=800)
        noise = lfilter([1.0], [1.0, -0.7], rng.standard_normal((2, 800)), axis=1)
        losses = np.column_stack([base + noise[0], base + noise[1] + 0.15])
        p = diebold_mariano(losses[:, 1], losses[:, 0]).p_value
        if abs(p - 0.1) > 0.02:
            assert model_confidence_set(losses, r).all() == (p >= 0.1), (r, p)
            checked += 1
    assert checked > 40


def test_the_mcs_p_value_of_two_rows_is_diebold_marianos_p_value():
    """Two rows: T_R is |t_12| and its fixed-smoothing law |t_nu|, so the worse row's MCS p-value is DM's
    two-sided p-value up to the simulation's error (20,000 draws: sd at most 0.0036), the better row's is 1, and
    the set at each level keeps the worse row exactly where DM does not reject at that level."""
    rng = np.random.default_rng(5)
    for r in range(12):
        base = 3 * rng.gamma(2.0, size=600)
        noise = lfilter([1.0], [1.0, -0.6], rng.standard_normal((2, 600)), axis=1)
        losses = np.column_stack([base + noise[0] + 0.1 * (r % 4), base + noise[1]])
        kept, p_values = mcs_p_values(losses, r)
        dm = diebold_mariano(losses[:, 0], losses[:, 1]).p_value
        worse = int(losses[:, 0].mean() < losses[:, 1].mean())
        assert p_values[1 - worse] == 1.0 and p_values[worse] == pytest.approx(dm, abs=0.02), (r, dm)
        for level in (0.75, 0.9, 0.99):  # at every level, the worse row is in where DM does not reject
            if abs(dm - (1 - level)) > 0.02:
                assert bool(model_confidence_set(losses, r, level=level)[worse]) == (dm >= 1 - level), (r, level)


def test_the_set_mcs_gives_archs_p_values_on_continuous_losses():
    """Where no draw ties the statistic (continuous losses), pibench's bootstrap MCS and arch's (the i.i.d.
    bootstrap, Hansen et al.'s range rule) are one method: their p-values agree to the draws' error (4,000
    draws each: sd at most 0.008)."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        common = rng.gamma(2.0, size=300)
        losses = np.column_stack([common + rng.normal(size=300) + shift for shift in (0.0, 0.05, 0.12, 0.2)])
        mcs = MCS(losses, size=0.1, reps=4000, block_size=1, method="R", bootstrap="stationary",
                  seed=np.random.default_rng(1))
        mcs.compute()
        reference = np.empty(4)
        reference[np.asarray(mcs.pvalues.index, dtype=int)] = mcs.pvalues["Pvalue"].to_numpy()
        assert bootstrap_mcs(losses, seed=7, reps=4000) == pytest.approx(reference, abs=0.04), seed


def test_the_stationary_bootstrap_of_a_mean_has_the_long_run_variance():
    """Politis & Romano's blocks (mean length 20) keep an AR(1) 0.7's dependence: n var* of the resampled means is
    near its long-run variance 1 / (1 - 0.7)^2 = 11.1 (about 5% less: blocks cut the longest memory), where draws
    one by one give its variance, 1.96; white noise beside it stays near 1 either way."""
    rng = np.random.default_rng(0)
    series = lfilter([1.0], [1.0, -0.7], rng.standard_normal(2000))
    columns = np.column_stack([series, rng.standard_normal(2000)])
    blocks = 2000 * _resampled_means(columns, 3000, 20, np.random.default_rng(1)).var(axis=0)
    single = 2000 * _resampled_means(columns, 3000, 1, np.random.default_rng(1)).var(axis=0)
    assert 8.5 < blocks[0] < 13 and 1.6 < single[0] < 2.4, (blocks, single)
    assert 0.8 < blocks[1] < 1.25 and 0.8 < single[1] < 1.25, (blocks, single)


def bootstrap_mcs_drops(losses: np.ndarray, seed: int) -> bool:
    """Whether arch's bootstrap MCS (what pibench ran before: stationary bootstrap, Politis-White's block of the
    loss differences from their mean) drops some column of ``losses`` at 10%."""
    mcs = MCS(losses, size=0.1, reps=500, block_size=block_length(losses - losses.mean(axis=1, keepdims=True)),
              method="R", bootstrap="stationary", seed=np.random.default_rng(seed))
    mcs.compute()
    return len(mcs.included) < losses.shape[1]


def test_the_mcs_holds_its_level_on_persistent_loss_differences():
    """Two rows of equal mean loss whose differences are persistent (AR(1), rho 0.9), as sliding-window
    methods' scores are: arch's bootstrap MCS (stationary bootstrap, Politis-White's block of the loss
    differences) dropped one of them about 20% of the time at the MCS's 10% (n = 2,000; 58% with a short
    block); the fixed-smoothing MCS about 10-13%."""
    rng = np.random.default_rng(11)
    reps, n = 100, 1000
    bootstrap = fixed = 0
    for r in range(reps):
        base = 3 * rng.gamma(2.0, size=n)
        noise = lfilter([1.0], [1.0, -0.9], rng.standard_normal((2, n)), axis=1)
        losses = np.column_stack([base + noise[0], base + noise[1]])
        bootstrap += bootstrap_mcs_drops(losses, r)
        fixed += not model_confidence_set(losses, r).all()
    assert fixed / reps <= 0.17, fixed  # 0.07 here
    assert fixed < bootstrap, (fixed, bootstrap)  # 0.07 against 0.15 here


def test_the_mcs_of_many_equal_rows_over_a_year_of_days_holds_its_level():
    """Ten rows of equal mean loss over 365 days (fesp's test span), AR(1) 0.5 differences: arch's bootstrap
    MCS dropped some row 30% of the time at 10% (the max of 45 studentized differences, each with a variance
    from a year of data, has heavier tails than its bootstrap law); the fixed-smoothing MCS about 11-12%."""
    rng = np.random.default_rng(11)
    reps, n, k = 200, 365, 10
    bootstrap = fixed = 0
    for r in range(reps):
        base = 3 * rng.gamma(2.0, size=n)
        noise = lfilter([1.0], [1.0, -0.5], rng.standard_normal((k, n)), axis=1)
        losses = base[:, None] + noise.T
        bootstrap += bootstrap_mcs_drops(losses, r)
        fixed += not model_confidence_set(losses, r).all()
    assert fixed / reps <= 0.2 and bootstrap / reps >= 0.2, (fixed, bootstrap)  # 0.115 and 0.265 here


def test_the_mcs_of_more_rows_than_cosine_terms_keeps_their_multiplicity():
    """Ten equal rows over 365 days with very persistent differences (AR(1) 0.98): two cosine terms. The
    covariance the law was simulated from had rank 2, so its 45 contrasts moved as two and some row was dropped
    45% of the time at 10%; simulated from one of 20 terms, about 18-21% (the true covariance's law: 15%)."""
    rng = np.random.default_rng(7)
    reps, n, k = 100, 365, 10
    dropped = 0
    for r in range(reps):
        base = 3 * rng.gamma(2.0, size=n)
        losses = base[:, None] + lfilter([1.0], [1.0, -0.98], rng.standard_normal((k, n)), axis=1).T
        dropped += not model_confidence_set(losses, r).all()
    assert dropped / reps <= 0.32, dropped  # 0.23 here (0.47 from the rank-2 covariance)


def test_a_row_of_seeds_that_miss_alike_reads_as_one_seed(tmp_path):
    """One CSV series (the same data for every seed) and a method whose intervals do not depend on the seed:
    the row's tests over three seeds are each task's (Kupiec's exactly; the independence and conditional
    coverage tests, which permute the three seeds' steps together, within their simulation's error), its design
    effect 3."""
    rng = np.random.default_rng(8)
    y = lfilter([1.0], [1.0, -0.6], rng.standard_normal(700))
    pd.DataFrame({"step": np.arange(700), "y": y}).to_csv(tmp_path / "series.csv", index=False)
    (tmp_path / "suite.toml").write_text(f"""
name = "seeds"
seeds = [0, 1, 2]
protocol = {{ kind = "online", window = 200, retrain_every = 100 }}
[[datasets]]
name = "csv"
params = {{ path = "{tmp_path / 'series.csv'}", target = "y", time = "step", test_fraction = 0.6 }}
[[methods]]
name = "aci"
params = {{ base = "linear", gamma = 0.0 }}
""")
    results = run(tmp_path / "suite.toml", results_dir=tmp_path / "r", progress=False)
    tasks = pd.read_csv(tmp_path / "r" / "summary.csv")
    assert len(tasks) == 3 and tasks["coverage"].nunique() == 1 and (tasks["design_effect"] == 1.0).all()
    row = results.statistics.rows.iloc[0]
    assert row["seeds"] == 3 and row["design_effect"] == pytest.approx(3.0)
    assert row["p_uc"] == pytest.approx(tasks["p_uc"].iloc[0], rel=1e-9)
    for name in ("p_ind", "p_cc"):  # 2,000 orders: a p-value's sd at most 0.011
        assert row[name] == pytest.approx(tasks[name].iloc[0], abs=0.05), name


def _panel_misses(rng: np.random.Generator, shared: float, persistence: float = 0.0) -> np.ndarray:
    """A year of misses of 24 series at rate 0.1 that share a day factor (correlation ``shared`` ** 2 between
    the series' latent values), the factor an AR(1) of ``persistence`` over days."""
    day = lfilter([1.0], [1.0, -persistence], rng.standard_normal(465))[100:] * np.sqrt(1 - persistence ** 2)
    latent = shared * day[:, None] + np.sqrt(1 - shared ** 2) * rng.standard_normal((365, 24))
    return latent > norm.ppf(0.9)


def test_a_panels_independence_test_permutes_whole_days_and_keeps_its_level_and_power():
    """24 series whose misses share a day factor: dividing LR_ind by the misses' design effect rejected
    independent days 0.5% of the time at 5% and found a day factor of AR(1) 0.2 5% of the time (review);
    permuting whole days keeps about 5% (measured 4-5%) and finds it about a quarter of the time."""
    rng = np.random.default_rng(3)
    null = [_panel_misses(rng, 0.5) for _ in range(150)]
    dependent = [_panel_misses(rng, 0.5, 0.2) for _ in range(150)]
    size = np.mean([clustered_coverage_tests(step_clusters(m), 0.1, m).p_ind < 0.05 for m in null])
    power = np.mean([clustered_coverage_tests(step_clusters(m), 0.1, m).p_ind < 0.05 for m in dependent])
    divided = np.mean([clustered_coverage_tests(step_clusters(m), 0.1).p_ind < 0.05 for m in dependent])
    assert 0.01 <= size <= 0.1 and power > 0.15 > divided, (size, power, divided)


def test_equal_misses_get_equal_permutation_p_values_whatever_their_row():
    """The permutations were seeded by the row's configuration: two settings with the same predictions showed
    p ind 0.037 and 0.041 (dogfooding). They are seeded by the misses, whatever the columns' order: the same
    misses, the same p-values."""
    rng = np.random.default_rng(6)
    m = rng.random((200, 3)) < 0.1
    first, again = (clustered_coverage_tests(step_clusters(m), 0.1, m.copy()) for _ in range(2))
    assert first == again == clustered_coverage_tests(step_clusters(m[:, ::-1]), 0.1, m[:, ::-1])


def test_the_bit_packed_pooled_statistic_is_christoffersens_of_the_counted_transitions():
    """The permutation test counts a step pair's 1 -> 1 transitions by popcount of the steps' packed columns:
    its LR_ind equals the statistic of miss_counts' transitions, in the steps' order and in any other."""
    from pibench.reports.interval_tests import lr_ind, miss_counts, pooled_lr_ind

    rng = np.random.default_rng(4)
    for steps, columns in ((50, 1), (365, 24), (120, 9), (40, 70)):  # 70 columns: nine bytes a step
        m = rng.random((steps, columns)) < 0.2
        assert pooled_lr_ind(m) == pytest.approx(lr_ind(miss_counts(m)), rel=1e-12)
        orders = np.argsort(rng.random((3, steps)), axis=1)
        expected = [lr_ind(miss_counts(m[order])) for order in orders]
        np.testing.assert_allclose(pooled_lr_ind(m, orders), expected, rtol=1e-12)


def test_two_identical_columns_permuted_give_the_exact_test_of_one():
    """Two copies of one series side by side: the permutation law of the pooled LR_ind is the exact law of the
    one series' arrangements, doubled, so their p-values agree within the simulation's error."""
    rng = np.random.default_rng(1)
    for length in range(6):
        m = rng.random((300, 1)) < 0.1
        m[50:50 + length] = True  # runs of misses from none to five: p-values from about 1 to about 0
        one = clustered_coverage_tests(step_clusters(m), 0.1).p_ind
        both = np.hstack([m, m])
        assert clustered_coverage_tests(step_clusters(both), 0.1, both).p_ind == pytest.approx(one, abs=0.04)


def _row_ci_width_and_hit(units: list[np.ndarray], truth: float) -> tuple[float, bool]:
    from pibench.reports.series_ci import series_ci

    low, high = series_ci(units)
    return float(high[0] - low[0]), bool(low[0] <= truth <= high[0])


def test_a_row_of_seeds_that_predict_alike_is_as_uncertain_as_one_seed():
    """Seeds sharing the data and predicting alike: the row's CI is the one seed's (units drawn apart per seed
    made it half as wide for four seeds, and it held the truth 60% of the time for five)."""
    rng = np.random.default_rng(9)
    held, widths = 0, []
    for _ in range(120):
        hits = (rng.random((500, 1)) < 0.9).astype(float)
        width, hit = _row_ci_width_and_hit([hits] * 4, 0.9)
        single, _ = _row_ci_width_and_hit([hits], 0.9)
        held += hit
        widths.append(width / single)
    assert 0.85 <= np.median(widths) <= 1.15, np.median(widths)
    assert 0.82 <= held / 120 <= 0.97, held


def test_a_row_of_seeds_keeps_the_spread_between_them():
    """Seeds on the same data whose coverages differ by a seed effect: the row's CI is wider than the data's
    alone, so a method whose seeds disagree never looks more certain than they are."""
    rng = np.random.default_rng(10)
    common = (rng.random((800, 1)) < 0.9).astype(float)
    apart = [np.clip(common - (rng.random((800, 1)) < shift), 0, 1) for shift in (0.0, 0.04, 0.08)]
    width_alike, _ = _row_ci_width_and_hit([common] * 3, 0.9)
    width_apart, _ = _row_ci_width_and_hit(apart, 0.9)
    assert width_apart > 1.3 * width_alike


def _set_frame(covered_by_sequence: np.ndarray, clusters: np.ndarray | None, horizon: int = 2) -> pd.DataFrame:
    """A set task's predictions whose sequences are jointly covered as given (every horizon in or out)."""
    n = len(covered_by_sequence)
    hit = np.repeat(covered_by_sequence.astype(bool), horizon)
    frame = pd.DataFrame({"item": np.repeat(np.arange(n), horizon), "sequence": np.repeat(np.arange(n), horizon),
                          "horizon": np.tile(np.arange(1, horizon + 1), n), "y": np.where(hit, 0.0, 5.0),
                          "lower": -1.0, "upper": 1.0, "point": 0.0})
    if clusters is not None:
        frame["cluster"] = np.repeat(clusters, horizon)
    return frame


def test_sequences_that_come_in_groups_are_resampled_as_groups():
    """Trials of 16 channels that are covered or missed together (EEG's channels move together): the CI of
    joint coverage holds the truth about 90% of the time with the groups, far less counting channels apart."""
    from pibench.reports.bootstrap_ci import percentile_ci, replicates, unit_values

    rng = np.random.default_rng(11)
    held = {"groups": 0, "sequences": 0}
    for rep in range(100):
        trials = rng.random(60) < 0.9
        covered = np.repeat(trials, 16)
        labels = np.repeat([f"s trial {i}" for i in range(60)], 16)
        for name, clusters in (("groups", labels), ("sequences", None)):
            units, dependent = unit_values(_set_frame(covered, clusters), 0.1, (-10.0, 10.0))
            assert units[:, 0].mean() == pytest.approx(covered.mean())  # the groups' mean is the sequences'
            assert not dependent
            low, high = percentile_ci(replicates(units, rep, reps=400))
            held[name] += low[0] <= 0.9 <= high[0]
    assert 0.8 <= held["groups"] / 100 <= 0.97, held
    assert held["sequences"] / 100 < 0.6, held


def test_the_joint_coverage_test_counts_a_group_once():
    """The binomial test of joint coverage divides its counts by the groups' design effect: 40 trials of 8
    channels each covered together test as 40 sequences would (a group of sizes 8 is 8 times the count)."""
    from pibench.reports.statistics import _compute

    covered = np.repeat(np.arange(40) % 5 != 0, 8)  # 32 of 40 trials covered: 80% against 90%
    frame = _set_frame(covered, np.repeat(np.arange(40), 8))
    record = {"task_id": "t", "alpha": 0.1, "length_cap": [-10.0, 10.0], "config": {"seed": 0}}
    stats = _compute(record, frame)
    assert stats.clusters.tolist() == [[8, 8 * int(c)] for c in covered[::8]]
    p, deff = clustered_joint_coverage_test(stats.clusters[:, 1], stats.clusters[:, 0], 0.1)
    assert deff == pytest.approx(8.0) and p == pytest.approx(joint_coverage_test(32, 40, 0.1))
    assert joint_coverage_test(256, 320, 0.1) < p / 100  # what counting every channel claimed


def test_groups_of_unequal_sizes_keep_a_share_within_zero_and_one():
    """Trials of 10, 54, 64 and 64 channels, a few missed: scaled sums gave coverage CIs such as [0.67, 1.33];
    the ratio of resampled sums to resampled sizes stays a share, and a row of two seeds alike too."""
    from pibench.reports.bootstrap_ci import group_sizes, percentile_ci, replicates, seed_replicates, unit_values
    from pibench.reports.statistics import _compute

    sizes = [10, 54, 64, 64] * 5
    labels = np.repeat(np.arange(len(sizes)), sizes)
    covered = np.ones(len(labels), dtype=bool)
    covered[labels % 7 == 3] = False  # two trials of 64 and one of 10 missed whole
    frame = _set_frame(covered, labels)
    units, _ = unit_values(frame, 0.1, (-10.0, 10.0))
    stats = _compute({"task_id": "t", "alpha": 0.1, "length_cap": [-10.0, 10.0], "config": {"seed": 1}}, frame)
    weights = group_sizes(stats.clusters)
    assert weights is not None and weights.mean() == pytest.approx(1.0)
    low, high = percentile_ci(stats.draws)
    assert 0 <= low[0] <= covered.mean() <= high[0] <= 1
    unscaled = replicates(units, 1)
    assert percentile_ci(unscaled)[1][0] > 1  # what the scaled sums alone gave
    row_low, row_high = percentile_ci(seed_replicates([units, units], [stats.draws, stats.draws], 3, weights))
    assert 0 <= row_low[0] <= covered.mean() <= row_high[0] <= 1


def test_a_csv_of_grouped_sequences_is_counted_by_group(tmp_path):
    """Four copies of each patient's sequence, split at random: the test's patients hold one to four copies, and
    the joint-coverage test's design effect is that of groups that move as one, sum n^2 / sum n."""
    rng = np.random.default_rng(12)
    rows = [(f"s{g}_{c}", step, value, f"patient{g}") for g in range(120)
            for values in [rng.standard_normal(12).cumsum()] for c in range(4) for step, value in enumerate(values)]
    pd.DataFrame(rows, columns=["id", "step", "value", "patient"]).to_csv(tmp_path / "sets.csv", index=False)
    (tmp_path / "suite.toml").write_text(f"""
name = "grouped"
[[datasets]]
name = "csv_sets"
[datasets.params]
path = "{tmp_path / 'sets.csv'}"
input_length = 8
horizon = 2
group_column = "patient"
test_fraction = 0.4
[[methods]]
name = "cfrnn"
params = {{ hidden = 4, epochs = 2 }}
""")
    run(tmp_path / "suite.toml", results_dir=tmp_path / "r", progress=False)
    summary = pd.read_csv(tmp_path / "r" / "summary.csv")
    (deff,) = summary["design_effect"]
    predictions = pd.read_parquet(next((tmp_path / "r" / "tasks").glob("*.parquet")))
    sizes = predictions[predictions["horizon"] == 1].groupby("cluster").size().to_numpy(float)
    assert sizes.max() > 1  # some patients have several test sequences
    moving_as_one = (sizes ** 2).sum() / sizes.sum()  # the design effect of clusters that move as one
    assert 0.75 * moving_as_one <= deff <= 1.25 * moving_as_one, (deff, moving_as_one)
