"""A tiny-size variant of a suite file, for a CPU smoke run of a suite meant for a GPU.

    python -m pibench.benchmarks.tiny_suite ar_order_paper tiny.toml

The variant keeps the suite's structure (its --quick variant's datasets, labels,
method rows, settings and protocol) and shrinks only what sets the cost: one seed,
at most 300 training and 60 test points (3 test days of fesp), networks of at most
8 units (also where the suite leaves a method's ``hidden`` at its default), at most
3 epochs or 30 iterations (the annealing schedule T1 < T2 < T3 squeezed into them),
at most 2 values per grid, at most 6 trials of each EEG split. Its numbers mean nothing; that it runs end to end through
the same code as the full suite is the point (:mod:`pibench.benchmarks.device_run` --dry-run).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
from pathlib import Path

from pibench.benchmarks.suite import ENTRY_NUMBERS, SKIPPED_BY_QUICK, load_suite
from pibench.data_loaders.registry import DATASETS
from pibench.data_loaders.suite_entry import toml_value
from pibench.methods.catalog import get_method

#: parameter -> its largest value in the tiny variant
_CAPS = {"n_train": 300, "n_test": 60, "test_days": 3, "hidden": 8, "epochs": 3, "iterations": 30,
         "refine_epochs": 1, "refine_iterations": 5, "max_trials": 6}
#: capped parameters whose default is no cap (a network's width, all of a dataset): set where left out
_SIZES = ("hidden", "max_trials")
#: the schedule parameters, as fractions of the (capped) length of training
_SCHEDULE = {"T1": 0.3, "T2": 0.5, "T3": 0.8}


def _shrunk_params(params: dict, takes: set[str]) -> dict:
    """``params`` with every capped value capped; a capped parameter the method or loader takes (``takes``) but
    the entry leaves at its default is set to the cap only where that default is no cap (``_SIZES``)."""
    small = {key: min(value, _CAPS[key]) if key in _CAPS and isinstance(value, int) else value
             for key, value in params.items()}
    for key in _SIZES:
        if key in takes and small.get(key) is None:
            small[key] = _CAPS[key]
    length = small.get("iterations", small.get("epochs"))
    if length is not None and any(key in small for key in _SCHEDULE):
        for key, fraction in _SCHEDULE.items():
            small[key] = math.floor(length * fraction)
    return small


def _loader_params(entry: dict) -> set[str]:
    """The parameters the loader of a suite's dataset entry takes (none for a name pibench does not know)."""
    known = DATASETS.get(entry["name"])
    return set(inspect.signature(known.loader).parameters) if known else set()


def tiny_suite(name_or_path: str | Path) -> dict:
    """The suite (built-in name or TOML path) with its --quick overrides applied, then shrunk (module doc)."""
    suite = load_suite(name_or_path, quick=True)
    suite.pop("quick", None)
    suite.pop(SKIPPED_BY_QUICK, None)  # load_suite's own notes, no keys of a suite file
    suite.pop(ENTRY_NUMBERS, None)
    suite["seeds"] = suite.get("seeds", [0])[:1]
    suite["description"] = f"tiny-size variant of {suite['name']} (a smoke run: the numbers mean nothing)"
    for key in ("datasets", "methods"):
        for entry in suite[key]:
            entry.pop("quick", None)
            takes = set(get_method(entry["name"])._param_names()) if key == "methods" else _loader_params(entry)
            if "params" in entry or takes & set(_SIZES):
                entry["params"] = _shrunk_params(entry.get("params", {}), takes)
            if "grid" in entry:
                entry["grid"] = {name: values[:2] for name, values in entry["grid"].items()}
    # a method row for datasets that --quick skipped goes too (a suite file may not name absent datasets)
    present = {entry["name"] for entry in suite["datasets"]} | {entry.get("label") for entry in suite["datasets"]}
    for entry in suite["methods"]:
        if "datasets" in entry:
            entry["datasets"] = [name for name in entry["datasets"] if name in present]
    suite["methods"] = [entry for entry in suite["methods"] if entry.get("datasets", True)]
    return suite


def to_toml(suite: dict) -> str:
    """A suite dict as a suite file: top-level keys, then one [[datasets]] / [[methods]] table per entry."""
    tables = ("datasets", "methods")
    lines = [f"{json.dumps(k)} = {toml_value(v)}" for k, v in suite.items() if k not in tables]
    for key in tables:
        for entry in suite.get(key, []):
            lines += ["", f"[[{key}]]"] + [f"{json.dumps(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def write_tiny_suite(name_or_path: str | Path, destination: str | Path) -> Path:
    """Write :func:`tiny_suite` of a suite to ``destination`` (a TOML file pibench runs)."""
    destination = Path(destination)
    destination.write_text(to_toml(tiny_suite(name_or_path)), encoding="utf-8")
    load_suite(destination)  # what was written is a valid suite
    return destination


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", help="built-in suite name or TOML file")
    parser.add_argument("destination", help="the tiny variant's TOML file to write")
    args = parser.parse_args(argv)
    print(write_tiny_suite(args.suite, args.destination))


if __name__ == "__main__":
    main()
