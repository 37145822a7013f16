"""How much each set row's band shape is worth, from a finished store (:mod:`pibench.reports.band_shape`).

    python -m pibench.benchmarks.band_shape results_sets [--splits 200]

prints, per dataset and row (mean over seeds), the joint coverage and mean length of the row's band and of
a constant-width band, both recalibrated on random halves of the test sequences, and their length ratio.
"""

from __future__ import annotations

import argparse

import pandas as pd

from pibench.benchmarks.provenance import code_version
from pibench.benchmarks.store import ResultsStore
from pibench.reports.band_shape import set_arrays, shape_gain, usable_shape
from pibench.reports.selection import select_current


def shape_table(results_dir: str, splits: int = 200) -> tuple[pd.DataFrame, list[str]]:
    """One row per set task of the store (see the module doc), and the tasks left out: a band with an
    infinite, zero or crossed width has no shape to compare."""
    store = ResultsStore(results_dir)
    records, _ = select_current(store.records(), code_version())
    rows, left_out = [], []
    for record in records:
        if record.get("status") != "ok" or record["config"]["protocol"].get("kind") != "set":
            continue
        name = f"{record['dataset']} / {record['method']} {record['setting']} / seed {record['seed']}"
        y, point, half = set_arrays(store.predictions(record["task_id"], record["predictions_sha256"]))
        if not usable_shape(half):
            left_out.append(name)
            continue
        rows.append({"dataset": record["dataset"], "method": record["method"], "setting": record["setting"],
                     "seed": record["seed"], **shape_gain(y, point, half, float(record["alpha"]), splits)})
    return pd.DataFrame(rows), left_out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results_dir")
    parser.add_argument("--splits", type=int, default=200, help="random halvings per task (default 200)")
    args = parser.parse_args(argv)
    table, left_out = shape_table(args.results_dir, args.splits)
    for name in left_out:
        print(f"left out {name}: a width is infinite, zero or negative")
    if table.empty:
        raise SystemExit(f"no finished set task in {args.results_dir}.")
    means = table.groupby(["dataset", "method", "setting"]).mean(numeric_only=True).drop(columns="seed")
    print(means.round(4).to_string())


if __name__ == "__main__":
    main()
