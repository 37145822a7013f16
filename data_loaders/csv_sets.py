"""Bring-your-own sets of sequences: a long table (sequence id, step, value), CSV or parquet.

Each sequence is its rows ordered by step. :func:`csv_sets_problem` keeps the last
``input_length + horizon`` values of every sequence (x the first
``input_length``, y the last ``horizon``) and splits the sequences at random
(``RandomState(replicate)``) into train / calibration / test.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from data_loaders.problems import SetProblem


def read_long_sequences(path: str | os.PathLike, *, id_column: str = "id", step_column: str = "step",
                        value_column: str = "value") -> tuple[np.ndarray, list[np.ndarray]]:
    """(ids, [values ordered by step, one array per id]) from a long CSV or parquet file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"sequence file {path} does not exist; give the path of a CSV or parquet file.")
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    wanted = [id_column, step_column, value_column]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: no column(s) {missing}; the file has {list(frame.columns)} (give the column "
                         "names with id_column / step_column / value_column).")
    values = pd.to_numeric(frame[value_column], errors="coerce")
    bad = ~np.isfinite(values.to_numpy(float))
    if bad.any():
        raise ValueError(f"{path}: {int(bad.sum())} row(s) have a missing or non-numeric {value_column!r} (first "
                         f"rows {np.flatnonzero(bad)[:5].tolist()}); clean or drop them.")
    frame = frame.assign(**{value_column: values})
    if frame.duplicated([id_column, step_column]).any():
        first = frame[frame.duplicated([id_column, step_column])].iloc[0]
        raise ValueError(f"{path}: sequence {str(first[id_column])!r} has step {first[step_column]} twice; one row "
                         "per (id, step).")
    frame = frame.sort_values([id_column, step_column], kind="stable")
    groups = frame.groupby(id_column, sort=True)[value_column]
    return np.asarray(list(groups.groups)), [g.to_numpy(float) for _, g in groups]


def split_by_replicate(n: int, replicate: int, calibration_fraction: float, test_fraction: float):
    """(train, calibration, test) index arrays of a ``RandomState(replicate)`` permutation of n."""
    if not (0 < calibration_fraction < 1 and 0 < test_fraction < 1 and calibration_fraction + test_fraction < 1):
        raise ValueError(f"calibration_fraction={calibration_fraction} and test_fraction={test_fraction} must be "
                         "in (0, 1) and leave a training part.")
    perm = np.random.RandomState(int(replicate)).permutation(n)
    n_cal, n_test = int(round(calibration_fraction * n)), int(round(test_fraction * n))
    if min(n_cal, n_test, n - n_cal - n_test) < 1:
        raise ValueError(f"{n} sequences are too few to split into train, calibration and test parts.")
    n_train = n - n_cal - n_test
    return perm[:n_train], perm[n_train:n_train + n_cal], perm[n_train + n_cal:]


def csv_sets_problem(
    *,
    path: str | os.PathLike,
    input_length: int,
    horizon: int,
    id_column: str = "id",
    step_column: str = "step",
    value_column: str = "value",
    replicate: int = 0,
    calibration_fraction: float = 0.2,
    test_fraction: float = 0.2,
) -> SetProblem:
    """Your own sets of sequences; see the module docstring."""
    if input_length < 1 or horizon < 1:
        raise ValueError(f"input_length={input_length} and horizon={horizon} must be >= 1.")
    ids, sequences = read_long_sequences(path, id_column=id_column, step_column=step_column,
                                         value_column=value_column)
    need = input_length + horizon
    short = [str(i) for i, s in zip(ids, sequences) if len(s) < need]
    if short:
        raise ValueError(f"{path}: {len(short)} sequence(s) have fewer than input_length + horizon = {need} steps "
                         f"(first ids {short[:5]}); drop them or shorten input_length.")
    values = np.stack([s[-need:] for s in sequences])
    train, calibration, test = split_by_replicate(len(values), replicate, calibration_fraction, test_fraction)
    return SetProblem.from_indices(f"csv_sets:{Path(path).name}", values[:, :input_length, None],
                                   values[:, input_length:], train, calibration, test,
                                   metadata={"source": str(path)})
