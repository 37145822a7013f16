"""Which stored records the tables show: one per task key, never a stale one, never two mixed.

A results dir keeps every record it was given: the same suite entry run on a
regenerated file, or by changed code, has a new task id and a record beside the
old one. The tables show, for each key (suite, dataset, method, setting, seed),
one record: those of the current code first, then finished before failed, then
the newest. Records whose data file on disk no longer has the checksum they were
computed on are left out. Everything left out is returned with the reason.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

KEY = ("suite", "dataset", "method", "setting", "seed")


@dataclass(frozen=True)
class LeftOut:
    task_id: str
    reason: str


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _changed_file(record: dict, checksums: dict[str, str | None]) -> str | None:
    """The first data file of ``record`` whose content on disk differs from when it ran (missing files can't tell)."""
    for path, sha in (record.get("data_files") or {}).items():
        if path not in checksums:
            checksums[path] = _sha256(Path(path)) if Path(path).is_file() else None
        if checksums[path] is not None and checksums[path] != sha:
            return path
    return None


def select_current(records: list[dict], code_version: str) -> tuple[list[dict], list[LeftOut]]:
    """(the records the tables show, the ones left out with why); see the module docstring."""
    checksums: dict[str, str | None] = {}
    left_out, candidates = [], {}
    for record in records:
        changed = _changed_file(record, checksums)
        if changed:
            left_out.append(LeftOut(record["task_id"], f"its data file {changed} has changed since it ran"))
            continue
        candidates.setdefault(tuple(record.get(k) for k in KEY), []).append(record)
    chosen = []
    for group in candidates.values():
        group.sort(key=lambda r: (r["identity"].get("code") == code_version, r["status"] == "ok",
                                  r.get("started_at") or ""), reverse=True)
        winner = group[0]
        chosen.append(winner)
        for other in group[1:]:
            why = ("other code" if other["identity"].get("code") != winner["identity"].get("code")
                   else "other data" if other["identity"].get("data") != winner["identity"].get("data")
                   else "an earlier run")
            left_out.append(LeftOut(other["task_id"], f"superseded by task {winner['task_id']} of the same suite "
                                                      f"entry and seed ({why})"))
    return chosen, left_out
