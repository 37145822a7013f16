"""A single observed series as a problem: its own lags (and optional features) as the inputs of each step.

Step r's inputs X are the ``features`` of row r (known before its target is
revealed), then the previous ``lags`` values y_{r-1} .. y_{r-lags}; the first
``lags`` rows, which lack a full set of lags, are dropped. The test span is the last
``n_test`` rows. Used by every loader of one real series (your CSV, the series that
ship with pibench's dependencies), so they check and split alike.
"""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.problems import SeriesProblem

#: Fewest test points: below 100 a coverage estimate's standard error exceeds 3 points at 90%.
MIN_TEST_POINTS = 100


def lagged_series_problem(name: str, values: np.ndarray, *, lags: int, n_test: int, where: str, target: str = "y",
                          features: np.ndarray | None = None, feature_names: tuple[str, ...] = (),
                          time: np.ndarray | None = None, metadata: dict | None = None) -> SeriesProblem:
    """The problem of the series ``values`` (n,) (module docstring); ValueError naming ``where`` (a file, a
    dataset) for a test span under :data:`MIN_TEST_POINTS`, too short a training span or a constant one."""
    if isinstance(lags, bool) or not isinstance(lags, int) or lags < 0:
        raise ValueError(f"lags={lags!r} must be a whole number >= 0 (0: no target lags, features only).")
    if features is None and lags == 0:
        raise ValueError(f"{where}: lags = 0 and no features leave a method without inputs; give features or "
                         "lags >= 1.")
    n_rows = len(values)
    if n_test < MIN_TEST_POINTS:
        raise ValueError(f"{where}: the test span would hold {n_test} point(s); pibench needs at least "
                         f"{MIN_TEST_POINTS} test points for a coverage estimate worth reading. Give a longer "
                         "series or a longer test span.")
    if n_rows - n_test - lags < 2:
        raise ValueError(f"{where}: {n_rows} rows leave {n_rows - n_test - lags} training row(s) after the "
                         f"{n_test} test rows and {lags} lag rows; give a longer series or a shorter test span.")
    y_all = np.asarray(values, dtype=float)
    train_target = y_all[lags:n_rows - n_test]
    if np.ptp(train_target) == 0:
        raise ValueError(f"{where}: the target {target!r} is constant ({train_target[0]:g}) over the training span "
                         f"(rows before the last {n_test}); a constant series has no uncertainty to bound.")
    columns = [np.asarray(features, dtype=float)] if features is not None else []
    columns += [np.roll(y_all, k)[:, None] for k in range(1, lags + 1)]
    X = np.concatenate(columns, axis=1)[lags:]
    y = y_all[lags:]
    return SeriesProblem(
        name=name, y=y, X=X, test_start=len(y) - n_test, time=None if time is None else np.asarray(time)[lags:],
        groups=(target,), feature_names=tuple(feature_names) + tuple(f"lag_{k}" for k in range(1, lags + 1)),
        metadata=dict(metadata or {}),
    )
