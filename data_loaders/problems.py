"""The two problem shapes of docs/guide/datasets.md, validated once when they are built.

* :class:`SeriesProblem`: a single series, or a panel of G independent series on
  a shared time axis (fesp: 24 hourly series), each step with covariates known
  before the target is revealed.
* :class:`SetProblem`: exchangeable sequences (x of length T, y of horizon H)
  split into train / calibration / test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pibench.data_loaders.validation import check_finite


def read_only(array: np.ndarray) -> np.ndarray:
    """A view of ``array`` that cannot be written: a problem's arrays are shared by every task a worker runs
    on it (and their windows are views of them), so a method that changed one in place would change the data
    of the tasks after it, and the targets its own predictions are scored on. Writing raises ValueError."""
    view = array.view()
    view.flags.writeable = False
    return view


def read_only_metadata(value):
    """``value`` (a problem's metadata, or a value in it) with every numpy array in it :func:`read_only`
    (the oracle's conditional means, say), dicts, lists and tuples rebuilt around them."""
    if isinstance(value, np.ndarray):
        return read_only(value)
    if isinstance(value, dict):
        return {k: read_only_metadata(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple: built from its fields
        return type(value)(*(read_only_metadata(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(read_only_metadata(v) for v in value)
    return value


@dataclass(frozen=True)
class SeriesData:
    """A contiguous slice of a series problem, as a method sees it.

    y: (n, G) targets; X: (n, G, p) covariates of the same steps; start: the
    index of the first step in the whole problem (so that work keyed by the
    window, such as precomputed base forecasts, can be found again).
    """

    y: np.ndarray
    X: np.ndarray
    start: int = 0

    @property
    def n_steps(self) -> int:
        return self.y.shape[0]


@dataclass(frozen=True)
class SeriesProblem:
    """A panel of G series of n steps; steps ``test_start..n-1`` are the test span.

    y: (n, G) float targets; X: (n, G, p) float covariates (for a series without
    covariates, its own lags); time: (n,) labels of the steps; groups: G names.
    The arrays are read-only (:func:`read_only`), and so are the windows a method is given.
    """

    name: str
    y: np.ndarray
    X: np.ndarray
    test_start: int
    time: np.ndarray | None = None
    groups: tuple[str, ...] = ()
    feature_names: tuple[str, ...] = ()
    metadata: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        y = np.asarray(self.y, dtype=float)
        X = np.asarray(self.X, dtype=float)
        if y.ndim == 1:
            y = y[:, None]
        if X.ndim == 2:
            X = X[:, None, :] if y.shape[1] == 1 else X[:, :, None]
        if y.ndim != 2 or X.ndim != 3:
            raise ValueError(
                f"{self.name}: y must be (n, G) and X (n, G, p); got y{y.shape}, X{X.shape}."
            )
        if X.shape[:2] != y.shape:
            raise ValueError(
                f"{self.name}: X has shape {X.shape} but y has {y.shape}; "
                "X must be (n, G, p) with the same n steps and G series as y."
            )
        check_finite(y, f"{self.name}: target y")
        check_finite(X, f"{self.name}: features X")
        n = y.shape[0]
        if not 0 < self.test_start < n:
            raise ValueError(
                f"{self.name}: test_start={self.test_start} must lie strictly inside the "
                f"{n} steps so that both the training and the test span are non-empty."
            )
        groups = tuple(self.groups) or tuple(str(g) for g in range(y.shape[1]))
        if len(groups) != y.shape[1]:
            raise ValueError(f"{self.name}: {len(groups)} group names for {y.shape[1]} series.")
        time = np.arange(n) if self.time is None else np.asarray(self.time)
        if time.shape != (n,):
            raise ValueError(f"{self.name}: time has shape {time.shape}, expected ({n},).")
        object.__setattr__(self, "y", read_only(y))
        object.__setattr__(self, "X", read_only(X))
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "time", read_only(time))
        object.__setattr__(self, "metadata", read_only_metadata(self.metadata))

    @property
    def n_steps(self) -> int:
        return self.y.shape[0]

    @property
    def n_groups(self) -> int:
        return self.y.shape[1]

    @property
    def n_test(self) -> int:
        return self.n_steps - self.test_start

    def window(self, start: int, stop: int) -> SeriesData:
        """Steps ``start..stop-1`` as the data a method is (re)fitted on."""
        return SeriesData(y=self.y[start:stop], X=self.X[start:stop], start=start)

    def train_target_range(self) -> tuple[float, float]:
        """(min, max) of the training targets: the basis of the infinite-bound cap."""
        train = self.y[: self.test_start]
        return float(train.min()), float(train.max())


@dataclass(frozen=True)
class SetData:
    """Exchangeable sequences: x (n, T, d) inputs, y (n, H) targets, read-only (:func:`read_only`).

    Inputs of different lengths (MIMIC's visits) are padded at the end with NaN:
    row i holds ``lengths[i]`` >= 1 observed steps, then whole steps of NaN.
    """

    x: np.ndarray
    y: np.ndarray

    def __post_init__(self) -> None:
        x = np.asarray(self.x, dtype=float)
        y = np.asarray(self.y, dtype=float)
        if x.ndim == 2:
            x = x[:, :, None]
        if y.ndim == 1:
            y = y[:, None]
        if x.ndim != 3 or y.ndim != 2 or x.shape[0] != y.shape[0]:
            raise ValueError(
                f"set data must be x (n, T, d) and y (n, H) with the same n; got x{x.shape}, y{y.shape}."
            )
        padding = np.isnan(x).all(axis=2)  # (n, T): whole steps of NaN
        check_finite(np.where(padding[:, :, None], 0.0, x), "set inputs x (outside the NaN padding)")
        check_finite(y, "set targets y")
        if x.shape[1] and (padding[:, 0].any() or (np.diff(padding.astype(np.int8), axis=1) < 0).any()):
            row = int(np.flatnonzero(padding[:, 0] | (np.diff(padding.astype(np.int8), axis=1) < 0).any(1))[0])
            raise ValueError(f"set inputs x: row {row} has NaN padding before an observed step; pad shorter "
                             "sequences at the end only, and give each at least one observed step.")
        object.__setattr__(self, "x", read_only(x))
        object.__setattr__(self, "y", read_only(y))

    @property
    def n(self) -> int:
        return self.y.shape[0]

    @property
    def lengths(self) -> np.ndarray:
        """(n,) observed input steps of each sequence (T unless padded)."""
        return (~np.isnan(self.x).all(axis=2)).sum(axis=1)

    @property
    def horizon(self) -> int:
        return self.y.shape[1]

    def concat(self, other: SetData) -> SetData:
        """Train + calibration, for methods without a calibration step (docs/guide/datasets.md)."""
        return SetData(np.concatenate([self.x, other.x]), np.concatenate([self.y, other.y]))


@dataclass(frozen=True)
class SetProblem:
    """Train / calibration / test splits of exchangeable sequences (docs/guide/datasets.md, docs/guide/protocols.md)."""

    name: str
    train: SetData
    calibration: SetData
    test: SetData
    metadata: dict = field(default_factory=dict)
    test_ids: tuple | None = None  # the test sequences' ids in the source, when it names them
    #: the independent unit each test sequence belongs to, where sequences come in groups that move together
    #: (EEG: a trial's 64 channels); None: every sequence is its own. The bootstrap and the tests resample
    #: and count whole groups (:mod:`pibench.reports.bootstrap_ci`).
    test_clusters: tuple | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", read_only_metadata(self.metadata))
        for name, labels in (("test ids", self.test_ids), ("test clusters", self.test_clusters)):
            if labels is not None and len(labels) != self.test.n:
                raise ValueError(f"{self.name}: {len(labels)} {name} for {self.test.n} test sequences.")
        shapes = {(s.x.shape[1:], s.horizon) for s in (self.train, self.calibration, self.test)}
        if len(shapes) != 1:
            raise ValueError(
                f"{self.name}: train, calibration and test must share input length, "
                f"input dimension and horizon; got {sorted(shapes)}."
            )

    @property
    def horizon(self) -> int:
        return self.test.horizon

    @classmethod
    def from_indices(cls, name: str, x: np.ndarray, y: np.ndarray, train, calibration, test,
                     metadata: dict | None = None, ids=None, clusters=None) -> SetProblem:
        """Split sequences x (n, T, d) / y (n, H) by three index arrays; ``ids`` (n,) name the sequences,
        ``clusters`` (n,) the groups they come in (:attr:`test_clusters`)."""
        def part(idx) -> SetData:
            return SetData(x[np.asarray(idx)], y[np.asarray(idx)])

        def of_test(labels):
            return None if labels is None else tuple(np.asarray(labels)[np.asarray(test)].tolist())

        return cls(name, part(train), part(calibration), part(test), metadata=dict(metadata or {}),
                   test_ids=of_test(ids), test_clusters=of_test(clusters))

    def sequence_ids(self) -> np.ndarray:
        """(n_test,) the test sequences' ids, or their positions in the test part when the source has none."""
        return np.arange(self.test.n) if self.test_ids is None else np.asarray(self.test_ids)

    def train_target_range(self) -> tuple[float, float]:
        y = self.train.y
        return float(y.min()), float(y.max())


Problem = SeriesProblem | SetProblem
