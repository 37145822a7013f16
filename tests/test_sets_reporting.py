"""Reports of set-of-sequences rows: joint coverage is the headline in every table, whatever the suite's name.

Records are built here from 0/1 coverage patterns through the real metric code
(reports.metrics.set_metrics), so joint, marginal and per-horizon coverage are known by hand.
"""

import numpy as np
import pandas as pd
import pytest

from pibench.reports.metrics import set_metrics
from pibench.reports.paper_tables import set_suites, sets_table
from pibench.reports.summary import (
    headline_coverage,
    markdown_table,
    setting_sort_key,
    summary_frame,
    summary_row,
    write_summary,
)

# 4 test sequences x 3 horizons, 1 = covered. Joint: sequences 0 and 2 are covered at every horizon -> 2/4.
# Per horizon: h1 3/4, h2 2/4, h3 4/4. Marginal: 9 of 12 cells -> 3/4.
PATTERN = [[1, 1, 1],
           [1, 0, 1],
           [1, 1, 1],
           [0, 0, 1]]


def set_record(method, covered, seed=0, suite="sets", dataset="covid", setting="LSTM-20", alpha=0.1):
    covered = np.asarray(covered, dtype=bool)
    y = np.zeros(covered.shape)
    lower, upper = np.where(covered, -1.0, 1.0), np.where(covered, 1.0, 2.0)  # width 2 where covered, 1 where not
    metrics = set_metrics(y, lower, upper, alpha, (-10.0, 10.0))
    return {"task_id": f"{suite}-{dataset}-{method}-{setting}-{seed}", "suite": suite, "dataset": dataset,
            "method": method, "setting": setting, "seed": seed, "status": "ok", "alpha": alpha, "device": "cpu",
            **metrics}


def series_record(method, setting, coverage=0.9, seed=0, suite="default", dataset="ar1"):
    return {"task_id": f"{suite}-{dataset}-{method}-{setting}-{seed}", "suite": suite, "dataset": dataset,
            "method": method, "setting": setting, "seed": seed, "status": "ok", "alpha": 0.1, "device": "cpu",
            "coverage": coverage, "mean_length": 3.0, "median_length": 3.0, "n_infinite": 0, "winkler": 4.0,
            "n_test": 100}


def tables(text):
    """{heading (or "" for a table without one): (columns, rows of cells)} of a markdown text."""
    out, heading, lines = {}, "", text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("### "):
            heading = line[4:]
        elif line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            body = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                body.append([c.strip() for c in row.strip().strip("|").split("|")])
            out[heading] = ([c.strip() for c in line.strip().strip("|").split("|")], body)
    return out


def table_with(text, words):
    found = [(h, t) for h, t in tables(text).items() if all(w in h for w in words)]
    assert len(found) == 1, (words, list(tables(text)))
    return found[0][1]


def test_the_pattern_gives_the_hand_computed_coverage():
    record = set_record("cfrnn", PATTERN)
    assert record["joint_coverage"] == 0.5 and record["coverage"] == 0.75
    assert record["per_horizon_coverage"] == [0.75, 0.5, 1.0]


def test_summary_row_headlines_joint_coverage_for_sets_and_marginal_for_series():
    record = set_record("cfrnn", PATTERN)
    row = summary_row(record)
    assert headline_coverage(record) == (0.5, "joint")
    assert (row["coverage"], row["coverage_kind"], row["marginal_coverage"], row["joint_coverage"]) == \
        (0.5, "joint", 0.75, 0.5)
    assert (row["coverage_h1"], row["coverage_h2"], row["coverage_h3"]) == (0.75, 0.5, 1.0)
    assert "coverage_h4" not in row and "per_horizon_coverage" not in row
    assert record["coverage"] == 0.75  # the record itself is not changed
    series = summary_row(series_record("aci", "gamma=0", coverage=0.91))
    assert (series["coverage"], series["coverage_kind"], series["marginal_coverage"]) == (0.91, "marginal", 0.91)
    assert not any(k.startswith("coverage_h") for k in series)
    assert headline_coverage({"task_id": "x", "status": "error", "error": "boom"}) == (None, None)


def test_summary_csv_columns(tmp_path):
    long_pattern = np.ones((5, 12), dtype=int)
    long_pattern[0, 9] = 0  # horizon 10 misses one of 5 sequences
    records = [set_record("cfrnn", PATTERN), set_record("pa_lstm", long_pattern, dataset="eeg"),
               series_record("aci", "gamma=0", coverage=0.91),
               {"task_id": "failed", "suite": "sets", "dataset": "covid", "method": "dprnn", "setting": "LSTM-20",
                "seed": 0, "status": "error", "error": "boom"}]
    frame = pd.read_csv(write_summary(records, tmp_path))
    horizons = [c for c in frame.columns if c.startswith("coverage_h")]
    assert horizons == [f"coverage_h{h}" for h in range(1, 13)]  # h1 .. h12 by number, not h1, h10, h11, h2
    assert list(frame.columns[:9]) == ["suite", "dataset", "alpha", "method", "setting", "seed", "coverage",
                                      "coverage_kind", "marginal_coverage"]
    rows = frame.set_index("task_id")
    cf, pa, aci = rows.loc["sets-covid-cfrnn-LSTM-20-0"], rows.loc["sets-eeg-pa_lstm-LSTM-20-0"], \
        rows.loc["default-ar1-aci-gamma=0-0"]
    assert (cf["coverage"], cf["coverage_kind"], cf["marginal_coverage"], cf["joint_coverage"]) == \
        (0.5, "joint", 0.75, 0.5)
    assert [cf[f"coverage_h{h}"] for h in (1, 2, 3)] == [0.75, 0.5, 1.0]
    assert cf[[f"coverage_h{h}" for h in range(4, 13)]].isna().all()
    assert pa["coverage"] == pytest.approx(0.8) and pa["marginal_coverage"] == pytest.approx(59 / 60)
    assert pa["coverage_h10"] == pytest.approx(0.8) and pa["coverage_h12"] == 1.0
    assert (aci["coverage"], aci["coverage_kind"], aci["marginal_coverage"]) == (0.91, "marginal", 0.91)
    assert pd.isna(aci["joint_coverage"]) and aci[horizons].isna().all()
    assert pd.isna(rows.loc["failed", "coverage_kind"])


def test_markdown_has_a_series_table_a_joint_sets_table_and_a_per_horizon_table():
    all_covered = np.ones((4, 3), dtype=int)
    records = [set_record("cfrnn", PATTERN, seed=0), set_record("cfrnn", all_covered, seed=1),
               set_record("mqrnn", PATTERN), series_record("aci", "gamma=0", coverage=0.91)]
    text = markdown_table(summary_frame(records))
    series_columns, series_rows = table_with(text, ["Series", "marginal"])
    assert series_columns[5] == "coverage %" and series_rows == [
        ["default", "ar1", "aci", "gamma=0", "1", "91.000", "3.000", "3.000", "0", "4.000", "100", "cpu"]]
    columns, rows = table_with(text, ["Sets of sequences", "JOINT"])
    assert columns[:8] == ["suite", "dataset", "method", "setting", "seeds", "joint coverage %",
                           "marginal coverage %", "worst horizon %"]
    sets = {r[2]: dict(zip(columns, r)) for r in rows}
    # cfrnn, seeds 0 and 1: joint (50 + 100) / 2, marginal (75 + 100) / 2, per horizon (87.5, 75, 100) -> worst 75
    assert (sets["cfrnn"]["seeds"], sets["cfrnn"]["joint coverage %"], sets["cfrnn"]["marginal coverage %"],
            sets["cfrnn"]["worst horizon %"]) == ("2", "75.000", "87.500", "75.000")
    assert (sets["mqrnn"]["joint coverage %"], sets["mqrnn"]["marginal coverage %"],
            sets["mqrnn"]["worst horizon %"]) == ("50.000", "75.000", "50.000")
    assert "aci" not in sets  # series rows are not in the sets table, sets rows not in the series one
    assert all(r[2] == "aci" for r in series_rows)
    columns, rows = table_with(text, ["covid (sets)", "per horizon", "96.67%", "joint 90%"])
    assert columns == ["method", "setting", "seeds", "h1", "h2", "h3"]
    assert rows == [["cfrnn", "LSTM-20", "2", "87.500", "75.000", "100.000"],
                    ["mqrnn", "LSTM-20", "1", "75.000", "50.000", "100.000"]]


def test_markdown_of_sets_only_and_of_series_only():
    sets_only = markdown_table(summary_frame([set_record("cfrnn", PATTERN)]))
    assert sets_only.startswith("### Sets of sequences: coverage is JOINT") and "Series" not in sets_only
    series_only = markdown_table(summary_frame([series_record("aci", "gamma=0")]))
    assert series_only.startswith("| suite | dataset | method | setting | seeds | coverage % |")
    assert "###" not in series_only


def test_many_horizons_give_one_row_per_horizon():
    pattern = np.ones((4, 15), dtype=int)
    pattern[:, 13] = [1, 0, 0, 0]  # h14 covers 1 sequence of 4
    records = [set_record("cfrnn", pattern, suite="my_csv_sets", dataset="csv_sets:y.csv"),
               set_record("pa_lstm", np.ones((4, 15), dtype=int), suite="my_csv_sets", dataset="csv_sets:y.csv")]
    columns, rows = table_with(markdown_table(summary_frame(records)), ["csv_sets:y.csv (my_csv_sets)", "H = 15"])
    assert columns == ["horizon", "cfrnn LSTM-20", "pa_lstm LSTM-20"]
    assert [r[0] for r in rows] == [f"h{h}" for h in range(1, 16)]
    assert rows[13] == ["h14", "25.000", "100.000"] and rows[0] == ["h1", "100.000", "100.000"]


def sets_cells(text):
    header = next(line for line in text.splitlines() if line.startswith("| method"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    return columns, {cells[0]: dict(zip(columns, cells)) for cells in
                     ([c.strip() for c in line.strip("|").split("|")]
                      for line in text.splitlines() if line.startswith("| ") and line != header)}


def test_a_suite_of_any_name_gets_the_sets_table_with_every_set_method():
    records = [set_record("my_set_method", PATTERN, suite="my_csv_sets", dataset="csv_sets:y.csv"),
               set_record("cfrnn", PATTERN, suite="my_csv_sets", dataset="csv_sets:y.csv"),
               set_record("mqrnn", np.ones((4, 3)), suite="my_csv_sets", dataset="csv_sets:y.csv"),
               series_record("aci", "gamma=0", suite="my_csv_sets")]
    frame = summary_frame(records)
    assert set_suites(frame) == ["my_csv_sets"]
    text = sets_table(frame, "my_csv_sets")
    assert text.startswith("### Sets of sequences (my_csv_sets): joint coverage")
    columns, cells = sets_cells(text)
    assert columns == ["method", "csv_sets:y.csv coverage %", "csv_sets:y.csv length", "csv_sets:y.csv seeds"]
    assert list(cells) == ["CF-RNN (cfrnn)", "MQ-RNN (mqrnn)", "my_set_method"]  # paper's four first, then by name
    assert cells["CF-RNN (cfrnn)"]["csv_sets:y.csv coverage %"] == "50.0"  # joint, not the marginal 75
    assert cells["my_set_method"]["csv_sets:y.csv length"] == "1.75"  # 9 cells of width 2, 3 of width 1
    assert "aci" not in cells


def test_the_papers_suites_keep_paper_values_and_list_other_set_methods_too():
    records = [set_record("cfrnn", PATTERN), set_record("my_set_method", PATTERN)]
    columns, cells = sets_cells(sets_table(summary_frame(records), "sets"))
    assert "covid paper cov." in columns and list(cells) == ["CF-RNN (cfrnn)", "my_set_method"]
    assert cells["CF-RNN (cfrnn)"]["covid paper cov."] == "89.7 (2.4)"
    assert cells["my_set_method"]["covid paper cov."] == "-" and cells["my_set_method"]["covid coverage %"] == "50.0"


def test_a_method_with_several_settings_on_a_dataset_gets_one_row_per_setting():
    records = [set_record("cfrnn", PATTERN, setting="hidden=10", suite="grid"),
               set_record("cfrnn", np.ones((4, 3)), setting="hidden=5", suite="grid")]
    _, cells = sets_cells(sets_table(summary_frame(records), "grid"))
    assert list(cells) == ["CF-RNN (cfrnn) hidden=5", "CF-RNN (cfrnn) hidden=10"]
    assert cells["CF-RNN (cfrnn) hidden=10"]["covid coverage %"] == "50.0"


def test_settings_sort_as_numbers():
    settings = ["gamma=0.09", "gamma=0.01", "gamma=5e-05", "gamma=0", "B=10", "B=5", "LSTM-500", "LSTM-20",
                "epochs=600 lr=2e-3", "epochs=600", "paper"]
    assert sorted(settings, key=setting_sort_key) == [
        "B=5", "B=10", "LSTM-20", "LSTM-500", "epochs=600", "epochs=600 lr=2e-3",
        "gamma=0", "gamma=5e-05", "gamma=0.01", "gamma=0.09", "paper"]
    records = [series_record("aci", f"gamma={g}") for g in ("0.09", "0.01", "5e-05", "0")]
    records += [series_record("enbpi", f"B={b}") for b in (10, 5)]
    frame = summary_frame(records)
    order = ["gamma=0", "gamma=5e-05", "gamma=0.01", "gamma=0.09"]
    assert frame[frame["method"] == "aci"]["setting"].tolist() == order
    assert frame[frame["method"] == "enbpi"]["setting"].tolist() == ["B=5", "B=10"]
    rows = [line.split(" | ")[3] for line in markdown_table(frame).splitlines() if line.startswith("| default")]
    assert rows == [*order, "B=5", "B=10"]


def test_a_row_whose_bonferroni_level_was_capped_is_marked_with_why():
    """CF-RNN with fewer calibration sequences than H / alpha: the same band at every alpha, said in the table."""
    capped = {**set_record("cfrnn", PATTERN), "joint_guarantee": False, "bonferroni_level": 1.009}
    fine = {**set_record("pa_lstm", PATTERN), "joint_guarantee": True}
    text = markdown_table(summary_frame([capped, fine]))
    rows = {line.split(" | ")[2]: line for line in text.splitlines() if line.startswith("| sets | covid |")}
    assert "| LSTM-20 † |" in rows["cfrnn"] and "†" not in rows["pa_lstm"]
    assert "_†: no joint guarantee at this level: alpha / H is below 1 / (n + 1)" in text
    assert "†" not in markdown_table(summary_frame([fine]))
    # two levels: the mark stays on the level whose seed said so
    wider = {**set_record("cfrnn", PATTERN, alpha=0.5), "joint_guarantee": True}
    lines = [line for line in markdown_table(summary_frame([capped, wider])).splitlines()
             if line.startswith("| sets | covid |") and "| cfrnn |" in line]  # the main table's rows
    assert [("†" in line, "| 0.100 |" in line) for line in lines] == [(True, True), (False, False)]


def test_seeds_that_split_a_panel_their_own_way_keep_a_share_within_0_and_1():
    """csv_sets draws its test groups by the seed: unit i of one seed is another group than unit i of the next.
    Paired by position, one seed's group sums were divided by the other's sizes, and a joint coverage's 90% CI
    reached 101-104% (a helper's panel: 93.30 [80.25, 103.77]). Not shared, each seed's own replicates (its
    ratio within [0, 1]) are averaged."""
    from pibench.reports.bootstrap_ci import by_cluster, group_sizes, replicates, seed_replicates

    units, draws, clusters = [], [], []
    for groups, covered in (([0] * 9 + [1], [1] * 9 + [0]), ([0] + [1] * 9, [0] + [1] * 9)):
        labels = np.array(groups)
        values = np.array(covered, dtype=float)[:, None]
        seed_units = by_cluster(values, labels)
        sizes = group_sizes(np.column_stack([np.bincount(labels), np.bincount(labels, weights=values[:, 0])]))
        units.append(seed_units)
        draws.append(replicates(seed_units, seed=len(units), sizes=sizes))
        clusters.append(sizes)
    own = seed_replicates(units, draws, seed=3, sizes=clusters[0], shared=False)
    assert own.min() >= 0 and own.max() <= 1
    paired = seed_replicates(units, draws, seed=3, sizes=clusters[0], shared=True)
    assert paired.max() > 1  # what pairing by position did to these seeds
