"""Classical autoregressive order selection: statsmodels' ``ar_select_order`` (AIC or BIC).

The comparison row of the order-selection table (docs/guide/methods.md): the lags an AR
model selects by information criterion, to set beside the lags a sparsified
RNN keeps.
"""

from __future__ import annotations

import numpy as np
from statsmodels.tsa.ar_model import ar_select_order


def select_ar_lags(y: np.ndarray, maxlag: int, criterion: str = "bic", glob: bool = False) -> frozenset[int]:
    """Lags chosen by ``criterion`` ("aic" or "bic") among 1..maxlag.

    glob=False searches orders 1..maxlag (all lags up to the order); glob=True
    searches every subset of lags (2^maxlag models: keep maxlag small).
    """
    if criterion not in ("aic", "bic"):
        raise ValueError(f"criterion={criterion!r}; use 'aic' or 'bic'.")
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or len(y) <= 2 * maxlag + 1:
        raise ValueError(f"need a 1-D series longer than {2 * maxlag + 1} points for maxlag={maxlag}.")
    # about its mean: the same models with a constant, and least squares sound for a series far from 0
    chosen = ar_select_order(y - y.mean(), maxlag=maxlag, ic=criterion, glob=glob, trend="c").ar_lags
    return frozenset(int(lag) for lag in (chosen or []))
