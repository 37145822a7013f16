"""Validate before working: every dataset, method and protocol of a run is checked before its first task.

:func:`prepare_tasks` loads each distinct dataset of the expanded suite once,
builds every method with its parameters, checks each protocol against its data
and each method against its fit window, and binds every task to the fingerprint
of its data and the code version (its identity, hence its id). Any problem
stops the run with one line per problem naming the dataset or method and the
fix; nothing is written. The same builders serve the tasks themselves.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import NamedTuple

from pibench.benchmarks.protocols import SeriesSchedule, check_protocol, series_schedule
from pibench.benchmarks.provenance import code_version
from pibench.benchmarks.shipping import ship
from pibench.benchmarks.suite import RUNNER_SET, Task, build_tasks, check_runner_set, has_quick_variant, load_suite
from pibench.data_loaders.fingerprint import metadata_digest, problem_fingerprint, sha256_of, source_files
from pibench.data_loaders.paths import DATASET_FILES, DataNotFoundError, data_path, unpublished_file_line
from pibench.data_loaders.problems import Problem, SeriesProblem, SetProblem
from pibench.data_loaders.registry import check_dataset_params, load_dataset
from pibench.data_loaders.validation import UnknownParameters, did_you_mean
from pibench.methods.base import IntervalMethod, MethodReplaced, NotApplicable, register
from pibench.methods.catalog import get_method
from pibench.methods.code_identity import (
    globals_named_by_type,
    method_code_identity,
    reload_if_stale,
    snapshots,
)
from pibench.reports.comparisons import MIN_UNITS


class SetupError(ValueError):
    """Problems found before any task ran: one line each, with the fix."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        head = "the run was not started (nothing was written):" if len(problems) > 1 else "the run was not started:"
        super().__init__(head + ("\n  " if len(problems) > 1 else " ") + "\n  ".join(problems))


def build_method(name: str, params: dict, alpha: float, seed: int, cls: type[IntervalMethod] | None = None
                 ) -> IntervalMethod:
    """Instantiate a registered method (or ``cls``, the class a task carries); unknown or runner-set
    parameters give a ValueError with the fix."""
    check_runner_set(name, params)
    cls = get_method(name) if cls is None else cls
    valid = cls._param_names()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        settable = [p for p in valid if p not in RUNNER_SET]  # alpha and random_state come from the suite
        raise UnknownParameters(f"method {name!r} has no parameter(s) {unknown}; it takes {settable}."
                                f"{did_you_mean(unknown[0], settable)}", unknown)
    arguments = {**params, "alpha": alpha, "random_state": seed}
    unbuilt = f"method {name!r} cannot be built: {cls.__name__}"
    try:
        signature = inspect.signature(cls)
    except ValueError:
        signature = None  # no signature to read: the call will tell
    if signature is not None:
        takes = signature.parameters
        keywords = any(p.kind is p.VAR_KEYWORD for p in takes.values())
        if not keywords and not {"alpha", "random_state"} <= set(takes):
            raise ValueError(f"{unbuilt}{signature} cannot take alpha and random_state, which the runner sets: "
                             "accept them and pass them on, def __init__(self, alpha=0.1, random_state=0, ...): "
                             "super().__init__(alpha=alpha, random_state=random_state).")
        try:
            signature.bind(**arguments)
        except TypeError as exc:  # a required parameter the suite does not give
            raise ValueError(f"{unbuilt}{signature}: {exc}; give it in the suite entry's params, or a default "
                             "in the constructor.") from None
    method = cls(**arguments)
    unstored = [p for p in valid if not hasattr(method, p)]
    if unstored:
        raise ValueError(f"{unbuilt} keeps no attribute {unstored[0]!r} for its parameter of that name; store each "
                         f"constructor argument under its own name (self.{unstored[0]} = {unstored[0]}): each "
                         "record lists the parameters (get_params) it was computed with.")
    return method


def task_method_class(task: Task) -> type[IntervalMethod]:
    """The class that computes the task: the one it was bound with (a method defined outside pibench),
    else pibench's own by name."""
    return task.method_class.cls if task.method_class is not None else get_method(task.config["method"]["name"])


def task_method(task: Task) -> IntervalMethod:
    c = task.config
    return build_method(c["method"]["name"], c["method"]["params"], c["alpha"], task.method_seed,
                        task_method_class(task))


def current_method_class(name: str, notes: dict[str, None]) -> type[IntervalMethod]:
    """The registered class of ``name``, imported again first if its source file has changed on disk since
    it was loaded (a line in ``notes`` says so): the code that runs is the code on disk, and the one the
    task's identity names. StaleSourceError (a ValueError) where it cannot be imported again."""
    cls = get_method(name)
    with warnings.catch_warnings():  # the class is registered again: the note below says so
        warnings.simplefilter("ignore", MethodReplaced)
        new = reload_if_stale(cls)
        if new is None:
            return cls
        if get_method(name) is not new:  # a module that does not register its class itself
            register(new)
    changed = ", ".join(s.display for s in snapshots(cls) if s.is_stale())
    notes[f"reloaded method {name!r}: {changed or 'its source'} changed on disk since it was imported"] = None
    return new


class LoadedData(NamedTuple):
    """A task's problem, its fingerprint, the {path: sha256} of the files it was read from, and the
    :func:`~pibench.data_loaders.fingerprint.metadata_digest` it was loaded with."""

    problem: Problem
    fingerprint: str
    files: dict[str, str]
    metadata: str


def _load_problem(name: str, params_json: str, seed: int, replicate: int, data_dir: str | None,
                  expected: str | None) -> LoadedData:
    problem = load_dataset(name, json.loads(params_json), seed=seed, replicate=replicate, data_dir=data_dir)
    return LoadedData(problem, problem_fingerprint(problem), source_files(problem), metadata_digest(problem))


#: Every live thread's problem cache, for :func:`clear_problem_caches` (a thread's goes with it).
_CACHES: weakref.WeakSet = weakref.WeakSet()
_CACHES_LOCK = threading.Lock()


class _ThreadCache(threading.local):
    """Each thread's own cache of the last few problems it loaded."""

    def __init__(self) -> None:
        self.load = functools.lru_cache(maxsize=4)(_load_problem)
        with _CACHES_LOCK:
            _CACHES.add(self.load)


_THREAD_CACHE = _ThreadCache()


def clear_problem_caches() -> None:
    """Forget every thread's loaded problems (files may have changed since they were read)."""
    with _CACHES_LOCK:
        caches = list(_CACHES)
    for cache in caches:
        cache.cache_clear()


def load_task_data(task: Task, data_dir: str | None, expected: str | None = None) -> LoadedData:
    """The task's dataset, cached per thread of a process: many tasks share one, one at a time (the tasks of a
    dask worker's threads each have their own, so a method that changes its data in place is caught in its own
    task, never in a concurrent one's).

    ``expected`` (the fingerprint a bound task was given) is part of the cache key,
    so a worker that outlives one run never serves another run the data it cached
    before the file changed; :func:`prepare_tasks` clears the caches of unbound loads.
    """
    d = task.config["dataset"]
    return _THREAD_CACHE.load(d["name"], json.dumps(d["params"], sort_keys=True), task.data_seed,
                              task.config["seed"], data_dir, expected)


def task_problem(task: Task, data_dir: str | None) -> LoadedData:
    """The data of a bound task, checked against the fingerprint it was bound to."""
    expected = task.bound_identity["data"]
    loaded = load_task_data(task, data_dir, expected)
    if loaded.fingerprint != expected:
        raise ValueError(f"the data of dataset {task.config['dataset']['label']!r} changed after the run was "
                         f"prepared (fingerprint {expected}, now {loaded.fingerprint}); rerun to "
                         "compute its tasks on the new data.")
    return loaded


#: How to change a problem's arrays without changing every task's: what a method that tried is told.
COPY_THE_DATA = ("the data a method is given are read-only, shared by the tasks a worker runs: copy what you change "
                 "(y = data.y.copy()); torch.as_tensor and torch.from_numpy share the array's memory, torch.tensor "
                 "copies it")


class DataChanged(ValueError):
    """A method changed the data it was given in place."""


def check_data_untouched(task: Task, loaded: LoadedData) -> None:
    """Raise :class:`DataChanged` if the problem ``task`` ran on no longer has the fingerprint and metadata
    digest it was loaded with: its method changed them in place, behind their read-only flag (a torch tensor
    sharing their memory, ``setflags(write=True)``, a metadata entry replaced). The thread's cached copy is
    dropped, so the tasks after it load the data again."""
    problem = loaded.problem
    if problem_fingerprint(problem) != loaded.fingerprint or metadata_digest(problem) != loaded.metadata:
        _THREAD_CACHE.load.cache_clear()
        raise DataChanged(f"method {task.config['method']['name']!r} changed the data it was given in place, so "
                          f"its numbers are not stored; {COPY_THE_DATA}.")


def _message(exc: Exception) -> str:
    text = str(exc).strip() or "(no message)"
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


class EntryProblem(ValueError):
    """A problem of a method entry's setting whatever the data (a parameter out of range): said once for it,
    not once per dataset."""


def _checked_method(task: Task, cls: type[IntervalMethod]) -> IntervalMethod:
    """The task's method (class ``cls``) built and its parameters checked: no data needed (EntryProblem)."""
    c = task.config
    try:
        method = build_method(c["method"]["name"], c["method"]["params"], c["alpha"], task.method_seed, cls)
        method.check_params()
    except NotApplicable:
        raise
    except Exception as exc:
        raise EntryProblem(" ".join(_every_parameter_problem(task, cls, exc))) from exc
    try:
        cls.check_calls("set" if c["protocol"].get("kind") == "set" else "series")
    except ValueError as exc:
        raise EntryProblem(f"method {c['method']['name']!r} cannot run: {exc}") from None
    return method


#: A parameter a problem's message names: "gamma=-1 must be ...", "aci: parameters gamma='x' must be ...; B=..."
_NAMED = re.compile(r"(?:^|; )(?:\w+: )?(?:parameters? )?(\w+)=")


def _every_parameter_problem(task: Task, cls: type[IntervalMethod], first: Exception) -> list[str]:
    """The first problem of a method entry's parameters and those behind it (a method's checks stop at the
    first; unknown names are said first): :func:`_each_problem`, the method built and checked again."""
    c = task.config

    def recheck(params: dict) -> None:
        build_method(c["method"]["name"], params, c["alpha"], task.method_seed, cls).check_params()

    return _each_problem(first, dict(c["method"]["params"]), recheck,
                         lambda message, params: {name for name in _NAMED.findall(message) if name in params})


def _each_problem(first: Exception, params: dict, recheck: Callable[[dict], None],
                  named_in: Callable[[str, dict], set[str]]) -> list[str]:
    """The message of ``first`` and of each problem behind it: the parameters a problem names (``named_in``,
    or an unknown name's) are dropped from ``params`` (set back to their defaults) and ``recheck`` run on the
    rest, until it passes, or a problem names none of them, names one set back (the default's problem, "set
    score = ... too", not the entry's) or was said already."""
    found: list[str] = []
    reset: set[str] = set()
    exc: Exception | None = first
    while exc is not None:
        message = _message(exc)
        if any(re.search(rf"\b{re.escape(name)}\s*=", message) for name in reset) or \
                any(message.split(": ", 1)[-1] in earlier for earlier in found):
            break
        found.append(message)
        named = set(exc.names) if isinstance(exc, UnknownParameters) else named_in(message, params)
        if not named:
            break
        reset |= named
        for name in named:
            params.pop(name, None)
        try:
            recheck(params)
            exc = None
        except NotApplicable:
            break
        except Exception as behind:
            exc = behind
    return found


def _check_task(task: Task, problem, cls: type[IntervalMethod], schedule: SeriesSchedule | None
                ) -> tuple[int, int, str | None]:
    """Raise ValueError if the task's method (class ``cls``) or parameters cannot run on ``problem`` with
    its protocol's ``schedule`` (None for sets); else (test steps, fits) of the schedule ((0, 0) for sets), and the
    method's note on the window (:meth:`~pibench.methods.base.IntervalMethod.window_note`)."""
    method = _checked_method(task, cls)
    method.prepare(problem)
    if schedule is not None:
        method.check_window(schedule.window, problem.n_groups)
        return schedule.stop - problem.test_start, len(schedule.fit_steps), method.window_note(schedule.window)
    return 0, 0, None


def _schedules(tasks: list[Task], problem: SeriesProblem, classes: dict[str, type[IntervalMethod]],
               problems: dict[str, None], not_applicable: dict[str, None]) -> dict[str, SeriesSchedule]:
    """{protocol JSON: its schedule on ``problem``} of the protocols of ``tasks`` (of one dataset, their keys
    and types checked); a protocol the series cannot hold (a window longer than its training span) is one
    problem naming every method entry that uses it, not one per method, and their methods are checked (one
    that cannot serve the dataset anyway, the oracle of a file, is left out as it would be)."""
    users: dict[str, list[Task]] = {}
    for task in tasks:
        users.setdefault(json.dumps(task.config["protocol"], sort_keys=True), []).append(task)
    schedules = {}
    for text, some in users.items():
        protocol = some[0].config["protocol"]
        try:
            schedules[text] = series_schedule(problem, **protocol)
        except Exception as exc:
            serving = []
            for task in some:
                try:
                    _checked_method(task, classes[task.config["method"]["name"]]).prepare(problem)
                except NotApplicable as why:
                    not_applicable[_left_out(task, why)] = None
                    continue
                except Exception as other:  # its own problem, and the window's once that is mended
                    problems[_about_task(task, other)] = None
                serving.append(task)
            if serving:
                problems[f"protocol {protocol} ({_who(serving)}): {_message(exc)}"] = None
    return schedules


def _left_out(task: Task, why: NotApplicable) -> str:
    """The note of a method that cannot serve a task's dataset."""
    return f"method {task.config['method']['name']!r} left out on dataset {task.config['dataset']['label']!r}: " \
           f"{_message(why)}"


def _protocol_notes(protocol: dict, steps: int, problem: SeriesProblem) -> list[str]:
    """What a valid protocol does other than it may seem to: a refit interval it ignores, test steps it clips."""
    lines = []
    kind, every, asked = protocol.get("kind", "online"), protocol.get("retrain_every"), protocol.get("test_steps")
    if kind == "offline" and every not in (None, 1):
        lines.append(f"the offline protocol fits once on the training span: its retrain_every = {every} has no "
                     "effect (use kind = \"online\" to refit)")
    if kind == "online" and every is not None and steps > 1 and every >= steps:
        lines.append(f"retrain_every = {every} is at least its {steps} test steps: one fit serves the whole test "
                     "span, as offline")
    available = problem.n_steps - problem.test_start
    if asked is not None and asked > available:
        lines.append(f"test_steps = {asked} is more than its {available} test steps: all {available} are used")
    points = steps * problem.n_groups  # fesp's 24 hours a step
    if points < FEW_TEST_POINTS:
        lines.append(f"only {points} test point(s): a coverage moves {100 / points:.3g} points a miss, and its CI "
                     "and tests say little (a year of days has 365)")
    return lines


#: A series task beyond these many test steps or refits gets a line about its cost before it runs.
LARGE_STEPS, LARGE_FITS = 100_000, 2_000
LONG_RUN_NOTE = "expect a long run"
#: A series protocol with fewer test points (steps times series) gets a line: what a coverage over so few can say.
FEW_TEST_POINTS = 50
#: A sets dataset with fewer test sequences gets a line: its joint coverage moves in steps of 2 points or more.
FEW_TEST_SEQUENCES = 50


def _published_file_hint(task: Task, data_dir: str | None) -> str:
    """Why a dataset's file may have failed to load: " (...) is not the published file ..." when it differs
    from its pinned checksum (a truncated download, an edited copy), else ""."""
    name = task.config["dataset"]["name"]
    if name not in DATASET_FILES:
        return ""
    path = data_path(name, data_dir)
    try:
        line = unpublished_file_line(name, {str(path): sha256_of(path)}, data_dir=data_dir) if path.is_file() \
            else None
    except OSError:
        return ""
    return f" ({line})" if line else ""


def _about_dataset(label: str, exc: Exception) -> str:
    """The message of a dataset's problem, led once by its label (and the dataset's name where a loader's
    message named that instead: "dataset 'strid200' (csv_sets): ...", not "dataset 'strid200': dataset
    'csv_sets': ...")."""
    message = _message(exc)
    named = re.match(r"dataset '([^']+)'(:? )", message)
    if named and named.group(1) == label:
        return message
    if named:
        return f"dataset {label!r} ({named.group(1)}){named.group(2)}{message[named.end():]}"
    return f"dataset {label!r}: {message}"


#: Datasets whose loaders say every problem of their parameters at once (set back, a default's would be blamed).
GATHERED = ("csv", "csv_sets")


def _problems_behind(task: Task, data_dir: str | None, first: Exception) -> list[str]:
    """The problems of a dataset entry's parameters behind its first (a loader's checks stop at theirs), each
    without its "dataset ...: " lead: :func:`_each_problem`, the data loaded again (not for the CSV loaders,
    which say all of their own at once)."""
    d = task.config["dataset"]
    if d["name"] in GATHERED:
        return []

    def recheck(params: dict) -> None:
        load_dataset(d["name"], params, seed=task.data_seed, replicate=task.config["seed"], data_dir=data_dir)

    found = _each_problem(first, dict(d["params"]), recheck, lambda message, params: {
        name for name in params if re.search(rf"\b{re.escape(name)}\s*=", message)})
    return [re.sub(r"^dataset '[^']+'(?: \([^)]*\))?: ", "", message) for message in found[1:]]


def _about_task(task: Task, exc: Exception) -> str:
    """A task's problem, with the suite entry it comes from; one that names its method already (a parameter
    the method lacks) is the same line for every setting and dataset of the entry, and one of the setting
    whatever the data (:class:`EntryProblem`) for every dataset."""
    c, message = task.config, _message(exc)
    message = message.removeprefix(f"{c['method']['name']}: ")  # (the entry's label names it: "aci: parameter ...")
    named = f"method {c['method']['name']!r} "
    if message.startswith(named):
        return f"{named}({task.entry}) {message[len(named):]}" if task.entry else message
    where = f"{c['setting']}; {task.entry}" if task.entry else c["setting"]
    on = "" if isinstance(exc, EntryProblem) else f" on dataset {c['dataset']['label']!r}"
    return f"method {c['method']['name']!r} ({where}){on}: {message}"


def _check_methods(tasks: list[Task], classes: dict[str, type[IntervalMethod]], problems: dict[str, None]) -> None:
    """:func:`_checked_method` for tasks whose data did not load or whose protocol is wrong, problems noted."""
    for task in tasks:
        cls = classes.get(task.config["method"]["name"])
        if cls is None:
            continue  # its problem is noted
        try:
            _checked_method(task, cls)
        except Exception as exc:
            problems[_about_task(task, exc)] = None


def _protocol_problems(tasks: list[Task], problems: dict[str, None]) -> set[str]:
    """The series protocols of ``tasks`` (JSON) whose keys, types or kind are wrong, each problem noted once."""
    wrong = set()
    users: dict[str, list[Task]] = {}
    for t in tasks:
        if t.config["protocol"].get("kind") != "set":
            users.setdefault(json.dumps(t.config["protocol"], sort_keys=True), []).append(t)
    for text, some in users.items():
        protocol = some[0].config["protocol"]
        try:
            check_protocol(protocol)
        except Exception as exc:
            problems[f"protocol {protocol} ({_who(some)}): {_message(exc)}"] = None
            wrong.add(text)
    return wrong


def _static_problems(tasks: list[Task]) -> dict[str, None]:
    """The problems of ``tasks`` that need no data: each dataset entry's parameters (names, types, presence),
    each series protocol, each method setting's parameters (types, ranges), as the registered classes check
    them (nothing is imported again)."""
    problems: dict[str, None] = {}
    classes = {}
    for name in dict.fromkeys(t.config["method"]["name"] for t in tasks):
        try:
            classes[name] = get_method(name)
        except Exception as exc:
            problems[f"method {name!r}: {_message(exc)}"] = None
    _protocol_problems(tasks, problems)
    for task in {(t.config["dataset"]["label"], json.dumps(t.config["dataset"]["params"], sort_keys=True)): t
                 for t in tasks}.values():
        d = task.config["dataset"]
        try:
            check_dataset_params(d["name"], d["params"])
        except ValueError as exc:
            problems[_about_dataset(d["label"], exc)] = None
    for task in {(t.config["method"]["name"], t.config["setting"], t.config["alpha"]): t for t in tasks}.values():
        cls = classes.get(task.config["method"]["name"])
        try:
            if cls is not None:
                _checked_method(task, cls)
        except NotApplicable:
            continue  # left out with a note by that variant's own run
        except Exception as exc:
            problems[_about_task(task, exc)] = None
    return problems


#: What build_tasks says of a selection that one variant of a suite does not hold (not a problem of the file).
SELECTION_ONLY = ("is left out of --quick", "the selection produced no task")


def other_variant_problems(suite, quick: bool, methods: list[str] | None = None,
                           datasets: list[str] | None = None) -> list[str]:
    """The problems of a suite file's other variant (its --quick variant on a full run, the full one under
    --quick) that need no data, beyond those of the variant run, for the entries of the methods and datasets
    selected (names or labels; default all): a wrong value in a quick table is said on the first run of the
    file, not at the first --quick run."""
    if not has_quick_variant(load_suite(suite)):
        return []

    def problems_of(variant_quick: bool) -> dict[str, None]:
        try:
            return _static_problems(build_tasks(load_suite(suite, quick=variant_quick), methods=methods,
                                                datasets=datasets))
        except ValueError as exc:  # of the selection (an entry that variant leaves out, no task): not the file's
            message = _message(exc)
            return {} if any(part in message for part in SELECTION_ONLY) else {message: None}

    other, known = problems_of(not quick), problems_of(quick)
    name = "the full variant (without --quick)" if quick else "the --quick variant"
    return [f"{name}: {line}" for line in other if line not in known]


def _who(tasks: list[Task]) -> str:
    """Which suite entries and datasets meet in ``tasks`` (a protocol is the suite's, merged with its dataset
    entry's and its method entry's)."""
    methods = list(dict.fromkeys(f"method {t.config['method']['name']!r}" + (f" of {t.entry}" if t.entry else "")
                                 for t in tasks))
    datasets = list(dict.fromkeys(repr(t.config["dataset"]["label"]) for t in tasks))
    return f"{', '.join(methods)} on dataset{'s' if len(datasets) > 1 else ''} {', '.join(datasets)}"


def _few_units_note(label: str, problem: SetProblem) -> list[str]:
    """A line for a sets dataset with fewer than :data:`FEW_TEST_SEQUENCES` test sequences, or test groups
    where its sequences come in groups (the statistics' units)."""
    n = problem.test.n
    groups = len(set(problem.test_clusters or ()))
    few_groups = 0 < groups < FEW_TEST_SEQUENCES
    if n >= FEW_TEST_SEQUENCES and not few_groups:
        return []
    units = groups or n
    says = ([f"its joint coverage moves in steps of {100 / n:.3g} points"] if n < FEW_TEST_SEQUENCES else []) + (
        [f"its intervals, tests and MCS count its {groups} group(s) as units"] if few_groups else [])
    if units < MIN_UNITS:
        says.append("no Diebold-Mariano test or MCS can compare methods on them")
    where = f"{n} test sequence(s)" + (f" in {groups} group(s)" if groups else "")
    return [f"dataset {label!r} has {where}: {', '.join(says[:-1]) + ' and ' if len(says) > 1 else ''}{says[-1]}; "
            f"they say little (COVID-19 has 80 sequences); give more {'groups' if groups else 'sequences'} or a "
            "larger test share"]


def _same_split_notes(fingerprints: dict[str, list[str]]) -> list[str]:
    """A line for each sets dataset (label -> the fingerprints of its seeds' data) whose seeds all gave one
    dataset: a ``split_column`` fixes its split (a seed pinned in the suite is noted with the suite)."""
    return [f"dataset {label!r}: its {len(prints)} seeds give the same sequences and split (its split is fixed, "
            "e.g. by a split_column): only the methods' seeds differ"
            for label, prints in fingerprints.items() if len(prints) > 1 and len(set(prints)) == 1]


class Prepared(NamedTuple):
    """The runnable tasks, bound; and one line per thing left out or done on the way: an optional dataset
    whose file is absent, a method that cannot serve a dataset, a plugin imported again."""

    tasks: list[Task]
    notes: list[str]


def _method_classes(tasks: list[Task], problems: dict[str, None], notes: dict[str, None]
                    ) -> dict[str, type[IntervalMethod]]:
    """name -> the class each method of ``tasks`` runs (:func:`current_method_class`), problems noted."""
    classes = {}
    for name in dict.fromkeys(t.config["method"]["name"] for t in tasks):
        try:
            classes[name] = current_method_class(name, notes)
        except Exception as exc:  # a plugin that cannot be loaded or reloaded is a problem of the run, not a crash
            problems[f"method {name!r}: {_message(exc)}"] = None
    return classes


def prepare_tasks(tasks: list[Task], data_dir: str | None = None) -> Prepared:
    """The tasks bound to their data fingerprints, the code version and the code of the method classes
    they will run; SetupError lists every problem.

    Each distinct dataset is loaded once (tasks are visited grouped by dataset);
    the order of the tasks is kept. A dataset marked ``optional`` in its suite
    whose file is not there (MIMIC-III, which users bring) is left out with a
    line in ``notes``, not an error, and so is a method that raises
    :class:`~pibench.methods.base.NotApplicable` for a dataset (the oracle where
    the law is unknown); any other problem is an error, and so is a run left with
    nothing to do.
    """
    clear_problem_caches()  # files may have changed since this process last loaded them
    problems: dict[str, None] = {}  # ordered and unique
    notes: dict[str, None] = dict.fromkeys(getattr(tasks, "notes", []))
    not_applicable: dict[str, None] = {}
    classes = _method_classes(tasks, problems, notes)
    wrong_protocols = _protocol_problems(tasks, problems)
    shipped = {name: ship(cls) for name, cls in classes.items()}  # one pickle per class, shared by its tasks
    # each class's code named once, before any task's checks run its code (which may fill what the name reads)
    plugins = {name: method_code_identity(cls) for name, cls in classes.items()}
    for name, method_class in classes.items():
        unread = globals_named_by_type(method_class)
        if unread:
            notes[f"method {name!r} reads {', '.join(f'{g} (a {kind})' for g, kind in sorted(unread.items()))}, whose "
                  "contents pibench cannot read: an edit of them is no new code, and a run would serve the numbers "
                  "stored before it; give such settings as the method's parameters, or as numbers, strings, lists, "
                  "dicts, arrays or DataFrames, which it reads"] = None
    bound: dict[int, Task] = {}
    code = code_version()
    set_prints: dict[str, list[str]] = {}  # a sets dataset's label -> the fingerprints of its seeds' data
    by_dataset: dict[tuple, list[int]] = {}
    for i, task in enumerate(tasks):
        d = task.config["dataset"]
        by_dataset.setdefault((d["name"], json.dumps(d["params"], sort_keys=True), task.data_seed), []).append(i)
    for indices in by_dataset.values():
        label = tasks[indices[0]].config["dataset"]["label"]
        try:
            problem, fingerprint, files, _ = load_task_data(tasks[indices[0]], data_dir)
        except Exception as exc:
            if isinstance(exc, DataNotFoundError) and tasks[indices[0]].config["dataset"].get("optional"):
                notes[f"skipped dataset {label!r} (optional): {str(exc).split('. ')[0]}."] = None
                continue
            problems[_about_dataset(label, exc) + _published_file_hint(tasks[indices[0]], data_dir)
                     + "".join(f" {more}" for more in _problems_behind(tasks[indices[0]], data_dir, exc))] = None
            _check_methods([tasks[i] for i in indices], classes, problems)  # every problem of the run at once
            continue
        unpublished = unpublished_file_line(tasks[indices[0]].config["dataset"]["name"], files,
                                            ": its numbers are not on the paper's data", data_dir)
        if unpublished:
            notes[f"dataset {label!r}: {unpublished}"] = None
        for note in problem.metadata.get("notes", []):  # what a loader found worth saying (a CSV's gaps)
            notes[f"dataset {label!r}: {note}"] = None
        if isinstance(problem, SetProblem):
            notes.update(dict.fromkeys(_few_units_note(label, problem)))
            if not {"seed", "replicate"} & set(tasks[indices[0]].config["dataset"]["params"]):
                set_prints.setdefault(label, []).append(fingerprint)
        runnable = [tasks[i] for i in indices if tasks[i].config["method"]["name"] in classes]  # others noted
        wrong = [t for t in runnable if json.dumps(t.config["protocol"], sort_keys=True) in wrong_protocols]
        _check_methods(wrong, classes, problems)
        schedules = _schedules([t for t in runnable if t not in wrong], problem, classes, problems, not_applicable) \
            if isinstance(problem, SeriesProblem) else {}
        for i in indices:
            c = tasks[i].config
            cls = classes.get(c["method"]["name"])
            protocol = json.dumps(c["protocol"], sort_keys=True)
            if cls is None or (isinstance(problem, SeriesProblem) and protocol not in schedules):
                continue  # its problem is noted (a wrong protocol, one the series cannot hold, its class)
            task = tasks[i]
            try:
                steps, fits, short = _check_task(task, problem, cls, schedules.get(protocol))
            except NotApplicable as exc:
                not_applicable[_left_out(task, exc)] = None
                continue
            except Exception as exc:
                problems[_about_task(task, exc)] = None
                continue
            if isinstance(problem, SeriesProblem):
                notes.update(dict.fromkeys(f"dataset {label!r}: {line}"
                                           for line in _protocol_notes(c["protocol"], steps, problem)))
            if short:
                notes[f"dataset {label!r}: {short}"] = None
            if steps > LARGE_STEPS or fits > LARGE_FITS:
                notes[f"dataset {label!r}: {steps:,} online test steps and {fits:,} refits per task (the default "
                      "suite's are 2,000 and 20); " + LONG_RUN_NOTE + ", or shorten the test span, raise retrain_every "
                      "or use the suite's --quick variant"] = None
            identity: dict[str, object] = {"data": fingerprint, "code": code}
            plugin = plugins[c["method"]["name"]]
            if plugin:
                identity["plugin"] = plugin
            bound[i] = task.bound(identity, shipped[c["method"]["name"]], files)
    notes.update(dict.fromkeys(_same_split_notes(set_prints)))
    if not problems and not bound and not_applicable:
        problems.update(dict.fromkeys(f"nothing left to run: {line}" for line in not_applicable))
    if problems:
        raise SetupError(list(problems))
    notes.update(not_applicable)
    return Prepared([bound[i] for i in range(len(tasks)) if i in bound], list(notes))
