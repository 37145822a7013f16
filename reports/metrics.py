"""Evaluation metrics for prediction intervals.

All functions are pure numpy. Intervals are given as two arrays ``lower`` and
``upper`` with the same shape as the target ``y``.

Conventions
-----------
* An *infinite interval* has ``lower = -inf`` and/or ``upper = +inf``; such an
  interval covers every finite target.
* An *empty interval* is stored as ``lower == upper``; it covers only a target
  exactly equal to that value (bounds are inclusive) and has length 0.
* A *crossed interval* (``lower > upper``, from a method that declares
  ``may_cross``) covers nothing; its length is ``upper - lower``, negative (every
  interval's length is upper - lower, as the paper's), and its interval score at least
  ``(lower - upper)(2 / alpha - 1)``.
* Mean length uses capped bounds; the count of infinite intervals is reported
  separately (as in AgACI, Zaffran et al. 2022). Capping replaces ``-inf``
  lower bounds by ``cap[0]`` and ``+inf`` upper bounds by ``cap[1]``. The
  documented default cap (:func:`default_cap`) is the training target's range
  widened by its span on each side: ``(min - span, max + span)`` with
  ``span = max - min`` (``span = 1.0`` if the training target is constant).
  Length statistics and the Winkler score are computed on capped bounds.
* Shapes must match exactly (no broadcasting); NaN anywhere, or an infinite
  target, raises ``ValueError``.

Array layouts
-------------
* Series (online) setting: ``(n_steps, G)``, time on axis 0, G series.
* Set (multi-horizon) setting: ``(n, H)``, n sequences, H horizons.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "covered",
    "coverage",
    "joint_coverage",
    "per_horizon_coverage",
    "cap_bounds",
    "default_cap",
    "length_stats",
    "winkler_score",
    "rolling_coverage",
    "worst_rolling_coverage",
    "longest_miss_run",
    "coverage_by_group",
    "tercile_means",
    "tercile_coverage",
    "oracle_length_ratios",
    "interval_scores",
    "series_metrics",
    "set_metrics",
    "metrics_from_predictions",
    "metrics_mismatch",
]

LENGTH_KEYS = ("mean_length", "std_length", "median_length", "iqr_length", "n_infinite")


# --------------------------------------------------------------------------- #
# validation helpers
# --------------------------------------------------------------------------- #
def _as_float(name: str, a: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(a, dtype=float)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    return arr


def _check_shapes(**arrays: NDArray[Any]) -> None:
    shapes = {name: arr.shape for name, arr in arrays.items()}
    if len(set(shapes.values())) > 1:
        desc = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(f"shape mismatch: {desc}")


def _check_nonempty(arr: NDArray[Any]) -> None:
    if arr.size == 0:
        raise ValueError("empty input: at least one element is required")


def _check_ndim(arr: NDArray[Any], ndim: int, what: str) -> None:
    if arr.ndim != ndim:
        raise ValueError(f"expected a {ndim}-D array {what}, got shape {arr.shape}")


def _check_alpha(alpha: float) -> None:
    if not (0.0 < alpha < 1.0):  # also rejects NaN
        raise ValueError(f"alpha={alpha} is outside (0, 1)")


def _check_cap(cap: tuple[float, float]) -> tuple[float, float]:
    if len(cap) != 2:
        raise ValueError(f"cap must be a pair (low, high), got {cap!r}")
    lo, hi = float(cap[0]), float(cap[1])
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise ValueError(f"cap must be finite with cap[0] <= cap[1], got {cap!r}")
    return lo, hi


def _interval_args(
    y: ArrayLike, lower: ArrayLike, upper: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    y_ = _as_float("y", y)
    lo = _as_float("lower", lower)
    up = _as_float("upper", upper)
    _check_shapes(y=y_, lower=lo, upper=up)
    if np.isinf(y_).any():
        raise ValueError("y contains infinite values")
    return y_, lo, up


def _bool_steps(covered_by_step: ArrayLike) -> NDArray[np.bool_]:
    arr = np.asarray(covered_by_step)
    if arr.dtype != bool:
        num = np.asarray(arr, dtype=float)
        if np.isnan(num).any():
            raise ValueError("covered_by_step contains NaN")
        if not np.isin(num, (0.0, 1.0)).all():
            raise ValueError("covered_by_step must be boolean (or 0/1)")
        arr = num.astype(bool)
    if arr.ndim not in (1, 2):
        raise ValueError(f"covered_by_step must be 1-D or 2-D, got shape {arr.shape}")
    return arr


# --------------------------------------------------------------------------- #
# coverage
# --------------------------------------------------------------------------- #
def covered(y: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> NDArray[np.bool_]:
    """Elementwise coverage indicator.

    covered = 1{lower <= y <= upper} (bounds inclusive), any shape.
    """
    y_, lo, up = _interval_args(y, lower, upper)
    return (lo <= y_) & (y_ <= up)


def coverage(y: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> float:
    """Marginal empirical coverage.

    coverage = mean_i 1{lower_i <= y_i <= upper_i} over all elements.
    """
    cov = covered(y, lower, upper)
    _check_nonempty(cov)
    return float(cov.mean())


def joint_coverage(y: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> float:
    """Joint (all-horizon) coverage for (n, H) inputs.

    joint = (1/n) sum_i 1{lower_ih <= y_ih <= upper_ih for all h = 1..H}.
    """
    cov = covered(y, lower, upper)
    _check_ndim(cov, 2, "(n, H)")
    _check_nonempty(cov)
    return float(cov.all(axis=1).mean())


def per_horizon_coverage(y: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> NDArray[np.float64]:
    """Coverage of each horizon for (n, H) inputs, shape (H,).

    cov_h = (1/n) sum_i 1{lower_ih <= y_ih <= upper_ih}.
    """
    cov = covered(y, lower, upper)
    _check_ndim(cov, 2, "(n, H)")
    _check_nonempty(cov)
    return cov.mean(axis=0)


def coverage_by_group(covered_2d: ArrayLike) -> NDArray[np.float64]:
    """Coverage of each series (column) for an (n_steps, G) indicator, shape (G,).

    cov_g = (1/n_steps) sum_t covered[t, g].
    """
    cov = _bool_steps(covered_2d)
    _check_ndim(cov, 2, "(n_steps, G)")
    _check_nonempty(cov)
    return cov.mean(axis=0)


# --------------------------------------------------------------------------- #
# capping and length
# --------------------------------------------------------------------------- #
def default_cap(train_min: float, train_max: float) -> tuple[float, float]:
    """Default cap for infinite bounds: training range widened by its span.

    cap = (min - span, max + span), span = max - min (span = 1.0 if max == min).
    """
    lo, hi = float(train_min), float(train_max)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"train_min/train_max must be finite, got {train_min}, {train_max}")
    if lo > hi:
        raise ValueError(f"train_min={train_min} > train_max={train_max}")
    span = hi - lo
    if span == 0.0:
        span = 1.0
    return (lo - span, hi + span)


def cap_bounds(
    lower: ArrayLike, upper: ArrayLike, cap: tuple[float, float]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Replace infinite bounds by a finite cap (finite bounds unchanged).

    lower' = cap[0] where lower == -inf; upper' = cap[1] where upper == +inf.
    """
    lo = _as_float("lower", lower)
    up = _as_float("upper", upper)
    _check_shapes(lower=lo, upper=up)
    c_lo, c_hi = _check_cap(cap)
    lo = np.where(np.isneginf(lo), c_lo, lo)
    up = np.where(np.isposinf(up), c_hi, up)
    return lo, up


def length_stats(lower: ArrayLike, upper: ArrayLike, cap: tuple[float, float]) -> dict[str, float | int]:
    """Summary of capped interval lengths over all elements (flattened).

    L = upper' - lower' after cap_bounds; mean, std (ddof=0), median,
    iqr = q75 - q25 (linear interpolation); n_infinite = #{lower = -inf or upper = +inf}.
    """
    lo = _as_float("lower", lower)
    up = _as_float("upper", upper)
    _check_shapes(lower=lo, upper=up)
    _check_nonempty(lo)
    n_inf = int((np.isinf(lo) | np.isinf(up)).sum())
    c_lo, c_up = cap_bounds(lo, up, cap)
    lengths = (c_up - c_lo).ravel()
    q25, q75 = np.percentile(lengths, [25.0, 75.0])
    return {
        "mean_length": float(lengths.mean()),
        "std_length": float(lengths.std(ddof=0)),
        "median_length": float(np.median(lengths)),
        "iqr_length": float(q75 - q25),
        "n_infinite": n_inf,
    }


def interval_scores(
    y: ArrayLike, lower: ArrayLike, upper: ArrayLike, alpha: float, cap: tuple[float, float]
) -> NDArray[np.float64]:
    """The interval (Winkler) score of each point, Gneiting & Raftery (2007), its width on capped bounds:
    S = (u' - l') + (2/alpha)(l - y)1{y < l} + (2/alpha)(y - u)1{y > u}, in the shape of ``y``. The penalties take
    the bounds as given: an infinite bound covers every y on its side, beyond the cap too (a capped bound charged
    it a miss's penalty, where the coverage counts it covered)."""
    _check_alpha(alpha)
    y_, lo, up = _interval_args(y, lower, upper)
    _check_nonempty(y_)
    capped_lo, capped_up = cap_bounds(lo, up, cap)
    below = np.clip(lo - y_, 0.0, None)  # (l - y) 1{y < l}: 0 for l = -inf
    above = np.clip(y_ - up, 0.0, None)  # (y - u) 1{y > u}: 0 for u = +inf
    return (capped_up - capped_lo) + (2.0 / alpha) * (below + above)


def winkler_score(
    y: ArrayLike, lower: ArrayLike, upper: ArrayLike, alpha: float, cap: tuple[float, float]
) -> float:
    """Mean interval (Winkler) score (:func:`interval_scores`) on capped bounds."""
    return float(interval_scores(y, lower, upper, alpha, cap).mean())


# --------------------------------------------------------------------------- #
# temporal metrics (series setting)
# --------------------------------------------------------------------------- #
def rolling_coverage(covered_by_step: ArrayLike, window: int) -> NDArray[np.float64]:
    """Moving-average coverage over `window` consecutive steps.

    c_t = mean_g covered[t, g] (2-D) or covered[t] (1-D);
    r_k = (1/window) sum_{t=k}^{k+window-1} c_t, k = 0..n_steps-window.
    If n_steps < window, returns [mean_t c_t].
    """
    if isinstance(window, bool) or int(window) != window or window < 1:
        raise ValueError(f"window={window} must be an integer >= 1")
    window = int(window)
    cov = _bool_steps(covered_by_step)
    _check_nonempty(cov)
    per_step = cov.mean(axis=1) if cov.ndim == 2 else cov.astype(float)
    n = per_step.shape[0]
    if n < window:
        return np.array([per_step.mean()])
    csum = np.concatenate(([0.0], np.cumsum(per_step)))
    return (csum[window:] - csum[:-window]) / window


#: The window of a series record's ``worst_rolling_coverage``, in test steps (a shorter span: its coverage).
ROLLING_WINDOW = 100


def worst_rolling_coverage(covered_by_step: ArrayLike, window: int) -> float:
    """Worst (minimum) moving-average coverage.

    worst = min_k r_k with r_k from rolling_coverage.
    """
    return float(rolling_coverage(covered_by_step, window).min())


def longest_miss_run(covered_by_step: ArrayLike) -> int:
    """Longest run of consecutive misses (False) along time (axis 0).

    1-D: max run length of False; 2-D (n_steps, G): max over columns g of that column's run.
    """
    cov = _bool_steps(covered_by_step)
    miss = ~cov.reshape(cov.shape[0], -1).T  # (G, n_steps)
    if miss.size == 0:
        return 0
    pad = np.zeros((miss.shape[0], 1), dtype=np.int8)
    d = np.diff(np.concatenate((pad, miss.astype(np.int8), pad), axis=1), axis=1)
    # np.nonzero is row-major, so the k-th start and k-th end belong to the same run.
    _, starts = np.nonzero(d == 1)
    _, ends = np.nonzero(d == -1)
    if starts.size == 0:
        return 0
    return int((ends - starts).max())


# --------------------------------------------------------------------------- #
# bundles
# --------------------------------------------------------------------------- #
#: The coverage of each volatility third (:func:`series_metrics`), NaN for a third no step falls in.
VOLATILITY_THIRDS = ("coverage_vol_low", "coverage_vol_mid", "coverage_vol_high")
#: The method of the true interval (where a dataset knows it): the truth, never a reference, ranked or in an MCS.
ORACLE = "oracle"

#: Values closer than this fraction of the largest finite magnitude among them are equal but for rounding.
ROUNDING = 1e-9


def tie_runs(ordered: np.ndarray) -> np.ndarray:
    """Start index of each run of equal values in the ascending ``ordered`` (1-D): neighbours within
    :data:`ROUNDING` of the largest finite magnitude are one run (as are equal infinities)."""
    if ordered.size == 0:
        return np.zeros(0, dtype=int)
    finite = ordered[np.isfinite(ordered)]
    tolerance = ROUNDING * (float(np.abs(finite).max()) if finite.size else 0.0)
    with np.errstate(invalid="ignore"):  # inf - inf
        same = (np.diff(ordered) <= tolerance) | (ordered[1:] == ordered[:-1])
    return np.flatnonzero(np.r_[True, ~same])


def tercile_means(values: ArrayLike, rank_by: ArrayLike) -> list[float]:
    """The mean of ``values`` within the lower, middle and upper third of the points ranked by ``rank_by``.

    Points are sorted by ``rank_by`` and cut into three parts of equal size, except that equal rank values
    (:func:`tie_runs`: rounding noise never splits them by position) stay together: a run of ties goes
    whole to the third that holds the middle of the run, the lowest run always to the lower third and the
    highest to the upper. A constant ``rank_by`` is one middle third, a two-valued one (a regime's two
    scales) a lower and an upper third; an empty third is NaN. Points whose rank value is NaN are left out.
    """
    vals = np.asarray(values, dtype=float).ravel()
    ranks = np.asarray(rank_by, dtype=float).ravel()
    if ranks.shape != vals.shape:
        raise ValueError(f"shape mismatch: values {vals.shape}, rank_by {ranks.shape}")
    known = np.flatnonzero(~np.isnan(ranks))
    if known.size == 0:
        return [float("nan")] * 3
    order = known[np.argsort(ranks[known], kind="stable")]
    starts = tie_runs(ranks[order])
    counts = np.diff(np.r_[starts, order.size])
    middles = starts + (counts - 1) / 2  # each run: the position of its middle in the sorted order
    third_of_run = np.minimum((3 * middles // order.size).astype(int), 2)
    if len(starts) > 1:  # the lowest values are the lower third's, the highest the upper's
        third_of_run[0], third_of_run[-1] = 0, 2
    third = np.repeat(third_of_run, counts)
    return [float(vals[order[third == k]].mean()) if (third == k).any() else float("nan") for k in range(3)]


def tercile_coverage(covered_: ArrayLike, values: ArrayLike) -> list[float]:
    """Coverage within the thirds of the points ranked by ``values`` (:func:`tercile_means`)."""
    return tercile_means(np.asarray(covered_, dtype=bool), values)


def oracle_length_ratios(metrics: dict[str, Any], oracle_lengths: ArrayLike,
                         volatility: ArrayLike | None) -> dict[str, float]:
    """A method's lengths over the oracle's (synthetic series): ``length_ratio_oracle`` = mean length /
    the oracle's mean length, and, given the volatility, ``length_ratio_vol_low / _mid / _high`` = the
    mean length within each volatility third (``length_vol_*`` of :func:`series_metrics`) over the
    oracle's within the same third. ``oracle_lengths`` (n_steps, G): the oracle's length per point."""
    best = np.asarray(oracle_lengths, dtype=float)
    out = {"oracle_mean_length": float(best.mean()), "length_ratio_oracle": metrics["mean_length"] / best.mean()}
    if volatility is not None and "length_vol_low" in metrics:
        for name, value in zip(("low", "mid", "high"), tercile_means(best, volatility)):
            out[f"length_ratio_vol_{name}"] = metrics[f"length_vol_{name}"] / value
    return out


def series_metrics(
    y: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    alpha: float,
    cap: tuple[float, float],
    rolling_window: int = ROLLING_WINDOW,
    volatility: ArrayLike | None = None,
) -> dict[str, Any]:
    """All metrics for the series setting, arrays (n_steps, G) (1-D treated as G = 1).

    coverage, length stats, winkler, worst_rolling_coverage(window), longest_miss_run,
    coverage_by_group (list), n_test = y.size; conditional coverage: coverage_size_min, the
    worst coverage over the terciles of capped interval length, and, given each point's
    ``volatility`` (n_steps, G), coverage_vol_low / _mid / _high and the mean capped length
    length_vol_low / _mid / _high over its terciles (:func:`tercile_means`).
    """
    _check_alpha(alpha)
    y_, lo, up = _interval_args(y, lower, upper)
    if y_.ndim == 1:
        y_, lo, up = y_[:, None], lo[:, None], up[:, None]
    _check_ndim(y_, 2, "(n_steps, G)")
    _check_nonempty(y_)
    cov = covered(y_, lo, up)
    out: dict[str, Any] = {"coverage": float(cov.mean())}
    out.update(length_stats(lo, up, cap))
    out["winkler"] = winkler_score(y_, lo, up, alpha, cap)
    out["worst_rolling_coverage"] = worst_rolling_coverage(cov, rolling_window)
    out["longest_miss_run"] = longest_miss_run(cov)
    out["coverage_by_group"] = [float(c) for c in coverage_by_group(cov)]
    out["n_test"] = int(y_.size)
    capped_lo, capped_up = cap_bounds(lo, up, cap)
    out["coverage_size_min"] = float(np.nanmin(tercile_coverage(cov, capped_up - capped_lo)))
    if volatility is not None:
        vol = np.asarray(volatility, dtype=float).reshape(cov.shape)
        thirds = zip(("low", "mid", "high"), tercile_coverage(cov, vol), tercile_means(capped_up - capped_lo, vol))
        for name, coverage, length in thirds:
            out[f"coverage_vol_{name}"], out[f"length_vol_{name}"] = coverage, length
    return out


def set_metrics(
    y: ArrayLike, lower: ArrayLike, upper: ArrayLike, alpha: float, cap: tuple[float, float]
) -> dict[str, Any]:
    """All metrics for the set (multi-horizon) setting, arrays (n, H).

    coverage (marginal over all elements), joint_coverage, per_horizon_coverage (list),
    length stats, winkler, n_test = n sequences.
    """
    _check_alpha(alpha)
    y_, lo, up = _interval_args(y, lower, upper)
    _check_ndim(y_, 2, "(n, H)")
    _check_nonempty(y_)
    out: dict[str, Any] = {
        "coverage": coverage(y_, lo, up),
        "joint_coverage": joint_coverage(y_, lo, up),
        "per_horizon_coverage": [float(c) for c in per_horizon_coverage(y_, lo, up)],
    }
    out.update(length_stats(lo, up, cap))
    out["winkler"] = winkler_score(y_, lo, up, alpha, cap)
    out["n_test"] = int(y_.shape[0])
    return out


def metrics_from_predictions(frame, alpha: float, cap: tuple[float, float]) -> dict[str, Any]:
    """The metrics of a task from its stored predictions (the long table the runner writes).

    Series (columns t, group): rows are time-major with the G groups in turn, reshaped to
    (n_steps, G) for :func:`series_metrics` (with the column ``volatility`` where stored),
    plus ``mspe`` = mean (y - point)^2. Sets
    (columns item, horizon): reshaped to (n, H) for :func:`set_metrics`. Where the column
    ``oracle_length`` is stored (a dataset with an oracle), the lengths over the oracle's
    (:func:`oracle_length_ratios`). The runner computes every record's metrics with this
    function, so a record can be checked against its predictions at any time
    (:func:`metrics_mismatch`).
    """
    columns = ("y", "lower", "upper", "point")
    if "group" in frame.columns:
        n_groups = len(frame["group"].unique())
        y, lo, up, point = (frame[c].to_numpy(float).reshape(-1, n_groups) for c in columns)
        volatility = frame["volatility"].to_numpy(float).reshape(-1, n_groups) if "volatility" in frame else None
        out = series_metrics(y, lo, up, alpha, cap, volatility=volatility)
        out["mspe"] = float(np.mean((y - point) ** 2))  # mean squared prediction error
    else:
        n_groups, volatility = int(frame["horizon"].max()), None
        y, lo, up = (frame[c].to_numpy(float).reshape(-1, n_groups) for c in columns[:3])
        out = set_metrics(y, lo, up, alpha, cap)
    if "oracle_length" in frame.columns:
        out.update(oracle_length_ratios(out, frame["oracle_length"].to_numpy(float).reshape(-1, n_groups), volatility))
    return out


#: Record fields that only :func:`metrics_from_predictions` makes: a record that states one its
#: predictions cannot give (an older pibench's, or an edited one) cannot be checked.
DERIVED_FIELDS = ("oracle_mean_length", "length_ratio_oracle", "length_ratio_vol_low", "length_ratio_vol_mid",
                  "length_ratio_vol_high", "coverage_vol_low", "coverage_vol_mid", "coverage_vol_high",
                  "length_vol_low", "length_vol_mid", "length_vol_high", "coverage_size_min", "per_horizon_coverage",
                  "joint_coverage", "mspe")


class Mismatch(NamedTuple):
    """Why a record's metrics are not those of its predictions: ``kind`` "tampered" (a stated number differs
    from its recomputation) or "unverifiable" (it states a number its predictions cannot give: an older
    pibench's record, or an added field), and the first such number."""

    kind: str
    detail: str
    #: whether this code's reading of the predictions decides it (a metric's definition, the columns it
    #: reads), so a record of other code may be outdated rather than edited
    this_codes_reading: bool = False


def _plain_repr(value) -> str:
    """A value as a reader writes it: 0.978, not np.float64(0.978); lists of them alike."""
    return repr(np.asarray(value).tolist()) if isinstance(value, (np.ndarray, np.generic, list)) else repr(value)


def metrics_mismatch(record: dict, frame) -> Mismatch | None:
    """None if every metric ``record`` states equals its recomputation from ``frame`` (relative 1e-9),
    else the first that does not, as 'name: V in the record, W from the predictions'; a derived field
    the predictions cannot give (:data:`DERIVED_FIELDS`) makes it unverifiable."""
    try:
        recomputed = metrics_from_predictions(frame, record["alpha"], tuple(record["length_cap"]))
    except (KeyError, ValueError, TypeError) as exc:
        return Mismatch("tampered", f"its predictions give no metrics ({type(exc).__name__}: {exc})",
                        this_codes_reading=True)
    unbacked = [name for name in DERIVED_FIELDS if name in record and name not in recomputed]
    if unbacked:
        return Mismatch("unverifiable", f"{unbacked[0]} = {record[unbacked[0]]!r} in the record, which its "
                                        "predictions cannot give (written by an older pibench?)")
    for name, value in recomputed.items():
        if name not in record:
            continue
        stated = record[name]
        try:
            same = np.allclose(np.asarray(stated, dtype=float), np.asarray(value, dtype=float), rtol=1e-9,
                               atol=1e-12, equal_nan=True) and np.shape(stated) == np.shape(value)
        except (TypeError, ValueError):
            same = False
        if not same:
            return Mismatch("tampered", f"{name}: {_plain_repr(stated)} in the record, {_plain_repr(value)} from the "
                                        "predictions", this_codes_reading=True)
    return None
