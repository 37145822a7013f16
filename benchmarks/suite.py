"""Declarative suites (TOML in ``benchmarks/suites/``) expanded into tasks.

A suite file::

    name = "default"
    description = "..."
    alpha = 0.1                       # or several levels: alpha = [0.05, 0.1, 0.2] (--alpha overrides)
    seeds = [0]
    protocol = { kind = "online", window = 500, retrain_every = 50 }
    device = "auto"                   # optional: where networks train (--device overrides; default cpu)

    [[datasets]]
    name = "ar"                       # a registered dataset, or "csv"
    params = { n_test = 2000 }
    protocol = { window = 400 }       # optional, merged over the suite's
    quick = { params = { n_test = 300 } }

    [[methods]]
    name = "aci"
    params = { epochs = 100 }
    protocol = { kind = "offline" }   # optional, merged over the dataset's
    grid = { gamma = [0.0, 0.01] }    # one task per value, setting "gamma=0.01"
    datasets = ["ar"]                 # optional: only these datasets: a label, or a name no entry uses as a label
    quick = { params = { epochs = 20 } }

    [quick]                           # suite-level overrides for --quick
    seeds = [0]

``[quick]`` may set alpha, seeds, protocol and device; an entry changes under --quick by a
``quick`` table of its own, which may also set ``skip = true`` to leave it out of --quick. A
dataset entry with ``optional = true`` is skipped, with one line, when its data
file is not there (a dataset users bring themselves, such as MIMIC-III).

Tasks = datasets x methods x grid points x alpha levels x seeds, each a plain JSON-able
config. A method meets the datasets of the shapes it serves (a line names those it
skips). :func:`load_suite` reports every problem of a file at once.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from pibench.benchmarks.protocols import check_protocol
from pibench.benchmarks.shipping import ShippedClass
from pibench.data_loaders.fingerprint import seeded_dataset
from pibench.data_loaders.registry import DATASETS, check_dataset_name, parse_dataset_arg, required_params
from pibench.data_loaders.validation import check_alpha, did_you_mean
from pibench.methods.catalog import get_method
from pibench.methods.device import DEVICE_CHOICES

DEFAULT_SUITE = "default"


def _merge(base: dict, override: dict) -> dict:
    """Recursive dict merge: override's values win, nested tables merge."""
    out = dict(base)
    for key, value in override.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def stable_hash(obj) -> str:
    """sha256 of the canonical JSON of ``obj`` (stable across runs, machines and workers)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def task_id_of(config: dict, identity: dict) -> str:
    """A task's id: the stable hash of its config and identity (what the task's record must re-derive)."""
    return stable_hash({"config": config, **identity})[:20]


def derive_seed(*parts) -> int:
    """A 31-bit seed from a stable hash of ``parts``."""
    return int(stable_hash(list(parts))[:8], 16) & 0x7FFFFFFF


@dataclass(frozen=True)
class Task:
    """One (dataset, method, params, alpha, seed) run.

    ``config`` is everything the suite says about it; ``identity`` is what the
    content says: the fingerprint of the loaded data, the code version and, for a
    method defined outside pibench, its source (:mod:`pibench.methods.code_identity`)
    (:func:`pibench.benchmarks.preflight.prepare_tasks` fills it in). The task id hashes
    both, so a changed file or changed code means a new task, never a stale one.
    ``method_class`` is the method class the identity names, for a method defined
    outside pibench (:mod:`pibench.benchmarks.shipping`): workers run that class, not
    whatever their own import of its module would give.
    """

    config: dict = field(hash=False)
    identity: dict | None = field(default=None, hash=False)
    method_class: ShippedClass | None = field(default=None, hash=False, compare=False, repr=False)
    #: The suite file's entry the task comes from, for errors ("[[methods]] entry 2"; None: from the command line).
    entry: str | None = field(default=None, hash=False, compare=False, repr=False)
    #: {path: sha256} of the data files a bound task's data were loaded from, as they were then (no identity).
    data_files: dict[str, str] | None = field(default=None, hash=False, compare=False, repr=False)

    def bound(self, identity: dict, method_class: ShippedClass | None = None,
              data_files: dict[str, str] | None = None) -> Task:
        """This task tied to the data and code it will run on (and the files its data were loaded from)."""
        return Task(self.config, identity, method_class, self.entry, data_files)

    @property
    def bound_identity(self) -> dict:
        """The identity of a bound task (RuntimeError for one not bound yet)."""
        if self.identity is None:
            raise RuntimeError("a task gets its id once bound to its data: run benchmarks.preflight.prepare_tasks.")
        return self.identity

    @property
    def task_id(self) -> str:
        return task_id_of(self.config, self.bound_identity)

    @property
    def data_seed(self) -> int:
        """Shared by every method on the same dataset and replicate, so they see the same data."""
        return derive_seed("data", seeded_dataset(self.config["dataset"]), self.config["seed"])

    @property
    def method_seed(self) -> int:
        """Common random numbers: every method on the same dataset, protocol and replicate
        gets the same seed, so paired comparisons are fair and split-conformal methods
        with the same base forecaster share its fits (benchmarks/forecast_stage.py)."""
        c = self.config
        return derive_seed("method", seeded_dataset(c["dataset"]), c["protocol"], c["seed"])

    def label(self) -> str:
        c = self.config
        return (f"{c['dataset']['label']} / {c['method']['name']} {c['setting']} / seed {c['seed']} "
                f"/ alpha {c['alpha']:g}")


def builtin_suites() -> dict[str, Path]:
    """Suite name -> TOML path for the suites shipped in ``benchmarks/suites``."""
    folder = resources.files("pibench.benchmarks") / "suites"
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".toml")}


class SuiteError(ValueError):
    """Every problem of a suite file, one line each, with the file's name."""

    def __init__(self, path: Path, problems: list[str]):
        self.problems = problems
        if len(problems) == 1:
            super().__init__(f"suite {path}: {problems[0]}")
        else:
            head = f"suite {path} has {len(problems)} problems (the format: docs/guide/suites.md):"
            super().__init__(head + "".join(f"\n  - {p}" for p in problems))


def load_suite(name_or_path: str | os.PathLike | None, quick: bool = False) -> dict:
    """Read a suite by built-in name or file path, with its --quick overrides applied; a
    :class:`SuiteError` lists every problem of the file at once."""
    if name_or_path is None:
        name_or_path = DEFAULT_SUITE
    if not isinstance(name_or_path, (str, os.PathLike)) or not str(name_or_path).strip():
        raise ValueError(f"suite {name_or_path!r} is not a suite: give a built-in suite name "
                         f"({', '.join(sorted(builtin_suites()))}) or the path of a TOML suite file.")
    suites = builtin_suites()
    path = suites.get(str(name_or_path)) or Path(name_or_path)
    if not path.is_file():
        raise ValueError(
            f"unknown suite {str(name_or_path)!r}: not a built-in suite ({', '.join(sorted(suites))}) "
            f"nor an existing TOML file.{did_you_mean(str(name_or_path), suites)}"
        )
    try:
        with open(path, "rb") as fh:
            suite = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"suite file {path} is not valid TOML: {exc}. Fix that line (the format: "
                         "docs/guide/suites.md).") from None
    except UnicodeDecodeError:
        raise ValueError(f"suite file {path} is not text (not UTF-8): give a TOML suite file (the format: "
                         "docs/guide/suites.md) or a built-in suite name.") from None
    suite.setdefault("name", path.stem)
    problems = _schema_problems(suite)
    if not problems:
        problems = _method_dataset_problems(suite)
    if problems:
        raise SuiteError(path, problems)
    numbers = list(range(1, len(suite["methods"]) + 1))  # each method entry's, as the file counts them
    if quick:
        suite = _merge(suite, suite.get("quick", {}))
        skipped: dict[str, list[str]] = {}
        for key in ("datasets", "methods"):
            merged = [_merge(entry, entry.get("quick", {})) for entry in suite[key]]
            kept = [not entry.get("skip", False) for entry in merged]
            suite[key] = [entry for entry, keep in zip(merged, kept) if keep]
            if key == "methods":
                numbers = [number for number, keep in zip(numbers, kept) if keep]
            skipped[key] = [n for e in merged if e.get("skip", False) for n in (e["name"], e.get("label", e["name"]))]
        suite[SKIPPED_BY_QUICK] = skipped  # so a selection naming one is told why it is not there
    suite[ENTRY_NUMBERS] = numbers  # for errors, whichever entries --quick leaves out
    return suite


def has_quick_variant(suite: dict) -> bool:
    """Whether a suite (loaded without --quick) changes under --quick: a [quick] table or an entry's quick table."""
    return bool(suite.get("quick")) or any(entry.get("quick") for key in ("datasets", "methods")
                                           for entry in suite[key])


#: The suite key (set by load_suite, never in a file): the number in the file of each method entry, in order.
ENTRY_NUMBERS = "_method_entry_numbers"
#: The suite key (set by load_suite, never in a file) listing the entries --quick leaves out.
SKIPPED_BY_QUICK = "_skipped_by_quick"


def _check_not_skipped(suite: dict, kind: str, selected: list[str] | None) -> None:
    """ValueError if the selection names an entry of ``kind`` that --quick leaves out (it would be unknown, or
    run with default parameters instead of the suite's)."""
    present = {n for e in suite[kind] for n in (e["name"], e.get("label", e["name"]))}  # names select too
    for name in selected or []:
        if name in suite.get(SKIPPED_BY_QUICK, {}).get(kind, []) and name not in present:
            raise ValueError(f"the {kind[:-1]} entry {name!r} is left out of --quick (its quick = {{ skip = true }} "
                             "in the suite); run without --quick to run it.")


#: What each table of a suite file may hold, and the TOML type of each key.
_SUITE_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str, "description": str, "alpha": (int, float, list), "seeds": list, "protocol": dict, "quick": dict,
    "datasets": list, "methods": list, "device": str}
#: What the suite-level [quick] table may change (an entry changes by its own quick table).
_QUICK_SUITE_KEYS = {key: _SUITE_KEYS[key] for key in ("alpha", "seeds", "protocol", "device")}
_ENTRY_KEYS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "datasets": {"name": str, "label": str, "params": dict, "protocol": dict, "quick": dict, "optional": bool},
    "methods": {"name": str, "setting": str, "params": dict, "grid": dict, "protocol": dict, "datasets": list,
                "quick": dict},
}
_QUICK_ONLY: dict[str, type | tuple[type, ...]] = {"skip": bool}
_KIND_NAMES = {str: "string", dict: "table", list: "list", bool: "boolean (true or false)"}


def _table_problems(table: dict, allowed: dict, where: str) -> list[str]:
    problems = []
    for key, value in table.items():
        if key not in allowed:
            placed = (f" {key} is a key of the suite itself: TOML gives a key written under a [[...]] header to that "
                      "table, so write it above the first [[datasets]] or [[methods]]." if where.startswith("[[")
                      and key in _SUITE_KEYS else "")
            problems.append(f"{where}: unknown key {key!r}; allowed keys: {', '.join(allowed)}.{placed}")
        elif not isinstance(value, allowed[key]) or isinstance(value, bool) and allowed[key] is not bool:
            kind = _KIND_NAMES.get(allowed[key], "number") if isinstance(allowed[key], type) else (
                "number or a list of numbers" if key == "alpha" else "number")
            problems.append(f"{where}: {key} = {value!r} must be a {kind}.")
    return problems


def _checked(check, *args) -> list[str]:
    """[the ValueError message of ``check(*args)``], or [] if it passes."""
    try:
        check(*args)
    except ValueError as exc:
        return [str(exc)]
    return []


def _schema_problems(suite: dict) -> list[str]:
    """The suite's keys, types and names (format at the top of this module), every problem."""
    problems = _table_problems(suite, _SUITE_KEYS, "top level")
    quick = suite.get("quick", {})
    entry_kinds = {"methods", "datasets"}
    problems += _table_problems({k: v for k, v in quick.items() if k not in entry_kinds} if isinstance(quick, dict)
                                else {}, _QUICK_SUITE_KEYS, "[quick]")
    if isinstance(quick, dict) and entry_kinds & set(quick):  # they replaced the suite's entries, unchecked
        problems.append("[quick]: an entry changes under --quick by a quick = { ... } table of its own (quick = "
                        "{ params = { epochs = 20 } }, or { skip = true }), not by entries in [quick].")
    # a protocol that meets a series dataset is checked with its tasks (every problem of the run in one go);
    # the others here, so that none is dropped unread
    given = suite.get("datasets")
    series = any(isinstance(d, dict) and isinstance(d.get("name"), str) and not _is_set_dataset(d["name"])
                 for d in (given if isinstance(given, list) else []))
    for where, table in (("top level", suite), ("[quick]", quick if isinstance(quick, dict) else {})):
        problems += [] if series else _protocol_problems(table, where)
        if isinstance(table.get("seeds"), list):
            problems += [f"{where}: {p}" for p in _checked(check_seeds, table["seeds"])]
        if isinstance(table.get("alpha"), (int, float, list)) and not isinstance(table.get("alpha"), bool):
            problems += [f"{where}: {p}" for p in _checked(check_alphas, table["alpha"])]
        if isinstance(table.get("device"), str) and table["device"] not in DEVICE_CHOICES:
            problems.append(f"{where}: device = {table['device']!r} must be one of {', '.join(DEVICE_CHOICES)} (auto: "
                            "cuda where torch sees a GPU, else cpu).")
    for kind, allowed in _ENTRY_KEYS.items():
        entries = suite.get(kind)
        if not entries or not isinstance(entries, list):
            example = {"methods": '[[methods]] then name = "aci"', "datasets": '[[datasets]] then name = "ar"'}[kind]
            problems.append(f"needs at least one [[{kind}]] entry (e.g. {example} on the next line; `pibench list` "
                            f"lists them), even with --{kind}, which then picks among a suite's entries or adds "
                            "others.")
            continue
        for i, entry in enumerate(entries):
            where = f"[[{kind}]] entry {i + 1}"
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                problems.append(f"{where} needs a name = \"...\" (a registered {kind[:-1]}).")
                continue
            where = f"{where} ({entry['name']})"
            problems += _table_problems(entry, allowed, where)
            entry_quick = entry.get("quick", {})
            if isinstance(entry_quick, dict):
                problems += _table_problems(entry_quick, {**allowed, **_QUICK_ONLY}, f"{where} quick")
            check_name = get_method if kind == "methods" else check_dataset_name
            problems += [f"{where}: {p}" for p in _checked(check_name, entry["name"])]
            quick_table = entry_quick if isinstance(entry_quick, dict) else {}
            for table, part in ((entry, where), (quick_table, f"{where} quick")):
                if kind == "methods" and not series:
                    problems += _protocol_problems(table, part)
                if kind == "datasets" and "protocol" in table and _is_set_dataset(entry["name"]):
                    problems.append(f"{part}: {entry['name']} holds sets of sequences, which take no protocol (their "
                                    "train / calibration / test split is set by the dataset's params); remove "
                                    "protocol.")
                if kind == "methods":
                    problems += _params_and_grid_problems(table, part)
            if kind == "methods":
                for table in (entry, entry_quick if isinstance(entry_quick, dict) else {}):
                    keys = [*(table.get("params") or {}), *(table.get("grid") or {})]
                    problems += [f"{where}: {p}" for p in _checked(check_runner_set, entry["name"], keys)]
            if isinstance(entry.get("label"), str) and not entry["label"].strip():
                problems.append(f"{where}: label = {entry['label']!r} names nothing: give a label the tables can "
                                "show, or leave it out.")
            if kind == "datasets" and isinstance(entry.get("label", entry["name"]), str):
                label = entry.get("label", entry["name"])
                first = next((j for j, other in enumerate(entries[:i]) if isinstance(other, dict)
                              and other.get("label", other.get("name")) == label), None)
                if first is not None:
                    problems.append(f"{where} and entry {first + 1} ({entries[first]['name']}) are both labelled "
                                    f"{label!r} (an entry without a label is labelled by its name): the tables keep "
                                    "their rows apart by label, so give each [[datasets]] entry a label = \"...\" "
                                    "of its own.")
            grid = entry.get("grid", {})
            for key, values in (grid.items() if isinstance(grid, dict) else ()):
                if not isinstance(values, list) or not values:
                    problems.append(f"{where}: grid {key} = {values!r} must be a non-empty list.")
    return list(dict.fromkeys(problems))


def _protocol_problems(table: dict, where: str) -> list[str]:
    """The problems of a table's ``protocol`` (keys, types, kind, counts)."""
    protocol = table.get("protocol")
    if not isinstance(protocol, dict):
        return []  # a protocol of another type is the key check's
    return [f"{where}: {p}" for p in _checked(check_protocol, protocol)]


def _is_set_dataset(name: str) -> bool:
    try:
        return check_dataset_name(name).shape == "set"
    except ValueError:
        return False  # an unknown name is its own problem


def _params_and_grid_problems(entry: dict, where: str) -> list[str]:
    """A key in both params and grid (the grid's values would win unseen), a grid value listed twice, and datasets
    = [] (no task)."""
    params, grid = entry.get("params"), entry.get("grid")
    params, grid = (params if isinstance(params, dict) else {}), (grid if isinstance(grid, dict) else {})
    both = sorted(set(params) & set(grid))
    problems = [f"{where}: {key} is in both params ({params[key]!r}) and grid ({grid[key]!r}); keep it in one "
                "(a grid of one value is a fixed parameter)." for key in both]
    sizes = [len(v) for v in grid.values() if isinstance(v, list)]
    if isinstance(entry.get("setting"), str) and math.prod(sizes) > 1:
        example = _grid_points({"grid": grid})[0][1]
        problems.append(f"{where}: setting = {entry['setting']!r} names one setting, but its grid makes "
                        f"{math.prod(sizes)} (each labelled by its values, e.g. \"{example}\" without it); remove "
                        "setting, or split the grid into entries of one setting each.")
    if entry.get("datasets") == []:
        problems.append(f"{where}: datasets = [] runs the entry on no dataset; name its datasets, or leave the key "
                        "out to run it on every dataset.")
    for key, values in sorted(grid.items()):  # a repeat ran once, one setting fewer than the grid reads
        repeated = [v for i, v in enumerate(values) if v in values[:i]] if isinstance(values, list) else []
        if repeated:
            problems.append(f"{where}: grid {key} lists {repeated[0]!r} more than once; list each value once.")
    return problems


#: Method arguments the runner sets, and where a suite sets them instead.
RUNNER_SET = {
    "alpha": "the miscoverage level is the suite's: alpha = ... at the top of the suite file (a level or a list of "
             "levels), or --alpha",
    "random_state": "a method's seed is derived from the suite's seeds (seeds = [...] or --seeds)",
}


def check_runner_set(method: str, params) -> None:
    """ValueError if ``params`` (a method entry's params or grid keys) names an argument the runner sets."""
    reserved = [k for k in params if k in RUNNER_SET]
    if reserved:
        raise ValueError(f"method {method!r}: {reserved[0]} is set by the runner, not in params or grid "
                         f"({RUNNER_SET[reserved[0]]}); remove it from the method's entry.")


def _serves(chosen: list[str], name: str, label: str, labels: set[str]) -> bool:
    """Whether a method entry restricted to ``chosen`` runs on the dataset entry (``name``, ``label``): an item
    names the entry with that label, or, where no entry carries it as a label, every entry of that dataset
    (so ``"eeg"`` picks the unlabelled eeg entry, not one labelled ``"eeg_trials"``; ``"expar"`` picks every
    ``"expar window=k"``)."""
    return label in chosen or any(item == name and item not in labels for item in chosen)


def _method_dataset_problems(suite: dict) -> list[str]:
    """A method entry's ``datasets`` must be a list naming datasets (name or label) of the suite."""
    known = {d["name"] for d in suite["datasets"]} | {d.get("label", d["name"]) for d in suite["datasets"]}
    problems = []
    for m in suite["methods"]:
        quick = m.get("quick") if isinstance(m.get("quick"), dict) else {}
        for table, where in ((m, ""), (quick, " (its quick table)")):  # --quick's datasets too
            if "datasets" not in table:
                continue
            chosen = table["datasets"]
            if not isinstance(chosen, list) or not all(isinstance(x, str) for x in chosen):
                problems.append(f"method {m['name']!r}{where}: datasets must be a list of dataset names or labels, "
                                f"got {chosen!r}.")
                continue
            unknown = [x for x in chosen if x not in known]
            if unknown:
                problems.append(f"method {m['name']!r}{where} names datasets {unknown} that the suite does not have "
                                f"(names and labels: {sorted(known)}).")
    return problems


def check_alphas(alpha) -> list[float]:
    """The miscoverage level(s) as a list of floats in (0, 1), each once and each as the tables show it (6
    significant digits, float noise dropped): ``alpha`` a number or a list of numbers."""
    levels = alpha if isinstance(alpha, (list, tuple)) else [alpha]
    # a notebook's numpy scalars, as the numbers they print as (np.float32(0.1) is 0.1, not 0.10000000149)
    levels = [float(str(a)) if isinstance(a, np.floating) else int(a) if isinstance(a, np.integer) else a
              for a in levels]
    bad = [a for a in levels if isinstance(a, bool) or not isinstance(a, (int, float))]
    if bad:
        raise ValueError(f"alpha {bad[0]!r} is not a number; give levels such as 0.1 or [0.05, 0.1, 0.2] (--alpha "
                         "0.05 0.1 0.2).")
    if not levels:
        raise ValueError("no alpha given: give at least one level, e.g. alpha = 0.1.")
    # float noise dropped (1 - 0.9 is the level 0.1); a level needs no more digits than tables show it with
    levels = [float(f"{check_alpha(a):.12g}") for a in levels]
    fine = [a for a in levels if float(f"{a:.6g}") != a]
    if fine:
        raise ValueError(f"alpha {fine[0]!r} has more significant digits than the tables show (6: it reads "
                         f"{fine[0]:g} there, as a level of {float(f'{fine[0]:.6g}')!r} would); give {fine[0]:.6g}, "
                         "or a level that differs in its first 6 digits.")
    repeated = sorted({a for a in levels if levels.count(a) > 1})
    if repeated:
        raise ValueError(f"alpha {repeated[0]:g} is given {levels.count(repeated[0])} times; give each level once.")
    return levels


def _grid_points(entry: dict) -> list[tuple[dict, str]]:
    """(params, setting label) per point of the entry's grid."""
    grid = entry.get("grid", {})
    keys = sorted(grid)
    points = []
    for values in itertools.product(*(grid[k] for k in keys)) if keys else [()]:
        point = dict(zip(keys, values))
        label = entry.get("setting") or ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                                 for k, v in point.items())
        points.append(({**entry.get("params", {}), **point}, label or "default"))
    return points


def _check_command_line_dataset(name: str, params: dict) -> None:
    """A dataset given with --datasets has no parameters beyond csv:PATH:TARGET's: one that needs some
    (csv_sets' path, input_length, horizon) is an error naming the suite file to write."""
    missing = [p for p in required_params(name) if p not in params]
    if not missing:
        return
    if name == "csv":
        raise ValueError("--datasets csv needs a file and a column: write it as csv:PATH:TARGET, e.g. "
                         "csv:prices.csv:price.")
    example = ", ".join(f"{p} = {_EXAMPLE_VALUES.get(p, '...')}" for p in missing)
    raise ValueError(f"dataset {name!r} needs {', '.join(missing)}, which only a suite file can give: save the two "
                     f"lines `datasets = [{{ name = \"{name}\", params = {{ {example} }} }}]` and "
                     f"`methods = [{{ name = \"cfrnn\" }}]` as my_suite.toml and run "
                     "`pibench run --suite my_suite.toml` (the format: docs/guide/suites.md).")


_EXAMPLE_VALUES = {"path": '"sets.csv"', "input_length": "10", "horizon": "2", "target": '"y"'}


#: Replicate seeds seed numpy's RandomState (set splits) too, which takes 0 <= s < 2**32.
MAX_SEED = 2**32 - 1


def check_seeds(seeds) -> list[int]:
    """The replicate seeds as ints; ValueError (with the fix) for a repeat, a negative or a too large one."""
    seeds = [int(s) if isinstance(s, np.integer) else s for s in seeds]  # a notebook's np.int64 too
    bad = [s for s in seeds if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s <= MAX_SEED]
    if bad:
        raise ValueError(f"seed {bad[0]!r} is not a whole number from 0 to {MAX_SEED}; give seeds such as 0 1 2 "
                         "(--seeds or seeds = [...]).")
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise ValueError(f"seed {repeated[0]} is given {seeds.count(repeated[0])} times; each seed names one "
                         "replicate, so give each once.")
    if not seeds:
        raise ValueError("no seed given: give at least one (--seeds 0 or seeds = [0]).")
    return [int(s) for s in seeds]


def _without_repeats(tasks: list[Task]) -> tuple[list[Task], list[str]]:
    """The tasks, each configuration once (a suite that lists an entry, a dataset or a grid value twice
    would compute it twice), and one line per configuration given more than once."""
    seen: dict[str, int] = {}
    kept = []
    for task in tasks:
        key = stable_hash(task.config)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 1:
            kept.append(task)
    lines = {f"{t.config['dataset']['label']} / {t.config['method']['name']} {t.config['setting']} / alpha "
             f"{t.config['alpha']:g} is given {seen[stable_hash(t.config)]} times (a repeated entry or grid value, "
             "or the same configuration under two entries); it runs once": None
             for t in kept if seen[stable_hash(t.config)] > 1}
    return kept, list(lines)


def _check_rows_apart(tasks: list[Task]) -> None:
    """ValueError if two configurations would share a table row and seed (the same dataset label, method,
    setting and level: two entries of a method without settings of their own), where one would hide the other."""
    by_row: dict[tuple, list[dict]] = {}
    for task in tasks:
        c = task.config
        by_row.setdefault((c["dataset"]["label"], c["method"]["name"], c["setting"], c["alpha"], c["seed"]),
                          []).append(c)
    for (label, method, setting, _, _), configs in by_row.items():
        if len(configs) > 1:
            first, second = ({**c, "method": c["method"].get("params")} for c in configs[:2])
            differ = "; ".join(f"{key} {json.dumps(first.get(key), default=str)} vs "
                               f"{json.dumps(second.get(key), default=str)}"
                               for key in sorted(set(first) | set(second)) if first.get(key) != second.get(key))
            raise ValueError(
                f"method {method!r} has {len(configs)} entries labelled setting {setting!r} on dataset {label!r} "
                f"that differ ({differ}): a table row is one setting, so one would hide the others; give each "
                '[[methods]] entry a setting = "..." of its own.')


class TaskList(list):
    """The tasks of a suite (a list of :class:`Task`), and ``notes``: one line per method left out on
    datasets of a shape it does not serve."""

    def __init__(self, tasks=(), notes: list[str] | None = None):
        super().__init__(tasks)
        self.notes = list(notes or [])


def _check_names(values, what: str, example: str) -> list[str] | None:
    """``values`` as a list of names, or None when not given; ValueError (with the fix) for anything else."""
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise ValueError(f"{what}={values!r} must be a list of names, e.g. {what}=[{example}].")
    if not values:
        raise ValueError(f"{what}=[] selects nothing: leave it out (None) to keep the suite's, or name some, "
                         f"e.g. {what}=[{example}].")
    return list(values)


_SHAPE_WORDS = {"series": "series", "set": "sets of sequences", "any": "any data"}


def build_tasks(
    suite: dict,
    *,
    methods: list[str] | None = None,
    datasets: list[str] | None = None,
    seeds: list[int] | None = None,
    alpha: float | list[float] | None = None,
) -> TaskList:
    """Expand a suite into tasks, optionally keeping only some methods / datasets / seeds, at the
    suite's miscoverage level(s) or ``alpha`` (a level or a list: one task per level).

    ``datasets`` items are as in a method entry's ``datasets``: an entry's label picks that entry, a dataset
    name that no entry uses as a label every entry of that dataset. A method or dataset named on the command
    line but absent from the suite is added with default parameters; such a dataset gets the suite's protocol with
    the window set to its whole training span. A method meets only datasets of a
    shape it serves; the others are left out with a line in ``notes``.
    """
    methods = _check_names(methods, "methods", "'aci', 'autoreg'")
    datasets = _check_names(datasets, "datasets", "'ar', 'csv:prices.csv:price'")
    repeated = [f"{kind} {name!r} is named {names.count(name)} times in the selection; it runs once"
                for kind, names in (("method", methods or []), ("dataset", datasets or []))
                for name in dict.fromkeys(n for n in names if names.count(n) > 1)]
    methods = list(dict.fromkeys(methods)) if methods else methods
    datasets = list(dict.fromkeys(datasets)) if datasets else datasets
    _check_not_skipped(suite, "methods", methods)
    _check_not_skipped(suite, "datasets", datasets)
    if seeds is not None and (isinstance(seeds, (str, bytes)) or not isinstance(seeds, (list, tuple, range))):
        raise ValueError(f"seeds={seeds!r} must be a list of whole numbers, e.g. seeds=[0, 1, 2].")
    alphas = check_alphas(alpha if alpha is not None else suite.get("alpha", 0.1))
    method_entries = list(suite["methods"])
    if methods:
        for name in methods:
            get_method(name)  # validates the name
        known = {m["name"] for m in method_entries}
        method_entries = [m for m in method_entries if m["name"] in methods]
        method_entries += [{"name": n} for n in methods if n not in known]
    dataset_entries = list(suite["datasets"])
    if datasets:  # an entry's label picks that entry; a name no entry uses as a label, every entry of it
        labelled = {d.get("label", d["name"]) for d in dataset_entries}
        for text in datasets:
            if text not in labelled and text not in DATASETS and not text.startswith("csv:"):
                raise ValueError(f"unknown dataset {text!r}.{did_you_mean(text, sorted(labelled) + list(DATASETS))} "
                                 f"It is neither a label of suite {suite['name']!r} "
                                 f"({', '.join(map(repr, sorted(labelled)))}) nor a dataset: {', '.join(DATASETS)} "
                                 "(or csv:PATH:TARGET); `pibench list` describes them.")
        parsed = [(text, *parse_dataset_arg(text)) for text in datasets if text not in labelled]
        names = {d["name"] for d in dataset_entries}
        dataset_entries = [d for d in dataset_entries if d.get("label", d["name"]) in datasets
                           or d["name"] in {n for _, n, p in parsed if not p}]
        # a dataset the suite does not know is fitted on its whole training span
        added = [(text, n, p) for text, n, p in parsed if p or n not in names]
        for _text, n, p in added:
            _check_command_line_dataset(n, p)
        dataset_entries += [{"name": n, "params": p, "label": text, "protocol": {"window": None}}
                            for text, n, p in added]
    seeds = check_seeds(seeds if seeds is not None else suite.get("seeds", [0]))

    given = suite.get(ENTRY_NUMBERS) or []
    numbers = dict(zip(map(id, suite["methods"]), given)) if len(given) == len(suite["methods"]) else {}
    tasks = []
    notes: list[str] = list(repeated)
    notes += [f"alpha {level:g} is the share of misses a method aims at: it asks for {100 * (1 - level):g}% "
              f"intervals; for {100 * level:g}% intervals give alpha = {1 - level:g}"
              for level in alphas if level > 0.5]  # a coverage level given as alpha
    unserved: dict[str, list[str]] = {}
    labels = {d.get("label", d["name"]) for d in suite["datasets"]}  # before --datasets narrows them
    for d in dataset_entries:
        entry = check_dataset_name(d["name"])
        protocol = _merge(suite.get("protocol", {}), d.get("protocol", {}))
        if entry.shape == "set":
            protocol = {"kind": "set"}
        dataset = {"name": d["name"], "params": d.get("params", {}), "label": d.get("label", d["name"])}
        pinned = [k for k in ("seed", "replicate") if k in dataset["params"]]
        if pinned and len(seeds) > 1:
            notes.append(f"dataset {dataset['label']!r} pins {pinned[0]} = {dataset['params'][pinned[0]]}: its "
                         f"{len(seeds)} replicates (seeds {', '.join(map(str, seeds))}) share one dataset; only the "
                         "methods' seeds differ")
        if d.get("optional"):  # a missing file skips it (benchmarks/preflight.py)
            dataset["optional"] = True
        for m in method_entries:
            if "datasets" in m and not _serves(m["datasets"], d["name"], dataset["label"], labels):
                continue  # the entry is restricted to other datasets (e.g. per-dataset settings)
            method_cls = get_method(m["name"])
            if not method_cls.handles(entry.shape):
                unserved.setdefault(m["name"], [])
                if dataset["label"] not in unserved[m["name"]]:
                    unserved[m["name"]].append(dataset["label"])
                continue
            method_protocol = protocol if entry.shape == "set" else _merge(protocol, m.get("protocol", {}))
            for params, setting in _grid_points(m):
                for level in alphas:
                    for seed in seeds:
                        tasks.append(Task({
                            "suite": suite["name"], "dataset": dataset, "protocol": method_protocol,
                            "method": {"name": m["name"], "params": params}, "setting": setting,
                            "alpha": level, "seed": int(seed),
                        }, entry=f"[[methods]] entry {numbers[id(m)]}" if id(m) in numbers else None))
    notes += [f"method {name!r} left out on {', '.join(repr(x) for x in labels)}: it serves "
              f"{_SHAPE_WORDS[get_method(name).shape]} only" for name, labels in unserved.items()]
    running = {t.config["method"]["name"] for t in tasks}
    for name in dict.fromkeys(methods or []):  # asked for by name, yet in no task: its entries serve other datasets
        restricted = [m["datasets"] for m in method_entries if m["name"] == name and "datasets" in m]
        if name not in running and name not in unserved and restricted:
            notes.append(f"method {name!r} runs on no dataset of this selection: its suite entries serve "
                         f"{', '.join(map(repr, dict.fromkeys(x for r in restricted for x in r)))} only")
    if suite.get("protocol") and tasks and all(t.config["protocol"]["kind"] == "set" for t in tasks) and \
            all(_is_set_dataset(d["name"]) for d in suite["datasets"]):  # (not a series suite run on a set)
        notes.append(f"the suite's protocol {suite['protocol']} is for series (a CSV series added with --datasets, "
                     "say), and this run has sets of sequences only, split into train, calibration and test parts: "
                     "it applies to none (docs/guide/protocols.md)")
    tasks, repeated = _without_repeats(tasks)
    notes += repeated
    _check_rows_apart(tasks)
    if not tasks:
        why = "".join(f"{n}; " for n in notes)
        shape = (' (a method for sets of sequences says shape = "set" on its class, one for both shape = "any")'
                 if unserved else "")
        raise ValueError(
            f"the selection produced no task: {why}check --methods/--datasets against the suite (datasets: "
            f"{list(dict.fromkeys(d['name'] for d in suite['datasets']))}, methods: "
            f"{list(dict.fromkeys(m['name'] for m in suite['methods']))}) and that series methods meet series "
            f"datasets{shape} (available datasets: {', '.join(DATASETS)})."
        )
    return TaskList(tasks, notes)
