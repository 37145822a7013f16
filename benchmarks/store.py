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

    def is_done(self, task_id: str) -> bool:
        path = self.record_path(task_id)
        if not path.is_file():
            return False
        return json.loads(path.read_text()).get("status") == "ok"

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
        return [json.loads(p.read_text()) for p in sorted(self.tasks_dir.glob("*.json"))]

    def predictions(self, task_id: str) -> pd.DataFrame:
        return pd.read_parquet(self.predictions_path(task_id))
