"""Figures drawn from a tiny store built here: what each shows is checked on the matplotlib objects."""

import zlib

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from pibench.reports.figures.catalog import available_figures, close
from pibench.reports.figures.fesp import coverage_by_hour_figure, fesp_paper_figure, gamma_sweep_figure
from pibench.reports.figures.order import order_selection_figure
from pibench.reports.figures.overview import tradeoff_figure
from pibench.reports.figures.results import StoredResults, headline_runs
from pibench.reports.figures.sets import sets_figure
from pibench.reports.figures.style import method_colour
from pibench.reports.figures.temporal import interval_bands_figure, rolling_coverage_figure
from pibench.reports.metrics import default_cap, series_metrics, set_metrics

ALPHA = 0.1


def series_run(suite, dataset, method, setting, half_width, seed=0, days=60, groups=24, kind="online"):
    """A record and its predictions: y ~ N(0, 1) per (day, group), intervals point +/- half_width."""
    rng = np.random.default_rng(zlib.crc32(f"{method} {setting} {seed}".encode()))  # stable across processes
    y = rng.normal(size=(days, groups))
    point = np.zeros_like(y)
    lower, upper = point - half_width, point + half_width
    metrics = series_metrics(y, lower, upper, ALPHA, default_cap(-3, 3))
    task_id = f"{suite}-{dataset}-{method}-{setting}-{seed}"
    record = {"task_id": task_id, "suite": suite, "dataset": dataset, "method": method, "setting": setting,
              "seed": seed, "status": "ok", "alpha": ALPHA, "identity": {"code": "c", "data": "d"},
              "config": {"protocol": {"kind": kind}, "dataset": {"name": dataset}}, "wall_seconds": 1.0, **metrics}
    dates = pd.date_range("2019-01-01", periods=days).strftime("%Y-%m-%d").to_numpy()
    frame = pd.DataFrame({"t": np.repeat(np.arange(days), groups), "time": np.repeat(dates, groups),
                          "group": np.tile([f"h{g:02d}" for g in range(groups)], days), "y": y.ravel(),
                          "lower": lower.ravel(), "upper": upper.ravel(), "point": point.ravel()})
    return record, frame


def set_run(suite, dataset, method, seed, half_width, n=200, horizon=4):
    rng = np.random.default_rng(seed + 100 * len(method))
    y = rng.normal(size=(n, horizon)) * np.arange(1, horizon + 1)  # noise grows with the horizon
    lower, upper = -half_width * np.ones_like(y), half_width * np.ones_like(y)
    metrics = set_metrics(y, lower, upper, ALPHA, default_cap(-10, 10))
    task_id = f"{suite}-{dataset}-{method}-{seed}"
    record = {"task_id": task_id, "suite": suite, "dataset": dataset, "method": method, "setting": "LSTM-20",
              "seed": seed, "status": "ok", "alpha": ALPHA, "identity": {"code": "c"}, "config": {"protocol": {}},
              **metrics}
    frame = pd.DataFrame({"item": np.repeat(np.arange(n), horizon), "horizon": np.tile(np.arange(1, horizon + 1), n),
                          "y": y.ravel(), "lower": lower.ravel(), "upper": upper.ravel(), "point": 0.0})
    return record, frame


def stored(runs) -> StoredResults:
    frames = {record["task_id"]: frame for record, frame in runs}
    return StoredResults([record for record, _ in runs], frames.__getitem__)


@pytest.fixture(scope="module")
def fesp_store():
    runs = [series_run("fesp", "fesp", "aci", f"gamma={g:g}", 1.6 + 10 * g) for g in (0.0, 0.001, 0.01, 0.05)]
    runs += [series_run("fesp", "fesp", "agaci", "default", 1.7), series_run("fesp", "fesp", "nexcp", "decay=0.99", 1.8),
             series_run("fesp", "fesp", "pa", "paper", 2.5, kind="offline")]
    return stored(runs)


def axes_of(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def nominal_lines(ax):
    return [line for line in ax.get_lines() if line.get_linestyle() == "--"]


def test_fesp_paper_figure_rows_markers_and_paper_values(fesp_store):
    fig = fesp_paper_figure(fesp_store)
    mean_ax, median_ax = axes_of(fig)
    labels = [t.get_text() for t in mean_ax.get_yticklabels()]
    # paper rows that ran: PA, AgACI, ACI 0.01, ACI 0, ACI best, NexCP (no EnbPI in this store)
    assert labels == ["PA offline", "AgACI online", "ACI gamma=0.01 online", "ACI gamma=0 online",
                      "ACI best (gamma=0.01) online", "NexCP online"]
    # one filled marker per row, one hollow (paper) marker per row the paper has (all but 'ACI best')
    markers = [line for line in mean_ax.get_lines() if line.get_marker() in ("o", "s")]
    assert sum(m.get_marker() == "o" for m in markers) == 6 and sum(m.get_marker() == "s" for m in markers) == 5
    assert "EUR/MWh" in mean_ax.get_xlabel() and "IQR" in median_ax.get_title()
    paper_pa = next(m for m in markers if m.get_marker() == "s" and m.get_color() == method_colour("pa"))
    assert paper_pa.get_xdata()[0] == pytest.approx(20.19)  # the paper's PA mean length
    close(fig)


def test_coverage_by_hour_is_the_records_per_group_coverage(fesp_store):
    fig = coverage_by_hour_figure(fesp_store)
    image = axes_of(fig)[0].get_images()[0].get_array()
    runs = headline_runs(fesp_store, "fesp", "fesp")
    expected = [100 * np.array(fesp_store.record(r.task_id)["coverage_by_group"]) for r in runs]
    np.testing.assert_allclose(image, expected)
    close(fig)


def test_gamma_sweep_x_is_gamma_with_zero_and_the_nominal_line(fesp_store):
    fig = gamma_sweep_figure(fesp_store)
    coverage_ax = axes_of(fig)[0]
    line = coverage_ax.get_lines()[0]
    np.testing.assert_allclose(line.get_xdata(), [0.0, 0.001, 0.01, 0.05])
    assert nominal_lines(coverage_ax)[0].get_ydata()[0] == pytest.approx(90.0)
    assert coverage_ax.get_xscale() == "symlog" and coverage_ax.get_xticklabels()[0].get_text() == "0"
    close(fig)


def test_rolling_coverage_small_multiples(fesp_store):
    fig = rolling_coverage_figure(fesp_store, "fesp", "fesp", window=10)
    panels = axes_of(fig)
    runs = headline_runs(fesp_store, "fesp", "fesp")
    assert len(panels) == len(runs) == 5  # PA, AgACI, ACI 0.01, ACI 0, NexCP
    for ax, run in zip(panels, runs):
        coloured = [line for line in ax.get_lines() if line.get_color() == method_colour(run.method)]
        grey = [line for line in ax.get_lines() if line.get_color() == "#BBBBBB"]
        assert len(coloured) == 1 and len(grey) == len(runs) - 1
        covered = fesp_store.covered_by_step(run.task_id).mean(axis=1).to_numpy()
        np.testing.assert_allclose(coloured[0].get_ydata(), 100 * np.convolve(covered, np.ones(10) / 10, "valid"))
        assert nominal_lines(ax)[0].get_ydata()[0] == pytest.approx(90.0)
    close(fig)


def test_interval_bands_count_the_misses(fesp_store):
    fig = interval_bands_figure(fesp_store, "fesp", "fesp")
    for ax, run in zip(axes_of(fig), headline_runs(fesp_store, "fesp", "fesp")):
        p = fesp_store.predictions(run.task_id)
        p = p[p["group"] == "h18"].sort_values("t").iloc[-14:]
        misses = int(((p["y"] < p["lower"]) | (p["y"] > p["upper"])).sum())
        assert ax.get_title().endswith(f"{misses} miss(es) of 14")
        crosses = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == misses]
        assert crosses
    close(fig)


def test_tradeoff_one_point_group_per_method_and_the_nominal(fesp_store):
    fig = tradeoff_figure(fesp_store)
    ax = axes_of(fig)[0]
    groups = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(groups) == 4  # aci (4 gammas), agaci, nexcp, pa
    assert len(next(g for g in groups if g.get_label() == "aci").get_offsets()) == 4
    assert nominal_lines(ax)[0].get_xdata()[0] == pytest.approx(90.0)
    assert ax.get_xlabel() == "coverage (%)"
    close(fig)


def test_sets_figure_per_horizon_lines_and_joint_bars():
    runs = [set_run("sets", "covid", m, seed, w) for m, w in (("cfrnn", 6.0), ("dprnn", 1.0)) for seed in (0, 1, 2)]
    results = stored(runs)
    fig = sets_figure(results, "sets", "covid")
    cov_ax, width_ax, joint_ax = axes_of(fig)
    assert len([line for line in cov_ax.get_lines() if line.get_linestyle() != "--"]) == 2
    bars = joint_ax.patches
    assert len(bars) == 2
    cf = [100 * r["joint_coverage"] for r, _ in runs if r["method"] == "cfrnn"]
    assert bars[0].get_width() == pytest.approx(np.mean(cf))  # horizontal bars: labels read along the y axis
    widths = next(line for line in width_ax.get_lines() if line.get_color() == method_colour("cfrnn")).get_ydata()
    np.testing.assert_allclose(widths, 12.0)
    close(fig)


def test_sets_figure_targets_come_from_the_records_and_horizons_are_whole_numbers():
    """alpha = 0.2 and H = 4 in the records: per-horizon target 100 (1 - 0.2/4) = 95 (Bonferroni), joint 80."""
    runs = [set_run("my_csv_sets", "csv_sets:x.csv", m, 0, w) for m, w in (("cfrnn", 6.0), ("my_set_method", 1.0))]
    for record, _ in runs:
        record["alpha"] = 0.2
    fig = sets_figure(stored(runs), "my_csv_sets", "csv_sets:x.csv")
    cov_ax, width_ax, joint_ax = axes_of(fig)
    targets = {line.get_label(): line.get_ydata()[0] for line in nominal_lines(cov_ax)}
    bonferroni = next(label for label in targets if "Bonferroni" in label)
    nominal = next(label for label in targets if "nominal" in label)
    assert targets[bonferroni] == pytest.approx(95.0) and targets[nominal] == pytest.approx(80.0)
    assert len(targets) == 2  # no other target on the per-horizon panel
    assert [line.get_xdata()[0] for line in nominal_lines(joint_ax)] == [pytest.approx(80.0)]  # bars lie along x
    fig.canvas.draw()
    for ax in (cov_ax, width_ax):
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks  # no tick at 1.5, 2.5
    close(fig)


def test_order_selection_figure_has_the_papers_markers():
    rows = [{"task_id": f"t{i}", "suite": "ar_order", "dataset": f"expar window={w}", "method": "pa_rnn",
             "setting": "hidden=100", "seed": s, "status": "ok", "alpha": ALPHA, "coverage": 0.9, "mean_length": 3.3,
             "mspe": 1.0, "selected_lags": "1,2" if (w, s) == (3, 0) else "1", "ar_order": 2 if (w, s) == (3, 0) else 1,
             "candidate_lags": w,
             "identity": {"code": "c"}, "config": {"protocol": {"kind": "offline"}}}
            for i, (w, s) in enumerate((w, s) for w in (1, 3) for s in (0, 1))]
    fig = order_selection_figure(StoredResults(rows, lambda t: None))
    fsr_ax = axes_of(fig)[0]
    ours = fsr_ax.get_lines()[0]
    np.testing.assert_allclose(ours.get_xdata(), [1, 3])
    np.testing.assert_allclose(ours.get_ydata(), [0.0, 1 / 3])  # window 3: lag 2 false in one of 3 selections
    assert any(isinstance(c, PathCollection) for c in fsr_ax.collections)  # paper values (hollow squares)
    close(fig)


def test_catalog_lists_only_what_the_store_has(fesp_store):
    names = [spec.name for spec in available_figures(fesp_store)]
    assert names == ["fesp_comparison-fesp", "coverage_by_hour-fesp", "tradeoff", "rolling_coverage-fesp",
                     "interval_bands-fesp", "gamma_sweep-fesp"]
    assert available_figures(stored([])) == []
