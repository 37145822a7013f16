"""Real series out of the box: the packaged loaders against the packages' raw data by hand, the GARCH
baseline against arch's own forecast, and the leaderboard's ranks recomputed by hand."""

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from arch import arch_model
from scipy.stats import t as student_t

from pibench.benchmarks.protocols import run_series
from pibench.benchmarks.suite import build_tasks, load_suite
from pibench.data_loaders.fingerprint import source_files
from pibench.data_loaders.registry import DATASETS, load_dataset
from pibench.methods.garch import GarchInterval
from pibench.reports.leaderboard import overall, per_dataset


def arch_raw(name: str) -> pd.DataFrame:
    import importlib

    return importlib.import_module(f"arch.data.{name}").load()


@pytest.mark.parametrize("name, raw_name", [("sp500", "sp500"), ("nasdaq", "nasdaq")])
def test_index_returns_are_percent_log_returns_of_the_adjusted_close(name, raw_name):
    raw = arch_raw(raw_name)["Adj Close"]
    problem = load_dataset(name, {})
    lags = 5
    assert len(problem.y) == len(raw) - 1 - lags  # one return less than prices, the first 5 rows for lags
    first = 100 * math.log(raw.iloc[lags + 1] / raw.iloc[lags])
    assert problem.y[0, 0] == pytest.approx(first, rel=1e-12)
    assert problem.time[0] == raw.index[lags + 1].strftime("%Y-%m-%d") and problem.time[-1] == "2018-12-31"
    np.testing.assert_allclose(problem.X[0, 0], [100 * math.log(raw.iloc[lags + 1 - k] / raw.iloc[lags - k])
                                                 for k in range(1, lags + 1)])
    assert len(problem.y) - problem.test_start == 1000
    assert source_files(problem)  # the package's file is checksummed like any data file


def test_a_known_day_of_the_sp500():
    """2008-10-13: the S&P 500 closed up 11.58% (log return 10.96%)."""
    problem = load_dataset("sp500", {})
    day = list(problem.time).index("2008-10-13")
    assert problem.y[day, 0] == pytest.approx(100 * math.log(1.1158), abs=0.05)


def test_wti_drops_unquoted_days_instead_of_filling_them():
    raw = arch_raw("wti")["DCOILWTICO"]
    quoted = raw.dropna()
    problem = load_dataset("wti", {"lags": 1})
    assert raw.isna().sum() == 290 and len(problem.y) == len(quoted) - 2
    assert problem.y[0, 0] == pytest.approx(100 * math.log(quoted.iloc[2] / quoted.iloc[1]), rel=1e-12)


def test_vix_core_inflation_and_the_credit_spread():
    vix = arch_raw("vix")["vix"].dropna()
    problem = load_dataset("vix", {"lags": 2})
    assert problem.y[0, 0] == pytest.approx(math.log(vix.iloc[2])) and problem.time[0] == vix.index[2].strftime(
        "%Y-%m-%d")
    cpi = arch_raw("core_cpi")["CPILFESL"]
    problem = load_dataset("core_inflation", {"lags": 1})
    assert problem.y[0, 0] == pytest.approx(100 * math.log(cpi.iloc[2] / cpi.iloc[1]))
    assert problem.time[0] == "1957-03"
    default = arch_raw("default")
    problem = load_dataset("credit_spread", {"lags": 1})
    assert problem.y[0, 0] == pytest.approx(default["BAA"].iloc[1] - default["AAA"].iloc[1])
    assert problem.time[-1] == "2018-12"


def test_co2_is_the_monthly_change_from_the_first_month_after_the_last_gap():
    weekly = sm.datasets.co2.load_pandas().data["co2"]
    monthly = weekly.resample("MS").mean()
    assert monthly.isna().sum() == 5 and monthly.index[monthly.isna()][-1] == pd.Timestamp("1964-04-01")
    problem = load_dataset("co2", {"lags": 1})
    may, june = monthly.loc["1964-05-01"], monthly.loc["1964-06-01"]
    july = monthly.loc["1964-07-01"]
    assert problem.time[0] == "1964-07" and problem.y[0, 0] == pytest.approx(july - june)
    assert problem.X[0, 0, 0] == pytest.approx(june - may)
    assert np.isfinite(problem.y).all()


def test_sunspots_are_variance_stabilised_as_ghaddar_and_tong():
    raw = sm.datasets.sunspots.load_pandas().data.set_index("YEAR")["SUNACTIVITY"]
    problem = load_dataset("sunspots", {"lags": 1})
    assert problem.time[0] == "1701" and problem.y[0, 0] == pytest.approx(2 * (math.sqrt(1 + raw.loc[1701.0]) - 1))


def test_packaged_loaders_check_their_arguments():
    with pytest.raises(ValueError, match="at least 100 test points"):
        load_dataset("sunspots", {"n_test": 50})
    with pytest.raises(ValueError, match="training row"):
        load_dataset("sunspots", {"n_test": 305})
    assert {"sp500", "nasdaq", "wti", "vix", "core_inflation", "credit_spread", "co2", "sunspots"} <= set(DATASETS)


def test_garch_one_step_intervals_are_arch_own_forecast():
    problem = load_dataset("sp500", {})
    start, stop = problem.test_start - 500, problem.test_start
    window = problem.window(start, stop)
    for dist in ("normal", "t"):
        method = GarchInterval(dist=dist).fit(window)
        interval = method.predict_interval(problem.X[stop:stop + 1])
        res = arch_model(window.y[:, 0], mean="Constant", vol="GARCH", p=1, q=1, dist=dist, rescale=False).fit(
            disp="off")
        forecast = res.forecast(horizon=1, reindex=False)
        mean, variance = forecast.mean.values[-1, 0], forecast.variance.values[-1, 0]
        assert interval.point[0, 0] == pytest.approx(mean, rel=1e-10)
        half = (interval.upper - interval.point)[0, 0]
        if dist == "normal":
            assert half == pytest.approx(1.6448536269514722 * math.sqrt(variance), rel=1e-10)
        else:  # the standardised Student-t's 95% quantile
            nu = res.params["nu"]
            assert half == pytest.approx(student_t.ppf(0.95, nu) * math.sqrt((nu - 2) / nu) * math.sqrt(variance),
                                         rel=1e-10)
    # between refits the variance follows the GARCH recursion with the fitted parameters: arch's forecast of
    # the model fixed at those parameters on the window and the revealed step
    model = arch_model(window.y[:, 0], mean="Constant", vol="GARCH", p=1, q=1, rescale=False)
    params = model.fit(disp="off").params
    method = GarchInterval().fit(window)
    method.update(problem.y[stop:stop + 1])
    extended = arch_model(problem.y[start:stop + 1, 0], mean="Constant", vol="GARCH", p=1, q=1, rescale=False)
    expected = extended.fix(params).forecast(horizon=1, reindex=False).variance.values[-1, 0]
    assert method.variance_[0] == pytest.approx(expected, rel=1e-8)


def test_garch_covers_returns_near_nominal():
    problem = load_dataset("sp500", {"n_test": 500})
    out = run_series(problem, GarchInterval(dist="t"), kind="online", window=750, retrain_every=50)
    coverage = ((out.y >= out.lower) & (out.y <= out.upper)).mean()
    assert 0.86 < coverage < 0.94


def test_the_realworld_suite_expands_with_garch_on_the_returns_only():
    tasks = build_tasks(load_suite("realworld"))
    garch = {t.config["dataset"]["name"] for t in tasks if t.config["method"]["name"] == "garch"}
    assert garch == {"sp500", "nasdaq", "wti"}
    assert {t.config["dataset"]["name"] for t in tasks} == {"sp500", "nasdaq", "wti", "vix", "core_inflation",
                                                            "credit_spread", "co2", "sunspots"}


def _row(dataset, method, setting, coverage, winkler):
    return {"suite": "s", "dataset": dataset, "alpha": 0.1, "method": method, "setting": setting, "seed": 0,
            "status": "ok", "coverage": coverage, "mean_length": 1.0, "winkler": winkler,
            "coverage_vol_low": coverage, "coverage_vol_mid": coverage - 0.01, "coverage_vol_high": coverage + 0.01,
            "coverage_kind": "marginal"}


def test_the_leaderboard_ranks_by_hand():
    """Two datasets: on A, m1 (score 10) and m2 (11) cover, m3 (8) covers 85% (out); on B, m2 (5) and m3 (6)
    cover, m1 (4) covers 95% (out): m2 ranks 2 then 1, mean 1.5, covers 2 of 2."""
    frame = pd.DataFrame([_row("A", "m1", "x", 0.90, 10.0), _row("A", "m2", "x", 0.91, 11.0),
                          _row("A", "m3", "x", 0.85, 8.0), _row("B", "m1", "x", 0.95, 4.0),
                          _row("B", "m2", "x", 0.89, 5.0), _row("B", "m3", "x", 0.905, 6.0)])
    table = per_dataset(frame, "s").set_index(["dataset", "method"])
    assert table.loc[("A", "m1"), "rank"] == 1 and table.loc[("A", "m2"), "rank"] == 2
    assert math.isnan(table.loc[("A", "m3"), "rank"]) and not table.loc[("A", "m3"), "covers"]
    assert table.loc[("A", "m2"), "score_ratio"] == pytest.approx(1.1)  # over the best covering row (m1: 10)
    assert table.loc[("A", "m3"), "score_ratio"] == pytest.approx(0.8)  # below 1: shorter but it does not cover
    assert table.loc[("A", "m1"), "worst_third"] == pytest.approx(0.89)
    board = overall(per_dataset(frame, "s")).set_index("method")
    assert board.loc["m2", "mean_rank"] == pytest.approx(1.5) and board.loc["m2", "covered"] == 2
    assert board.loc["m1", "mean_rank"] == 1 and board.loc["m1", "covered"] == 1
    assert board.loc["m3", "mean_rank"] == 2 and board.loc["m3", "covered"] == 1
    assert list(board.index) == ["m2", "m1", "m3"]  # the largest share of datasets covered first, then mean rank
    assert board.loc["m2", "B"] == pytest.approx(1.0) and board.loc["m1", "B"] == pytest.approx(0.8)
    # a row run on dataset A only, covering it (rank 3 there), comes before m1 (rank 1, but on 1 of 2 datasets)
    board = overall(per_dataset(pd.concat([frame, pd.DataFrame([_row("A", "m4", "x", 0.90, 12.0)])]), "s"))
    assert list(board["method"]) == ["m2", "m4", "m1", "m3"] and board.iloc[1]["datasets"] == 1


def test_the_leaderboard_counts_the_datasets_whose_mcs_holds_a_row():
    """The leaderboard showed ranks only (reader: its top row was best on no dataset, and the MCS held every
    row on 7 of 8): it now counts, per row, the datasets whose Model Confidence Set holds it, of those with a
    verdict. By hand: m1 in A's MCS, no verdict on B; m2 in both; m3 in neither."""
    from pibench.reports.summary import leaderboard_tables

    frame = pd.DataFrame([_row("A", "m1", "x", 0.90, 10.0), _row("A", "m2", "x", 0.91, 11.0),
                          _row("A", "m3", "x", 0.85, 8.0), _row("B", "m1", "x", 0.95, 4.0),
                          _row("B", "m2", "x", 0.89, 5.0), _row("B", "m3", "x", 0.905, 6.0)])
    verdicts = {("A", "m1"): True, ("A", "m2"): True, ("A", "m3"): False, ("B", "m1"): None, ("B", "m2"): True,
                ("B", "m3"): False}
    statistics = pd.DataFrame([{"suite": "s", "dataset": d, "alpha": 0.1, "method": m, "setting": "x", "in_mcs": v,
                                "mcs_p": 0.5} for (d, m), v in verdicts.items()])
    board = overall(per_dataset(frame, "s", statistics)).set_index("method")
    assert board[["in_mcs", "mcs_datasets"]].to_dict("index") == {
        "m1": {"in_mcs": 1, "mcs_datasets": 1}, "m2": {"in_mcs": 2, "mcs_datasets": 2},
        "m3": {"in_mcs": 0, "mcs_datasets": 2}}
    table = leaderboard_tables(frame, statistics)
    assert "| m2 | x | 1.5 | 2 of 2 | 2 of 2 |" in table and "| m1 | x | 1.0 | 1 of 2 | 1 of 1 |" in table
    assert "in MCS: the datasets whose 90% Model Confidence Set" in table
    assert "in_mcs" not in overall(per_dataset(frame, "s"))  # no statistics, no count


def test_the_oracle_is_shown_but_never_ranked_and_a_ratio_counts_where_a_row_covers():
    """The oracle took rank 1 on the datasets that have one, pushing every method down a place there and not
    elsewhere, and was the best row the ratios were over; and the mean score ratio averaged in the datasets a row
    does not cover, where a short band that misses scores below the best (m3's 0.8 made it the 'best')."""
    frame = pd.DataFrame([_row("A", "oracle", "", 0.90, 9.0), _row("A", "m1", "x", 0.90, 10.0),
                          _row("A", "m2", "x", 0.91, 11.0), _row("A", "m3", "x", 0.85, 8.0),
                          _row("B", "m1", "x", 0.95, 4.0), _row("B", "m2", "x", 0.89, 5.0),
                          _row("B", "m3", "x", 0.905, 6.0)])
    table = per_dataset(frame, "s").set_index(["dataset", "method"])
    assert math.isnan(table.loc[("A", "oracle"), "rank"]) and table.loc[("A", "m1"), "rank"] == 1
    assert table.loc[("A", "oracle"), "score_ratio"] == pytest.approx(0.9)  # over m1's 10, the best that covers
    board = overall(per_dataset(frame, "s")).set_index("method")
    assert list(board.index) == ["m2", "m1", "m3", "oracle"]
    # by hand: m2 covers both (11/10, 5/5), m1 covers A (10/10), m3 covers B (6/5)
    assert board.loc["m2", "mean_score_ratio"] == pytest.approx((1.1 + 1.0) / 2)
    assert board.loc["m1", "mean_score_ratio"] == pytest.approx(1.0)
    assert board.loc["m3", "mean_score_ratio"] == pytest.approx(1.2)


def test_a_dataset_of_the_oracle_alone_keeps_its_column():
    """Every method failed on a synthetic dataset but the oracle: its ratios are NaN (no best row), and the
    leaderboard's table and figure looked its column up after pivot_table had dropped it (a KeyError)."""
    from pibench.reports.summary import leaderboard_tables

    frame = pd.DataFrame([_row("A", "oracle", "", 0.90, 9.0), _row("B", "oracle", "", 0.90, 4.0),
                          _row("B", "m1", "x", 0.90, 5.0)])
    board = overall(per_dataset(frame, "s")).set_index("method")
    assert list(board.columns[-2:]) == ["A", "B"] and math.isnan(board.loc["m1", "A"])
    assert board.loc["oracle", "B"] == pytest.approx(0.8)
    table = leaderboard_tables(frame)
    assert "| m1 | x | 1.0 | 1 of 1 | - | 1.00 |" in table and "the oracle, the truth, last and unranked" in table
