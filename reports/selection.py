"""Which stored records the tables show: never a stale one, and never two configurations in one row.

A results dir keeps every record it was given: the same suite entry run on a
regenerated file, with changed parameters, as its quick variant, or by changed
code (pibench's or a plugin's), has new task ids and records beside the old ones.
A table row is a suite entry at one miscoverage level (suite, dataset, method,
setting, alpha) over its seeds, and it shows one configuration computed by one
code: the current code's if it has records (pibench's code version, and the
plugin source of the method as loaded now, where known), else the newest; among
those configurations, the one a run asked for last (a run notes the tasks it asks
for, run or found done: the full suite after its ``--quick`` variant shows the full
suite again), else the newest. All its seeds read the same data files, those of
the record a run asked for last: a seed run only on other files is left out, never
mixed in. Within it, each seed's record on the data a run asked for last (the same
entry run on two copies of a file, or from two data directories), its finished
record before a failed one, then the newest. Records whose data file on disk no
longer has the checksum they were computed on are left out first. Everything left
out is returned with the reason.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pibench.data_loaders.fingerprint import sha256_of
from pibench.methods.code_identity import describe_change, display_name, files_changed_on_disk

ROW = ("suite", "dataset", "method", "setting", "alpha")


@dataclass(frozen=True)
class LeftOut:
    task_id: str
    reason: str


def _changed_file(record: dict, checksums: dict[str, str | None]) -> str | None:
    """The first data file of ``record`` whose content on disk differs from when it ran (missing files can't tell)."""
    for path, sha in (record.get("data_files") or {}).items():
        if path not in checksums:
            checksums[path] = sha256_of(path) if Path(path).is_file() else None
        if checksums[path] is not None and checksums[path] != sha:
            return path
    return None


def _variant(record: dict) -> tuple[str, str, str]:
    """(code version, plugin code, configuration without the seed): what one table row must share."""
    config = {k: v for k, v in record["config"].items() if k != "seed"}
    plugin = json.dumps(record["identity"].get("plugin") or {}, sort_keys=True)
    return record["identity"].get("code", ""), plugin, json.dumps(config, sort_keys=True, default=str)


def _why_other(record: dict, chosen: tuple[str, str, str]) -> str:
    code, plugin, config = _variant(record)
    if code != chosen[0]:
        return f"pibench code {code or 'unknown'}, the table's {chosen[0] or 'unknown'}"
    if plugin != chosen[1]:
        changed = describe_change(json.loads(plugin), json.loads(chosen[1]))
        return f"{changed}, against the table's" if changed else "other plugin code than the table's"
    differ = configuration_change(json.loads(config), json.loads(chosen[2]), "the table's")
    return f"another configuration: {differ}" if differ else "another configuration"


def configuration_change(before: object, after: object, now: str = "now", path: str = "") -> str:
    """"method.params.epochs 20, now 25; ..." for the leaves where two configurations differ ("" if none)."""
    if isinstance(before, dict) and isinstance(after, dict):
        parts = [configuration_change(before.get(k), after.get(k), now, f"{path}.{k}" if path else str(k))
                 for k in sorted(set(before) | set(after))]
        return "; ".join(p for p in parts if p)
    if before == after:
        return ""
    return f"{path} {json.dumps(before, default=str)}, {now} {json.dumps(after, default=str)}"


def _data_of(record: dict) -> object:
    """The fingerprint of the data a record was computed on."""
    return (record.get("identity") or {}).get("data", record.get("data_fingerprint"))


def select_current(records: list[dict], code_version: str, plugins: dict[str, dict] | None = None,
                   requested: dict[str, str] | None = None) -> tuple[list[dict], list[LeftOut]]:
    """(the records the tables show, the ones left out with why); see the module docstring.

    ``plugins``: method name -> the code identity of its class as loaded now
    (:func:`pibench.methods.code_identity.method_code_identity`), for the methods defined outside pibench.
    ``requested``: task id -> when a run last asked for it (:meth:`~pibench.benchmarks.store.ResultsStore.requested`).
    """
    plugins = plugins or {}
    requested = requested or {}
    checksums: dict[str, str | None] = {}
    left_out: list[LeftOut] = []
    rows: dict[tuple[object, ...], list[dict]] = {}
    for record in records:
        changed = _changed_file(record, checksums)
        if changed:
            left_out.append(LeftOut(record["task_id"], f"its data file {changed} has changed since it ran"))
            continue
        rows.setdefault(tuple(record.get(k) for k in ROW), []).append(record)
    chosen: list[dict] = []
    for group in rows.values():
        newest: dict[tuple[str, str, str], str] = {}
        for record in group:
            variant = _variant(record)
            newest[variant] = max(newest.get(variant, ""), _latest(record, requested))
        loaded = plugins.get(group[0]["method"])
        loaded_json = json.dumps(loaded, sort_keys=True) if loaded is not None else None

        def rank(v: tuple[str, str, str], loaded_json: str | None = loaded_json,
                 newest: dict[tuple[str, str, str], str] = newest) -> tuple[bool, bool, str]:
            return v[0] == code_version, v[1] == loaded_json, newest[v]

        pick = max(newest, key=rank)
        by_seed: dict = {}
        for record in group:
            if _variant(record) != pick:
                left_out.append(LeftOut(record["task_id"], f"superseded: the table shows this suite entry's "
                                                           "configuration a run asked for last and its code "
                                                           f"({_why_other(record, pick)})"))
            else:
                by_seed.setdefault(record["seed"], []).append(record)
        row_data = _row_data([r for rs in by_seed.values() for r in rs], requested)
        for seed, records_of_seed in by_seed.items():
            on_row_data = [r for r in records_of_seed if _files_of(r) in (None, row_data)]
            elsewhere = [r for r in records_of_seed if _files_of(r) not in (None, row_data)]
            if not on_row_data:
                left_out.extend(LeftOut(r["task_id"], f"seed {seed} ran only on other data than this row's other "
                                                      "seeds (the data a run asked for last); the row leaves it out "
                                                      "rather than mix two data sets: rerun it on those data")
                                for r in elsewhere)
                continue
            left_out.extend(LeftOut(r["task_id"], "superseded: this seed also ran on the data its row shows (the "
                                                  "data a run asked for last), and its other seeds did")
                            for r in elsewhere)
            kept, others = _seed_record(on_row_data, requested)
            chosen.append(kept)
            for record in others:
                same = ("same configuration, code and seed" if _data_of(record) == _data_of(kept) else
                        "same configuration, code and seed; its data differ (another file or data directory), and "
                        "that task's was asked for or run last")
                left_out.append(LeftOut(record["task_id"], f"superseded by task {kept['task_id']} ({same})"))
    return chosen, left_out


def _latest(record: dict, requested: dict[str, str]) -> str:
    """When a run last started or asked for ``record``'s task."""
    return max(record.get("started_at") or "", requested.get(record["task_id"], ""))


def _files_of(record: dict) -> tuple[str, ...] | None:
    """The content of the data files a record read (their checksums; None where it never read them): two copies
    of one file are the same data, a seed's own draw of a generated series reads none."""
    files = record.get("data_files")
    return None if files is None else tuple(sorted(files.values()))


def _row_data(records: list[dict], requested: dict[str, str]) -> tuple[str, ...] | None:
    """The data files a row shows: those of its record a run asked for last (of those that read their files)."""
    known = [r for r in records if _files_of(r) is not None]  # ties: a finished record, then the task id
    return _files_of(max(known, key=lambda r: (_latest(r, requested), r["status"] == "ok", r["task_id"]))) \
        if known else None


def _seed_record(records: list[dict], requested: dict[str, str]) -> tuple[dict, list[dict]]:
    """(the record a table shows for one seed of a row, the others): on the data a run asked for last (two
    copies of a file, both still on disk or both gone, cannot tell otherwise), its finished record before a
    failed one, then the newest."""
    data = _data_of(max(records, key=lambda r: (_latest(r, requested), r["status"] == "ok", r["task_id"])))
    ordered = sorted(records, key=lambda r: (_data_of(r) == data, r["status"] == "ok", _latest(r, requested),
                                             r["task_id"]), reverse=True)
    return ordered[0], ordered[1:]


#: Datasets a note names before "and N more".
NAMED_AT_MOST = 6


def mixed_code_notes(records: list[dict], code_version: str, plugins: dict[str, dict] | None = None,
                     requested: dict[str, str] | None = None, results_dir: str | None = None,
                     builtin: Collection[str] = (), quick_only: Collection[str] = ()) -> list[str]:
    """One line per (suite, method) whose shown ``records`` (:func:`select_current`'s) ran more than one version
    of the method's code (a plugin edited, then run again on some datasets only: a leaderboard would rank the
    rows as one method), naming the rows of the older code and the command that runs them again; and one per
    suite with rows of other pibench code than ``code_version``. ``plugins`` and ``requested`` as for
    :func:`select_current`, whose choice of the newest code this follows; ``builtin`` the built-in suites'
    names, ``quick_only`` the configurations only their --quick variants have (:func:`rerun_command`)."""
    plugins, requested = plugins or {}, requested or {}
    lines = []
    by_suite: dict[str, list[dict]] = {}
    groups: dict[tuple[str, str], dict[str, list[dict]]] = {}
    for record in records:
        suite = str(record["config"].get("suite"))
        by_suite.setdefault(suite, []).append(record)
        groups.setdefault((suite, record["method"]), {}).setdefault(_variant(record)[1], []).append(record)
    for (suite, method), versions in sorted(groups.items()):
        rows = [r for rs in versions.values() for r in rs]
        loaded = plugins.get(method)
        loaded_json = json.dumps(loaded, sort_keys=True) if loaded is not None else None
        newest = max(versions, key=lambda v: max(_latest(r, requested) for r in versions[v]))
        edited = files_changed_on_disk(json.loads(newest), versions[newest][-1].get("plugin_files")) \
            if loaded_json is None else []
        if edited:  # a plugin this process has not loaded, whose files read otherwise now than when its rows ran
            lines.append(f"{method} ({suite}): {', '.join(map(display_name, edited))} changed since its "
                         f"{'newest ' * (len(versions) > 1)}rows ran (the tables show what the old code computed); "
                         f"run {_rows_named(rows)} again: "
                         f"`{rerun_command(suite, rows, results_dir, builtin, quick_only)}`")
            continue
        if loaded_json is not None and loaded_json not in versions:
            ran = f"{len(versions)} versions of its code, none" if len(versions) > 1 else \
                f"other code ({describe_change(json.loads(newest), loaded) or 'other code'}) than"
            lines.append(f"{method} ({suite}): its rows ran {ran} the one loaded now; run {_rows_named(rows)} again "
                         f"with it loaded: `{rerun_command(suite, rows, results_dir, builtin, quick_only)}`")
            continue
        if len(versions) < 2:
            continue
        current = loaded_json if loaded_json is not None else newest
        older = [r for v, rs in versions.items() if v != current for r in rs]
        changes = sorted({describe_change(json.loads(current), json.loads(v)) or "other code"
                          for v in versions if v != current})
        lines.append(f"{method} ({suite}): {_rows_named(older, among=rows)} ran other code than "
                     f"{'the code loaded now' if loaded_json is not None else 'its newest'} "
                     f"({', '.join(changes)}); to compare like with like, run them again with that code loaded: "
                     f"`{rerun_command(suite, older, results_dir, builtin, quick_only)}`")
    for suite, rows in sorted(by_suite.items()):
        other = [r for r in rows if _variant(r)[0] != code_version]
        if not other:
            continue
        whole = len(other) == len(rows)
        codes = ", ".join(sorted({_variant(r)[0] or "unknown" for r in other}))
        lines.append(f"suite {suite}: {'every row' if whole else _rows_named(other, datasets_only=True)} ran other "
                     f"pibench code ({codes}) than this one ({code_version}); run "
                     f"{'it' if whole else 'them'} again to refresh: "
                     f"`{rerun_command(suite, other, results_dir, builtin, quick_only, whole)}`")
    return lines


def rerun_command(suite: str, records: list[dict], results_dir: str | None = None,
                  builtin: Collection[str] = (), quick_only: Collection[str] = (), whole: bool = False) -> str:
    """``pibench run --suite ... --methods ... --datasets ... --alpha ... [--quick] --results-dir ...``, which runs
    ``records``' tasks again (the whole suite for none), quoted for a shell; a suite not among the ``builtin``
    names is named by a placeholder for its file. ``--quick`` where every record's configuration, or its data
    and protocol, is one only the suite's --quick variant has (``quick_only``: :func:`config_keys` of each). A
    method defined in the running script or notebook (``__main__``), which the command line cannot load, gets
    the call of ``pibench.run``. ``whole``: the command runs the whole suite, ``records`` (all of its rows) only
    saying whether it is its --quick variant."""
    only_quick = set(quick_only)
    quick = bool(records) and all(set(config_keys(r["config"])) & only_quick for r in records)
    listed = [] if whole else records  # the rows the command names (none: the whole suite)
    methods = sorted({str(r["method"]) for r in listed})
    datasets = sorted({str(r["dataset"]) for r in listed})
    levels = sorted({float(r["alpha"]) for r in listed if r.get("alpha") is not None})
    plugins = _plugin_arguments(records)
    if any(_of_this_session(r) for r in records) or plugins is None:
        named = repr(suite) if suite in builtin else f"<the file of suite {suite!r}>"
        arguments = [f"suite={named}", *([f"methods={methods!r}", f"datasets={datasets!r}", f"alpha={levels!r}"]
                                         if listed else []),
                     *(["quick=True"] if quick else []),
                     *([f"results_dir={str(results_dir)!r}"] if results_dir is not None else [])]
        return f"pibench.run({', '.join(arguments)})"
    parts = ["pibench", "run", *(["--plugin", *plugins] if plugins else []), "--suite"]
    parts.append(suite if suite in builtin else f"<the file of suite {suite!r}>")
    if listed:
        parts += ["--methods", *methods, "--datasets", *datasets]
        parts += ["--alpha", *(f"{level:g}" for level in levels)]
    if quick:
        parts.append("--quick")
    if results_dir is not None:
        parts += ["--results-dir", str(results_dir)]
    return " ".join(p if p.startswith("<the file") else shlex.quote(p) for p in parts)


def _plugin_arguments(records: list[dict]) -> list[str] | None:
    """What ``--plugin`` must name for a command line to run ``records``' methods again: the files of those loaded
    from a file of the user's (relative to the working folder where they are in it), a placeholder for a plugin
    method not loaded in this process; None where only a Python call can run one (a class of the user's package
    imported in Python)."""
    from pibench.methods.catalog import command_line_source

    files, unknown = [], []
    for method in sorted({str(r["method"]) for r in records}):
        kind, path = command_line_source(method)
        if kind == "python":
            return None
        if kind == "file" and path is not None:
            shown = Path(path)
            files.append(str(shown.relative_to(Path.cwd()) if shown.is_relative_to(Path.cwd()) else shown))
        elif kind == "unknown" and any((r.get("identity") or {}).get("plugin") for r in records
                                       if r["method"] == method):
            unknown.append(f"<the file that defines {method!r}>")
    return sorted(set(files)) + unknown


def config_keys(config: dict) -> tuple[str, str]:
    """A task's configuration but its seed and level, and its data and protocol alone, as JSON: what tells a
    suite's --quick variant's rows apart (the latter also those of a method the suite does not list)."""
    return (json.dumps({k: v for k, v in config.items() if k not in ("seed", "alpha")}, sort_keys=True, default=str),
            json.dumps({k: config.get(k) for k in ("suite", "dataset", "protocol")}, sort_keys=True, default=str))


def _of_this_session(record: dict) -> bool:
    """Whether the record's method was defined in a running script or notebook (its code is ``__main__``'s only)."""
    plugin = (record.get("identity") or {}).get("plugin") or {}
    return bool(plugin) and all(key.split(":")[0] == "__main__" for key in plugin)


def _rows_named(records: list[dict], datasets_only: bool = False, among: list[dict] | None = None) -> str:
    """"the rows on DATASET (SETTING, ...), ..." for ``records``: their alpha too where they, or the rows ``among``
    which they are, have several; at most :data:`NAMED_AT_MOST` datasets, then how many more."""
    levels = {r.get("alpha") for r in among or records}
    settings: dict[str, set[str]] = {}
    for record in records:
        row = str(record.get("setting") or "default") + (f", alpha {record.get('alpha')}" if len(levels) > 1 else "")
        settings.setdefault(str(record.get("dataset")), set()).add(row)
    named = [d if datasets_only else f"{d} ({'; '.join(sorted(s))})" for d, s in sorted(settings.items())]
    more = f" and {len(named) - NAMED_AT_MOST} more" if len(named) > NAMED_AT_MOST else ""
    return "the rows on " + ", ".join(named[:NAMED_AT_MOST]) + more
