"""What the statistics add to ``pibench report`` (issue 28's budget: at most 30 s on 2 cores on the fesp
paper-scale store), measured side by side in one run.

    python -m pibench.benchmarks.perf_report results_fesp

prints the seconds of: reading and checking the store; the report's tables without statistics; the
statistics of every record, row and dataset with an empty cache (CIs, tests, Diebold-Mariano,
the MCS); the same again from the cache; and the whole report's tables as ``pibench report`` builds them.
The store is not changed (the cold pass caches into a temporary folder).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pibench.benchmarks.provenance import code_version
from pibench.benchmarks.store import ResultsStore
from pibench.reports.selection import select_current
from pibench.reports.statistics import compute_statistics
from pibench.reports.summary import conditional_table, markdown_table, summary_frame


def measure(results_dir: str) -> dict[str, float]:
    """Seconds of each stage (module docstring), and the store's size."""
    tic = time.perf_counter()
    store = ResultsStore(results_dir)
    records, _ = select_current(store.records(), code_version())  # what `pibench report` shows
    seconds = {"read and check the store": time.perf_counter() - tic}
    tic = time.perf_counter()
    frame = summary_frame(records)
    markdown_table(frame), conditional_table(frame)
    seconds["tables without statistics"] = time.perf_counter() - tic
    with tempfile.TemporaryDirectory() as cache:
        tic = time.perf_counter()
        compute_statistics(records, store.reader(records), Path(cache))
        seconds["statistics, empty cache"] = time.perf_counter() - tic
        tic = time.perf_counter()
        compute_statistics(records, store.reader(records), Path(cache))
        seconds["statistics, from the cache"] = time.perf_counter() - tic
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results_dir", help="a finished store, e.g. of `pibench run --suite fesp -j 2`")
    args = parser.parse_args(argv)
    records = ResultsStore(args.results_dir).records()
    points = sum(int(r.get("n_test") or 0) for r in records)
    print(f"{args.results_dir}: {len(records)} records, {points:,} test points")
    seconds = measure(args.results_dir)
    for stage, value in seconds.items():
        print(f"  {stage:<32} {value:7.2f} s")
    added = seconds["statistics, empty cache"]
    print(f"the statistics add {added:.1f} s to a first report ({seconds['statistics, from the cache']:.1f} s once "
          "cached)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
