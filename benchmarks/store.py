"""The results store: one JSON record (+ one parquet of predictions) per task, checked on every read.

Files live in ``<results-dir>/tasks/`` named by the task id (a hash of the task
config, its data fingerprint and the code version). Both are written atomically
(temporary file, then ``os.replace``), the predictions first, and the record
carries the sha256 of the predictions file. A task counts as done only if its
record parses, is a JSON object with the fields a finished record has, its id
matches its file name, and its predictions file exists with that checksum;
and every metric the record states equals its recomputation from those predictions
(:func:`pibench.reports.metrics.metrics_mismatch`: a record edited by hand is left out as
tampered). The record also carries the sha256 of its own fields (``fields_sha256``), so that a field
the predictions cannot give (a diagnostic such as the lags an order selection kept, a flag such as
``joint_guarantee``, a time) edited by hand is told too; a record written before that field existed
is read without it (so the checks tell edits and damage, not a forger who removes or recomputes the
checksums). Anything else is recomputed by the next run, and
:meth:`ResultsStore.scan` says why each such file was left out.

One ``pibench run`` at a time per results dir: :meth:`ResultsStore.lock` takes an
exclusive lock on ``<results-dir>/.lock`` (released by the OS if the process dies)
and a second run refuses with a message naming the holder.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from pibench.benchmarks.provenance import code_version
from pibench.benchmarks.suite import Task, stable_hash, task_id_of
from pibench.reports.metrics import Mismatch, metrics_mismatch

#: Fields every record has; an ok record also has the metrics and its predictions' checksum.
RECORD_FIELDS = ("task_id", "status", "config", "identity", "dataset", "method", "setting", "seed")
OK_FIELDS = ("coverage", "mean_length", "n_test", "predictions_sha256")
ERROR_FIELDS = ("error",)
#: The checksum of a record's other fields, as written (:func:`_fields_digest`).
FIELDS_SHA256 = "fields_sha256"


def atomic_write(path: Path, write) -> None:
    """Write ``path`` through ``write(temporary path)`` and a rename, so a reader sees the whole file or
    none. The temporary file is created with mode 0o666 and the process's umask, as any file the user
    writes (group-readable by default), where mkstemp would make it 0o600."""
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"could not create a temporary file beside {path}")
    try:
        write(str(tmp))
        with open(tmp, "rb") as fh:  # on disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


class ResultsDirLost(OSError):
    """The results dir vanished or was replaced while a run wrote into it."""


class ChangedSinceRead(ValueError):
    """A task's predictions file changed (or went) after its record was read and checked."""


@dataclass(frozen=True)
class Skipped:
    """A file of the store left out of the results, and why."""

    path: Path
    reason: str


def check_results_dir(root: str | os.PathLike, *, for_writing: bool = True) -> Path:
    """The results dir as a Path; ValueError (with the fix) if it cannot hold results. Creates nothing.

    For writing, every folder a run writes into (the dir, ``tasks/``, ``cache/``) must be
    writable where it exists, so a run never computes what it cannot store. (The messages name the folder
    as both the command line and Python give it: --results-dir, results_dir=.)
    """
    if not isinstance(root, (str, os.PathLike)):
        raise ValueError(f"results dir {root!r} is not a folder path; give one, e.g. --results-dir results "
                         "(results_dir='results' in Python).")
    if not str(root).strip():
        raise ValueError("the results dir is empty; give a folder, e.g. --results-dir results (results_dir='results' "
                         "in Python).")
    root = Path(root)
    if root.is_symlink() and not root.exists():
        raise ValueError(f"results dir {root} is a link to {os.readlink(root)}, which does not exist; create the "
                         "folder it points to, or give another results dir.")
    if root.exists() and not root.is_dir():
        raise ValueError(f"results dir {root} is a file, not a folder; give a folder"
                         f"{' (it is created if missing)' if for_writing else ' that holds pibench results'}.")
    if not for_writing:
        return root
    for folder in (root / "tasks", root / "cache"):
        if folder.exists() and not writable(folder):
            raise ValueError(f"results dir {root}: no permission to write in {folder} (or it is not a folder); make "
                             "it a writable folder, or give another results dir.")
    existing = next((p for p in [root, *root.parents] if p.exists()), None)
    if existing is not None and not writable(existing):
        raise ValueError(f"results dir {root}: no permission to write in {existing}; give a folder you can write to.")
    return root


def writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder``: tried for real (permissions, read-only mounts, root alike)."""
    if not folder.is_dir():
        return False
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".pibench-probe-"):
            return True
    except OSError:
        return False


def _plugin_identity_or_none(record: dict) -> dict | None:
    """A record's plugin identity ({} for pibench's own methods), None where it is not a dict of texts (a hand-edited
    file): what names a command only reads it."""
    identity = record.get("identity") or {}
    plugin = identity.get("plugin") or {} if isinstance(identity, dict) else None
    if not isinstance(plugin, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in plugin.items()):
        return None
    return plugin


class ResultsStore:
    """Read and write task records and predictions under ``root``."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.tasks_dir = self.root / "tasks"

    @property
    def statistics_cache(self) -> Path:
        """Where the statistics derived from each record's predictions are cached
        (:mod:`pibench.reports.statistics`)."""
        return self.root / "cache" / "stats"

    def record_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.json"

    def predictions_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.parquet"

    @contextmanager
    def lock(self):
        """Hold the results dir for one run; ValueError if another process holds it."""
        check_results_dir(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / ".lock"
        with open(path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                raise self._in_use_error(fh.read()) from None
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()}, started {datetime.now(UTC).isoformat(timespec='seconds')}")
            fh.flush()
            try:
                yield self
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def check_free(self) -> None:
        """The ValueError :meth:`lock` would raise, now: a second run is refused before its preparation
        (which may take a while), not after it."""
        if self.in_use():
            try:
                holder = (self.root / ".lock").read_text()
            except OSError:
                holder = ""
            raise self._in_use_error(holder)

    def _in_use_error(self, holder: str) -> ValueError:
        who = holder.strip() or "another process"
        return ValueError(f"results dir {self.root} is in use by another pibench run ({who}); wait for it to "
                          "finish, or give another --results-dir.")

    def in_use(self) -> bool:
        """Whether a run holds the results dir now (:meth:`lock`); False where there is no lock file to ask."""
        path = self.root / ".lock"
        try:
            with open(path) as fh:
                try:
                    fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(fh, fcntl.LOCK_UN)
        except OSError:
            return False
        return False

    # -- reading, with the checks that decide whether a task is done ------------
    def _load(self, path: Path) -> tuple[dict | None, str | None]:
        """(record, None) if ``path`` holds a complete record, else (None, why not)."""
        if path.exists() and not path.is_file():  # a FIFO or device would block a read, a folder fail it
            return None, "not a regular file"
        try:
            record = json.loads(path.read_text())
        except FileNotFoundError:
            return None, "no record"
        except (OSError, ValueError) as exc:
            return None, f"unreadable record ({type(exc).__name__}: {str(exc)[:80]})"
        if not isinstance(record, dict):
            return None, f"the record is a JSON {type(record).__name__}, not an object"
        # read before the fields shown are filled in; told last, after the checks that say what changed
        edited = FIELDS_SHA256 in record and record[FIELDS_SHA256] != _fields_digest(record)
        required = RECORD_FIELDS + (OK_FIELDS if record.get("status") == "ok" else ERROR_FIELDS)
        missing = [k for k in required if k not in record]
        if missing:
            return None, f"incomplete record (no {', '.join(missing)})"
        if record["task_id"] != path.stem:
            return None, f"the record is of task {record['task_id']}, not {path.stem}"
        tampered = _identity_mismatch(record)
        if tampered:
            return None, f"tampered: {tampered}"
        record.update(_shown_fields(record))  # what the tables show comes from the verified config
        if record["status"] == "ok":
            predictions = self.predictions_path(path.stem)
            if not predictions.is_file():
                return None, "its predictions file is missing"
            data = predictions.read_bytes()
            if _sha256(data) != record["predictions_sha256"]:
                return None, "its predictions file does not match the checksum in the record (truncated or changed)"
            try:
                mismatch = metrics_mismatch(record, pd.read_parquet(io.BytesIO(data)))
            except Exception as exc:  # an unreadable parquet with a matching checksum: written so, never trusted
                mismatch = Mismatch("tampered", f"unreadable predictions ({type(exc).__name__})")
            if mismatch:
                return None, _mismatch_reason(record, mismatch)
        if edited:
            return None, (f"tampered: a field was edited after the run wrote the record (its {FIELDS_SHA256} does "
                          "not match its fields)")
        return record, None

    def folder_id(self) -> tuple[int, int] | None:
        """(device, inode) of the results dir, None if it is gone: the same folder keeps its id."""
        try:
            stat = self.root.stat()
        except OSError:
            return None
        return stat.st_dev, stat.st_ino

    def check_kept(self, folder_id: tuple[int, int] | None, written: list[str]) -> None:
        """ResultsDirLost if the results dir is not the folder of ``folder_id`` any more, or a record of
        ``written`` (task ids this run wrote) is gone."""
        gone = [task_id for task_id in written if not self.record_path(task_id).is_file()]
        if self.folder_id() != folder_id or gone:
            raise ResultsDirLost(f"results dir {self.root} vanished or was replaced during the run ({len(gone)} of "
                                 f"the {len(written)} record(s) it wrote are gone); its tables would be partial. "
                                 "Run again into a folder nothing else deletes")

    def is_done(self, task_id: str) -> bool:
        """True iff the task has a complete, checked record with status ok."""
        return self.why_not_done(task_id) is None

    def why_not_done(self, task_id: str) -> str | None:
        """None if the task is done, else why not ('no record', a failed run, a damaged file)."""
        record, why = self._load(self.record_path(task_id))
        if record is not None and record["status"] != "ok":
            return "its previous run failed"
        return why

    def scan(self) -> tuple[list[dict], list[Skipped]]:
        """Every complete record (finished or failed), and the files left out with the reason."""
        if not self.tasks_dir.is_dir():
            return [], []
        records, skipped = [], []
        for path in sorted(self.tasks_dir.glob("*.json")):
            record, why = self._load(path)
            if record is None:
                skipped.append(Skipped(path, why or "unreadable"))
            else:
                records.append(record)
        return records, skipped

    def _unchecked(self) -> Iterator[dict]:
        """Every record file that parses as a JSON object with a config object, unchecked: for what only says
        why or names a command (:meth:`identities_by_config`, :meth:`configs_by_row`, :meth:`stored_suites`),
        never a result."""
        for path in sorted(self.tasks_dir.glob("*.json")) if self.tasks_dir.is_dir() else []:
            if not path.is_file():  # a FIFO would block the read
                continue
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and isinstance(record.get("config"), dict):
                yield record

    def identities_by_config(self) -> dict[str, list[tuple[str, str, dict]]]:
        """stable hash of a record's config -> [(started_at, task_id, identity)]: enough to say why a task with
        a new identity runs again."""
        found: dict[str, list[tuple[str, str, dict]]] = {}
        for record in self._unchecked():
            try:
                entry = (str(record.get("started_at") or ""), str(record["task_id"]), dict(record["identity"]))
                found.setdefault(stable_hash(record["config"]), []).append(entry)
            except (KeyError, TypeError, ValueError):
                continue
        return found

    def configs_by_row(self) -> dict[tuple, list[tuple[str, dict]]]:
        """(suite, dataset label, method, setting, alpha, seed) -> [(started_at, config)]: enough to say which
        configuration a task replaces."""
        found: dict[tuple, list[tuple[str, dict]]] = {}
        for record in self._unchecked():
            try:
                found.setdefault(row_of(record["config"]), []).append((str(record.get("started_at") or ""),
                                                                        record["config"]))
            except (KeyError, TypeError):
                continue
        return found

    def stored_suites(self) -> list[str]:
        """The suite names the record files here give, sorted: only to name the command that would fill the
        store again."""
        return sorted({r["config"]["suite"] for r in self._unchecked() if isinstance(r["config"].get("suite"), str)})

    def naming_records(self, suite: str) -> list[dict]:
        """The record files of ``suite`` that name a method, a dataset and a level, unchecked: only to name the
        command that runs their tasks again (:func:`pibench.reports.selection.rerun_command`)."""
        return [r for r in self._unchecked() if r["config"].get("suite") == suite and isinstance(r.get("method"), str)
                and isinstance(r.get("dataset"), str) and isinstance(r.get("alpha"), (int, float))
                and _plugin_identity_or_none(r) is not None]

    def records(self) -> list[dict]:
        """Every complete record in the store (finished or failed)."""
        return self.scan()[0]

    @property
    def requested_path(self) -> Path:
        return self.root / "requested.json"

    def mark_requested(self, task_ids: list[str]) -> None:
        """Note that a run asked for ``task_ids`` now (run or found done): the tables then show the
        configuration the latest run asked for, not a newer record of another (:mod:`pibench.reports.selection`)."""
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        marks = {**self.requested(), **dict.fromkeys(task_ids, now)}
        text = json.dumps(marks, indent=0, sort_keys=True)
        atomic_write(self.requested_path, lambda p: Path(p).write_text(text))

    def requested(self) -> dict[str, str]:
        """task id -> when a run last asked for it; empty if never or unreadable. It only orders the verified
        records of one table row (which configuration is the latest asked for), never a number."""
        try:
            marks = json.loads(self.requested_path.read_text())
        except (OSError, ValueError):
            return {}
        if not isinstance(marks, dict):
            return {}
        return {str(k): v for k, v in marks.items() if isinstance(v, str)}

    def refresh_data_files(self, task_id: str, loaded: dict[str, str]) -> list[str]:
        """For a done task, whose id re-derives from its data as this run loaded them from the files ``loaded``
        ({path: sha256} at load): where its record names other files or checksums (a column it does not use
        edited since, or another copy of the same data), the record takes ``loaded``, so that the tables keep it
        (:func:`pibench.reports.selection.select_current` leaves out a record whose file changed); returns the
        files of ``loaded`` that differ from the record's."""
        path = self.record_path(task_id)
        record = json.loads(path.read_text())
        before = record.get("data_files") or {}
        changed = [name for name, sha in loaded.items() if before.get(name) != sha]
        if changed:
            self._write_record(task_id, {**record, "data_files": dict(loaded)})
        return changed

    def predictions(self, task_id: str, sha256: str | None = None) -> pd.DataFrame:
        """A task's stored predictions; with ``sha256`` (the checksum of the record read), a
        :class:`ChangedSinceRead` error where the file is no longer the one that record checked."""
        path = self.predictions_path(task_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            if sha256 is None:
                raise
            data = b""
        if sha256 is not None and _sha256(data) != sha256:
            raise ChangedSinceRead(f"{path}: the predictions of task {task_id} are {'gone' if not data else 'changed'} "
                                   "since its record was read (their checksum is not the record's); read the results "
                                   "again (pibench.load_results, or rerun the command) for what is stored now.")
        return pd.read_parquet(io.BytesIO(data))

    def reader(self, records: list[dict]) -> Callable[[str], pd.DataFrame]:
        """A reader of the predictions of ``records`` (task id -> frame) that checks each file is still the one
        its record checked (:meth:`predictions`): results read earlier never serve a file changed since."""
        sums = {r["task_id"]: r["predictions_sha256"] for r in records if r.get("status") == "ok"}
        return lambda task_id: self.predictions(task_id, sums[task_id])

    # -- writing ------------------------------------------------------------------
    def write(self, task_id: str, record: dict, predictions: pd.DataFrame | None) -> None:
        """Predictions first, then the record with their checksum, each atomically."""
        self.tasks_dir.mkdir(parents=True, exist_ok=True)
        record = dict(record)
        if predictions is not None:
            buffer = io.BytesIO()
            predictions.to_parquet(buffer, index=False)
            data = buffer.getvalue()
            atomic_write(self.predictions_path(task_id), lambda p: Path(p).write_bytes(data))
            record["predictions_sha256"] = _sha256(data)
        self._write_record(task_id, record)

    def _write_record(self, task_id: str, record: dict) -> None:
        """The record as JSON, with the checksum of its fields as they read back (:func:`_fields_digest`)."""
        plain = json.loads(json.dumps({k: v for k, v in record.items() if k != FIELDS_SHA256}, default=str))
        text = json.dumps({**plain, FIELDS_SHA256: _fields_digest(plain)}, indent=1, sort_keys=True)
        atomic_write(self.record_path(task_id), lambda p: Path(p).write_text(text))


def row_of(config: dict) -> tuple:
    """A configuration's table row and seed: (suite, dataset label, method, setting, alpha, seed)."""
    return (config.get("suite"), config["dataset"]["label"], config["method"]["name"], config.get("setting"),
            config.get("alpha"), config.get("seed"))


def _shown_fields(record: dict) -> dict:
    """The fields the tables show, as the record's (verified) config and identity say: labels, level, seeds."""
    config, identity = record["config"], record["identity"]
    task = Task(config, identity)
    return {"suite": config.get("suite"), "dataset": config["dataset"]["label"], "method": config["method"]["name"],
            "setting": config.get("setting"), "seed": config.get("seed"), "alpha": config.get("alpha"),
            "data_fingerprint": identity.get("data"), "data_seed": task.data_seed, "method_seed": task.method_seed}


def _identity_mismatch(record: dict) -> str | None:
    """Why a record's id or the fields its tables show disagree with the config and identity it stores,
    else None: its id must re-derive from them (so an edited config, setting or code is a new task, never
    this one), and its labels must be the config's."""
    config, identity = record["config"], record["identity"]
    if not isinstance(config, dict) or not isinstance(identity, dict):
        return "its config or identity is not a JSON object"
    try:
        derived = task_id_of(config, identity)
    except (TypeError, ValueError) as exc:
        return f"its config and identity give no id ({type(exc).__name__})"
    if derived != record["task_id"]:
        return f"its id does not re-derive from its config and identity (they give {derived})"
    dataset, method = config.get("dataset"), config.get("method")
    if not isinstance(dataset, dict) or not isinstance(method, dict) or "label" not in dataset or "name" not in method:
        return "its config names no dataset label or method"
    try:
        shown = _shown_fields(record)
    except (KeyError, TypeError, ValueError) as exc:
        return f"its config gives no seeds ({type(exc).__name__})"
    if record["status"] == "ok":
        shown["code_version"] = identity.get("code")
    for field, value in shown.items():
        if field in record and record[field] != value:
            return f"its {field} {record[field]!r} is not its config's {value!r}"
    return None


def _mismatch_reason(record: dict, mismatch: Mismatch) -> str:
    """Why a record whose metrics disagree with its predictions is left out: one of other pibench code may
    hold another definition of a metric or a hand edit (outdated or edited: its task runs again under this
    code's id), one of this code was edited."""
    written_by = record["identity"].get("code")
    if mismatch.this_codes_reading and written_by != code_version():
        return (f"outdated or edited: written by pibench code {written_by}, and {mismatch.detail}: another "
                "definition of the metric, or an edit; a run with this code computes it again")
    return f"{mismatch.kind}: its metrics disagree with its predictions ({mismatch.detail})"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fields_digest(record: dict) -> str:
    """The sha256 of a record's fields but :data:`FIELDS_SHA256`, as read from its JSON (keys sorted)."""
    body = {k: v for k, v in record.items() if k != FIELDS_SHA256}
    return _sha256(json.dumps(body, sort_keys=True, default=str).encode())
