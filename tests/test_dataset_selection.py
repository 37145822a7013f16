"""--datasets picks suite entries as a method entry's ``datasets`` does: by label, or by a name no entry uses as a
label (every entry of that dataset)."""

from pibench.benchmarks.suite import build_tasks, load_suite


def labels(suite: str, datasets: list[str], quick: bool = False) -> list[str]:
    tasks = build_tasks(load_suite(suite, quick=quick), datasets=datasets)
    return sorted({t.config["dataset"]["label"] for t in tasks})


def test_an_entrys_label_picks_that_entry_and_a_name_every_entry_not_labelled_otherwise():
    assert labels("sets", ["eeg_trials"]) == ["eeg_trials"]  # was refused: 'unknown dataset'
    assert labels("sets", ["eeg"]) == ["eeg"]  # the entry labelled (by its name) eeg, not eeg_trials too
    assert labels("ar_order_paper", ["expar window=1"], quick=True) == ["expar window=1"]
    assert labels("ar_order", ["nlar", "expar"]) == sorted(labels("ar_order", ["nlar"]) + labels("ar_order", ["expar"]))
    assert len(labels("ar_order", ["nlar"])) > 1 and all(x.startswith("nlar ") for x in labels("ar_order", ["nlar"]))


def test_an_entry_quick_leaves_out_is_named_as_such_when_selected():
    """--suite sets --quick --datasets eeg_trials said "unknown dataset", and a method entry --quick skips ran with
    default parameters instead of the suite's."""
    import pytest

    for kind, selection in (("dataset", {"datasets": ["eeg_trials"]}), ("method", {"methods": ["enbpi"]})):
        suite = load_suite("sets" if kind == "dataset" else "realworld", quick=True)
        name = next(iter(selection.values()))[0]
        with pytest.raises(ValueError, match=f"the {kind} entry '{name}' is left out of --quick"):
            build_tasks(suite, **selection)
    assert build_tasks(load_suite("sets"), datasets=["eeg_trials"])  # without --quick it is there
    skipped = {"name": "x", "datasets": [{"name": "eeg", "label": "eeg big", "quick": {"skip": True}},
                                         {"name": "covid"}], "methods": [{"name": "cfrnn"}]}
    path = __import__("pathlib").Path(__import__("tempfile").mkdtemp()) / "s.toml"
    from pibench.benchmarks.tiny_suite import to_toml

    path.write_text(to_toml(skipped))
    with pytest.raises(ValueError, match="the dataset entry 'eeg' is left out of --quick"):  # by its name
        build_tasks(load_suite(path, quick=True), datasets=["eeg"])


def test_a_method_asked_for_whose_entries_serve_other_datasets_is_said_to_run_nowhere():
    """--datasets co2 --methods enbpi garch autoreg ran enbpi and autoreg and said nothing of garch, whose suite
    entry serves sp500, nasdaq and wti only."""
    tasks = build_tasks(load_suite("realworld"), datasets=["co2"], methods=["enbpi", "garch", "autoreg"])
    assert {t.config["method"]["name"] for t in tasks} == {"enbpi", "autoreg"}
    assert "method 'garch' runs on no dataset of this selection: its suite entries serve 'sp500', 'nasdaq', " \
           "'wti' only" in tasks.notes
    assert not [n for n in build_tasks(load_suite("realworld"), datasets=["sp500"], methods=["garch"]).notes
                if "garch" in n]
