"""Declarative suites (TOML in ``benchmarks/suites/``) expanded into tasks.

A suite file::

    name = "default"
    description = "..."
    alpha = 0.1
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
    datasets = ["ar"]                 # optional: only these dataset names or labels
    quick = { params = { epochs = 20 } }

    [quick]                           # suite-level overrides for --quick
    seeds = [0]

An entry's ``quick`` table may set ``skip = true`` to leave it out of --quick. A
dataset entry with ``optional = true`` is skipped, with one line, when its data
file is not there (a dataset users bring themselves, such as MIMIC-III).

Tasks = datasets x methods x grid points x seeds, each a plain JSON-able config.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pibench.data_loaders.registry import DATASETS, check_dataset_name, parse_dataset_arg, required_params
from pibench.data_loaders.validation import check_alpha
from pibench.methods.catalog import get_method

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


def derive_seed(*parts) -> int:
    """A 31-bit seed from a stable hash of ``parts``."""
    return int(stable_hash(list(parts))[:8], 16) & 0x7FFFFFFF


@dataclass(frozen=True)
class Task:
    """One (dataset, method, params, seed) run.

    ``config`` is everything the suite says about it; ``identity`` is what the
    content says: the fingerprint of the loaded data and the code version
    (:func:`pibench.benchmarks.preflight.prepare_tasks` fills it in). The task id hashes
    both, so a changed file or changed code means a new task, never a stale one.
    """

    config: dict = field(hash=False)
    identity: dict | None = field(default=None, hash=False)

    def bound(self, **identity) -> Task:
        """This task tied to the data and code it will run on."""
        return Task(self.config, identity)

    @property
    def task_id(self) -> str:
        if self.identity is None:
            raise RuntimeError("a task gets its id once bound to its data: run benchmarks.preflight.prepare_tasks.")
        return stable_hash({"config": self.config, **self.identity})[:20]

    @property
    def data_seed(self) -> int:
        """Shared by every method on the same dataset and replicate, so they see the same data."""
        return derive_seed("data", self.config["dataset"], self.config["seed"])

    @property
    def method_seed(self) -> int:
        """Common random numbers: every method on the same dataset, protocol and replicate
        gets the same seed, so paired comparisons are fair and split-conformal methods
        with the same base forecaster share its fits (benchmarks/forecast_stage.py)."""
        c = self.config
        return derive_seed("method", c["dataset"], c["protocol"], c["seed"])

    def label(self) -> str:
        c = self.config
        return f"{c['dataset']['label']} / {c['method']['name']} {c['setting']} / seed {c['seed']}"


def builtin_suites() -> dict[str, Path]:
    """Suite name -> TOML path for the suites shipped in ``benchmarks/suites``."""
    folder = resources.files("pibench.benchmarks") / "suites"
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".toml")}


def load_suite(name_or_path: str | None, quick: bool = False) -> dict:
    """Read a suite by built-in name or file path, with its --quick overrides applied."""
    name_or_path = name_or_path or DEFAULT_SUITE
    suites = builtin_suites()
    path = suites.get(name_or_path) or Path(name_or_path)
    if not path.is_file():
        raise ValueError(
            f"unknown suite {name_or_path!r}: not a built-in suite ({', '.join(sorted(suites))}) "
            "nor an existing TOML file."
        )
    try:
        with open(path, "rb") as fh:
            suite = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"suite file {path} is not valid TOML: {exc}. Fix that line (format at the top of "
                         "benchmarks/suite.py).") from None
    except UnicodeDecodeError:
        raise ValueError(f"suite file {path} is not text (not UTF-8): give a TOML suite file (format at the top "
                         "of benchmarks/suite.py) or a built-in suite name.") from None
    suite.setdefault("name", path.stem)
    _check_schema(suite, path)
    _check_method_datasets(suite, path)
    if quick:
        suite = _merge(suite, suite.get("quick", {}))
        for key in ("datasets", "methods"):
            merged = [_merge(entry, entry.get("quick", {})) for entry in suite[key]]
            suite[key] = [entry for entry in merged if not entry.get("skip", False)]
    return suite


#: What each table of a suite file may hold, and the TOML type of each key.
_SUITE_KEYS = {"name": str, "description": str, "alpha": (int, float), "seeds": list, "protocol": dict,
               "quick": dict, "datasets": list, "methods": list, "device": str}
_ENTRY_KEYS = {
    "datasets": {"name": str, "label": str, "params": dict, "protocol": dict, "quick": dict, "optional": bool},
    "methods": {"name": str, "setting": str, "params": dict, "grid": dict, "protocol": dict, "datasets": list,
                "quick": dict},
}
_QUICK_ONLY = {"skip": bool}


def _check_table(table: dict, allowed: dict, where: str) -> None:
    for key, value in table.items():
        if key not in allowed:
            raise ValueError(f"{where}: unknown key {key!r}; allowed keys: {', '.join(allowed)}.")
        if not isinstance(value, allowed[key]) or isinstance(value, bool) and allowed[key] is not bool:
            kind = allowed[key].__name__ if isinstance(allowed[key], type) else "number"
            raise ValueError(f"{where}: {key} = {value!r} must be a {kind.replace('dict', 'table')}.")


def _check_schema(suite: dict, path: Path) -> None:
    """The suite file's keys and types (format at the top of this module); errors name the file and entry."""
    _check_table(suite, _SUITE_KEYS, f"suite {path}")
    _check_table(suite.get("quick", {}), _SUITE_KEYS, f"suite {path} [quick]")
    for table in (suite, suite.get("quick", {})):
        if "seeds" in table:
            try:
                check_seeds(table["seeds"])
            except ValueError as exc:
                raise ValueError(f"suite {path}: {exc}") from None
    for kind, allowed in _ENTRY_KEYS.items():
        entries = suite.get(kind)
        if not entries:
            raise ValueError(f"suite {path}: needs at least one [[{kind}]] entry.")
        for i, entry in enumerate(entries):
            where = f"suite {path}: [[{kind}]] entry {i + 1}"
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise ValueError(f"{where} needs a name = \"...\" (a registered {kind[:-1]}).")
            _check_table(entry, allowed, f"{where} ({entry['name']})")
            _check_table(entry.get("quick", {}), {**allowed, **_QUICK_ONLY}, f"{where} ({entry['name']}) quick")
            if kind == "methods":
                for table in (entry, entry.get("quick", {})):
                    try:
                        check_runner_set(entry["name"], [*table.get("params", {}), *table.get("grid", {})])
                    except ValueError as exc:
                        raise ValueError(f"{where}: {exc}") from None
            for key, values in entry.get("grid", {}).items():
                if not isinstance(values, list) or not values:
                    raise ValueError(f"{where} ({entry['name']}): grid {key} = {values!r} must be a non-empty list.")


#: Method arguments the runner sets, and where a suite sets them instead.
RUNNER_SET = {
    "alpha": "the miscoverage level is the suite's: alpha = ... at the top of the suite file",
    "random_state": "a method's seed is derived from the suite's seeds (seeds = [...] or --seeds)",
}


def check_runner_set(method: str, params) -> None:
    """ValueError if ``params`` (a method entry's params or grid keys) names an argument the runner sets."""
    reserved = [k for k in params if k in RUNNER_SET]
    if reserved:
        raise ValueError(f"method {method!r}: {reserved[0]} is set by the runner, not in params or grid "
                         f"({RUNNER_SET[reserved[0]]}); remove it from the method's entry.")


def _check_method_datasets(suite: dict, path: Path) -> None:
    """A method entry's ``datasets`` must be a list naming datasets (name or label) of the suite."""
    known = {d["name"] for d in suite["datasets"]} | {d.get("label", d["name"]) for d in suite["datasets"]}
    for m in suite["methods"]:
        if "datasets" not in m:
            continue
        chosen = m["datasets"]
        if not isinstance(chosen, list) or not all(isinstance(x, str) for x in chosen):
            raise ValueError(f"suite {path}: method {m['name']!r}: datasets must be a list of dataset names "
                             f"or labels, got {chosen!r}.")
        unknown = [x for x in chosen if x not in known]
        if unknown:
            raise ValueError(f"suite {path}: method {m['name']!r} names datasets {unknown} that the suite does "
                             f"not have (names and labels: {sorted(known)}).")


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
                     "`pibench run --suite my_suite.toml` (format at the top of benchmarks/suite.py).")


_EXAMPLE_VALUES = {"path": '"sets.csv"', "input_length": "10", "horizon": "2", "target": '"y"'}


#: Replicate seeds seed numpy's RandomState (set splits) too, which takes 0 <= s < 2**32.
MAX_SEED = 2**32 - 1


def check_seeds(seeds) -> list[int]:
    """The replicate seeds as ints; ValueError (with the fix) for a repeat, a negative or a too large one."""
    seeds = list(seeds)
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


def build_tasks(
    suite: dict,
    *,
    methods: list[str] | None = None,
    datasets: list[str] | None = None,
    seeds: list[int] | None = None,
) -> list[Task]:
    """Expand a suite into tasks, optionally keeping only some methods / datasets / seeds.

    A method or dataset named on the command line but absent from the suite is
    added with default parameters; such a dataset gets the suite's protocol with
    the window set to its whole training span.
    """
    alpha = check_alpha(suite.get("alpha", 0.1))
    method_entries = list(suite["methods"])
    if methods:
        for name in methods:
            get_method(name)  # validates the name
        known = {m["name"] for m in method_entries}
        method_entries = [m for m in method_entries if m["name"] in methods]
        method_entries += [{"name": n} for n in methods if n not in known]
    dataset_entries = list(suite["datasets"])
    if datasets:
        parsed = [(text, *parse_dataset_arg(text)) for text in datasets]
        names = {d["name"] for d in dataset_entries}
        dataset_entries = [d for d in dataset_entries if d["name"] in {n for _, n, p in parsed if not p}]
        # a dataset the suite does not know is fitted on its whole training span
        added = [(text, n, p) for text, n, p in parsed if p or n not in names]
        for text, n, p in added:
            _check_command_line_dataset(n, p)
        dataset_entries += [{"name": n, "params": p, "label": text, "protocol": {"window": None}}
                            for text, n, p in added]
    seeds = check_seeds(seeds if seeds is not None else suite.get("seeds", [0]))

    tasks = []
    for d in dataset_entries:
        entry = check_dataset_name(d["name"])
        protocol = _merge(suite.get("protocol", {}), d.get("protocol", {}))
        if entry.shape == "set":
            protocol = {"kind": "set"}
        dataset = {"name": d["name"], "params": d.get("params", {}), "label": d.get("label", d["name"])}
        if d.get("optional"):  # a missing file skips it (benchmarks/preflight.py)
            dataset["optional"] = True
        for m in method_entries:
            method_cls = get_method(m["name"])
            if not method_cls.handles(entry.shape):
                continue  # a series method has nothing to do on a set dataset, and vice versa
            if "datasets" in m and not {d["name"], dataset["label"]} & set(m["datasets"]):
                continue  # the entry is restricted to other datasets (e.g. per-dataset settings)
            method_protocol = protocol if entry.shape == "set" else _merge(protocol, m.get("protocol", {}))
            for params, setting in _grid_points(m):
                for seed in seeds:
                    tasks.append(Task({
                        "suite": suite["name"], "dataset": dataset, "protocol": method_protocol,
                        "method": {"name": m["name"], "params": params}, "setting": setting,
                        "alpha": alpha, "seed": int(seed),
                    }))
    if not tasks:
        raise ValueError(
            "the selection produced no task: check --methods/--datasets against the suite "
            f"(datasets: {[d['name'] for d in suite['datasets']]}, methods: {[m['name'] for m in suite['methods']]}) "
            f"and that series methods meet series datasets (available datasets: {', '.join(DATASETS)})."
        )
    return tasks
