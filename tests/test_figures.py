"""Figures drawn from a tiny store built here: what each shows is checked on the matplotlib objects."""

import io
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
    cap = default_cap(-10, 10)
    metrics = set_metrics(y, lower, upper, ALPHA, cap)
    task_id = f"{suite}-{dataset}-{method}-{seed}"
    record = {"task_id": task_id, "suite": suite, "dataset": dataset, "method": method, "setting": "LSTM-20",
              "seed": seed, "status": "ok", "alpha": ALPHA, "identity": {"code": "c"}, "config": {"protocol": {}},
              "length_cap": list(cap), **metrics}
    frame = pd.DataFrame({"item": np.repeat(np.arange(n), horizon), "horizon": np.tile(np.arange(1, horizon + 1), n),
                          "y": y.ravel(), "lower": lower.ravel(), "upper": upper.ravel(), "point": 0.0})
    return record, frame


def stored(runs) -> StoredResults:
    frames = {record["task_id"]: frame for record, frame in runs}
    return StoredResults([record for record, _ in runs], frames.__getitem__)


@pytest.fixture(scope="module")
def fesp_store():
    runs = [series_run("fesp", "fesp", "aci", f"gamma={g:g}", 1.6 + 10 * g) for g in (0.0, 0.001, 0.01, 0.05)]
    runs += [series_run("fesp", "fesp", "agaci", "default", 1.7),
             series_run("fesp", "fesp", "nexcp", "decay=0.99", 1.8),
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
    counts_ax = axes_of(fig)[2]  # no infinite interval in this store: the count axis runs from 0, whole numbers
    assert counts_ax.get_ylim()[0] == 0 and counts_ax.get_ylim()[1] >= 1
    assert all(float(t).is_integer() for t in counts_ax.get_yticks() if 0 <= t <= counts_ax.get_ylim()[1])
    assert [t.get_text() for t in counts_ax.texts] == ["no infinite interval at any gamma"]  # not a flat line to read
    assert not fig.legends and fig._suptitle.get_text().endswith("dashed: nominal 90%)")  # no legend under the axes
    close(fig)


def test_a_gamma_grid_with_a_second_key_draws_a_sweep_per_setting():
    """ACI over gamma x score (the grid a user wrote): the figure was left out, since only settings of the form
    "gamma=X" were read; now one line per score, a lone gamma (no sweep) a point beside them (reader: the
    normalized row was missing), and the paper's table keeps the plain sweep only. With statistics, the rows'
    CIs are bands along a line and bars at a point."""
    from pibench.reports.paper_tables import aci_sweep

    runs = [series_run("mine", "s", "aci", f"gamma={g:g},score={score}", w + 10 * g)
            for g in (0.0, 0.01) for score, w in (("absolute", 1.6), ("normalized", 1.9))]
    runs += [series_run("mine", "s", "aci", "base=pa,gamma=0.01", 2.2)]
    store = stored(runs)
    sweep = aci_sweep(store.summary, "mine", "s")
    assert list(sweep["variant"]) == ["score=absolute"] * 2 + ["score=normalized"] * 2
    fig = gamma_sweep_figure(store, "mine", "s")
    lines = {line.get_label(): list(line.get_xdata()) for line in axes_of(fig)[0].get_lines()
             if not line.get_label().startswith("_")}
    assert lines == {"score=absolute": [0.0, 0.01], "score=normalized": [0.0, 0.01], "base=pa": [0.01]}
    assert fig.legends  # lines to tell apart
    assert "bands" not in fig.get_suptitle()  # these records carry no length cap: no statistics, no CIs
    close(fig)
    for record, _ in runs:  # series_run's cap: now the rows have CIs
        record["length_cap"] = list(default_cap(-3, 3))
    fig = gamma_sweep_figure(stored(runs), "mine", "s")
    coverage, length = axes_of(fig)[:2]
    for ax in (coverage, length):
        assert len(ax.collections) == 2 + 1  # a band per swept score, a bar for base=pa
    assert "bands: 90% CIs" in fig.get_suptitle()
    close(fig)
    assert aci_sweep(stored(runs[-1:]).summary, "mine", "s", lone=True).empty  # a lone gamma alone: no sweep


def test_the_per_method_panels_say_which_setting_and_seed_they_show():
    """ACI ran two settings and two seeds: its panel is one run, and the titles said nothing of the others (the
    figures guide promised every method, and a user looked for gamma=0.01)."""
    runs = [series_run("default", "ar1", "aci", f"gamma={g:g}", w, seed=s) for g, w in ((0.0, 1.6), (0.01, 1.7))
            for s in (0, 1)]
    runs += [series_run("default", "ar1", "nexcp", "default", 1.8)]
    store = stored(runs)
    for draw in (rolling_coverage_figure, interval_bands_figure):
        fig = draw(store, "default", "ar1")
        assert len(axes_of(fig)) == 2
        assert fig._suptitle.get_text().endswith(
            "shown: a method's shortest setting covering 90% (else its best covering) and its first seed"), draw
        close(fig)
    one = stored([series_run("default", "ar1", m, "default", 1.6) for m in ("aci", "nexcp")])
    fig = rolling_coverage_figure(one, "default", "ar1")
    assert "shown:" not in fig._suptitle.get_text()  # nothing left out, nothing said
    close(fig)


def test_a_panel_above_a_hidden_one_labels_its_time_axis(fesp_store):
    """Three methods in a 2 x 2 grid with a shared x axis: the top-right panel is its column's last, so it shows
    the dates that the hidden panel below it would have shown."""
    runs = [series_run("default", "ar1", m, "default", 1.6) for m in ("aci", "agaci", "nexcp")]
    fig = rolling_coverage_figure(stored(runs), "default", "ar1")
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 3
    top_right = fig.axes[1]
    fig.canvas.draw()
    def labels(ax):
        return [t.get_text() for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]

    assert labels(top_right) and top_right.get_xlabel() == "end of window"
    assert not labels(fig.axes[0])  # the panel above a drawn one: none
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


def test_interval_bands_mark_infinite_bounds_and_count_them():
    """An infinite bound is drawn a span beyond the truth, where nothing told it from a wide finite one: an
    arrow marks each (up for an upper bound, down for a lower), and the panel's title counts them."""
    width = np.full((60, 1), 1.6)
    width[[3, 10, 11], 0] = np.inf
    fig = interval_bands_figure(stored([series_run("default", "ar1", "aci", "gamma=0.05", width, groups=1)]),
                                "default", "ar1")
    (ax,) = axes_of(fig)
    assert ax.get_title().endswith("; 3 infinite (arrows)")
    arrows = [c for c in ax.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == 3]
    assert len(arrows) == 2  # the three steps' upper and lower bounds
    truth = np.concatenate([c.get_offsets()[:, 1] for c in ax.collections
                            if isinstance(c, PathCollection) and c not in arrows and len(c.get_offsets())])
    up, down = sorted(arrows, key=lambda c: -c.get_offsets()[:, 1].mean())
    assert (up.get_offsets()[:, 1] > truth.max()).all() and (down.get_offsets()[:, 1] < truth.min()).all()
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
    assert axes_of(fig)[-1].get_xlabel() == "date"  # the fesp store's steps are dates
    close(fig)


def test_tradeoff_one_point_group_per_method_and_the_nominal(fesp_store):
    fig = tradeoff_figure(fesp_store)
    ax = axes_of(fig)[0]
    groups = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(groups) == 7  # aci's 4 gammas (each its own look: dogfood, they were alike), agaci, nexcp, pa
    assert sorted(g.get_label() for g in groups if not g.get_label().startswith("_")) == ["aci", "agaci", "nexcp",
                                                                                          "pa"]
    looks = {(tuple(np.round(g.get_facecolor()[0], 3)) if len(g.get_facecolor()) else "hollow",
              tuple(np.round(g.get_edgecolor()[0], 3))) for g in groups[:4]}  # (aci's first, methods in order)
    assert len(looks) == 4  # four settings of aci, four looks
    aci = np.concatenate([g.get_offsets() for g in groups[:4]])
    assert len(aci) == 4
    # aci's four settings share its colour and marker: each is named beside its point; a lone setting is named
    # where the tables name it (not agaci's default)
    names = {t.get_text(): tuple(t.xy) for t in ax.texts}
    assert set(names) == {"gamma=0", "gamma=0.001", "gamma=0.01", "gamma=0.05", "decay=0.99", "paper"}
    assert {tuple(map(float, p)) for p in aci} == {tuple(map(float, names[f"gamma={g:g}"]))
                                                   for g in (0, 0.001, 0.01, 0.05)}
    assert nominal_lines(ax)[0].get_xdata()[0] == pytest.approx(90.0)
    assert ax.get_xlabel() == "coverage (%)"
    close(fig)


def test_tradeoff_names_of_a_crowd_of_settings_never_overlap_and_the_panel_says_how_many_it_left_out():
    """Thirty ACI settings of nearly the same width (fesp's gamma sweep): their names were a blot. The names
    shown overlap no other and stay in the panel, the isolated setting keeps its name, and the title counts
    the rest."""
    runs = [series_run("fesp", "fesp", "aci", f"gamma={g:g}", 1.60 + 0.002 * i, days=30)
            for i, g in enumerate(np.linspace(0.0, 0.03, 30))]
    runs.append(series_run("fesp", "fesp", "aci", "gamma=0.09", 3.0, days=30))  # far from the crowd
    fig = tradeoff_figure(stored(runs))
    ax = axes_of(fig)[0]
    fig.savefig(io.BytesIO(), format="png")  # the layout as saved (the titles that count the hidden names included)
    renderer = fig.canvas.get_renderer()
    shown = [t for t in ax.texts if t.get_visible()]
    boxes = [t.get_window_extent(renderer) for t in shown]
    assert 2 <= len(shown) < 31
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    panel = ax.get_window_extent(renderer)
    assert all(panel.x0 <= b.x0 and b.x1 <= panel.x1 and panel.y0 <= b.y0 and b.y1 <= panel.y1 for b in boxes)
    assert "gamma=0.09" in {t.get_text() for t in shown}
    assert ax.get_title().endswith(f"; {31 - len(shown)} of 31 names hidden")
    assert "names hidden where they would overlap" in fig.get_suptitle()
    close(fig)


def test_sets_figure_per_horizon_lines_and_joint_bars():
    runs = [set_run("sets", "covid", m, seed, w) for m, w in (("cfrnn", 6.0), ("dprnn", 1.0)) for seed in (0, 1, 2)]
    results = stored(runs)
    fig = sets_figure(results, "sets", "covid")
    cov_ax, width_ax, joint_ax = axes_of(fig)
    assert len([line for line in cov_ax.get_lines() if line.get_linestyle() not in ("--", ":")]) == 2
    bars = joint_ax.patches
    assert len(bars) == 2
    cf = [100 * r["joint_coverage"] for r, _ in runs if r["method"] == "cfrnn"]
    assert bars[0].get_width() == pytest.approx(np.mean(cf))  # horizontal bars: labels read along the y axis
    widths = next(line for line in width_ax.get_lines() if line.get_color() == method_colour("cfrnn")).get_ydata()
    np.testing.assert_allclose(widths, 12.0)
    close(fig)


def test_sets_figure_joint_bars_carry_the_rows_cis_and_a_dagger_without_a_guarantee():
    """The joint panel showed the seeds' std and no † (reader), where the tables show the row's 90% CI and mark
    CF-RNN without a joint guarantee: the bar's error bar is now the CI of the statistics, and the label the †."""
    runs = [set_run("sets", "covid", m, seed, w) for m, w in (("cfrnn", 6.0), ("dprnn", 1.0)) for seed in (0, 1, 2)]
    for record, _ in runs:
        record["joint_guarantee"] = record["method"] != "cfrnn"
    results = stored(runs)
    fig = sets_figure(results, "sets", "covid")
    joint_ax = axes_of(fig)[2]
    label_at = {round(t.get_position()[1]): t.get_text() for t in joint_ax.get_yticklabels()}
    assert sorted(label_at.values()) == ["cfrnn LSTM-20 †", "dprnn LSTM-20"]
    assert "†: no joint guarantee" in joint_ax.get_title() and "bars: 90% CIs" in joint_ax.get_title()
    rows = results.statistics.rows.set_index("method")
    segments = [segment for c in joint_ax.collections if hasattr(c, "get_segments") for segment in c.get_segments()
                if len(segment) == 2 and segment[0][1] == segment[1][1]]  # the error bars: horizontal, one a bar
    assert len(segments) == 2
    for (x0, y), (x1, _) in segments:
        method = label_at[round(y)].split()[0]
        expected = 100 * rows.loc[method, ["coverage_ci_low", "coverage_ci_high"]].to_numpy(float)
        np.testing.assert_allclose(sorted([x0, x1]), expected)
        assert expected[1] > expected[0]
    close(fig)


def test_figures_over_several_levels_draw_no_one_levels_ci():
    """Results of two levels (drawn together through the API, not the report): a bar or band over both levels'
    means showed the CI of one of them (review); they now show the seeds' spread, and no CI."""
    runs = [set_run("sets", "covid", "cfrnn", seed, 6.0) for seed in (0, 1, 2)]
    runs[0][0]["alpha"] = 0.2
    fig = sets_figure(stored(runs), "sets", "covid")
    assert "90% CIs" not in axes_of(fig)[2].get_title() and "mean +/- std" in axes_of(fig)[2].get_title()
    close(fig)
    sweep = [series_run("m", "s", "aci", f"gamma={g:g}", 1.6 + g) for g in (0, 0.01)]
    sweep[0][0]["alpha"] = 0.2
    for record, _ in sweep:  # each task's own CIs, as the summary carries them: never a row's band
        record.update(coverage_ci_low=0.8, coverage_ci_high=0.95, mean_length_ci_low=1.0, mean_length_ci_high=4.0)
    fig = gamma_sweep_figure(stored(sweep), "m", "s")
    assert "bands" not in fig.get_suptitle() and not axes_of(fig)[0].collections
    close(fig)


def test_sets_figure_draws_widths_apart_by_orders_of_magnitude_on_a_log_scale():
    """COVID's CF-RNN bands are 30 times DP-RNN's: on a linear axis DP-RNN and MQ-RNN lay flat at 0."""
    for ratio, scale in ((6.0, "linear"), (30.0, "log")):
        fig = sets_figure(stored([set_run("sets", "covid", m, 0, w) for m, w in (("cfrnn", ratio), ("dprnn", 1.0))]),
                          "sets", "covid")
        assert axes_of(fig)[1].get_yscale() == scale
        close(fig)


def test_sets_figure_draws_infinite_intervals_at_the_tables_cap_and_rings_them():
    """A method infinite at horizon 1 on half the sequences: its width line began at horizon 2 and the infinite
    maximum turned the axis to a log scale; it is drawn with the upper bound at the record's cap (30, so
    30 - (-6) = 36 wide), as the tables' mean length counts it, ringed, and the axis stays linear."""
    record, frame = set_run("sets", "covid", "cfrnn", 0, 6.0)
    first = frame["horizon"] == 1
    frame.loc[first & (frame["item"] % 2 == 0), "upper"] = np.inf
    fig = sets_figure(stored([(record, frame), set_run("sets", "covid", "dprnn", 0, 4.0)]), "sets", "covid")
    width_ax = axes_of(fig)[1]
    widths = next(line for line in width_ax.get_lines() if line.get_color() == method_colour("cfrnn")).get_ydata()
    np.testing.assert_allclose(widths, [(36.0 + 12.0) / 2, 12.0, 12.0, 12.0])
    (rings,) = width_ax.collections
    np.testing.assert_allclose(rings.get_offsets(), [[1, 24.0]])
    assert width_ax.get_yscale() == "linear" and "ringed: infinite intervals" in width_ax.get_title()
    close(fig)


def test_sets_figure_targets_come_from_the_records_and_horizons_are_whole_numbers():
    """alpha = 0.2 and H = 4 in the records: per-horizon target 100 (1 - 0.2/4) = 95 (Bonferroni), joint 80."""
    runs = [set_run("my_csv_sets", "csv_sets:x.csv", m, 0, w) for m, w in (("cfrnn", 6.0), ("my_set_method", 1.0))]
    for record, _ in runs:
        record["alpha"] = 0.2
    fig = sets_figure(stored(runs), "my_csv_sets", "csv_sets:x.csv")
    cov_ax, width_ax, joint_ax = axes_of(fig)
    # the per-horizon (Bonferroni) target dashed, the joint one dotted, in both panels that show it
    targets = {line.get_label(): (line.get_ydata()[0], line.get_linestyle()) for line in cov_ax.get_lines()
               if line.get_linestyle() in ("--", ":")}
    bonferroni = next(label for label in targets if "Bonferroni" in label)
    nominal = next(label for label in targets if "nominal" in label)
    assert targets[bonferroni] == (pytest.approx(95.0), "--") and targets[nominal] == (pytest.approx(80.0), ":")
    assert len(targets) == 2  # no other target on the per-horizon panel
    joint_lines = [line for line in joint_ax.get_lines() if line.get_linestyle() in ("--", ":")]
    assert [(line.get_xdata()[0], line.get_linestyle()) for line in joint_lines] == [(pytest.approx(80.0), ":")]
    assert joint_ax.get_xlim()[0] == 0  # bars from 0, never from a cut axis
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
    paper = [c for c in fsr_ax.collections if isinstance(c, PathCollection)]  # paper values (hollow squares)
    assert len(paper) == 1 and (len(paper[0].get_facecolor()) == 0 or paper[0].get_facecolor()[0][3] == 0)
    assert fig.legends[0].handlelength >= 3  # a dashed setting's line shows its dashes beside the marker
    assert "over the 2 datasets (seeds) of each window" in fig.get_suptitle()  # two seeds here, not the paper's five
    fig.canvas.draw()
    assert all(float(t).is_integer() for t in fsr_ax.get_xticks())
    close(fig)


def test_catalog_lists_only_what_the_store_has(fesp_store):
    names = [spec.name for spec in available_figures(fesp_store)]
    assert names == ["fesp_comparison-fesp", "coverage_by_hour-fesp", "tradeoff", "rolling_coverage-fesp",
                     "interval_bands-fesp", "gamma_sweep-fesp"]
    assert available_figures(stored([])) == []


def _legend_styles(fig) -> dict[str, tuple]:
    """label -> (colour, marker) of the figure legend's handles."""
    from matplotlib.colors import to_hex

    styles = {}
    for legend in fig.legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if hasattr(handle, "get_marker"):
                colour, marker = handle.get_color(), handle.get_marker()
            else:  # a scatter's PathCollection: its marker is its path
                colour, marker = handle.get_facecolor()[0], tuple(handle.get_paths()[0].vertices.round(3).ravel())
            styles[text.get_text()] = (to_hex(colour), marker)
    return styles


def test_every_method_is_in_every_figure_with_a_style_of_its_own():
    """14 methods (two plugins, the oracle, two methods whose built-in colours coincide) on an online
    dataset at two levels: each figure shows every method, no two alike; the oracle is thick grey."""
    from pibench.reports.figures.style import ORACLE_STYLE, figure_styles

    methods = ["aci", "agaci", "nexcp", "enbpi", "autoreg", "quantile_tracker", "mapie_aci", "conformal_pid",
               "aci_decay", "dtaci", "sf_ogd", "saocp", "oracle", "rolling_gauss", "my_band"]
    runs = []
    for level in (0.1, 0.2):
        for i, method in enumerate(methods):
            record, frame = series_run("default", "ar1", method, "default", 1.2 + 0.05 * i - 2 * (level - 0.1),
                                       days=80, groups=1)
            record.update(alpha=level, task_id=f"{record['task_id']}-{level}", coverage_vol_low=0.9,
                          coverage_vol_mid=0.9 - 0.01 * i, coverage_vol_high=0.85)
            runs.append((record, frame))
    results = stored(runs)
    styles = figure_styles(methods)
    assert len({(s.colour, s.marker) for s in styles.values()}) == len(methods)
    assert styles["oracle"] == ORACLE_STYLE and styles["quantile_tracker"].colour == styles["mapie_aci"].colour
    specs = {spec.name: spec for spec in available_figures(results)}
    kinds = {name.split("-")[0] for name in specs}
    assert kinds == {"tradeoff", "rolling_coverage", "interval_bands", "conditional_coverage", "calibration"}
    assert all(name == "calibration" or name.endswith(("-alpha0.1", "-alpha0.2")) for name in specs)
    for name, spec in specs.items():
        fig = spec.draw()
        kind = name.split("-")[0]
        if kind in ("rolling_coverage", "interval_bands"):  # a panel per method, titled by it
            titles = [ax.get_title().split(":")[0] for ax in axes_of(fig)]
            assert sorted(titles) == sorted(methods), (name, titles)
        else:  # one legend entry per method, no two alike
            legend = {label: style for label, style in _legend_styles(fig).items() if label in methods}
            assert set(legend) == set(methods), (name, set(methods) - set(legend))
            drawn = {(c, m) for c, m in legend.values()}
            assert len(drawn) == len(methods), name
        close(fig)


def test_tradeoff_points_carry_each_methods_marker():
    from matplotlib.colors import to_hex

    from pibench.reports.figures.style import figure_styles

    methods = ["quantile_tracker", "mapie_aci", "rolling_gauss", "oracle"]
    results = stored([series_run("default", "ar1", m, "default", 1.0 + i / 10, days=30, groups=1)
                      for i, m in enumerate(methods)])
    fig = tradeoff_figure(results)
    styles = figure_styles(methods)
    seen = {}
    for collection in (c for c in axes_of(fig)[0].collections if isinstance(c, PathCollection)):
        seen[collection.get_label()] = (to_hex(collection.get_facecolor()[0]), collection.get_paths()[0])
    assert set(seen) == set(methods)
    # same colour for the two sky-blue methods, told apart by their marker paths
    assert seen["quantile_tracker"][0] == seen["mapie_aci"][0] == styles["mapie_aci"].colour.lower()
    assert len(seen["quantile_tracker"][1].vertices) != len(seen["mapie_aci"][1].vertices)
    assert seen["oracle"][0] == styles["oracle"].colour.lower()
    assert fig.legends and not axes_of(fig)[0].get_legend()  # the legend sits outside the data
    close(fig)


def test_short_test_spans_adapt_the_window_or_leave_the_figure_out():
    record, frame = series_run("fesp", "fesp", "aci", "gamma=0.01", 1.6, days=30)
    results = stored([(record, frame)])
    names = [spec.name for spec in available_figures(results)]
    assert "rolling_coverage-fesp" in names
    fig = rolling_coverage_figure(results, "fesp", "fesp")
    (line,) = [ln for ln in axes_of(fig)[0].get_lines() if ln.get_linestyle() == "-"]
    assert len(line.get_ydata()) == 30 - 10 + 1  # a 10-day window over 30 days, not an empty 30-day one
    assert "2019-01-01 to 2019-01-30 (30 days)" in fig._suptitle.get_text()
    close(fig)
    tiny = stored([series_run("fesp", "fesp", "aci", "gamma=0.01", 1.6, days=4)])
    assert "rolling_coverage-fesp" not in [spec.name for spec in available_figures(tiny)]


def test_heat_map_numbers_are_white_on_dark_cells(fesp_store):
    from matplotlib.colors import to_rgba

    fig = coverage_by_hour_figure(fesp_store)
    ax = axes_of(fig)[0]
    image = ax.get_images()[0]
    darks = 0
    for text in ax.texts:
        x, y = text.get_position()
        r, g, b, _ = image.cmap(image.norm(image.get_array()[int(y), int(x)]))
        dark = 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.35
        if dark:
            darks += 1
            assert to_rgba(text.get_color()) == to_rgba("white")
        elif 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.6:
            assert to_rgba(text.get_color()) == to_rgba("black")
    assert darks > 0  # the store has cells far enough from nominal to be dark
    close(fig)


def test_a_plugin_is_in_the_fesp_figures(fesp_store):
    runs = [series_run("fesp", "fesp", m, "default", 1.6) for m in ("my_plugin", "autoreg")]
    results = StoredResults(fesp_store.records + [r for r, _ in runs],
                            lambda t: dict((r["task_id"], f) for r, f in runs).get(t)
                            if t.startswith("fesp-fesp-my_plugin") or t.startswith("fesp-fesp-autoreg")
                            else fesp_store.read_predictions(t))
    fig = fesp_paper_figure(results)
    labels = [t.get_text() for t in axes_of(fig)[0].get_yticklabels()]
    assert "my_plugin" in labels and "autoreg" in labels
    close(fig)
    fig = coverage_by_hour_figure(results)
    rows = [t.get_text() for t in axes_of(fig)[0].get_yticklabels()]
    assert "my_plugin" in rows and "autoreg" in rows
    close(fig)


def test_a_series_without_dates_spans_steps_not_years():
    """The runner stores a dateless series' step numbers as numbers, and the figures read them as steps (4-digit
    steps once read as years: "1001-01-01 to 3000-01-01")."""
    from pibench.benchmarks.protocols import ProtocolOutput
    from pibench.benchmarks.runner import _predictions_frame
    from pibench.data_loaders.synthetic import ar_problem
    from pibench.reports.figures.results import describe_test_span

    problem = ar_problem(n_train=1000, n_test=2000)
    y = problem.y[problem.test_start:]
    frame = _predictions_frame(problem, ProtocolOutput(y, y - 1, y + 1, y, 0.0, 0.0, 1))
    assert pd.api.types.is_integer_dtype(frame["time"])
    record = {**series_run("default", "ar1", "aci", "gamma=0", 1.6)[0], "task_id": "t"}
    span = describe_test_span(StoredResults([record], {"t": frame}.__getitem__), "t")
    first = int(problem.time[problem.test_start])  # the series' own step numbers, as the time axes show them
    assert span == f"steps {first} to {first + 1999} (2,000 steps)" and first >= 1000


def test_the_leaderboard_greys_the_cells_of_rows_that_miss_the_level():
    """A narrow row (68% coverage) scores below the best covering row's: its cell is grey, not the best's colour."""
    from pibench.reports.figures.leaderboard import leaderboard_figure

    runs = [series_run("lb", dataset, method, "default", half, days=400) for dataset in ("A", "B")  # 9,600 points
            for method, half in (("wide", 1.72), ("nominal", 1.645), ("narrow", 1.0))]  # 91.5%, 90%, 68%
    fig = leaderboard_figure(stored(runs), "lb")
    ax = axes_of(fig)[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    image, grey = (np.ma.getmaskarray(im.get_array()) for im in ax.get_images())
    narrow = rows.index("narrow")
    assert image[narrow].all() and not grey[narrow].any()  # out of the colour scale, under the grey layer
    others = [i for i in range(len(rows)) if i != narrow]
    assert not image[others].any() and grey[others].all()
    assert all(t.get_text().endswith("↓") for t in ax.texts if abs(t.get_position()[1] - narrow) < 0.1)
    close(fig)


def test_the_leaderboard_outlines_the_cells_the_mcs_holds():
    """Where a dataset's MCS holds a row, the data do not tell its score apart from the best: the cell is
    outlined, exactly those cells (read from the statistics), and the title says what an outline means."""
    from matplotlib.patches import Rectangle

    from pibench.reports.figures.leaderboard import leaderboard_figure

    runs = [series_run("lb", dataset, method, "default", half, days=400) for dataset in ("A", "B")
            for method, half in (("wide", 1.72), ("nominal", 1.645), ("narrow", 1.0))]
    for record, _ in runs:  # the cap of series_run's lengths: the statistics (MCS included) read it
        record["length_cap"] = list(default_cap(-3, 3))
    results = stored(runs)
    fig = leaderboard_figure(results, "lb")
    ax = axes_of(fig)[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    columns = [t.get_text() for t in ax.get_xticklabels()]
    held = {(r.method, r.dataset) for r in results.statistics.rows.itertuples() if pd.notna(r.in_mcs) and r.in_mcs}
    outlined = {(rows[round(p.get_y() + p.get_height() / 2)], columns[round(p.get_x() + p.get_width() / 2)])
                for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()}
    assert outlined == held and 0 < len(held) < 6  # some rows are told apart, some not
    assert "outlined: in the dataset's 90% MCS" in ax.get_title()
    close(fig)


def test_a_files_own_step_numbers_name_the_test_span(tmp_path):
    """A CSV time column of whole numbers is the steps' labels, kept as numbers: the span reads "steps 1301 to
    1400", not "1301-01-01 to 1400-01-01" (text once read as years) nor the row numbers 298 to 397."""
    from pibench.benchmarks.protocols import ProtocolOutput
    from pibench.benchmarks.runner import _predictions_frame
    from pibench.data_loaders.csv_series import csv_problem
    from pibench.reports.figures.results import describe_test_span

    values = np.random.default_rng(0).normal(size=400)
    path = tmp_path / "steps.csv"
    path.write_text("step,y\n" + "".join(f"{1001 + i},{v:.4f}\n" for i, v in enumerate(values)))
    problem = csv_problem(path=path, target="y", time="step", lags=2)
    y = problem.y[problem.test_start:]
    frame = _predictions_frame(problem, ProtocolOutput(y, y - 1, y + 1, y, 0.0, 0.0, 1))
    record = {**series_run("s", "steps", "aci", "gamma=0", 1.6)[0], "task_id": "t"}
    span = describe_test_span(StoredResults([record], {"t": frame}.__getitem__), "t")
    assert span == "steps 1301 to 1400 (100 steps)"


@pytest.mark.parametrize("methods", [["aci"], ["aci", "agaci", "nexcp", "pa"]])
def test_every_title_fits_inside_its_figure(fesp_store, methods):
    """Long titles wrap: a one-panel figure once cut its title off at both edges."""
    results = StoredResults([r for r in fesp_store.records if r["method"] in methods], fesp_store.read_predictions)
    drawn = 0
    for spec in available_figures(results):
        name, fig = spec.name, spec.draw()
        fig.canvas.draw()
        width = fig.bbox.width
        for text in [fig._suptitle, *(ax.title for ax in axes_of(fig))]:
            if text is None or not text.get_text():
                continue
            box = text.get_window_extent()
            assert box.x0 >= -1 and box.x1 <= width + 1, (name, text.get_text(), box.x0, box.x1, width)
            drawn += 1
        close(fig)
    assert drawn >= 3


def test_a_lone_point_with_a_zero_width_ci_keeps_a_readable_axis(tmp_path, capsys):
    """The oracle's lengths on an AR(1) series are equal but for rounding, and so is their CI: the axis once
    zoomed to 1e-12 around them, and its offset ticks read as another length with a wide CI."""
    from pibench import load_results
    from pibench.cli import main

    assert main(["run", "--datasets", "ar", "--methods", "oracle", "--results-dir", str(tmp_path / "r"),
                 "--no-progress"]) == 0
    capsys.readouterr()
    results = load_results(tmp_path / "r")
    (length,) = results.summary["mean_length"]
    fig = results.figure("tradeoff")
    low, high = axes_of(fig)[0].get_ylim()
    assert high - low >= 0.019 * length and low < length < high
    close(fig)


def test_setting_names_sit_on_the_side_away_from_the_nearest_point():
    from pibench.reports.figures.style import label_away

    points = np.array([[89.4, 3.218], [89.2, 3.247], [95.0, 5.0]])
    assert label_away(points) == [(5, -4), (-5, 4), (5, 4)]  # the first two apart; the far one up and right
    assert label_away(np.array([[90.0, 3.0], [90.0, 3.0], [95.0, 5.0]]))[:2] == [(5, 4), (-5, -4)]  # one place


@pytest.mark.parametrize("labels, span", [
    (pd.date_range("1859", periods=150, freq="YS"), "1859 to 2008 (150 steps)"),  # sunspots: years
    (pd.date_range("1982-01", periods=240, freq="MS"), "1982-01 to 2001-12 (240 steps)"),  # co2: months
    (pd.date_range("2020-01-01", periods=48, freq="h"), "2020-01-01 00:00 to 2020-01-02 23:00 (48 steps)"),
])
def test_the_test_span_is_written_at_the_resolution_of_its_dates(labels, span):
    """A yearly series' span once read "1859-01-01 to 2008-01-01"."""
    from pibench.reports.figures.results import describe_test_span

    frame = pd.DataFrame({"t": np.arange(len(labels)), "time": labels.strftime("%Y-%m-%dT%H:%M:%S")})
    record = {**series_run("s", "d", "aci", "gamma=0", 1.6)[0], "task_id": "t"}
    assert describe_test_span(StoredResults([record], {"t": frame}.__getitem__), "t") == span


def test_figures_are_made_outside_pyplot(fesp_store):
    """pyplot counted every figure drawn (a notebook warned after 20 and could show each twice), and importing
    the figures once switched the session's backend to Agg."""
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    drawn = [spec.draw() for spec in available_figures(fesp_store)]
    assert len(drawn) >= 5 and plt.get_fignums() == before
    import io

    buffer = io.BytesIO()
    drawn[0].savefig(buffer, format="png")  # it renders without pyplot
    assert buffer.getvalue().startswith(b"\x89PNG")
    for fig in drawn:
        close(fig)


def test_a_figure_shows_itself_in_a_notebook_and_importing_leaves_the_backend_alone():
    """IPython shows what ``_repr_png_`` gives; the figures module once switched the session to Agg."""
    import subprocess
    import sys

    from pibench.reports.figures.style import new_figure

    fig, _ = new_figure(3, 2)
    assert fig._repr_png_().startswith(b"\x89PNG")
    close(fig)
    code = "import matplotlib; matplotlib.use('svg'); import pibench.reports.figures.catalog; " \
           "print(matplotlib.get_backend())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "svg"


def test_every_built_in_method_has_a_style_of_its_own():
    """garch had none: it drew as a plugin would, in ACI's blue, and read as one of the ACI family."""
    from pibench.methods.catalog import available_methods
    from pibench.reports.figures.style import BUILTIN_STYLES

    builtin = [name for name, cls in available_methods().items() if cls.__module__.startswith("pibench.")]
    assert sorted(set(builtin) - set(BUILTIN_STYLES)) == []
    looks = [(s.colour, s.marker) for s in BUILTIN_STYLES.values()]
    assert len(set(looks)) == len(looks)


def test_a_point_name_never_lies_over_another_point():
    """On vix, 'gamma=0.01,score=normalized' sat left of its own point and right over ACI gamma=0.01's, the
    one a reader took it for. A name whose every side would lie over another point is hidden instead."""
    from matplotlib.figure import Figure

    from pibench.reports.figures.style import MARK_CLEARANCE, place_labels

    fig = Figure(figsize=(5, 4))
    ax = fig.subplots()
    points = np.array([[91.5, 0.522], [85.5, 0.476], [79.0, 0.416], [60.0, 0.80]])
    ax.scatter(points[:, 0], points[:, 1])
    ax.set(xlim=(55, 95), ylim=(0.3, 0.9))
    names = ["gamma=0.01,score=normalized", "gamma=0.01", "gamma=0", "far"]
    labels = [ax.annotate(n, tuple(p), xytext=(-5, -4), textcoords="offset points", fontsize=6.5)
              for n, p in zip(names, points)]
    hidden = place_labels(fig, {ax: labels}, {label: (-5, -4) for label in labels})
    renderer = fig.canvas.get_renderer()
    marks = ax.transData.transform(points)
    shown = [label for label in labels if label.get_visible()]
    assert hidden[ax] == len(labels) - len(shown) and "far" in [label.get_text() for label in shown]
    for label in shown:
        box = label.get_window_extent(renderer).padded(MARK_CLEARANCE)
        own = ax.transData.transform(label.xy)
        others = [m for m in marks if np.hypot(*(m - own)) > 0.5]
        assert not any(box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1 for x, y in others), label.get_text()
    long = labels[0]
    assert not long.get_visible() or long.get_window_extent(renderer).x1 > marks[1][0] + 40  # not over 85.5


def test_every_setting_of_a_method_looks_its_own_in_the_tables_order():
    """fesp's 30 ACI gammas: no two draw alike (dash, marker fill and shade together; 4 dashes alone repeated every
    4th), and the figures list settings as the tables do: period=7 before period=14, gamma=5e-06 before 0.01."""
    from pibench.methods.agaci import GAMMA_GRID
    from pibench.reports.figures.style import BUILTIN_STYLES, in_setting_order, setting_style

    settings = [f"gamma={g:g}" for g in GAMMA_GRID]
    rows = pd.DataFrame({"method": "aci", "setting": settings[::-1]})
    looks = [BUILTIN_STYLES["aci"].line(setting_style("aci", s, rows)) for s in settings]
    assert len({(str(k["linestyle"]), k["fillstyle"], k["color"]) for k in looks}) == 30
    assert looks[0]["linestyle"] == "-" and looks[0]["color"] == BUILTIN_STYLES["aci"].colour  # gamma=0: plain
    items = [(("band", "period=14,widen=1"), 0), (("band", "period=7,widen=1.5"), 1), (("aci", "gamma=0.01"), 2),
             (("aci", "gamma=5e-06"), 3)]
    assert [value for _, value in in_setting_order(items)] == [3, 2, 1, 0]


def _figure_texts(fig) -> set[str]:
    """Every name a reader sees: legend entries, tick labels, panel titles and annotations."""
    texts = {t.get_text() for legend in fig.legends for t in legend.get_texts()}
    for ax in axes_of(fig):
        texts |= {t.get_text() for t in ax.get_yticklabels()} | {ax.get_title().split(":")[0]}
        texts |= {t.get_text() for t in ax.texts}
        if ax.get_legend():
            texts |= {t.get_text() for t in ax.get_legend().get_texts()}
    return texts


def test_tradeoff_names_the_method_where_two_methods_share_a_settings_name():
    """Two methods' "score=normalized" points were told apart by colour alone (docs reader): a setting name two
    methods share is named with its method; one of one method alone keeps its short name."""
    runs = [series_run("t", "ar1", method, setting, half) for method, setting, half in [
        ("aci", "score=normalized", 1.6), ("aci", "score=absolute", 1.7), ("quantile_tracker", "score=normalized", 1.5),
        ("quantile_tracker", "lr=0.1", 1.65)]]
    fig = tradeoff_figure(stored(runs))
    texts = {t.get_text() for t in axes_of(fig)[0].texts}
    assert {"aci score=normalized", "quantile_tracker score=normalized", "score=absolute", "lr=0.1"} == texts
    close(fig)


def test_every_figure_names_a_lone_setting_as_the_tables_do():
    """garch ran once, as ``dist=t``: the tables show that setting, so every figure names it (figures once
    said plain "garch" in some and "garch dist=t" in others); a method's one default setting stays unnamed,
    and two settings of one method are both named."""
    runs = []
    for dataset in ("A", "B"):  # two datasets: the leaderboard too
        for level in (0.1, 0.2):  # two levels: the calibration figure too
            for i, (method, setting) in enumerate([("garch", "dist=t"), ("aci", "gamma=0.01"), ("aci", "gamma=0.05"),
                                                   ("autoreg", "default")]):
                record, frame = series_run("default", dataset, method, setting, 1.3 + 0.1 * i - 2 * (level - 0.1),
                                           days=80, groups=1)
                record.update(alpha=level, task_id=f"{record['task_id']}-{level}", coverage_vol_low=0.9,
                              coverage_vol_mid=0.88 - 0.01 * i, coverage_vol_high=0.85)
                runs.append((record, frame))
    specs = available_figures(stored(runs))
    assert {spec.name.split("-")[0] for spec in specs} >= {"tradeoff", "leaderboard", "conditional_coverage",
                                                           "calibration", "rolling_coverage"}
    for spec in (s for s in specs if not s.name.startswith("gamma_sweep")):  # ACI's settings alone, by gamma
        fig = spec.draw()
        texts = _figure_texts(fig)
        if spec.name.startswith("tradeoff"):  # a legend entry per method, each point named by its setting
            assert {"garch", "dist=t", "gamma=0.01", "gamma=0.05", "autoreg"} <= texts, spec.name
            assert "default" not in texts, spec.name
        elif spec.name.startswith(("rolling_coverage", "interval_bands")):  # a panel per method's best setting
            assert {"garch dist=t", "autoreg"} <= texts and texts & {"aci gamma=0.01", "aci gamma=0.05"}, spec.name
        else:
            assert {"garch dist=t", "aci gamma=0.01", "aci gamma=0.05", "autoreg"} <= texts, (spec.name, texts)
        if not spec.name.startswith("tradeoff"):
            assert not {"garch", "aci", "autoreg default"} & texts, spec.name
        close(fig)


def test_a_plugin_takes_a_colour_no_other_method_of_the_figure_has():
    """A plugin whose name hashed to black was drawn in AutoReg's black: in a figure of bands (colour alone) the
    two panels looked alike. While a colour is free, a plugin takes one no other method of the figure has."""
    from pibench.reports.figures.style import figure_styles

    for i in range(40):
        styles = figure_styles(["autoreg", "aci", "agaci", f"my_method_{i}", f"other_{i}"])
        colours = [styles[m].colour for m in styles]
        assert len(set(colours)) == len(colours), styles


def test_a_methods_label_reads_on_white_in_its_hue():
    """Okabe & Ito's yellow labels (sf_ogd, mapie_enbpi) had a contrast of 1.3 : 1 on white: labels are darkened
    to WCAG's 3 : 1 and keep their hue; colours that read as they are stay as they are."""
    from matplotlib.colors import rgb_to_hsv, to_rgb

    from pibench.reports.figures.style import OKABE_ITO, _luminance, label_colour

    for colour in OKABE_ITO.values():
        label = label_colour(colour)
        assert 1.05 / (_luminance(to_rgb(label)) + 0.05) >= 3.0, (colour, label)
        if 1.05 / (_luminance(to_rgb(colour)) + 0.05) >= 3.0:
            assert label == colour.lower()
        elif max(to_rgb(colour)) > 0:
            assert abs(rgb_to_hsv(to_rgb(label))[0] - rgb_to_hsv(to_rgb(colour))[0]) < 0.01  # the same hue
    assert label_colour(OKABE_ITO["yellow"]) != OKABE_ITO["yellow"].lower()
