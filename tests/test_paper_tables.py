"""The fesp table in the paper's layout: our values beside the paper's, and the best-gamma rule."""

import pandas as pd

from pibench.reports.paper_tables import best_setting, fesp_tables, reference_results


def row(method, setting, coverage, mean_length, n_infinite=0):
    return {"suite": "fesp", "dataset": "fesp", "method": method, "setting": setting, "seed": 0, "status": "ok",
            "alpha": 0.1, "coverage": coverage, "mean_length": mean_length, "std_length": 1.0,
            "median_length": mean_length - 1, "iqr_length": 2.0, "n_infinite": n_infinite, "n_test": 8760}


def test_reference_values_are_the_papers():
    ref = reference_results().set_index(["table", "method", "setting", "metric"])
    assert ref.loc[("fesp_results", "ACI", "online gamma=0.01", "coverage"), "value"] == 90.21
    assert ref.loc[("fesp_results", "EnbPI-V2", "online", "mean_length"), "std"] == 10.17


def test_best_gamma_is_the_shortest_that_covers():
    aci = pd.DataFrame([row("aci", "gamma=0", 0.93, 24.0), row("aci", "gamma=0.01", 0.905, 22.0),
                        row("aci", "gamma=0.05", 0.899, 20.0)])
    assert best_setting(aci) == "gamma=0.01"
    assert best_setting(aci[aci.coverage < 0.9]) == "gamma=0.05"  # none covers: the highest coverage


def test_fesp_table_puts_paper_values_beside_ours():
    summary = pd.DataFrame([row("aci", "gamma=0", 0.9276, 23.38), row("aci", "gamma=0.01", 0.9046, 21.29),
                            row("agaci", "default", 0.9137, 22.15), row("aci", "gamma=0.05", 0.898, 31.97, 34)])
    text = fesp_tables(summary)
    lines = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert "| 92.76 | 92.89 | 23.38 (1.00) | 24.39 (9.17) |" in lines["ACI gamma=0 online"]
    assert "| 91.37 | 91.05 | 22.15 (1.00) | 23.27 (14.49) |" in lines["AgACI online"]
    assert "ACI best (gamma=0.01) online" in lines
    assert "### fesp: ACI gamma sweep" in text and "| 0.05 | 89.80 | 31.97 (1.00) |" in text
    assert "EnbPI" not in text.split("### fesp: ACI gamma sweep")[0]  # rows only for methods that ran


def test_a_fesp_table_of_a_shorter_test_span_says_it_is_not_the_papers():
    full = fesp_tables(pd.DataFrame([row("aci", "gamma=0.01", 0.9046, 21.29)]))
    quick = fesp_tables(pd.DataFrame([{**row("aci", "gamma=0.01", 0.9097, 27.9), "n_test": 720}]))
    assert "not the paper's test span" not in full
    assert "**not the paper's test span**: 720 test points against its 8,760" in quick.splitlines()[0]


def test_fesp_table_has_one_pa_row_per_setting_each_beside_the_papers_pa():
    summary = pd.DataFrame([row("pa", "paper", 0.99, 80.0), row("pa", "tuned", 0.91, 30.0)])
    text = fesp_tables(summary)
    lines = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert "| 99.00 | 90.06 | 80.00 (1.00) | 20.19 (3.23) |" in lines["PA offline [paper]"]
    assert "| 91.00 | 90.06 | 30.00 (1.00) | 20.19 (3.23) |" in lines["PA offline [tuned]"]


def order_row(label, method, lags, candidates, **extra):
    return {"suite": "ar_order", "dataset": label, "method": method, "setting": "s", "seed": len(lags), "status": "ok",
            "coverage": 0.9, "mspe": 1.0, "selected_lags": lags, "ar_order": max(map(int, lags.split(","))),
            "candidate_lags": candidates, **extra}


def test_order_table_scores_against_the_true_lags_within_the_window():
    from pibench.reports.paper_tables import order_selection_table

    summary = pd.DataFrame([
        # NLAR (true lags 1, 2, 3, 7) with a window of 1: only lag 1 is selectable, so {1} misses nothing
        order_row("nlar window=1", "pa_rnn", "1", 1), order_row("nlar window=1", "pa_rnn", "1", 1),
        # window 15: {1, 3, 7} and {1, 2, 3, 7, 9}: 1 false of 8 selected, 1 missed of 2 x 4 true
        order_row("nlar window=15", "pa_rnn", "1,3,7", 15), order_row("nlar window=15", "pa_rnn", "1,2,3,7,9", 15),
        # a record without candidate_lags is scored against every true lag: {1} misses 3 of 4
        order_row("nlar window=1", "autoreg", "1", float("nan")),
    ])
    rows = {(cells[0], cells[1]): cells for cells in
            ([c.strip() for c in line.strip("|").split("|")] for line in order_selection_table(summary).splitlines()
             if line.startswith("| nlar"))}
    # columns: data, method, seeds, FSR, paper FSR, NSR, paper NSR, ...
    assert rows[("nlar window=1", "pa_rnn s")][3] == "0.000" and rows[("nlar window=1", "pa_rnn s")][5] == "0.000"
    assert rows[("nlar window=15", "pa_rnn s")][3] == "0.125" and rows[("nlar window=15", "pa_rnn s")][5] == "0.125"
    assert rows[("nlar window=1", "autoreg s")][5] == "0.750"
    # a method that selects no lags (ACI, the oracle) has no row, and a suite of only those no table
    without = {**order_row("nlar window=1", "aci", "1", float("nan")), "selected_lags": float("nan"),
               "ar_order": float("nan")}
    lines = order_selection_table(pd.concat([summary, pd.DataFrame([without])])).splitlines()
    assert not any("| aci s" in line for line in lines) and any("| pa_rnn s" in line for line in lines)
    only = pd.DataFrame([without, {**without, "dataset": "nlar"}])
    assert order_selection_table(only) == ""


def set_row(method, dataset, seed, joint, length, suite="sets", setting="LSTM-20"):
    return {"suite": suite, "dataset": dataset, "method": method, "setting": setting, "seed": seed,
            "status": "ok", "joint_coverage": joint, "mean_length": length}


def test_sets_table_gives_seed_mean_and_spread_beside_the_paper():
    from pibench.reports.paper_tables import sets_table

    summary = pd.DataFrame([
        set_row("cfrnn", "covid", 0, 0.90, 700.0), set_row("cfrnn", "covid", 1, 0.92, 500.0),
        set_row("pa_lstm", "covid", 0, 0.95, 400.0),
        set_row("dprnn", "eeg", 0, 0.03, 7.0), set_row("dprnn", "eeg", 1, 0.05, 9.0),
        set_row("cfrnn", "eeg", 0, 0.97, 60.0, suite="sets_eeg100", setting="LSTM-100"),
    ])
    text = sets_table(summary)
    header = next(line for line in text.splitlines() if line.startswith("| method"))
    cells = {line.split(" | ")[0].strip("| "): [c.strip() for c in line.strip("|").split("|")]
             for line in text.splitlines() if line.startswith("| ") and line != header}
    columns = [c.strip() for c in header.strip("|").split("|")]
    cf = dict(zip(columns, cells["CF-RNN (cfrnn)"]))
    # two seeds: mean (sample std) of joint coverage in percent and of the mean length
    assert cf["covid coverage %"] == "91.0 (1.4)" and cf["covid length"] == "600.00 (141.42)"
    assert cf["covid paper cov."] == "89.7 (2.4)" and cf["covid paper length"] == "733.95 (582.52)"
    assert cf["eeg coverage %"] == "-" and cf["eeg paper cov."] == "96.5 (0.4)"
    assert dict(zip(columns, cells["PA-RNN (pa_lstm)"]))["covid coverage %"] == "95.0"  # one seed: no spread
    assert list(cells)[0] == "PA-RNN (pa_lstm)" and "MQ-RNN (mqrnn)" not in cells  # paper order, ran only
    larger = sets_table(summary, "sets_eeg100")
    assert "additional_eeg_results" in larger and "| 97.0 | 90.8 (1.8) | 60.00 | 43.40 (6.79) | 1 |" in larger


def test_a_setting_beyond_the_paper_stands_without_the_papers_values():
    """PA-LSTM's joint band is no setting of the paper: its row had the paper's PA-RNN values beside it."""
    from pibench.reports.paper_tables import sets_table

    summary = pd.DataFrame([set_row("pa_lstm", "covid", 0, 0.90, 470.0),
                            set_row("pa_lstm", "covid", 0, 0.88, 425.0, setting="LSTM-20, joint band")])
    rows = {line.split(" | ")[0].strip("| "): line for line in sets_table(summary).splitlines()
            if line.startswith("| PA-RNN")}
    assert "| 90.0 | 90.5 (1.4) | 470.00 | 444.93 (203.28) | 1 |" in rows["PA-RNN (pa_lstm) LSTM-20"]
    assert "| 88.0 | - | 425.00 | - | 1 |" in rows["PA-RNN (pa_lstm) LSTM-20, joint band"]


def test_the_sets_table_sets_the_papers_values_beside_its_own_level_only():
    """Run at alpha 0.05, 0.1 and 0.2, the 'vs paper' table once stood three times with the paper's 90% values."""
    from pibench.reports.paper_tables import sets_table

    summary = pd.DataFrame([{**set_row("cfrnn", "covid", 0, c, 700.0), "alpha": a}
                            for a, c in ((0.05, 0.95), (0.1, 0.9), (0.2, 0.8))])
    text = sets_table(summary)
    assert text.count("vs paper") == 1 and "### Sets of sequences, alpha 0.1: joint coverage" in text
    assert text.count("paper cov.") == 1  # the 0.1 table's column only
    for level in (0.05, 0.2):
        assert f"### Sets of sequences (sets, alpha {level:g}): joint coverage and mean length (std across seeds; " \
               "the paper's are at alpha 0.1)" in text


def test_the_fesp_tables_round_seed_means_of_counts_as_the_summary_does():
    """Seeds with 1, 2 and 2 infinite intervals: the mean 1.67 reads 2 (it read 1, and a mean of 0.67 read 0,
    as if no interval had been infinite)."""
    summary = pd.DataFrame([{**row("aci", gamma, 0.9, 20.0 + seed, n_infinite=count), "seed": seed}
                            for gamma in ("gamma=0", "gamma=0.01")
                            for seed, count in enumerate((1, 2, 2) if gamma == "gamma=0.01" else (0, 0, 2))])
    text = fesp_tables(summary)
    lines = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert lines["ACI gamma=0.01 online"].endswith("| 2 | 8760 |")
    assert lines["ACI gamma=0 online"].endswith("| 1 | 8760 |")
