"""What a set band's shape is worth: its length at equal joint coverage against a band of constant width.

A row's stored test predictions give each sequence i a point mu_ih and a half-width w_ih per horizon.
Both bands below are recalibrated the same way, by split conformal on random halves of the test
sequences (scores max_h |y_ih - mu_ih| / s_ih on half A, q their finite-sample (1 - alpha) quantile,
:func:`~pibench.methods.calibration.quantile.conformal_quantile`; the band mu_ih +/- q s_ih evaluated on
half B), so both cover about 1 - alpha jointly on B and their mean lengths compare at equal coverage:

* the row's own shape, s_ih = w_ih (PA's sd_h(x_i), CF-RNN's constant c_h, ...);
* a constant shape, s_h = the mean of w_ih over the sequences of A: the same profile over horizons,
  no information about which sequence is harder.

``length ratio`` < 1 means the band's per-sequence widths carry information (conformalised PA, issue 31).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pibench.methods.calibration.quantile import conformal_quantile


def set_arrays(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A set row's predictions frame (item, sequence, horizon, y, lower, upper, point) -> y, point and
    half-width, each (n sequences, H)."""
    frame = frame.sort_values(["item", "horizon"])  # item: the test sequence's row, unique
    H = frame["horizon"].nunique()

    def grid(column: str) -> np.ndarray:
        return frame[column].to_numpy(dtype=float).reshape(-1, H)

    return grid("y"), grid("point"), (grid("upper") - grid("lower")) / 2


def usable_shape(half_width: np.ndarray) -> bool:
    """Whether every half-width is finite and positive (a shape to divide by)."""
    return bool(np.isfinite(half_width).all() and (half_width > 0).all())


def _recalibrated(residual, shape, alpha, calibrate, evaluate) -> tuple[float, float]:
    """(joint coverage, mean length) on ``evaluate`` of mu +/- q shape, q calibrated on ``calibrate``;
    ``residual`` = |y - mu|."""
    q = conformal_quantile(np.max(residual[calibrate] / shape[calibrate], axis=1), alpha)
    covered = np.all(residual[evaluate] <= q * shape[evaluate], axis=1)
    return float(covered.mean()), float(np.mean(2 * q * shape[evaluate]))


def shape_gain(y: np.ndarray, point: np.ndarray, half_width: np.ndarray, alpha: float, splits: int = 200,
               seed: int = 0) -> dict[str, float]:
    """Mean over ``splits`` random halvings of each band's coverage and length on the held-out half
    (module doc), and the length ratio own / constant. Half-widths must be finite and positive."""
    if not usable_shape(half_width):
        raise ValueError("the band's half-widths must be finite and positive to serve as a shape.")
    n = len(y)
    if n < 4:
        raise ValueError(f"need at least 4 test sequences to halve; got {n}.")
    rng = np.random.default_rng(seed)
    residual = np.abs(y - point)
    own, constant = [], []
    for _ in range(splits):
        order = rng.permutation(n)
        calibrate, evaluate = order[: n // 2], order[n // 2 :]
        own.append(_recalibrated(residual, half_width, alpha, calibrate, evaluate))
        flat = np.broadcast_to(half_width[calibrate].mean(axis=0), half_width.shape)
        constant.append(_recalibrated(residual, flat, alpha, calibrate, evaluate))
    (cov_own, len_own), (cov_const, len_const) = np.mean(own, axis=0), np.mean(constant, axis=0)
    return {"coverage_own": float(cov_own), "length_own": float(len_own), "coverage_constant": float(cov_const),
            "length_constant": float(len_const), "length_ratio": float(len_own / len_const)}
