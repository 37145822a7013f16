"""A regime-switching series: an AR mean with Markov-switching noise scale, and its oracle.

    y_t = sum_k phi_k y_{t-k} + sigma_{s_t} eta_t,   eta_t ~ N(0, 1),
    s_t in {0 (calm), 1 (volatile)}: a Markov chain that leaves its state with probability
    ``switch_prob`` at each step (mean stay 1 / switch_prob steps).

Overall coverage hides whether an interval holds in the volatile regime and wastes
length in the calm one; this series makes that visible. Defaults: AR(3) mean, noise
scale 1.0 (calm) or 3.0 (volatile), regimes lasting 200 steps on average (switch
probability 0.005), 3,000 test steps (about 15 switches). A method that sees only the
past needs a few steps after a switch to notice it (one large residual reveals
calm -> volatile, several small ones the reverse), so with regimes of a few dozen steps
even the Bayes filter of the true model stays well above the oracle's length (measured
1.4x in the calm regime at 50-step regimes); at 200 steps that lag costs a few percent
and a causal method can come close to the oracle. Its oracle knows the regime:
the interval sum_k phi_k y_{t-k} +/- z_{alpha/2} sigma_{s_t} covers at exactly 1 - alpha
in each regime, so it is the best any method could do (a method sees only the past,
from which the current regime can be inferred but not known). The oracle's scale
sigma_{s_t} is also the volatility by which conditional coverage is stratified.
"""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.problems import SeriesProblem
from pibench.data_loaders.synthetic import (
    _check_length,
    check_ar_stationary,
    check_counts,
    lag_matrix,
    series_problem,
)


def simulate_regime(n: int, seed: int, phi=(0.6, -0.2, 0.1), scales=(1.0, 3.0), switch_prob: float = 0.005,
                    burn_in: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """(y, regime), each (n,): the series and the state s_t (0 calm, 1 volatile) of each point."""
    n, burn_in = _check_length(n, burn_in)
    phi = check_ar_stationary(phi)
    scales = np.asarray(scales, dtype=float)
    if scales.shape != (2,) or not np.all(scales > 0) or not np.all(np.isfinite(scales)):
        raise ValueError(f"scales={scales.tolist()} must be two positive numbers (calm, volatile).")
    if not 0 < switch_prob < 1:
        raise ValueError(f"switch_prob={switch_prob} must lie in (0, 1).")
    rng = np.random.default_rng(seed)
    total, p = n + burn_in, phi.size
    switches = rng.random(total) < switch_prob
    regime = np.cumsum(switches) % 2  # starts calm; flips at each switch
    eta = rng.standard_normal(total)
    y = np.zeros(total + p)
    for i in range(total):
        y[i + p] = float(phi @ y[i:i + p][::-1]) + scales[regime[i]] * eta[i]
    return y[p + burn_in:].copy(), regime[burn_in:].copy()


def regime_problem(
    *,
    n_train: int = 3000,
    n_test: int = 3000,
    phi: tuple[float, ...] = (0.6, -0.2, 0.1),
    scales: tuple[float, float] = (1.0, 3.0),
    switch_prob: float = 0.005,
    n_lags: int | None = None,
    seed: int = 0,
) -> SeriesProblem:
    """The regime-switching series as a problem whose features are its lags; metadata holds the oracle:
    ``conditional_mean`` and ``oracle_scale`` (sigma of each row's regime) and ``regime`` (0/1 per row)."""
    check_counts(n_train=n_train, n_test=n_test)
    coefs = check_ar_stationary(phi)
    p = coefs.size
    n_lags = p if n_lags is None else int(n_lags)
    if n_lags < 1:
        raise ValueError(f"n_lags={n_lags} must be at least 1.")
    rows = int(n_train) + int(n_test)
    lead = max(n_lags, p)
    full, regime = simulate_regime(lead + rows, seed, coefs, scales, switch_prob)
    mean = lag_matrix(full, p)[0][-rows:] @ coefs
    row_regime = regime[-rows:]
    return series_problem("regime", full[-(n_lags + rows):], n_lags, n_test, conditional_mean=mean,
                             metadata={"phi": tuple(coefs.tolist()), "scales": tuple(float(s) for s in scales),
                                       "switch_prob": switch_prob, "seed": seed, "generator": "regime",
                                       "regime": row_regime, "oracle_scale": np.asarray(scales, float)[row_regime]})
