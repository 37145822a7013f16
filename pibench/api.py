"""pibench from Python: run a suite and read its results as DataFrames and figures.

    from pibench import run, load_results

    results = run(suite="default", seeds=[0], results_dir="results")
    results.summary                       # one row per task: coverage, lengths, ... (the CLI's table)
    results.predictions(results.records[0]["task_id"])   # per-step y, lower, upper, point
    results.figure("conditional_coverage")  # a matplotlib Figure (names: results.figure_names)
    results.to_html("report.html")        # the self-contained HTML report

:func:`run` and :func:`load_results` are what ``pibench run`` and ``pibench report``
do; the command line prints what they return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd
    from matplotlib.figure import Figure

    from pibench.benchmarks.runner import RunReport
    from pibench.reports.figures.results import StoredResults
    from pibench.reports.statistics import Statistics


@dataclass(repr=False)
class Results:
    """The finished tasks of one results folder: the records the tables show (current code, not tampered)."""

    results_dir: Path
    records: list[dict]
    #: one line per stored file the tables leave out, and why (stale, tampered, unreadable, superseded)
    left_out: list[str] = field(default_factory=list)
    #: what :func:`run` did (tasks run, skipped, failed); None from :func:`load_results`
    run_report: RunReport | None = None
    #: complete records the tables leave out for a newer configuration or code of their row, each with
    #: its ``superseded`` reason (:attr:`superseded_summary` shows them as a table)
    superseded: list[dict] = field(default_factory=list)
    #: what :meth:`select` kept (e.g. ``{"datasets": ["sp500"]}``); empty for the whole folder
    selection: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        frame = self.summary
        ok = frame[frame["status"] == "ok"] if len(frame) else frame
        parts = [f"{len(ok)} finished task(s)"]
        if len(frame) > len(ok):
            parts.append(f"{len(frame) - len(ok)} failed")
        for column, word in (("method", "method(s)"), ("dataset", "dataset(s)"), ("alpha", "alpha level(s)")):
            if len(frame) and column in frame:
                parts.append(f"{frame[column].nunique()} {word}")
        if self.left_out:
            parts.append(f"{len(self.left_out)} stored file(s) left out")
        run = f"; this run: {self.run_report!r}" if self.run_report is not None else ""
        return f"<Results {self.results_dir}: {', '.join(parts)}{run}>"

    def _repr_html_(self) -> str:
        """The seed means of the headline metrics, one row per (suite, dataset, method, setting, alpha)."""
        import html

        from pibench.reports.summary import format_number

        frame = self.summary
        head = f"<p>{html.escape(repr(self))}</p>"
        ok = frame[frame["status"] == "ok"] if len(frame) else frame
        if ok.empty:
            return head
        keys = ["suite", "dataset", "method", "setting", "alpha"]
        metrics = [c for c in ("coverage", "mean_length", "winkler", "length_ratio_oracle") if c in ok]
        table = ok.groupby(keys, sort=False)[metrics].mean(numeric_only=True)
        table.insert(0, "seeds", ok.groupby(keys, sort=False).size())
        table = table.rename(columns={"coverage": "coverage %"})  # as the tables show it: 90.25, not 0.902
        table["coverage %"] = table["coverage %"].map(lambda v: f"{100 * v:.2f}")
        return head + table.reset_index().to_html(index=False, border=0, float_format=format_number)

    def select(self, *, suites: list[str] | str | None = None, methods: list[str] | str | None = None,
               datasets: list[str] | str | None = None) -> Results:
        """These results narrowed to some suites, methods and datasets (names and labels as the tables show
        them): the tables, statistics, comparisons and figures of the result are those of the selection (its MCS
        is among the rows chosen). ValueError naming what is here for a name that is not."""
        from pibench.data_loaders.validation import did_you_mean

        def field_of(record: dict, key: str) -> str:
            return str(record["config"].get("suite") if key == "suite" else record[key])

        records, superseded = self.records, self.superseded
        for key, wanted in (("suite", suites), ("method", methods), ("dataset", datasets)):
            if wanted is None:
                continue
            chosen = [wanted] if isinstance(wanted, str) else list(wanted)
            present = sorted({field_of(r, key) for r in self.records})
            unknown = [name for name in chosen if name not in present]
            if unknown:
                raise ValueError(f"{key} {unknown[0]!r} has no finished task in {self.results_dir}; its {key}s are "
                                 f"{present}.{did_you_mean(unknown[0], present)}")
            records = [r for r in records if field_of(r, key) in chosen]
            superseded = [r for r in superseded if field_of(r, key) in chosen]
        if not records:  # each name is here: say where the methods ran
            named = [methods] if isinstance(methods, str) else list(methods or [])
            ran = {m: sorted({r["dataset"] for r in self.records if r["method"] == m}) for m in named}
            where = "; ".join(f"{m} ran on {', '.join(d)}" for m, d in ran.items())
            raise ValueError(f"no finished task in {self.results_dir} is of all of suites={suites}, "
                             f"methods={methods}, datasets={datasets}; each is there, but not together"
                             + (f" ({where})." if where else "."))
        kept = {**self.selection, **{key: value for key, value in
                                     (("suites", suites), ("methods", methods), ("datasets", datasets)) if value}}
        return Results(self.results_dir, records, self.left_out, None, superseded, kept)

    @property
    def superseded_summary(self) -> pd.DataFrame:
        """The superseded records as summary rows, with a ``superseded`` column saying why."""
        from pibench.reports.summary import summary_frame

        return summary_frame(self.superseded)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per task (seed), the columns of ``summary.csv`` (with each task's CIs and tests)."""
        return self._stored.summary

    @property
    def statistics(self) -> Statistics:
        """CIs of every row's headline metrics, the interval-forecast tests and the comparisons of the rows
        of each dataset (:mod:`pibench.reports.statistics`), computed from the stored predictions (cached
        per record under the results dir's ``cache/stats``)."""
        return self._stored.statistics

    def compare(self, reference: str | None = None, metric: str = "winkler") -> pd.DataFrame:
        """Each row of each dataset against ``reference`` (a method, whose setting with the lowest mean score is
        taken on each dataset, as the ``reference`` column says; or "method setting"; default: the row
        with the lowest mean score) on ``metric`` (the interval score, "winkler", or "mean_length"): the mean
        difference per test unit with its 90% CI, the Diebold-Mariano statistic (EWC long-run variance for a
        series) and its p-value, and membership of the 90% Model Confidence Set, all on the seeds every row of
        the dataset has (``compared_seeds``; ``mean_loss`` is a row's mean over all its ``seeds``). The oracle is
        compared with the reference, but is never the reference nor in the MCS."""
        from pibench.reports.statistics import compare

        return compare(self.records, self._stored.read_predictions, reference, metric, self._stored.statistics_cache)

    def leaderboard(self, suite: str | None = None, long: bool = False) -> pd.DataFrame:
        """The leaderboard of ``suite`` (default: the one suite with series rows on two or more datasets):
        per (method, setting), its mean rank on the interval score over the datasets it covers within 2 points
        of nominal, how many it covers, its mean score ratio over those, and per dataset its score over the best
        covering row's (the oracle shown last, never ranked nor the best); ``long``: one row per dataset and
        method instead, with coverage, lengths, the worst third, CIs and tests (:mod:`pibench.reports.leaderboard`)."""
        from pibench.reports.leaderboard import leaderboard_suites, overall, per_dataset

        suites = leaderboard_suites(self.summary)
        if suite is None:
            if len(suites) != 1:
                raise ValueError(f"give the suite: the leaderboards here are of {suites} (a leaderboard needs series "
                                 "rows on two or more datasets)." if suites else "no suite here has a leaderboard: it "
                                 "needs series rows on two or more datasets (run one on several datasets).")
            suite = suites[0]
        elif suite not in suites:
            raise ValueError(f"suite {suite!r} has no leaderboard here; the suites with series rows on two or more "
                             f"datasets are {suites}.")
        table = per_dataset(self.summary, suite, self.statistics.rows)
        return table if long else overall(table)

    @cached_property
    def _stored(self) -> StoredResults:
        from pibench.benchmarks.store import ResultsStore
        from pibench.reports.figures.results import StoredResults

        store = ResultsStore(self.results_dir)
        return StoredResults(self.records, store.reader(self.records), statistics_cache=store.statistics_cache)

    def predictions(self, task: str | dict | pd.Series) -> pd.DataFrame:
        """The per-step (series) or per-sequence-and-horizon (sets) predictions of a task, by id, record or row
        of :attr:`summary`."""
        import numpy as np
        import pandas as pd

        if isinstance(task, pd.Series):  # a row of results.summary
            task = task.to_dict()
        if isinstance(task, (int, np.integer)) and not isinstance(task, bool):
            raise KeyError(f"predictions({task}) takes a task id, a record or a row of results.summary, not a "
                           f"position: for the row at that position, give results.summary.iloc[{task}].")
        if isinstance(task, dict) and "task_id" not in task:
            raise KeyError(f"this dict has no 'task_id' (its keys: {', '.join(map(str, list(task)[:6]))}, ...); give a "
                           "record of results.records, a row of results.summary as a dict, or a task id.")
        task_id = task["task_id"] if isinstance(task, dict) else str(task)
        record = next((r for r in self.records if r["task_id"] == task_id), None)
        if record is None:
            raise KeyError(f"no finished task {task_id!r} in {self.results_dir}; ids are in results.records.")
        if record["status"] != "ok":
            first = str(record.get("error", "")).strip().splitlines()[:1] or ["(no message)"]
            raise KeyError(f"task {task_id!r} ({record['method']} {record['setting']} on {record['dataset']}, seed "
                           f"{record['seed']}) failed, so it has no predictions: {first[0]} (its whole error is the "
                           "record's 'error' in results.records).")
        return self._stored.predictions(task_id).copy()  # the caller may change it; the cache stays

    def figure_specs(self) -> dict:
        """name -> :class:`~pibench.reports.figures.catalog.FigureSpec` (name, caption, draw) of every figure
        these results have data for, in report order."""
        from pibench.reports.figures.catalog import available_figures

        return {spec.name: spec for spec in available_figures(self._stored)}

    @property
    def figure_names(self) -> list[str]:
        """The figures these results have data for (``pibench plot`` lists the same)."""
        return list(self.figure_specs())

    def figure_name(self, name: str) -> str:
        """The one figure called ``name``, or the one of that kind (e.g. ``"tradeoff"``)."""
        from pibench.data_loaders.validation import did_you_mean
        from pibench.reports.html import NEEDS

        specs = self.figure_specs()
        matches = [n for n in specs if n == name or n.split("-")[0] == name]
        if len(matches) != 1:
            needs = f": it needs {NEEDS[name]}" if not matches and name in NEEDS else ""
            guess = did_you_mean(name, [*specs, *NEEDS]) if not matches and not needs else ""
            chosen = ", ".join(f"{key}={value}" for key, value in self.selection.items())
            where = f"this selection ({chosen}; the whole results dir may have it)" if chosen else "this store"
            raise ValueError(f"figure {name!r} {'is ambiguous' if matches else f'is not in {where}'}{needs}.{guess} "
                             f"Give one of: {', '.join(matches or specs) or 'none'} (`pibench plot` lists them).")
        return matches[0]

    def figure(self, name: str) -> Figure:
        """Draw a figure (a matplotlib Figure) by name or kind (:meth:`figure_name`)."""
        return self.figure_specs()[self.figure_name(name)].draw()

    def tables(self) -> str:
        """The report's markdown: the summary table, conditional coverage, the paper's tables where they
        apply, rows of other code, failed tasks and the stored files left out."""
        from pibench.reports.paper_tables import fesp_tables, order_selection_table, set_suites, sets_table
        from pibench.reports.summary import (
            comparison_tables,
            conditional_table,
            failures,
            leaderboard_tables,
            markdown_table,
        )

        frame = self.summary
        statistics = self.statistics
        sections = [markdown_table(frame, statistics.rows), self._mixed_code_section(), conditional_table(frame),
                    leaderboard_tables(frame, statistics.rows), comparison_tables(statistics.groups),
                    fesp_tables(frame),
                    *(order_selection_table(frame, suite) for suite in sorted(frame["suite"].unique())),
                    *(sets_table(frame, suite) for suite in set_suites(frame))]
        failed = failures(frame)
        if failed:
            sections.append(f"### Failed tasks ({len(failed)})\n\n" + "".join(f"- {line}\n" for line in failed))
        if self.left_out:
            sections.append(f"### Not in the tables ({len(self.left_out)} stored file(s))\n\n"
                            + "".join(f"- {line}\n" for line in self.left_out))
        return "\n".join(t for t in sections if t)

    def mixed_code(self) -> list[str]:
        """One line per method whose rows ran more than one version of its code (a plugin edited and run again on
        some datasets only), and one for rows of other pibench code
        (:func:`~pibench.reports.selection.mixed_code_notes`)."""
        from pibench.benchmarks.provenance import code_version
        from pibench.benchmarks.store import ResultsStore
        from pibench.benchmarks.suite import builtin_suites
        from pibench.reports.selection import mixed_code_notes

        given = (self.records, code_version(), _loaded_plugin_code(self.records),
                 ResultsStore(self.results_dir).requested(), str(self.results_dir), builtin_suites())
        if not mixed_code_notes(*given):  # (the --quick check of their commands expands the suites: only for lines)
            return []
        return mixed_code_notes(*given, _quick_only_configs({str(r["config"].get("suite")) for r in self.records}))

    def _mixed_code_section(self) -> str:
        lines = self.mixed_code()
        return ("_Rows of other code: " + "; ".join(lines) + "._\n") if lines else ""

    def why_empty(self) -> str | None:
        """None if the tables have rows, else why not and the command that fills the folder again (naming
        the suite its stored records come from)."""
        if self.records:
            return None
        from pibench.benchmarks.store import ResultsStore
        from pibench.benchmarks.suite import builtin_suites
        from pibench.reports.selection import rerun_command

        reasons = (f" ({len(self.left_out)} file(s) there could not be used: {self.left_out[0]}, ...)"
                   if self.left_out else "")
        store = ResultsStore(self.results_dir)
        suites = store.stored_suites()
        if len(suites) == 1:  # the tasks stored, with their methods, datasets (a CSV's too), levels and plugins
            named = store.naming_records(suites[0])
            command = rerun_command(suites[0], named, str(self.results_dir), builtin_suites(),
                                    _quick_only_configs(set(suites)) if named else ())
        elif suites:
            command = f"pibench run --suite SUITE --results-dir {self.results_dir}"
            reasons += f"; its records come from suites {', '.join(suites)}"
        else:
            command = f"pibench run --results-dir {self.results_dir}"
        return f"no usable results under {self.results_dir}{reasons}; run `{command}` first."

    def html_page(self, title: str | None = None) -> tuple[str, list[str]]:
        """(the self-contained HTML report: tables and every figure inline, the names of the figures it embeds)."""
        from pibench.reports.html import build_report

        empty = self.why_empty()
        if empty:
            raise ValueError(empty)

        return build_report(self._stored, self.tables(), title=title or f"pibench report: {self.results_dir}")

    def to_html(self, path: str | Path, title: str | None = None) -> Path:
        """Write the self-contained HTML report (:meth:`html_page`) to ``path``."""
        path = Path(path)
        page = self.html_page(title)[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page)
        return path


def _loaded_plugin_code(records: list[dict]) -> dict[str, dict]:
    """method name -> the code identity of its class as loaded now, for the methods of ``records`` defined
    outside pibench (so the tables prefer rows of the code that runs now); {} if none or unknown."""
    names = {r["method"] for r in records if (r.get("identity") or {}).get("plugin")}
    if not names:
        return {}
    from pibench.methods.catalog import available_methods
    from pibench.methods.code_identity import method_code_identity

    try:
        known = available_methods()
    except Exception:  # a broken plugin must not stop a report of stored results
        return {}
    loaded = {}
    for name in names & set(known):
        try:
            loaded[name] = method_code_identity(known[name])
        except Exception:  # as above: the stored results are reported all the same
            continue
    return loaded


def _quick_only_configs(suites: set[str]) -> set[str]:
    """The configurations, and data and protocols (:func:`~pibench.reports.selection.config_keys`), that only the
    --quick variant of each built-in suite of ``suites`` has: a rerun command for such rows says --quick."""
    from pibench.benchmarks.suite import build_tasks, builtin_suites, load_suite
    from pibench.reports.selection import config_keys

    found: set[str] = set()
    for suite in sorted(suites & set(builtin_suites())):
        full, quick = ({key for t in build_tasks(load_suite(suite, quick=q)) for key in config_keys(t.config)}
                       for q in (False, True))
        found |= quick - full
    return found


def load_results(results_dir: str | Path = "results") -> Results:
    """The results a finished (or partly finished) run left in ``results_dir``; ValueError if there is no
    such folder."""
    from pibench.benchmarks.provenance import code_version
    from pibench.benchmarks.store import ResultsStore, check_results_dir
    from pibench.reports.selection import select_current

    check_results_dir(results_dir, for_writing=False)
    if not Path(results_dir).is_dir():
        raise ValueError(f"results dir {results_dir} does not exist; give the folder a run wrote (pibench run "
                         f"--results-dir {results_dir} writes one).")
    store = ResultsStore(results_dir)
    records, unreadable = store.scan()
    if not records and not unreadable and not (Path(results_dir) / "tasks").is_dir():
        inside = sorted(str(p.parent) for p in Path(results_dir).glob("*/tasks") if p.is_dir())
        hint = f": {', '.join(inside[:3])} inside it {'are such folders' if len(inside) > 1 else 'is one'}" \
            if inside else " (pibench run --results-dir DIR writes one)"
        raise ValueError(f"{results_dir} is no results folder (it has no tasks/); give the folder a run wrote{hint}.")
    current, superseded = select_current(records, code_version(), _loaded_plugin_code(records), store.requested())
    left_out = [f"{s.path.name}: {s.reason}" for s in unreadable]
    left_out += [f"task {s.task_id}: {s.reason}" for s in superseded]
    by_id = {r["task_id"]: r for r in records}
    older = [{**by_id[s.task_id], "superseded": s.reason} for s in superseded if s.task_id in by_id]
    return Results(Path(results_dir), current, left_out, superseded=older)


def suite_tasks(suite: str | Path | None = None, *, methods: list[str] | None = None,
                datasets: list[str] | None = None, seeds: list[int] | None = None,
                alpha: float | list[float] | None = None, quick: bool = False) -> tuple[dict, list]:
    """(the suite as loaded, its tasks): what :func:`run` would run, checked, nothing computed."""
    from pibench.benchmarks.preflight import SetupError, other_variant_problems
    from pibench.benchmarks.suite import build_tasks, load_suite

    if not isinstance(quick, bool):
        raise ValueError(f"quick={quick!r} must be True or False.")
    loaded = load_suite(suite, quick=quick)
    tasks = build_tasks(loaded, methods=methods, datasets=datasets, seeds=seeds, alpha=alpha)
    problems = other_variant_problems(suite, quick, methods, datasets)
    if problems:
        raise SetupError(problems)
    return loaded, tasks


ERRORS = ("warn", "raise", "ignore")
#: Runs of more tasks than this ask for ``yes=True`` (``--yes``) first.
LARGE_RUN = 10_000


class TasksFailed(RuntimeError):
    """Raised by ``run(..., errors="raise")`` when tasks failed; ``results`` holds what finished."""

    def __init__(self, message: str, results: Results):
        super().__init__(message)
        self.results = results


def run(suite: str | Path | None = None, *, methods: list[str] | None = None, datasets: list[str] | None = None,
        seeds: list[int] | None = None, alpha: float | list[float] | None = None, quick: bool = False,
        jobs: int = 1, threads: int = 1, device: str | None = None, backend: str = "loky",
        scheduler: str | None = None, results_dir: str | Path = "results", data_dir: str | Path | None = None,
        progress: bool | str = True, errors: str = "warn", yes: bool = False,
        on_start: Callable[[int, int], None] | None = None) -> Results:
    """Run a suite (a built-in name or a TOML file; default: the built-in synthetic ``default``) and return
    its results; finished tasks are kept, so a second call only computes what is missing.

    ``methods`` / ``datasets`` / ``seeds`` slice or extend the suite as on the command line
    (``"csv:PATH:TARGET"`` adds your file); ``alpha`` a miscoverage level or a list of them (default: the
    suite's); ``jobs`` parallel workers, ``device`` 'cpu', 'cuda' or 'auto' (default: the suite's),
    ``backend`` 'loky' or 'dask'; ``progress`` True (a bar), False or 'lines' (one line per finished task, for
    logs). Bad input raises ValueError before any work. Methods defined in this
    session (a notebook cell, a module imported or reloaded here) run as they are loaded now, in every
    worker. ``errors``: what failed tasks do, once the others finished: 'warn' (a warning naming each),
    'raise' (:class:`TasksFailed`) or 'ignore' (read ``results.run_report.failed``). The run's notes (methods
    left out on datasets they cannot serve, a method imported again, a data file other than the published one,
    ...: ``results.run_report.notes``) are warnings too, unless 'ignore'. A selection of more than
    :data:`LARGE_RUN` tasks (a grid typed too long, say) is refused unless ``yes=True``. A dask scheduler lost
    mid-run raises :class:`~pibench.ClusterLost` (the finished tasks are stored). ``on_start(tasks, to_run)``,
    if given, is called once every check passed, before any work (the command line says there what it runs).
    """
    import warnings

    import numpy as np

    from pibench.benchmarks.backends import check_workers
    from pibench.benchmarks.runner import run_tasks
    from pibench.reports.summary import not_compared_notes

    if errors not in ERRORS:
        raise ValueError(f"errors={errors!r} must be one of {', '.join(map(repr, ERRORS))}.")
    check_workers(jobs, threads, backend, scheduler, jobs_name="jobs")  # (the runner checks them as n_jobs)
    if results_dir is None or not isinstance(results_dir, (str, Path)):
        raise ValueError(f"results_dir={results_dir!r} must be a folder path, e.g. results_dir='results'.")
    if not isinstance(progress, bool) and progress != "lines":
        raise ValueError(f"progress={progress!r} must be True, False or 'lines'.")
    if not isinstance(yes, bool):
        raise ValueError(f"yes={yes!r} must be True or False.")
    if data_dir is not None and not isinstance(data_dir, (str, Path)):
        raise ValueError(f"data_dir={data_dir!r} must be a folder path, e.g. data_dir='data' (default: $PIBENCH_DATA "
                         "or ~/.cache/pibench/data).")
    if on_start is not None and not callable(on_start):
        raise ValueError(f"on_start={on_start!r} must be a function of (tasks, to_run), or None.")
    # a notebook's np.arange(3) or np.linspace(...): its numbers, as Python's
    seeds = seeds.tolist() if isinstance(seeds, np.ndarray) else seeds
    alpha = alpha.tolist() if isinstance(alpha, np.ndarray) else alpha
    loaded, tasks = suite_tasks(suite, methods=methods, datasets=datasets, seeds=seeds, alpha=alpha, quick=quick)
    if len(tasks) > LARGE_RUN and not yes:
        raise ValueError(f"this selection expands to {len(tasks):,} tasks (the largest built-in suite has a few "
                         "hundred): check the grids, methods, datasets, levels and seeds, or pass --yes "
                         "(run(..., yes=True)) to run them all.")
    report = run_tasks(tasks, str(results_dir), n_jobs=jobs, data_dir=None if data_dir is None else str(data_dir),
                       threads=threads, progress=progress, device=device or loaded.get("device", "cpu"),
                       backend=backend, scheduler=scheduler, on_start=on_start)
    results = load_results(results_dir)
    results.run_report = report
    ran = {(task.config.get("suite"), task.config["method"]["name"]) for task in tasks}
    report.notes.extend(Results(results.results_dir, [r for r in results.records if (r["config"].get("suite"),
                                                                                     r["method"]) in ran]).mixed_code())
    report.notes.extend(not_compared_notes(results.statistics.groups, ran))
    if errors != "ignore":
        for line in report.notes:  # what the command line prints above its table
            warnings.warn(line, RunNote, stacklevel=2)
    failed = report.failure_lines()
    if failed and errors != "ignore":
        message = f"{len(failed)} task(s) failed (tracebacks in results.run_report.failed):\n" + "\n".join(
            f"  {line}" for line in failed)
        if errors == "raise":
            raise TasksFailed(message, results)
        warnings.warn(message, RunNote, stacklevel=2)
    return results


class RunNote(UserWarning):
    """What :func:`run` says beside its results: tasks that failed, and the run's notes (methods left out on some
    datasets, a method imported again, a data file other than the published one, ...)."""
