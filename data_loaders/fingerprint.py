"""Content fingerprints: what identifies the data a task actually sees.

A task's identity and every cache key include :func:`problem_fingerprint`, a
hash of the loaded problem (arrays, split point, step labels, group names), so a
regenerated file, a changed loader parameter or a changed generator gives new
tasks and new caches, never a stale reuse. :func:`source_files` adds the sha256
of the files the problem was read from, so a report can tell when the file on
disk no longer matches what a stored result was computed on.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePath

import numpy as np
import pandas as pd

from pibench.data_loaders.problems import Problem, SeriesProblem

CHUNK_SIZE = 1 << 16


def sha256_of(path: str | os.PathLike[str], chunk_size: int = CHUNK_SIZE) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def _add_array(h, name: str, values) -> None:
    a = np.ascontiguousarray(values)
    if a.dtype.kind in "OUS":  # labels: hash their text, not object pointers
        a = np.array([str(v) for v in a.ravel()]).astype("U")
    h.update(f"{name}:{a.dtype.str}:{a.shape};".encode())
    h.update(a.tobytes())


def problem_fingerprint(problem: Problem) -> str:
    """sha256 (hex, 20 characters) of everything a method or a metric can see of ``problem``."""
    h = hashlib.sha256()
    if isinstance(problem, SeriesProblem):
        h.update(f"series;test_start={problem.test_start};".encode())
        for name in ("y", "X", "time"):
            _add_array(h, name, getattr(problem, name))
        _add_array(h, "groups", np.array(problem.groups, dtype=str))
    else:
        h.update(b"set;")
        for split in ("train", "calibration", "test"):
            data = getattr(problem, split)
            _add_array(h, f"{split}.x", data.x)
            _add_array(h, f"{split}.y", data.y)
        if problem.test_ids is not None:  # only sources that name their sequences (older fingerprints stay)
            _add_array(h, "test_ids", np.array([str(i) for i in problem.test_ids]))
        if problem.test_clusters is not None:  # they decide the statistics' units
            _add_array(h, "test_clusters", np.array([str(c) for c in problem.test_clusters]))
    return h.hexdigest()[:20]


def metadata_digest(problem: Problem) -> str:
    """sha256 of the metadata of ``problem`` (the oracle's means, a loader's notes), the values of dicts, lists
    and tuples in order, arrays by their bytes, pandas objects by their names, labels and values (not their
    repr, which follows display options and elides middle rows), anything else by its repr: with
    :func:`problem_fingerprint`, everything of the problem a method can reach, which a worker compares after a
    task to catch a method that changed the problem it shares with the next."""
    h = hashlib.sha256()

    def add(value, path: str) -> None:
        if isinstance(value, np.ndarray):
            _add_array(h, path, value)
        elif isinstance(value, (pd.DataFrame, pd.Series, pd.Index)):
            names = {"name": getattr(value, "name", None), "index": list(getattr(value, "index", value).names)}
            h.update(f"{path}:{type(value).__name__}{value.shape};{names!r};".encode())
            if isinstance(value, pd.DataFrame):
                _add_array(h, f"{path}.columns", value.columns.to_numpy())
            try:
                cells = pd.util.hash_pandas_object(value, index=True)
            except TypeError:  # cells that cannot be hashed (lists, dicts, arrays): by their text
                cells = pd.util.hash_pandas_object(value.astype(str), index=True)
            _add_array(h, f"{path}.values", cells.to_numpy())
        elif isinstance(value, dict):
            h.update(f"{path}:dict{len(value)};".encode())
            for key in sorted(value, key=str):
                add(value[key], f"{path}.{key}")
        elif isinstance(value, (list, tuple)):
            h.update(f"{path}:{type(value).__name__}{len(value)};".encode())
            for i, item in enumerate(value):
                add(item, f"{path}[{i}]")
        else:
            h.update(f"{path}={value!r};".encode())

    add(problem.metadata, "metadata")
    return h.hexdigest()


def source_files(problem: Problem) -> dict[str, str]:
    """{absolute path: sha256} of the files ``problem`` was read from (none for generated data)."""
    source = problem.metadata.get("source")
    if not source:
        return {}
    path = Path(source).resolve()
    return {str(path): sha256_of(path)}


def seeded_dataset(dataset: dict) -> dict:
    """A dataset entry as its seeds see it: a file by its name, not by the folder it was reached through
    (``csv:prices.csv:price`` from its folder and ``csv:data/prices.csv:price`` from above give the same
    numbers; the file's content is in the task's identity all the same)."""
    path = dataset.get("params", {}).get("path")
    if not isinstance(path, str) or PurePath(path).name == path:
        return dataset
    name = PurePath(path).name
    seen = {**dataset, "params": {**dataset["params"], "path": name}}
    if isinstance(dataset.get("label"), str):
        seen["label"] = dataset["label"].replace(path, name)
    return seen
