"""UK COVID-19 daily new cases of 380 local authorities as sets of sequences (docs/guide/datasets.md; CF-RNN).

Each area's 150 days are one sequence: x = the first ``input_length`` days, y =
the next ``horizon``. Per replicate s, ``RandomState(s).permutation(380)`` puts
the first ``n_train`` areas in train, the next ``n_calibration`` in calibration
and the rest (80) in test, as CF-RNN splits them.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from pibench.data_loaders.paths import locate
from pibench.data_loaders.problems import SetProblem


def covid_problem(
    *,
    replicate: int = 0,
    data_dir: str | os.PathLike | None = None,
    input_length: int = 100,
    horizon: int = 50,
    n_train: int = 200,
    n_calibration: int = 100,
) -> SetProblem:
    """The 380 x 150 new-case sequences; see the module docstring."""
    path = locate("covid", data_dir)
    frame = pd.read_csv(path)
    days = [c for c in frame.columns if c.startswith("t") and c[1:].isdigit()]
    if len(days) < 2:
        raise ValueError(f"{path}: no day columns t000, t001, ...; is this the staged COVID file (see SOURCE.md)?")
    values = frame[sorted(days, key=lambda c: int(c[1:]))].to_numpy(float)
    if not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(f"{path}: case counts must be finite and >= 0; clean the file.")
    if input_length < 1 or horizon < 1 or input_length + horizon > values.shape[1]:
        raise ValueError(f"input_length={input_length} + horizon={horizon} must fit in the file's "
                         f"{values.shape[1]} days, each >= 1.")
    n = len(values)
    if n_train < 1 or n_calibration < 1 or n_train + n_calibration >= n:
        raise ValueError(f"n_train={n_train} and n_calibration={n_calibration} must leave test areas of the {n}.")
    perm = np.random.RandomState(int(replicate)).permutation(n)
    x = values[:, :input_length, None]
    y = values[:, input_length:input_length + horizon]
    return SetProblem.from_indices(
        "covid", x, y, train=perm[:n_train], calibration=perm[n_train:n_train + n_calibration],
        test=perm[n_train + n_calibration:], metadata={"source": str(path)},
    )
