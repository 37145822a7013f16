"""Per-fit read-outs of autoregressive order selection (paper section 5.2; docs/reproductions/order-selection.md).

For a sparsified RNN whose input at each step is the window (y_{t-1}, ..., y_{t-k}):
lag j is selected iff some input weight of column j - 1 survives; the estimated
AR order is the largest selected lag; "#hidden link" counts the nonzero
hidden-to-hidden weights. Scores over datasets (FSR, NSR) are in
:mod:`pibench.reports.order_selection`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def selected_lags(input_kept: np.ndarray) -> frozenset[int]:
    """Lags (1-based) whose column of the kept-input mask (hidden, window) has a survivor."""
    kept = np.asarray(input_kept, dtype=bool)
    if kept.ndim != 2:
        raise ValueError(f"input_kept must be (hidden, window); got shape {kept.shape}.")
    return frozenset(int(j) + 1 for j in np.flatnonzero(kept.any(axis=0)))


def estimated_order(lags: Iterable[int]) -> int:
    """The largest selected lag (0 when none is selected)."""
    return max(lags, default=0)


def hidden_links(recurrent_kept: np.ndarray) -> int:
    """Number of nonzero hidden-to-hidden weights."""
    return int(np.count_nonzero(recurrent_kept))
