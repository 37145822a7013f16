"""Base forecasts of split-conformal methods: fitted on demand, or precomputed in batches.

A window of W steps is split sequentially (docs/guide/protocols.md): the first part trains the
base forecaster, the rest gives the calibration residuals |y - y_hat| (kept in
time order; NexCP weighs them by age). The model of group g on the window that
starts at step s gets the seed SeedSequence([random_state, s]).generate_state(G)[g],
so a window's fit is the same whether it is trained alone, on demand, or in a
batch with the windows of many other steps.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pibench.data_loaders.problems import SeriesData
from pibench.methods.forecasters.registry import make_forecaster


@dataclass
class WindowFit:
    """A fitted base model: calibration residuals (n_cal, G) and predict: X (m, G, p) -> (m, G); a base
    with its own predictive sd (``base = "pa"``) also gives it on the calibration part (n_cal, G) and
    ``predict_sd``: X (m, G, p) -> (m, G)."""

    residuals: np.ndarray
    predict: Callable[[np.ndarray], np.ndarray]
    calibration_sd: np.ndarray | None = None
    predict_sd: Callable[[np.ndarray], np.ndarray] | None = None


def proper_training_size(n: int, calibration_fraction: float) -> int:
    """Steps of a window of n that train the base model; the rest calibrate."""
    if not 0 < calibration_fraction < 1:
        raise ValueError(f"calibration_fraction={calibration_fraction} must lie in (0, 1).")
    n_train = int(round(n * (1 - calibration_fraction)))
    if n_train < 2 or n - n_train < 2:
        raise ValueError(
            f"a window of {n} steps is too short to split into proper-training and "
            "calibration parts of at least 2 steps each; use a longer window."
        )
    return n_train


def window_seeds(random_state: int, start: int, n_groups: int) -> np.ndarray:
    """(G,) seeds of the models fitted on the window starting at ``start``."""
    return np.random.SeedSequence([int(random_state), int(start)]).generate_state(n_groups).astype(np.int64)


@dataclass(frozen=True)
class SplitForecaster:
    """Fits a base forecaster on windows and scores their calibration parts."""

    base: str = "mlp"
    base_params: tuple = ()
    calibration_fraction: float = 0.5
    random_state: int = 0

    def config(self) -> dict:
        """Everything that determines the fits (used as a cache key)."""
        return {"base": self.base, "base_params": dict(self.base_params),
                "calibration_fraction": self.calibration_fraction, "random_state": self.random_state}

    def fit_windows(self, X: np.ndarray, y: np.ndarray, starts: np.ndarray):
        """Fit F windows at once: X (F, W, G, p), y (F, W, G) -> (forecaster, residuals (F, n_cal, G))."""
        F, W, G, _ = X.shape
        n_train = proper_training_size(W, self.calibration_fraction)
        seeds = np.stack([window_seeds(self.random_state, s, G) for s in starts])
        model = make_forecaster(self.base, **dict(self.base_params))
        model.fit(X[:, :n_train], y[:, :n_train], seeds=seeds)
        residuals = np.abs(y[:, n_train:] - model.predict(X[:, n_train:]))
        return model, residuals

    def fit(self, data: SeriesData) -> WindowFit:
        """Fit one window now."""
        model, residuals = self.fit_windows(data.X[None], data.y[None], np.array([data.start]))
        if not hasattr(model, "predict_sd"):
            return WindowFit(residuals=residuals[0], predict=lambda X: model.predict(X[None])[0])
        n_train = proper_training_size(data.n_steps, self.calibration_fraction)
        return WindowFit(residuals=residuals[0], predict=lambda X: model.predict(X[None])[0],
                         calibration_sd=model.predict_sd(data.X[None, n_train:])[0],
                         predict_sd=lambda X: model.predict_sd(X[None])[0])


@dataclass
class PrecomputedForecasts:
    """The base fits of a whole online run, looked up by window.

    starts (F,): window starts; residuals (F, n_cal, G); for fit f, X_served[f]
    (k_f, G, p) and points[f] (k_f, G) are the test steps it predicts, in order.
    """

    starts: np.ndarray
    residuals: np.ndarray
    X_served: list[np.ndarray]
    points: list[np.ndarray]

    def fit(self, data: SeriesData) -> WindowFit:
        hits = np.flatnonzero(self.starts == data.start)
        if len(hits) != 1:
            raise ValueError(f"no precomputed base fit for the window starting at step {data.start}.")
        f = int(hits[0])
        served, points = self.X_served[f], self.points[f]
        cursor = iter(range(len(points)))

        def predict(X: np.ndarray) -> np.ndarray:
            i = next(cursor, None)
            if i is None or X.shape[0] != 1 or not np.array_equal(X[0], served[i]):
                raise ValueError("precomputed base forecasts were asked for a step they were not made for: the "
                                 "shared base-fit cache does not match this task; delete <results-dir>/cache and "
                                 "rerun.")
            return points[i][None]

        return WindowFit(residuals=self.residuals[f], predict=predict)

    @staticmethod
    def concat(parts: list[PrecomputedForecasts]) -> PrecomputedForecasts:
        return PrecomputedForecasts(
            starts=np.concatenate([p.starts for p in parts]),
            residuals=np.concatenate([p.residuals for p in parts]),
            X_served=[x for p in parts for x in p.X_served], points=[x for p in parts for x in p.points],
        )

    def save(self, path, produced_by: str = "") -> None:
        """Write the arrays as one .npz with a checksum of each and ``produced_by`` (what computed them),
        which :meth:`load` verifies."""
        served_counts = np.array([len(p) for p in self.points])
        arrays = {"starts": self.starts, "residuals": self.residuals, "served_counts": served_counts,
                  "X_served": np.concatenate(self.X_served), "points": np.concatenate(self.points)}
        meta = {"produced_by": produced_by, "sha256": {name: _array_sha256(a) for name, a in arrays.items()}}
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub reads **arrays as allow_pickle

    @staticmethod
    def load(path, produced_by: str | None = None) -> PrecomputedForecasts:
        """Read :meth:`save`'s file; ValueError if an array differs from its checksum, or the file was
        not produced by ``produced_by`` (when given)."""
        with np.load(path, allow_pickle=False) as z:
            if "meta" not in z.files:
                raise ValueError("it carries no checksums (written by an older pibench)")
            meta = json.loads(str(z["meta"]))
            if produced_by is not None and meta.get("produced_by") != produced_by:
                raise ValueError(f"it was produced by {meta.get('produced_by')!r}, not {produced_by!r}")
            arrays = {name: z[name] for name in ("starts", "residuals", "served_counts", "X_served", "points")}
        for name, array in arrays.items():
            if _array_sha256(array) != meta.get("sha256", {}).get(name):
                raise ValueError(f"its array {name!r} does not match its checksum")
        cuts = np.cumsum(arrays["served_counts"])[:-1]
        return PrecomputedForecasts(starts=arrays["starts"], residuals=arrays["residuals"],
                                    X_served=np.split(arrays["X_served"], cuts),
                                    points=np.split(arrays["points"], cuts))


def _array_sha256(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes."""
    a = np.ascontiguousarray(array)
    return hashlib.sha256(f"{a.dtype.str}{a.shape}".encode() + a.tobytes()).hexdigest()
