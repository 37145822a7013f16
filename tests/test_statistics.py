"""Is the difference real? The bootstrap CIs, the interval-forecast tests, Diebold-Mariano and the MCS
against known truth: simulated miss sequences of known coverage and dependence, hand computations, losses
of known order; and where users see them (summary.csv, the tables, the figures, results.compare)."""

import math
import zlib

import numpy as np
import pandas as pd
import pytest

from pibench import run
from pibench.reports.bootstrap_ci import percentile_ci, replicates, seed_replicates
from pibench.reports.comparisons import diebold_mariano, mcs_p_values, model_confidence_set
from pibench.reports.interval_tests import MissCounts, coverage_tests, joint_coverage_test, lr_ind, lr_uc, miss_counts
from pibench.reports.series_ci import series_ci
from pibench.reports.statistics import compute_statistics


def markov_misses(n: int, miss_rate: float, stay: float, rng: np.random.Generator) -> np.ndarray:
    """A two-state Markov chain of misses with stationary miss probability ``miss_rate`` and
    P(miss | miss) = ``stay`` (so P(miss | hit) = miss_rate (1 - stay) / (1 - miss_rate))."""
    enter = miss_rate * (1 - stay) / (1 - miss_rate)
    state = rng.random() < miss_rate
    out = np.empty(n, dtype=bool)
    u = rng.random(n)
    for t in range(n):
        state = u[t] < (stay if state else enter)
        out[t] = state
    return out


def test_the_series_ci_covers_dependent_coverage_where_the_iid_bootstrap_does_not():
    """200 chains of 2,000 steps, 10% misses in runs (P(miss | miss) = 0.6): the fixed-smoothing t interval
    (EWC variance) of coverage holds the true 90% in 85-95% of them; the i.i.d. bootstrap's, which ignores
    the runs, far less often."""
    rng = np.random.default_rng(2024)
    held = {"series": 0, "iid": 0}
    for rep in range(200):
        hits = (~markov_misses(2000, 0.1, 0.6, rng)).astype(float)[:, None]
        iid = percentile_ci(replicates(hits, rep, reps=400))
        for name, (low, high) in (("series", series_ci([hits])), ("iid", iid)):
            held[name] += int(low[0] <= 0.9 <= high[0])
    assert 0.85 <= held["series"] / 200 <= 0.95, held
    assert held["iid"] / 200 < 0.8, held


def test_the_series_ci_of_a_persistent_mean_holds_it_about_90_percent_of_the_time():
    """Per-step scores as persistent as sliding-window methods' (AR(1) 0.9) over a year of steps: the 90% CI
    holds the true mean in 84-96% of 400 draws (measured 89%); the stationary bootstrap with Politis-White's
    block that pibench used before held it 76% of the time (measured over 800 draws)."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(11)
    held = 0
    for _ in range(400):
        x = lfilter([1.0], [1.0, -0.9], rng.standard_normal(665))[300:]
        low, high = series_ci([x[:, None]], shares=())
        held += int(low[0] <= 0.0 <= high[0])
    assert 0.84 <= held / 400 <= 0.96, held


def test_the_series_ci_of_seeds_on_one_series_holds_the_mean_over_data_and_seeds():
    """Four seeds on one AR(1) 0.8 series (its mean's standard error 0.26), each with its own offset (sd 1) and
    noise: the row's CI holds the mean over data and seeds in 84-96% of 400 draws (measured 91%); the EWC CI of
    the step-wise seed mean alone, blind to the offsets, 59%."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(12)
    held = {"row": 0, "data only": 0}
    for _ in range(400):
        w = lfilter([1.0], [1.0, -0.8], rng.standard_normal(665))[300:]
        seeds = [(w + rng.standard_normal() + 0.5 * rng.standard_normal(365))[:, None] for _ in range(4)]
        for name, (low, high) in (("row", series_ci(seeds, shares=())),
                                  ("data only", series_ci([np.mean(seeds, axis=0)], shares=()))):
            held[name] += int(low[0] <= 0.0 <= high[0])
    assert 0.84 <= held["row"] / 400 <= 0.96, held
    assert held["data only"] / 400 < 0.75, held


def test_a_series_ci_stays_where_the_metric_can_be():
    """Ten calm steps and one spike: a length CI reached -4.4 on realworld's short spans (dogfooding). Coverage
    stays in [0, 1], a metric never negative at 0 and up; one that can be negative (crossed intervals' lengths)
    keeps its interval."""
    x = np.column_stack([np.r_[np.ones(10), 0.0], np.r_[np.full(10, 0.1), 30.0], np.r_[np.full(10, -1.0), 30.0]])
    low, high = series_ci([x])
    assert low[1] == 0.0 < high[1] and high[0] == 1.0 and low[2] < -1.0 < high[2]


def test_the_series_ci_of_seeds_each_on_its_own_data_counts_the_data_once():
    """Three seeds of a generated AR(1) 0.5 series, each on its own draw: the EWC variance of their step-wise
    mean and the spread of their means both estimate the data's part; summed, the "90%" CI held the truth 97-98%
    of the time (review). The larger of the two, with its degrees of freedom: 94-96% without seed effects, 88-92%
    where the seeds have effects of their own (sd 0.3, the data mean's se 0.1; 300 draws each)."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(1)
    for effect in (0.0, 0.3):
        held = 0
        for _ in range(300):
            seeds = [lfilter([1.0], [1.0, -0.5], rng.standard_normal(665))[300:, None]
                     + effect * rng.standard_normal() for _ in range(3)]
            low, high = series_ci(seeds, shares=(), shared=False)
            held += int(low[0] <= 0.0 <= high[0])
        assert 0.84 <= held / 300 <= 0.985, (effect, held)


def test_seed_replicates_resample_seeds_then_units():
    one = np.full((1000, 1), 0.90)
    other = np.full((1000, 1), 0.80)
    draws = seed_replicates([one, other], [one, other], seed=0)
    assert set(np.round(np.unique(draws), 6)) <= {0.8, 0.85, 0.9}  # two seeds drawn with replacement
    assert 0.2 < np.mean(np.isclose(draws, 0.85)) < 0.8
    assert np.array_equal(seed_replicates([one], [one], seed=0), one)


def test_christoffersen_equals_a_hand_computation():
    misses = np.array([0, 0, 1, 1, 0, 0, 0, 1, 0, 0], dtype=bool)
    counts = miss_counts(misses)
    assert counts == MissCounts(n0=7, n1=3, n00=4, n01=2, n10=2, n11=1)
    alpha = 0.1
    pi = 3 / 10
    uc = -2 * (7 * math.log(0.9) + 3 * math.log(0.1) - 7 * math.log(1 - pi) - 3 * math.log(pi))
    p01, p11, p2 = 2 / 6, 1 / 3, 3 / 9
    ind = -2 * (6 * math.log(1 - p2) + 3 * math.log(p2)
                - 4 * math.log(1 - p01) - 2 * math.log(p01) - 2 * math.log(1 - p11) - 1 * math.log(p11))
    assert lr_uc(counts, alpha) == pytest.approx(uc, rel=1e-12)
    assert lr_ind(counts) == pytest.approx(ind, rel=1e-12, abs=1e-12)
    # Kupiec's exact p-value: the binomial probability of every miss count whose statistic is at least as large
    pmf = [math.comb(10, k) * 0.1 ** k * 0.9 ** (10 - k) for k in range(11)]
    stat = [-2 * (k * math.log(0.1) + (10 - k) * math.log(0.9)) + 2 * sum(
        c * math.log(c / 10) for c in (k, 10 - k) if c) for k in range(11)]
    assert coverage_tests(counts, alpha).p_uc == pytest.approx(sum(p for p, u in zip(pmf, stat) if u >= uc - 1e-9))
    # a panel: transitions within each series (column), never across them
    assert miss_counts(np.array([[1, 0], [1, 0]], dtype=bool)) == MissCounts(2, 2, 1, 0, 0, 1)
    # no miss at all: 0 log 0 = 0, the statistics stay finite
    assert np.isfinite(lr_uc(miss_counts(np.zeros(50, bool)), alpha)) and lr_ind(miss_counts(np.zeros(50, bool))) == 0


def test_the_tests_reject_clustered_misses_and_hold_their_level_for_iid_ones():
    rng = np.random.default_rng(7)
    reps = 400
    rejections = {"uc": 0, "ind": 0, "cc": 0}
    for _ in range(reps):
        tests = coverage_tests(miss_counts(rng.random(1000) < 0.1), 0.1)
        rejections["uc"] += tests.p_uc < 0.05
        rejections["ind"] += tests.p_ind < 0.05
        rejections["cc"] += tests.p_cc < 0.05
    for name, count in rejections.items():
        assert 0.02 <= count / reps <= 0.09, (name, count)  # about 5% under the null
    clustered = coverage_tests(miss_counts(markov_misses(1000, 0.1, 0.6, np.random.default_rng(1))), 0.1)
    assert clustered.p_ind < 1e-6 and clustered.p_cc < 1e-6
    assert coverage_tests(miss_counts(rng.random(1000) < 0.2), 0.1).p_uc < 1e-6  # twice the misses asked for


def test_the_binomial_test_of_joint_coverage():
    assert joint_coverage_test(90, 100, 0.1) == pytest.approx(1.0)
    assert joint_coverage_test(60, 100, 0.1) < 1e-10
    # exact two-sided: the probability of every count no more likely than the one seen
    pmf = [math.comb(100, k) * 0.9 ** k * 0.1 ** (100 - k) for k in range(101)]
    by_hand = sum(p for p in pmf if p <= pmf[85] * (1 + 1e-7))
    assert joint_coverage_test(85, 100, 0.1) == pytest.approx(by_hand, rel=1e-9)


def test_diebold_mariano_holds_its_level_and_finds_a_known_margin():
    rng = np.random.default_rng(11)
    rejections = 0
    reps = 300
    for _ in range(reps):
        shock = rng.normal(size=800)  # losses with serial dependence, equal in mean
        a = np.convolve(rng.normal(size=800), [1, 0.6], "same") ** 2 + shock ** 2
        b = np.convolve(rng.normal(size=800), [1, 0.6], "same") ** 2 + shock ** 2
        rejections += diebold_mariano(a, b).p_value < 0.05
    assert 0.02 <= rejections / reps <= 0.09, rejections
    base = rng.normal(size=800) ** 2
    worse = diebold_mariano(base + 0.3 + 0.1 * rng.normal(size=800), base)
    assert worse.p_value < 1e-6 and worse.ci_low < 0.3 < worse.ci_high and worse.ci_low > 0
    same = diebold_mariano(base, base)
    assert same.p_value == 1.0 and same.mean_difference == 0.0


def test_the_mcs_keeps_the_true_best():
    rng = np.random.default_rng(5)
    n = 1000
    common = rng.normal(size=n) ** 2
    losses = np.column_stack([common + rng.normal(scale=0.3, size=n) + shift for shift in (0.0, 0.02, 0.5, 1.0)])
    kept = model_confidence_set(losses, seed=0)
    assert kept[0] and not kept[2] and not kept[3]


def test_the_mcs_takes_rows_equal_at_every_unit_as_one_and_drops_rows_worse_by_a_constant():
    """Two settings that select the same model give equal losses (ar_order's AutoReg AIC and BIC often do):
    arch's MCS divides by the zero variance of their difference and fails. Here duplicates share one verdict,
    a row worse by the same amount everywhere is out, and the rest get the verdict they get without them."""
    rng = np.random.default_rng(5)
    n = 1000
    common = rng.normal(size=n) ** 2
    losses = np.column_stack([common + rng.normal(scale=0.3, size=n) + shift for shift in (0.0, 0.02, 0.5, 1.0)])
    plain = model_confidence_set(losses, seed=0)
    with_twins = np.column_stack([losses[:, 0], losses, losses[:, 2], losses[:, 1] + 0.01])
    kept = model_confidence_set(with_twins, seed=0)
    assert list(kept[1:5]) == list(plain)
    assert kept[0] == kept[1] and kept[5] == kept[3]  # twins: one verdict
    assert not kept[6]  # worse than row 1 by 0.01 at every unit
    assert list(model_confidence_set(np.column_stack([common, common]), seed=0)) == [True, True]



def test_set_rows_of_equal_mean_loss_or_equal_but_for_rounding_share_the_mcs_without_an_error():
    """arch's MCS raised on two rows of equal mean loss (a tie of its maximum), and rounding-only differences
    (one band computed two ways) went to the MCS as rows, where their tiny variance put one out."""
    a = np.array([5.0, 6, 7, 8, 9, 10])
    kept, p_values = mcs_p_values(np.column_stack([a, a + [1.0, -1, 0, 0, 0, 0]]), seed=0, dependent=False)
    assert kept.all() and (p_values == 1).all()
    rng = np.random.default_rng(2)
    for dependent in (False, True):
        base = rng.gamma(2, size=300) + 4
        twin = base * (1 + 1e-15 * rng.standard_normal(300))  # the same losses to rounding
        losses = np.column_stack([base, twin, base + 2 + rng.standard_normal(300)])
        kept, p_values = mcs_p_values(losses, seed=1, dependent=dependent)
        assert list(kept) == [True, True, False] and p_values[0] == p_values[1] == 1.0
        dm = diebold_mariano(twin, base, dependent=dependent)
        assert dm.p_value == 1.0 and dm.mean_difference == 0.0


def test_the_set_mcs_counts_draws_equal_to_the_statistic_as_hansen_lunde_and_nason():
    """Rows that differ at one of 200 sequences: the bootstrap law of the mean difference is a lattice (the
    number of draws of that sequence, about Poisson(1)), and P*(|T*| >= T) = P(draws != 1) = 1 - 1/e, about 0.63.
    arch counted only draws above T (0.07) and put the row out of the 90% MCS."""
    rng = np.random.default_rng(0)
    a = rng.gamma(2, size=200) + 5
    b = a.copy()
    b[17] += 1.0
    kept, p_values = mcs_p_values(np.column_stack([a, b, a + 3 + rng.standard_normal(200)]), seed=1,
                                  dependent=False)
    assert list(kept) == [True, True, False]
    assert abs(p_values[1] - (1 - math.exp(-1))) < 0.05  # 2,000 draws: sd of the estimate about 0.011


SUITE = """
name = "stats"
seeds = [0, 1]
protocol = { kind = "online", window = 150, retrain_every = 50 }
[[datasets]]
name = "ar"
params = { n_train = 200, n_test = 300 }
[[datasets]]
name = "seasonal_sets"
params = { n_train = 80, n_calibration = 60, n_test = 120 }
[[methods]]
name = "autoreg"
params = { lags = 1 }
[[methods]]
name = "aci"
params = { base = "linear" }
grid = { gamma = [0.0, 0.05] }
[[methods]]
name = "oracle"
[[methods]]
name = "cfrnn"
params = { hidden = 8, epochs = 10 }
"""


@pytest.fixture(scope="module")
def stats_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stats")
    (folder / "stats.toml").write_text(SUITE)
    return run(folder / "stats.toml", results_dir=folder / "r", progress=False), folder


def test_summary_csv_carries_each_tasks_cis_and_tests(stats_store):
    results, folder = stats_store
    summary = pd.read_csv(folder / "r" / "summary.csv")
    series = summary[summary["dataset"] == "ar"]
    for column in ("coverage_ci_low", "coverage_ci_high", "mean_length_ci_low", "winkler_ci_high", "p_uc", "p_ind",
                   "p_cc", "block_length"):
        assert series[column].notna().all(), column
    assert series.loc[series["method"] != "oracle", "in_mcs"].notna().all()
    assert (series["coverage_ci_low"] <= series["coverage"]).all() and (series["coverage"] <= series[
        "coverage_ci_high"]).all()
    sets = summary[summary["dataset"] == "seasonal_sets"]
    assert sets["p_joint"].notna().all() and (sets["coverage_ci_low"] <= sets["coverage"]).all()
    assert summary.loc[summary["method"] == "oracle", "in_mcs"].isna().all()  # the oracle is not compared


def test_statistics_repeat_exactly_and_come_from_the_cache(stats_store):
    results, folder = stats_store
    from pibench import load_results

    again = load_results(folder / "r")
    cached = sorted((folder / "r" / "cache" / "stats").glob("*.npz"))
    assert len(cached) == len([r for r in results.records if r["status"] == "ok"])
    pd.testing.assert_frame_equal(again.statistics.rows, results.statistics.rows)
    for path in cached:  # a damaged cache entry is computed again, the same numbers
        path.write_bytes(b"not an npz")
    fresh = load_results(folder / "r")
    pd.testing.assert_frame_equal(fresh.statistics.rows, results.statistics.rows)
    # torn (a zip cut short: BadZipFile) or empty (EOFError): these crashed every report and run of the folder
    intact = cached[0].read_bytes()
    for damaged in (intact[: len(intact) // 2], b""):
        for path in cached:
            path.write_bytes(damaged)
        pd.testing.assert_frame_equal(load_results(folder / "r").statistics.rows, results.statistics.rows)


def test_the_tables_show_cis_tests_and_comparisons(stats_store):
    results, _ = stats_store
    tables = results.tables()
    assert "### Comparisons: ar (stats, alpha 0.1) on the interval score, against" in tables
    assert "### Comparisons: seasonal_sets (stats, alpha 0.1) on the interval score per horizon at level alpha / H" \
        in tables
    assert "### Comparisons across datasets" in tables
    # the columns explained once, between the last comparison and the ranks (the HTML showed them unexplained)
    assert tables.count("minus the reference's (positive: worse)") == 1
    assert tables.index("DM p (Holm): the two-sided Diebold-Mariano") < tables.index("### Comparisons across datasets")
    row = next(line for line in tables.splitlines() if line.startswith("| stats | ar | autoreg |"))
    assert row.count("[") >= 3 and " / " in row  # coverage, length and score with CIs; p uc / ind / cc


def test_compare_returns_a_frame_against_the_chosen_reference(stats_store):
    results, _ = stats_store
    frame = results.compare(reference="autoreg")
    ar = frame[frame["dataset"] == "ar"].set_index("setting")
    assert set(ar["reference"]) == {"autoreg default"} and math.isnan(ar.loc["default"].query(
        "method == 'autoreg'")["difference"].iloc[0])
    assert ar[ar["method"] != "autoreg"]["dm_p"].between(0, 1).all()
    oracle = ar[ar["method"] == "oracle"].iloc[0]
    assert oracle["difference"] < 0 and oracle["in_mcs"] is None  # the truth beats autoreg, is never in the MCS
    with pytest.raises(ValueError, match="is a row of no dataset"):
        results.compare(reference="nonesuch")
    with pytest.raises(ValueError, match=r"Did you mean 'autoreg'\?"):
        results.compare(reference="autoregg")
    with pytest.raises(ValueError, match=r"the oracle \(the true interval\) is never the reference") as refused:
        results.compare(reference="oracle")
    assert "'oracle'" not in str(refused.value).split("of [")[1]  # never offered as a choice
    with pytest.raises(ValueError, match="metric='coverage'"):
        results.compare(metric="coverage")


def test_the_comparison_figure_and_the_tradeoff_bars(stats_store):
    results, _ = stats_store
    from pibench.reports.figures.catalog import close

    assert {"comparison-stats-ar", "comparison-stats-seasonal_sets"} <= set(results.figure_names)
    fig = results.figure("comparison-stats-ar")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "oracle" in labels and "autoreg" in labels
    record = next(r for r in results.records if r["dataset"] == "ar" and r["status"] == "ok")
    n = record["n_test"]  # the span the rows were compared over, in the title (reader)
    assert ", test span steps " in ax.get_title() and f"({n:,} steps)" in ax.get_title()
    close(fig)
    fig = results.figure("comparison-stats-seasonal_sets")
    assert "test span" not in fig.axes[0].get_title()  # sets of sequences: no span of steps
    close(fig)
    fig = results.figure("tradeoff")
    bars = [c for c in fig.axes[0].collections if c.__class__.__name__ == "LineCollection"]
    assert bars  # the CI bars of each point
    close(fig)


def test_a_tasks_cis_do_not_depend_on_the_code_version_that_ran_it(stats_store):
    """The same predictions of a set under another code version (so another task id) give the same bootstrap
    draws: a table of unchanged numbers does not move with every commit (a series' CIs draw nothing)."""
    from pibench.reports.statistics import record_statistics

    results, _ = stats_store
    record = next(r for r in results.records if r["dataset"] == "seasonal_sets" and r["status"] == "ok")
    frame = results.predictions(record["task_id"])
    other = {**record, "task_id": "0" * 20, "code_version": "0.0.0+src.other",
             "identity": {**record["identity"], "code": "0.0.0+src.other"}}
    first = record_statistics(record, lambda _: frame)
    second = record_statistics(other, lambda _: frame)
    np.testing.assert_array_equal(first.draws, second.draws)
    changed = {**record, "config": {**record["config"], "seed": record["config"]["seed"] + 1}}
    assert not np.array_equal(record_statistics(changed, lambda _: frame).draws, first.draws)


def test_rows_with_seeds_others_lack_are_compared_on_the_shared_seeds_and_the_table_says_so(stats_store):
    """autoreg with a third seed (wider intervals: a higher score) beside rows of seeds 0 and 1: the differences
    pair the rows on seeds 0 and 1, the score shown is autoreg's mean over its three, and the table says so."""
    from pibench.reports.statistics import compare, compute_statistics
    from pibench.reports.summary import comparison_tables

    results, _ = stats_store
    records = [r for r in results.records if r["dataset"] == "ar" and r["status"] == "ok"]
    first = next(r for r in records if r["method"] == "autoreg" and r["seed"] == 0)
    wider = results.predictions(first["task_id"]).assign(lower=lambda p: p["lower"] - 1, upper=lambda p: p["upper"] + 1)
    second = {**first, "task_id": "1" * 20, "seed": 2, "config": {**first["config"], "seed": 2}}

    def read(task_id):
        return wider if task_id == second["task_id"] else results.predictions(task_id)

    ordered = compare(records, read, reference="aci")
    assert ordered["difference"].isna().iloc[0] and ordered["method"].iloc[0] == "aci"  # the reference first
    assert ordered["mean_loss"].iloc[1:].is_monotonic_increasing  # then the rows by their mean loss
    alone = ordered.set_index(["method", "setting"])
    both = compare([*records, second], read, reference="aci").set_index(["method", "setting"])
    assert set(both["compared_seeds"]) == {(0, 1)} and both.loc[("autoreg", "default"), "seeds"] == 3
    assert both.loc[("autoreg", "default"), "difference"] == alone.loc[("autoreg", "default"), "difference"]
    assert both.loc[("autoreg", "default"), "mean_loss"] > alone.loc[("autoreg", "default"), "mean_loss"] + 0.1
    tables = comparison_tables(compute_statistics([*records, second], read).groups)
    assert "pair the rows on seeds 0, 1, the ones every row has" in tables and "| seeds |" in tables
    assert "pair the rows" not in comparison_tables(compute_statistics(records, read).groups)


def test_a_row_on_other_data_is_compared_with_none_and_the_tables_say_why(stats_store):
    """A row run on another configuration of its dataset (the suite's full variant beside its --quick one) was
    paired step by step with rows on other series where the spans were as long (and silently dropped every
    comparison of the dataset where they were not): it is compared with none now, and the tables, the figure
    and the run's notes say why; the other rows' comparisons are those they have without it."""
    from pibench.reports.statistics import compare, compute_statistics
    from pibench.reports.summary import comparison_tables, not_compared_notes

    results, _ = stats_store
    records = [r for r in results.records if r["dataset"] == "ar" and r["status"] == "ok"]
    others = [r for r in records if r["method"] != "autoreg"]
    moved = [{**r, "data_fingerprint": f"other-{r['seed']}",
              "config": {**r["config"], "dataset": {**r["config"]["dataset"], "params": {"n_train": 190,
                                                                                      "n_test": 300}}}}
             for r in records if r["method"] == "autoreg"]
    both = compare([*others, *moved], results.predictions).set_index(["method", "setting"])
    alone = compare(others, results.predictions).set_index(["method", "setting"])
    row = both.loc[("autoreg", "default")]
    assert pd.isna(row["difference"]) and row["in_mcs"] is None and pd.isna(row["dm_p"])
    assert row["not_compared"] == ("ran on other data than the rows compared (dataset.params.n_train 190, the "
                                   "compared rows' 200)")
    pd.testing.assert_frame_equal(both.drop(index=[("autoreg", "default")]).drop(columns="not_compared"),
                                  alone.drop(columns="not_compared"), check_like=True)
    groups = compute_statistics([*others, *moved], results.predictions).groups
    tables = comparison_tables(groups)
    assert "| autoreg | default | " in tables and "| not compared | - | - |" in tables
    assert "Not compared (a comparison pairs rows unit by unit, on one data), nor ranked below: autoreg default: ran " \
           "on other " in tables
    assert not_compared_notes(groups, {("stats", "aci")})[0].startswith(
        "dataset ar (stats, alpha 0.1): not compared with its other rows: autoreg default: ran on other data")
    assert not_compared_notes(groups, {("other suite", "aci")}) == []


def _made_row(method, seed, fingerprint, units, n_test=2000, dataset="d"):
    """A record and its statistics of ``units`` test steps on data ``fingerprint`` of ``dataset`` (its interval
    score drawn)."""
    from pibench.reports.bootstrap_ci import SERIES_METRICS
    from pibench.reports.statistics import RecordStatistics

    rng = np.random.default_rng(zlib.crc32(f"{method} {seed} {fingerprint}".encode()))  # (hash() varies by process)
    values = rng.normal(1.0, 0.1, size=(units, len(SERIES_METRICS)))
    values[:, SERIES_METRICS.index("winkler")] = rng.gamma(2, 1, units)
    record = {"task_id": f"{method}-{seed}-{fingerprint}", "suite": "s", "dataset": dataset, "alpha": 0.1,
              "method": method, "setting": "", "seed": seed, "data_fingerprint": fingerprint,
              "config": {"dataset": {"name": "d", "label": "d", "params": {"n_test": n_test}}, "protocol": {}}}
    return record, RecordStatistics(record["task_id"], "series", values, np.zeros((0, len(SERIES_METRICS))), 1,
                                    np.zeros((units, 2)), np.zeros((units, 1), dtype=bool))


def _rows_of(made):
    rows = {}
    for record, stats in sorted(made, key=lambda pair: pair[0]["seed"]):
        rows.setdefault(tuple(record[k] for k in ("suite", "dataset", "alpha", "method", "setting")), []).append(
            (record, stats))
    return rows


def test_which_rows_are_compared_whatever_the_order_and_partial_overlaps():
    """Review: which of two configurations of as many rows was compared followed the records' order (task ids),
    and the oracle counted as a row; a row of another span cut the seeds every other row was compared on; a row
    sharing no seed with a class joined it, so nothing was compared; and rows apart were still ranked."""
    from pibench.reports.metrics import ORACLE
    from pibench.reports.statistics import compare_group
    from pibench.reports.summary import comparison_tables

    full = [_made_row(m, s, f"F{s}", 100) for m in ("a", "b") for s in (0, 1)]
    quick = [_made_row(m, s, f"Q{s}", 100, n_test=500) for m in ("c", "d") for s in (0, 1)]
    tables = [compare_group(_rows_of(order)).table.set_index("method") for order in (full + quick, quick + full)]
    assert (tables[0]["not_compared"] != "").to_dict() == (tables[1]["not_compared"] != "").to_dict()
    oracle_first = [_made_row(m, s, f"F{s}", 100) for m in (ORACLE, "a") for s in (0, 1)]
    two = [_made_row(m, s, f"Q{s}", 100, n_test=500) for m in ("b", "c") for s in (0, 1)]
    table = compare_group(_rows_of(oracle_first + two)).table.set_index("method")
    assert table.loc["a", "not_compared"].startswith("ran on other data") and table.loc["b", "not_compared"] == ""
    spans = [_made_row(m, s, f"F{s}", 100) for m in ("a", "b") for s in (0, 1, 2)] + [_made_row("c", 0, "F0", 50)]
    table = compare_group(_rows_of(spans)).table.set_index("method")
    assert table.loc["c", "not_compared"] == "its test span has 50 units (seed 0), the rows compared 100"
    assert set(table["compared_seeds"]) == {(0, 1, 2)}
    apart_seed = [_made_row("x", 0, "Q0", 100, n_test=500), _made_row("a", 1, "F1", 100),
                  _made_row("b", 1, "F1", 100), *(_made_row("d", s, f"F{s}", 100) for s in (0, 1))]
    table = compare_group(_rows_of(apart_seed)).table.set_index("method")
    assert table.loc["x", "not_compared"] != "" and (table.drop(index="x")["not_compared"] == "").all()
    assert set(table["compared_seeds"]) == {(1,)} and table["in_mcs"].drop(index="x").notna().all()
    groups = {("s", "d", 0.1): compare_group(_rows_of(full + quick)),
              ("s", "e", 0.1): compare_group(_rows_of([_made_row(m, s, f"E{s}", 100, dataset="e") for m in "abcd"
                                                         for s in (0, 1)]))}
    across = comparison_tables(groups).split("### Comparisons across datasets")[1]
    counts = {line.split("|")[2].strip(): line.split("|")[4].strip() for line in across.splitlines()
              if line.startswith("| s |")}
    assert counts == {"a": "2", "b": "2", "c": "1", "d": "1"}  # c and d, apart on d, ranked on e alone


def test_the_footnote_names_the_tests_of_the_rows_shown():
    from pibench.reports.summary import statistics_note

    series, sets, both = statistics_note(True, False), statistics_note(False, True), statistics_note(True, True)
    assert "Kupiec" in series and "p joint" not in series and "sequences one by one" not in series
    assert "Kupiec" not in sets and "p joint" in sets and "EWC" not in sets and "bootstrap" not in series
    assert all(part in both for part in ("Kupiec", "p joint", "EWC", "sequences one by one"))
    assert "at level alpha / H" in sets and "at level alpha / H" not in series  # the MCS's loss on sets
    assert all("shows their means (counts rounded" in note for note in (series, sets))


def test_rows_of_two_suites_are_not_pooled_across_datasets(stats_store):
    """One label in two suites may be two configurations: the ranks across datasets stay within a suite, and a
    suite compared on one dataset alone has no such table."""
    from pibench.reports.statistics import compute_statistics
    from pibench.reports.summary import comparison_tables

    results, _ = stats_store
    records = [r for r in results.records if r["status"] == "ok"]
    copies = {f"o{r['task_id'][1:]}": r["task_id"] for r in records if r["dataset"] == "ar"}
    other = [{**r, "suite": "other", "task_id": f"o{r['task_id'][1:]}"} for r in records if r["dataset"] == "ar"]

    def read(task_id):
        return results.predictions(copies.get(task_id, task_id))

    tables = comparison_tables(compute_statistics([*records, *other], read).groups)
    across = tables.split("### Comparisons across datasets")[1]
    rows = [line for line in across.splitlines() if line.startswith("| ")][1:]
    assert rows and all(line.startswith("| stats |") for line in rows)
    assert all(line.split("|")[4].strip() == "1" for line in rows if "| aci |" in line)  # not pooled with 'other'


def test_lengths_equal_but_for_rounding_do_not_set_the_block():
    """The oracle's lengths on a homoscedastic series differ in their last bits only: they are a constant
    column, and the block comes from the hits alone (once Politis-White ran on the rounding noise: 91)."""
    from pibench.reports.bootstrap_ci import block_length

    rng = np.random.default_rng(0)
    hits = (rng.random(2000) < 0.9).astype(float)  # independent hits: a short block
    noisy = 3.2897072539 + rng.choice([-4.4e-16, 0.0, 4.4e-16], size=2000)
    assert np.ptp(noisy) > 0
    assert block_length(np.column_stack([hits, noisy])) == block_length(hits[:, None]) <= 5


def test_a_p_value_by_the_5_percent_edge_shows_which_side_it_is_on():
    from pibench.reports.summary import _p

    assert [_p(0.047), _p(0.0499), _p(0.0501), _p(0.051), _p(0.32), _p(0.004)] == \
        ["0.047*", "0.0499*", "0.0501", "0.051", "0.32", "0.00*"]


def test_an_mcs_p_value_by_the_10_percent_edge_shows_which_side_it_is_on():
    """The comparison table's "MCS (p)": in or out with the MCS p-value, never "no (0.10)" beside "yes (0.10)"."""
    from pibench.reports.summary import _mcs_cell

    assert [_mcs_cell(True, 0.1004), _mcs_cell(False, 0.0996), _mcs_cell(True, 0.43), _mcs_cell(False, 0.0),
            _mcs_cell(None, float("nan"))] == ["yes (0.1004)", "no (0.0996)", "yes (0.43)", "no (0.00)", "-"]


def test_the_sets_table_shows_the_score_its_mcs_ranks_by(stats_store):
    """The sets table's only score was at level alpha while its MCS column and the comparisons rank by the
    score at alpha / H: a row could have the lowest score shown and be out of the MCS."""
    results, folder = stats_store
    compared = results.compare(metric="winkler")
    compared = compared[compared["dataset"] == "seasonal_sets"].set_index("method")["mean_loss"]
    summary = pd.read_csv(folder / "r" / "summary.csv").groupby("method")[["bonferroni_winkler", "winkler"]].mean()
    assert summary.loc["cfrnn", "bonferroni_winkler"] == pytest.approx(compared["cfrnn"], rel=1e-9)  # seed means
    assert summary.loc["cfrnn", "bonferroni_winkler"] > summary.loc["cfrnn", "winkler"]  # a wider level's score
    header = next(line for line in results.tables().splitlines() if "joint coverage %" in line and "MCS" in line)
    assert "| winkler (alpha) | winkler (alpha/H) |" in header
    row = next(line for line in results.tables().splitlines() if line.startswith("| stats | seasonal_sets | cfrnn"))
    assert f"{compared['cfrnn']:.3f} [" in row


def test_the_comparison_figure_keeps_close_calls_readable_beside_rows_far_out(stats_store):
    """COVID's DP-RNN and MQ-RNN lie 50,000 above the reference: CF-RNN's +96 [-104, 295] was a point at 0. The
    axis turns logarithmic beyond the close calls' farthest bound (widened by half), and stays linear where no
    row is that far."""
    from pibench.reports.figures.catalog import close
    from pibench.reports.figures.comparison import _linear_span

    far = pd.DataFrame({"difference_ci_low": [0.0, -104.0, 20.0, 41000.0], "difference_ci_high": [0.0, 295.0, 228.0,
                                                                                                  67000.0],
                        "in_mcs": [True, False, False, False]})
    assert _linear_span(far) == pytest.approx(1.5 * 295.0)
    assert _linear_span(far.iloc[:3]) is None  # nothing far out
    results, _ = stats_store
    sets = results.figure("comparison-stats-seasonal_sets")
    assert "Diebold-Mariano)" in sets.axes[0].get_title() and "EWC" not in sets.axes[0].get_title()  # no lags
    close(sets)
    series = results.figure("comparison-stats-ar")
    assert "Diebold-Mariano, EWC variance" in series.axes[0].get_title()
    close(series)


def test_rows_ranked_over_more_groups_come_first_across_datasets():
    """A row ranked first on the one dataset it runs on is listed after the rows ranked over both datasets, whatever
    its mean rank; among rows over as many groups, the lower mean rank first."""
    from pibench.reports.statistics import GroupComparison
    from pibench.reports.summary import comparison_tables

    def group(dataset, losses):
        table = pd.DataFrame([{"suite": "s", "dataset": dataset, "alpha": 0.1, "method": method, "setting": "",
                               "mean_loss": loss, "seeds": 1, "in_mcs": True, "mcs_p": 1.0, "kind": "series",
                               "reference": "lone", "compared_seeds": (0,), "units": 100, "not_compared": ""}
                              for method, loss in losses.items()])
        return GroupComparison(("s", dataset, 0.1, "lone", ""), table)

    groups = {("s", "a", 0.1): group("a", {"lone": 1.0, "both_worse": 3.0, "both_better": 2.0}),
              ("s", "b", 0.1): group("b", {"both_worse": 5.0, "both_better": 4.0})}
    across = comparison_tables(groups).split("### Comparisons across datasets")[1]
    rows = [[cell.strip() for cell in line.split("|")[2:6]] for line in across.splitlines() if line.startswith("| s |")]
    # (method, setting, groups, mean rank): by hand: (1 + 2) / 2 and (2 + 3) / 2 over both datasets, 1 on "a" alone
    assert rows == [["both_better", "", "2", "1.500"], ["both_worse", "", "2", "2.500"], ["lone", "", "1", "1.000"]]


def test_a_symmetric_log_axis_reads_both_signs_of_its_linear_part():
    """COVID's axis (linear within +/-443, rows out to 67,000): matplotlib's ticks were 0 and a lone 10^2 beside
    it, none left of 0 where CF-RNN's CI starts (-104). Now plain numbers of both signs inside, decades outside."""
    import matplotlib.pyplot as plt

    from pibench.reports.figures.comparison import _symlog_ticks

    fig, ax = plt.subplots()
    ax.set_xscale("symlog", linthresh=443.0, linscale=2.0)
    ax.set_xlim(-148.0, 100500.0)
    _symlog_ticks(ax, 443.0)
    fig.canvas.draw()
    ticks = list(ax.get_xticks())
    inside = [t for t in ticks if abs(t) <= 443.0]
    assert min(inside) < 0 < max(inside) and 0 in inside
    assert [t for t in ticks if abs(t) > 443.0] == [1e3, 1e4, 1e5]  # no decade inside the linear part
    labels = [label.get_text() for label in ax.get_xticklabels()]
    assert "-100" in labels and "$\\mathregular{10^{4}}$" in labels
    plt.close(fig)


def test_the_comparisons_do_not_depend_on_the_order_of_the_records(stats_store, monkeypatch):
    """The store lists records by task id, which changes with the code: the MCS's simulated law was drawn per
    column in that order, and the same predictions gave sunspots' MCS 13 or 17 of 19 rows by it alone. The MCS
    now gets its rows in one order whatever the records' order."""
    from pibench.reports import statistics

    results, _ = stats_store
    real, given = statistics.mcs_p_values, []

    def recording(losses, seed, dependent=True):
        given.append((losses.copy(), seed))
        return real(losses, seed, dependent)

    monkeypatch.setattr(statistics, "mcs_p_values", recording)
    forward = statistics.compute_statistics(results.records, results.predictions).groups
    first, given[:] = list(given), []
    backward = statistics.compute_statistics(results.records[::-1], results.predictions).groups
    assert len(first) == len(given) > 0
    for (one, seed), (other, other_seed) in zip(sorted(first, key=lambda g: g[1]), sorted(given, key=lambda g: g[1])):
        assert seed == other_seed and np.array_equal(one, other)  # the same columns in the same order
    for key in forward:
        one, other = (g.table.sort_values(["method", "setting"]).reset_index(drop=True)
                      for g in (forward[key], backward[key]))
        pd.testing.assert_frame_equal(one[["method", "setting", "in_mcs", "mcs_p", "dm_p"]],
                                      other[["method", "setting", "in_mcs", "mcs_p", "dm_p"]])


def test_a_coverage_of_every_step_or_none_has_the_exact_binomial_ci(tmp_path):
    """A 0/1 series whose 125 test steps were all covered showed 100.00 [100.00, 100.00] (a t interval from a
    zero variance), as did 5 test steps: Clopper & Pearson's bounds for n trials take its place,
    [0.05^(1/n), 1] at 90% (0.05^(1/125) = 97.63%); none covered, [0, 1 - that]. The run says how little five
    test steps can say."""
    from pibench import load_results
    from pibench.reports.statistics import _exact_where_every_unit_agrees

    low, high = np.array([1.0, 2.0, 0.0]), np.array([1.0, 2.0, 0.0])
    _exact_where_every_unit_agrees(("coverage", "mean_length", "joint_coverage"), low, high, 125)
    assert low[0] == pytest.approx(0.05 ** (1 / 125)) and high[0] == 1.0 and 0.976 < low[0] < 0.977
    assert (low[1], high[1]) == (2.0, 2.0)  # a constant length is what it is
    assert (low[2], high[2]) == (0.0, pytest.approx(1 - 0.05 ** (1 / 125)))
    y = np.where(np.random.default_rng(0).normal(size=500) > 0, 1.0, 0.0)
    pd.DataFrame({"y": y}).to_csv(tmp_path / "b.csv", index=False)
    (tmp_path / "s.toml").write_text(f"""
protocol = {{ kind = "online", window = 300, retrain_every = 100, test_steps = 5 }}
datasets = [{{ name = "csv", params = {{ path = "{tmp_path / 'b.csv'}", target = "y", lags = 1 }} }}]
methods = [{{ name = "autoreg" }}]
""")
    with pytest.warns(UserWarning) as notes:
        run(tmp_path / "s.toml", results_dir=tmp_path / "r", progress=False)
    assert any("only 5 test point(s): a coverage moves 20 points a miss" in str(n.message) for n in notes)
    results = load_results(tmp_path / "r")
    assert results.summary["coverage"].iloc[0] == 1.0  # every one of the five covered
    row = results.statistics.rows.iloc[0]
    assert (row["coverage_ci_low"], row["coverage_ci_high"]) == (pytest.approx(0.05 ** (1 / 5)), 1.0)  # 54.9%


def test_the_exact_ci_of_seeds_each_on_their_own_data_counts_every_seeds_steps(tmp_path):
    """Three seeds of a generated series each draw their own 40 test steps, all covered (the oracle at alpha
    0.002): 120 independent steps, [0.05^(1/120), 1] = [97.5, 100], not 40's [92.8, 100] (review)."""
    import warnings

    from pibench import load_results

    (tmp_path / "s.toml").write_text("""
alpha = 0.002
seeds = [0, 1, 2]
protocol = { kind = "online", window = 300, retrain_every = 100, test_steps = 40 }
datasets = [{ name = "ar", params = { n_train = 500, n_test = 200 } }]
methods = [{ name = "oracle" }]
""")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (its notes)
        run(tmp_path / "s.toml", results_dir=tmp_path / "r", progress=False)
    results = load_results(tmp_path / "r")
    assert (results.summary["coverage"] == 1.0).all()
    row = results.statistics.rows.iloc[0]
    assert (row["coverage_ci_low"], row["coverage_ci_high"]) == (pytest.approx(0.05 ** (1 / 120)), 1.0)


def test_a_band_of_one_width_shows_constant_not_a_ci_of_no_width(stats_store):
    """CF-RNN's band has one width per horizon: over one seed its mean length's CI over the test sequences read
    [13.5, 13.5], as if certain; the cell says constant, and the note says what is not in it. Over two seeds the
    seeds' spread gives it a CI."""
    from pibench.api import Results

    results, _ = stats_store
    one_seed = Results(results.results_dir, [r for r in results.records if r["seed"] == 0])
    tables = one_seed.tables()
    cfrnn = next(line for line in tables.splitlines() if line.startswith("| stats | seasonal_sets | cfrnn "))
    predictions = one_seed.predictions(one_seed.summary.query("method == 'cfrnn'").iloc[0])
    widths = (predictions["upper"] - predictions["lower"]).groupby(predictions["horizon"])
    assert (widths.max() - widths.min()).max() < 1e-9  # one width per horizon (but for rounding)
    length = float(one_seed.summary.query("method == 'cfrnn'")["mean_length"].iloc[0])
    assert f"{length:.3f} [constant]" in cfrnn and "[constant]: every test unit of every seed has this value" in tables
    autoreg = next(line for line in tables.splitlines() if line.startswith("| stats | ar | autoreg "))
    assert "[constant]" not in autoreg
    both = next(line for line in results.tables().splitlines() if line.startswith("| stats | seasonal_sets | cfrnn "))
    assert "[constant]" not in both


def test_a_set_covered_everywhere_in_groups_of_unequal_sizes_gets_clopper_pearsons_bounds():
    """The ratio estimate over groups of unequal sizes (EEG's trials, csv_sets' group_column) is 1 +- 1 ulp in
    every draw: the CI was [100, 100] (or above it) where ten groups all covered give Clopper & Pearson's
    [0.05^(1/10), 1] = [74.1, 100]."""
    sizes = [7, 9, 3, 4, 10, 7, 6, 8, 6, 11]
    clusters = np.repeat(np.arange(len(sizes)), sizes)
    n, horizons = len(clusters), 3
    y = np.random.default_rng(0).standard_normal((n, horizons))
    frame = pd.DataFrame({"item": np.repeat(np.arange(n), horizons), "horizon": np.tile(np.arange(1, 4), n),
                          "y": y.ravel(), "lower": (y - 1).ravel(), "upper": (y + 1).ravel(), "point": y.ravel(),
                          "cluster": np.repeat(clusters, horizons)})
    records = [{"task_id": f"t{seed}", "status": "ok", "alpha": 0.1, "length_cap": [-100.0, 100.0], "suite": "s",
                "dataset": "d", "method": "m", "setting": "", "seed": seed, "data_fingerprint": "F",
                "predictions_sha256": f"t{seed}",
                "config": {"dataset": {"name": "d", "label": "d", "params": {}}, "method": "m", "seed": seed,
                           "protocol": {}}} for seed in (0, 1)]
    for given in (records[:1], records):
        computed = compute_statistics(given, lambda task_id: frame)
        for table in (computed.tasks, computed.rows):
            bounds = table.iloc[0][["coverage_ci_low", "coverage_ci_high"]].to_numpy(dtype=float)
            assert bounds == pytest.approx([0.05 ** (1 / 10), 1.0], abs=1e-12), (len(given), bounds)


def _oracle_beside_two_methods(oracle_seeds: tuple[int, ...]) -> pd.DataFrame:
    """The comparison table of methods a and b on seeds 0, 1, 2 of a series, the oracle on ``oracle_seeds``."""
    rng = np.random.default_rng(0)
    frames, records = {}, []
    for seed in sorted({0, 1, 2} | set(oracle_seeds)):
        y = rng.standard_normal(200)
        bands = {"a": (y - 1.0 - rng.random(200), y + 1.0), "b": (y - 1.2, y + 1.2), "oracle": (y - 1.64, y + 1.64)}
        for method, (lower, upper) in bands.items():
            if (seed not in oracle_seeds) if method == "oracle" else seed > 2:
                continue
            task = f"{method}-{seed}"
            frames[task] = pd.DataFrame({"t": np.arange(200), "group": 0, "y": y, "lower": lower, "upper": upper,
                                         "point": y})
            records.append({"task_id": task, "status": "ok", "alpha": 0.1, "length_cap": [-100.0, 100.0],
                            "suite": "s", "dataset": "d", "method": method, "setting": "", "seed": seed,
                            "data_fingerprint": f"F{seed}", "predictions_sha256": task,
                            "config": {"dataset": {"name": "d", "label": "d", "params": {}}, "method": method,
                                       "seed": seed, "protocol": {}}})
    return next(iter(compute_statistics(records, frames.__getitem__).groups.values())).table.set_index("method")


def test_an_oracle_on_fewer_seeds_does_not_narrow_the_methods_comparison():
    """The oracle is never the reference nor in the MCS: the methods are compared on the seeds they all have
    (it cut them to the oracle's one seed), and the oracle is set apart with why."""
    with_oracle, without = _oracle_beside_two_methods((0,)), _oracle_beside_two_methods(())
    assert with_oracle.loc["a", "compared_seeds"] == (0, 1, 2)
    assert with_oracle.loc["a", "dm_p"] == pytest.approx(without.loc["a", "dm_p"])
    assert "lacks seed(s) 1, 2" in with_oracle.loc["oracle", "not_compared"]


def test_an_oracle_on_a_seed_no_method_has_is_compared_on_theirs():
    """A seed only the oracle ran raised KeyError in every report of the folder (`pibench run --methods oracle
    --seeds 3` beside methods on 0-2): it is left out of the comparison."""
    table = _oracle_beside_two_methods((0, 1, 2, 3))
    assert table.loc["a", "compared_seeds"] == (0, 1, 2) and table.loc["oracle", "not_compared"] == ""
    assert table.loc["oracle", "seeds"] == 4


def test_holm_adjusts_the_dm_p_values_of_a_group_by_hand():
    from pibench.reports.statistics import holm

    # sorted 0.01, 0.02, 0.04 of m = 3: 0.03, 0.04, 0.04 (made non-decreasing); NaN (the reference) stays NaN
    np.testing.assert_allclose(holm(np.array([0.04, np.nan, 0.01, 0.02])), [0.04, np.nan, 0.03, 0.04])
    assert holm(np.array([0.5, 0.9]))[1] == 1.0  # at most 1


def test_the_group_comparison_stars_equal_rows_at_about_its_level_once_adjusted():
    """Rows of equal expected loss against the one of lowest mean on the same data: unadjusted DM stars some
    row in most tables of 8 rows (47%); Holm's adjustment brings that under 20% (about 11%; 150 tables)."""
    from pibench.reports.statistics import holm

    rng = np.random.default_rng(3)
    starred = adjusted = 0
    for _ in range(150):
        losses = rng.gamma(2, size=(365, 1)) * 3 + rng.standard_normal((365, 8))
        best = int(np.argmin(losses.mean(axis=0)))
        p = np.array([diebold_mariano(losses[:, j], losses[:, best]).p_value if j != best else np.nan
                      for j in range(8)])
        starred += bool(np.nanmin(p) < 0.05)
        adjusted += bool(np.nanmin(holm(p)) < 0.05)
    assert starred > 0.3 * 150 and adjusted < 0.2 * 150, (starred, adjusted)


def test_a_coverage_near_one_has_an_interval_below_no_misses_for_one_that_holds_the_truth():
    """Korn & Graubard's Clopper-Pearson at the effective number of steps: one miss in 365 lowers the lower bound
    below that of none (Clopper & Pearson's 0.05^(1/365); the t interval put it above; the cosine variance still
    weighs a miss by where it falls, so bounds need not fall with every further miss), and at 99% over 365
    i.i.d. steps the 90% CI holds the truth about 95% of the time, as Clopper & Pearson's (the t interval 87.5%)."""
    one_miss = np.ones((365, 1))
    one_miss[90] = 0
    low, high = series_ci([one_miss])
    assert low[0] < 0.05 ** (1 / 365) and 364 / 365 < high[0] < 1
    rng = np.random.default_rng(0)
    held = 0
    for _ in range(400):
        hits = (rng.random((365, 1)) < 0.99).astype(float)
        if hits.all():
            held += 1  # every step covered: Clopper & Pearson's [0.9918, 1] holds 0.99
            continue
        low, high = series_ci([hits])
        held += low[0] <= 0.99 <= high[0]
    assert held >= 0.9 * 400, held


def test_one_huge_score_does_not_make_a_small_systematic_difference_rounding():
    """Rounding is judged unit by unit: a far miss (5e6) on one day made a difference of 0.002 on every other day
    'rounding' (DM: exactly 0, p = 1; the MCS: one row)."""
    rng = np.random.default_rng(0)
    reference = 1.0 + rng.gamma(2.0, size=365)
    reference[17] = 5e6
    loss = reference + 0.002 + 0.0005 * rng.standard_normal(365)
    loss[17] = reference[17]
    for dependent in (False, True):
        dm = diebold_mariano(loss, reference, dependent=dependent)
        assert dm.mean_difference > 0.0015 and dm.p_value < 1e-6, dm
    kept, p_values = mcs_p_values(np.column_stack([reference, loss]), seed=0, dependent=False)
    assert list(kept) == [True, False] and p_values[1] < 0.01


def test_a_far_miss_every_row_shares_leaves_the_mcs_as_it_is_without_it():
    """Every row missing one far outlier (a sentinel in y) adds a common 1e9 to one step's losses: the pair
    variances c_ii + c_jj - 2 c_ij lost the differences to cancellation (the set's bootstrap kept a row DM finds
    worse at p 2e-19, the series' fixed smoothing handed over to the block bootstrap). Each unit less its rows'
    mean gives the p-values of the same losses without the spike."""
    rng = np.random.default_rng(0)
    for dependent, n in ((False, 300), (True, 365)):
        common = rng.gamma(2.0, size=n)
        losses = common[:, None] + 0.5 * rng.normal(size=(n, 4)) + np.array([0.0, 0.05, 0.1, 0.3])
        spiked = losses.copy()
        spiked[5] += 1e9
        kept, p_values = mcs_p_values(losses, seed=1, dependent=dependent)
        kept_spiked, p_spiked = mcs_p_values(spiked, seed=1, dependent=dependent)
        assert list(kept_spiked) == list(kept) and p_spiked == pytest.approx(p_values, abs=0.05), (p_values, p_spiked)


def test_a_series_whose_cosine_variance_is_rounding_falls_back_to_blocks():
    """Two rows differing by a palindrome (nothing at the lowest cosine frequency): the fixed-smoothing MCS hands
    over to the stationary bootstrap with blocks, which raised TypeError; a row worse at every step is out."""
    t = np.arange(40)
    smooth = 20 + 5 * np.sin(t / 7)
    losses = np.column_stack([smooth, smooth + 0.3 * np.abs(np.linspace(-1, 1, 40)), smooth + 0.2 * t / 40])
    kept, p_values = mcs_p_values(losses, seed=0, dependent=True)
    assert kept[0] and p_values[0] == 1.0 and not kept[1]
