"""The results store: one JSON record (+ one parquet of predictions) per task.

Files live in ``<results-dir>/tasks/`` named by the task id (a hash of the task
config). Both are written atomically (temporary file, then ``os.replace``), the
predictions first, so a record on disk always means a finished task: a killed
run resumes with nothing lost, and a rerun skips every task whose record says
``status = "ok"`` (failed tasks run again).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pandas as pd


def atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as fh:  # on disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


class ResultsStore:
    """Read and write task records and predictions under ``root``."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.tasks_dir = self.root / "tasks"

    def record_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.json"

    def predictions_path(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.parquet"

    @staticmethod
    def _read(path: Path) -> dict | None:
        """A record, or None if it is unreadable (then the task counts as not done and reruns)."""
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None

    def is_done(self, task_id: str) -> bool:
        record = self._read(self.record_path(task_id))
        return record is not None and record.get("status") == "ok"

    def write(self, task_id: str, record: dict, predictions: pd.DataFrame | None) -> None:
        self.tasks_dir.mkdir(parents=True, exist_ok=True)
        if predictions is not None:
            atomic_write(self.predictions_path(task_id), lambda p: predictions.to_parquet(p, index=False))
        text = json.dumps(record, indent=1, sort_keys=True, default=str)
        atomic_write(self.record_path(task_id), lambda p: Path(p).write_text(text))

    def records(self) -> list[dict]:
        """Every task record in the store (finished or failed)."""
        if not self.tasks_dir.is_dir():
            return []
        return [r for r in map(self._read, sorted(self.tasks_dir.glob("*.json"))) if r is not None]

    def predictions(self, task_id: str) -> pd.DataFrame:
        return pd.read_parquet(self.predictions_path(task_id))
