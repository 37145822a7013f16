"""The ``pibench`` command line: run, report, plot, list, data fetch."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

DEFAULT_RESULTS = "results"
PLUGIN_HELP = "Python files of yours that define and register methods (@register), imported first"


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be >= 1")
    return value


def _import_plugins(args: argparse.Namespace) -> dict[str, str]:
    """Import the --plugin files; {method name: file} of the methods they define."""
    from pibench.methods.base import registered_methods
    from pibench.methods.catalog import import_method_file

    defined = {}
    for path in args.plugin or []:
        module = import_method_file(path)
        defined.update({name: path for name, cls in registered_methods().items() if cls.__module__ == module.__name__})
    return defined


def _run(args: argparse.Namespace) -> int:
    from pibench.api import run, suite_tasks
    from pibench.reports.summary import conditional_table, markdown_table

    defined = _import_plugins(args)
    suite, tasks = suite_tasks(args.suite, methods=args.methods, datasets=args.datasets, seeds=args.seeds,
                               quick=args.quick, alpha=args.alpha)
    running = {task.config["method"]["name"] for task in tasks}
    idle = sorted(set(defined) - running)
    if idle:  # a plugin is run only where the suite or --methods names it
        print(f"note: {', '.join(f'{name!r} (from {defined[name]})' for name in idle)} is in no task of this run; "
              f"name it to run it: --methods {' '.join(idle + sorted(running))}")

    def started(count: int, to_run: int) -> None:  # once every check passed: nothing is said of a refused run
        print(f"suite {suite['name']!r}{' (quick)' if args.quick else ''}: {count} task(s), {to_run} to run "
              f"-> {args.results_dir}", flush=True)
    results = run(args.suite, methods=args.methods, datasets=args.datasets, seeds=args.seeds, alpha=args.alpha,
                  quick=args.quick, jobs=args.jobs, threads=args.threads, device=args.device, backend=args.backend,
                  scheduler=args.scheduler, results_dir=args.results_dir, data_dir=args.data_dir,
                  progress="lines" if args.progress_lines else not args.no_progress, errors="ignore", yes=args.yes,
                  on_start=started)
    report = results.run_report
    assert report is not None  # run() always reports
    for line in report.notes:
        print(line)
    print(f"ran {len(report.executed)}, skipped {report.skipped} already finished; summary: {report.summary_path}")
    for line in report.redone:
        print(f"  ran again: {line}")
    for line in report.failure_lines():
        print(f"FAILED {line}", file=sys.stderr)
    if report.failed:
        print(f"  (a failed task's whole traceback is its record's traceback field: "
              f"{Path(args.results_dir) / 'tasks'}/<task id>.json)", file=sys.stderr)
    frame = results.summary
    print("\n".join(t for t in (markdown_table(frame, results.statistics.rows), conditional_table(frame)) if t))
    return 1 if report.failed else 0


def _clear_summaries(results_dir: str) -> None:
    """Rewrite summary.csv (header only) and drop summary.md, so neither shows rows the store no longer backs."""
    from pibench.reports.summary import write_summary

    try:
        write_summary([], results_dir)
        (Path(results_dir) / "summary.md").unlink(missing_ok=True)
    except OSError:
        pass


def _report(args: argparse.Namespace) -> int:
    from pibench.benchmarks.store import ResultsStore
    from pibench.reports.summary import write_summary

    _import_plugins(args)
    selection = bool(args.suites or args.methods or args.datasets)
    if selection and args.html:
        raise ValueError("--html writes the folder's report.html, of every row; for a selection use --figures "
                         "FOLDER, or in Python load_results(DIR).select(methods=[...]).to_html(PATH).")
    if args.figures:
        _check_output_folder(args.figures, "--figures")  # before anything is written
    results = _selected(args)
    empty = results.why_empty()
    if empty:
        if results.left_out:  # the tables had rows once: no summary may keep showing them
            _clear_summaries(args.results_dir)
        print(empty, file=sys.stderr)
        return 1
    table = results.tables()
    print(table)
    if ResultsStore(args.results_dir).in_use():
        print(f"pibench: note: a run is writing into {args.results_dir} now; these tables hold the tasks finished so "
              "far (report again when it ends).", file=sys.stderr)
    if selection:  # the folder's summary files hold every row; a selection leaves them as they are
        print(f"pibench: note: a selection: {Path(args.results_dir) / 'summary.csv'} and summary.md are left as they "
              "are (they hold every row).", file=sys.stderr)
        if args.figures:
            _write_figures(results, args.figures)
        return 0
    try:
        csv_path = write_summary(results.records, args.results_dir, results.statistics.tasks)
        md_path = Path(args.results_dir) / "summary.md"
        md_path.write_text(table)
        print(f"wrote {csv_path} and {md_path}")
    except OSError as exc:  # a read-only store: the tables above, and the figures wherever --figures points
        print(f"pibench: warning: could not write the summary files into {args.results_dir} ({exc.strerror or exc}); "
              "the tables above are all there is of them.", file=sys.stderr)
    if args.figures:
        _write_figures(results, args.figures)
    if args.html:
        page, names = results.html_page()
        html_path = Path(args.results_dir) / "report.html"
        try:
            html_path.write_text(page)
        except OSError as exc:
            raise ValueError(f"could not write {html_path} ({exc.strerror or exc}); report from a copy of the "
                             "folder you can write to, or use --figures FOLDER for the figures alone.") from None
        print(f"wrote {html_path} ({len(names)} figure(s): {', '.join(names) or 'none'})")
    return 0


def _check_output_folder(folder: str, flag: str) -> None:
    """ValueError (with the fix) if ``folder`` cannot be created or written to."""
    from pibench.benchmarks.store import writable

    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {folder} is a file, not a folder; give a folder (it is created if missing).")
    existing = next((p for p in [path, *path.parents] if p.exists()), None)
    if existing is not None and not writable(existing):
        raise ValueError(f"{flag} {folder}: no permission to write in {existing}; give a folder you can write to.")


def _write_figures(results, folder: str) -> None:
    from pibench.reports.figures.catalog import close, save_figure

    for name, spec in results.figure_specs().items():
        fig = spec.draw()
        if fig is not None:
            paths = save_figure(fig, folder, name)
            close(fig)
            print(f"wrote {' and '.join(map(str, paths))}")


def _selection_options(parser: argparse.ArgumentParser) -> None:
    for option, what in (("--suites", "suites"), ("--methods", "methods"), ("--datasets", "datasets (their labels)")):
        parser.add_argument(option, nargs="+", action="extend", metavar="NAME",
                            help=f"only these {what}: the statistics and comparisons are among the rows chosen")


def _selected(args: argparse.Namespace):
    """The stored results, narrowed to --suites / --methods / --datasets where given."""
    from pibench.api import load_results

    results = load_results(args.results_dir)
    if args.suites or args.methods or args.datasets:
        if not results.records:
            return results  # nothing to narrow: the caller says why it is empty
        return results.select(suites=args.suites, methods=args.methods, datasets=args.datasets)
    return results


def _plot(args: argparse.Namespace) -> int:
    from pibench.reports.figures.catalog import close

    _import_plugins(args)  # the rows of their code, where the store holds several
    results = _selected(args)
    specs = results.figure_specs()
    if not specs:
        print(f"no figure to draw: {results.why_empty() or 'no figure fits these results.'}", file=sys.stderr)
        return 1
    if args.name is None:
        print("figures this store has data for:")
        width = max(len(name) for name in specs)  # the captions in one column, however long the names
        for spec in specs.values():
            print(f"  {spec.name:<{width}}  {spec.caption}")
        return 0
    name = results.figure_name(args.name)
    out = Path(args.out) if args.out else Path(args.results_dir) / "figures" / f"{name}.png"
    fig = specs[name].draw()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=130)
    close(fig)
    print(f"wrote {out if out.suffix else out.with_suffix('.png')}")  # matplotlib's default format: png
    return 0


def _list(args: argparse.Namespace) -> int:
    from pibench.benchmarks.suite import builtin_suites, load_suite
    from pibench.data_loaders.registry import DATASETS
    from pibench.methods.catalog import available_methods

    _import_plugins(args)
    print("methods:")
    for name, cls in available_methods().items():
        lines = (cls.__doc__ or "").strip().splitlines()
        doc = lines[0] if lines else f"(no docstring; defined in {cls.__module__})"
        print(f"  {name:<16} [{cls.shape}] {doc}")
    print("datasets:")
    for name, entry in DATASETS.items():
        print(f"  {name:<16} [{entry.shape}] {entry.description}")
    print("suites:")
    for name in sorted(builtin_suites()):
        print(f"  {name:<16} {load_suite(name).get('description', '')}")
    return 0


def _file_id(path: Path) -> tuple[int, int] | None:
    """(inode, modification time) of a file, None if there is none: a file replaced gets another."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def _fetch(args: argparse.Namespace) -> int:
    from pibench.data_loaders.fetch import fetch
    from pibench.data_loaders.paths import data_path

    url = args.url
    if url is not None and "://" not in url:  # a path: the copy of the file you have
        url = Path(url).expanduser().resolve().as_uri()
    there = data_path(args.name, args.data_dir)
    before = _file_id(there)
    path = fetch(args.name, args.data_dir, url=url, force=args.force)
    kept = before is not None and _file_id(path) == before  # fetch found the published file and left it
    note = " (the published file was there already: --url was not read; --force replaces the file)" \
        if kept and url is not None else ""
    print(f"{args.name}: {path}{note}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from pibench.benchmarks.backends import BACKENDS
    from pibench.methods.device import DEVICE_CHOICES

    parser = argparse.ArgumentParser(prog="pibench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a suite (default: built-in synthetic data, no download)",
                         epilog="exit status: 0 every task finished, 1 some task failed, or the results folder or the "
                                "dask scheduler was lost (finished tasks are stored), "
                                "2 bad input (nothing was run), 130 interrupted, 143 stopped by SIGTERM (finished "
                                "tasks are kept)")
    run.add_argument("--suite", default=None, help="built-in suite name or TOML file (default: 'default')")
    run.add_argument("--methods", nargs="+", action="extend",
                     help="keep only these methods (names from `pibench list`)")
    run.add_argument("--plugin", nargs="+", action="extend", metavar="FILE.py", help=PLUGIN_HELP)
    run.add_argument("--datasets", nargs="+", action="extend",
                     help="keep only these datasets; csv:PATH:TARGET adds your own")
    run.add_argument("--seeds", nargs="+", action="extend", type=int, help="replicate seeds (default: the suite's)")
    run.add_argument("--alpha", nargs="+", action="extend", type=float, metavar="LEVEL",
                     help="miscoverage level(s), e.g. 0.1 for 90%% intervals or 0.05 0.1 0.2 for three (default: "
                          "the suite's)")
    run.add_argument("-j", "--jobs", type=positive_int, default=1,
                     help="parallel workers (joblib processes; default 1; e.g. -j $(nproc))")
    run.add_argument("--threads", type=positive_int, default=1, help="BLAS/torch threads per task (default 1)")
    run.add_argument("--device", choices=DEVICE_CHOICES, default=None,
                     help="where networks train: cpu, cuda, or auto = cuda when torch sees a GPU "
                          "(default: the suite's `device`, else cpu)")
    run.add_argument("--backend", choices=BACKENDS, default="loky",
                     help="loky = processes on this machine (default); dask = a dask cluster ('.[dask]' extra)")
    run.add_argument("--scheduler", metavar="ADDRESS",
                     help="with --backend dask: the scheduler, e.g. tcp://10.0.0.5:8786 (default: a local "
                          "cluster of -j workers)")
    run.add_argument("--results-dir", default=DEFAULT_RESULTS, help=f"where results go (default ./{DEFAULT_RESULTS})")
    run.add_argument("--data-dir", default=None, help="data folder (default: $PIBENCH_DATA or ~/.cache/pibench/data)")
    run.add_argument("--quick", action="store_true", help="the suite's quick variant (minutes)")
    progress = run.add_mutually_exclusive_group()
    progress.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    progress.add_argument("--progress-lines", action="store_true",
                          help="instead of the bar, one line per finished task: status, seconds, how it trained (logs)")
    run.add_argument("--yes", action="store_true", help="run a selection of more than 10,000 tasks")
    run.set_defaults(func=_run)

    report = sub.add_parser("report", help="summary tables (markdown + CSV), figures and HTML from stored results")
    report.add_argument("--results-dir", default=DEFAULT_RESULTS,
                        help=f"the folder a run wrote (default ./{DEFAULT_RESULTS})")
    report.add_argument("--html", action="store_true",
                        help="also write DIR/report.html (self-contained, figures inline)")
    report.add_argument("--figures", metavar="FOLDER", help="also write every figure as PNG and SVG into FOLDER")
    _selection_options(report)
    report.add_argument("--plugin", nargs="+", action="extend", metavar="FILE.py",
                        help=PLUGIN_HELP + ": rows of other code than theirs are named (without it, files edited since "
                             "the rows ran are)")
    report.set_defaults(func=_report)

    plot = sub.add_parser("plot", help="draw one figure from stored results (no NAME: list the figures)")
    plot.add_argument("name", nargs="?", help="figure name (or its kind, e.g. tradeoff) from `pibench plot`")
    plot.add_argument("--results-dir", default=DEFAULT_RESULTS,
                      help=f"the folder a run wrote (default ./{DEFAULT_RESULTS})")
    plot.add_argument("--out", help="output file; the suffix picks the format (.png, .svg, .pdf); "
                                    "default DIR/figures/NAME.png")
    _selection_options(plot)
    plot.add_argument("--plugin", nargs="+", action="extend", metavar="FILE.py", help=PLUGIN_HELP)
    plot.set_defaults(func=_plot)

    lst = sub.add_parser("list", help="list methods, datasets and suites")
    lst.add_argument("--plugin", nargs="+", action="extend", metavar="FILE.py", help=PLUGIN_HELP)
    lst.set_defaults(func=_list)

    data = sub.add_parser("data", help="dataset files")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    fetch = data_sub.add_parser("fetch", help="download a public dataset and verify its checksum")
    fetch.add_argument("name", help="dataset key, e.g. fesp")
    fetch.add_argument("--data-dir", default=None,
                       help="target folder (default: $PIBENCH_DATA or ~/.cache/pibench/data)")
    fetch.add_argument("--force", action="store_true", help="download again even if the file is present")
    fetch.add_argument("--url", default=None, metavar="URL|PATH",
                       help="get it from elsewhere: a mirror, or a copy you have (a path or file:// URL); checked "
                            "against the published sha256 all the same")
    fetch.set_defaults(func=_fetch)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:  # (torch and pandas load here: seconds in which Ctrl-C printed a traceback of the import)
        from pibench.benchmarks.backends import ClusterLost
        from pibench.benchmarks.store import ResultsDirLost
        from pibench.data_loaders.fetch import FetchError
    except KeyboardInterrupt:
        print("pibench: interrupted before anything ran.", file=sys.stderr)
        return 130
    args = build_parser().parse_args(argv)
    previous = _stop_on_sigterm()
    try:
        code = args.func(args)
        sys.stdout.flush()  # a reader that stopped early (a full pipe) shows here, not at Python's exit
        return code
    except (ValueError, FetchError) as exc:  # user errors: the message says what to do, no traceback
        print(f"pibench: error: {exc}", file=sys.stderr)
        return 2
    except (ResultsDirLost, ClusterLost) as exc:  # the run's folder or cluster went away under it
        print(f"pibench: error: {exc}.", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader stopped early (`pibench list | head`): not an error of pibench's
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 0
    except OSError as exc:  # the file system refused (permissions, full disk): say which file
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"pibench: error: {exc.strerror or exc}{where}; check that the folder exists, is yours to write "
              "and has space.", file=sys.stderr)
        return 2
    except TimeoutError as exc:  # before OSError: a cluster that does not answer is no file system's fault
        print(f"pibench: error: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        print("pibench: stopped (SIGTERM); finished tasks are saved, rerun the same command to resume.",
              file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("pibench: interrupted; finished tasks are saved, rerun the same command to resume.", file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch system's stop, `timeout`, `kill`): stops a run as Ctrl-C does, its workers with it."""


def _stop_on_sigterm():
    """Make SIGTERM raise :class:`Terminated` in the main thread (the workers then stop with the run instead of
    writing on without it); the previous handler, to restore, or None where signals cannot be set here."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum, frame):
        raise Terminated()

    return signal.signal(signal.SIGTERM, stop)


if __name__ == "__main__":
    sys.exit(main())
