"""Scores of autoregressive order selection over datasets (paper section 5.2;
docs/reproductions/order-selection.md, docs/guide/metrics.md).

The per-fit read-outs (selected lags, estimated order, #hidden link) are made by
the method (:mod:`pibench.methods.pa.order_readout`) and stored in its record. Over J
datasets with true lag set S and selected sets S_j:
FSR = sum_j |S_j \\ S| / sum_j |S_j| and NSR = sum_j |S \\ S_j| / (J |S|).
S holds the true lags a method can select (:func:`selectable_truth`): with an input
window of k lags, S = true lags <= k, as the paper's NSR = 0 for NLAR window 1 implies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

#: True lag sets of the synthetic processes (docs/guide/datasets.md).
TRUE_LAGS = {"nlar": frozenset({1, 2, 3, 7}), "expar": frozenset({1})}


def selectable_truth(true_lags: Iterable[int], max_lag: float | None) -> frozenset[int]:
    """The true lags a method choosing among lags 1..max_lag can select (all when max_lag is None/NaN)."""
    truth = frozenset(int(j) for j in true_lags)
    if max_lag is None or not np.isfinite(max_lag):
        return truth
    if max_lag < 1:
        raise ValueError(f"max_lag must be >= 1; got {max_lag}.")
    return frozenset(j for j in truth if j <= max_lag)


def false_selection_rate(true_lags: Iterable[int], selected: Sequence[Iterable[int]]) -> float:
    """sum_j |S_j minus S| / sum_j |S_j| (0 when nothing is selected anywhere)."""
    truth = set(true_lags)
    chosen = [set(s) for s in selected]
    total = sum(len(s) for s in chosen)
    return sum(len(s - truth) for s in chosen) / total if total else 0.0


def negative_selection_rate(true_lags: Iterable[int], selected: Sequence[Iterable[int]]) -> float:
    """sum_j |S minus S_j| / (J |S|): the share of true lags missed."""
    truth = set(true_lags)
    if not truth or not selected:
        raise ValueError("need a non-empty true lag set and at least one selected set.")
    return sum(len(truth - set(s)) for s in selected) / (len(selected) * len(truth))
