"""Simultaneous bands over H correlated outputs: the critical value of max_h |Z_h| (beyond the paper).

For one test sequence with H x H predictive covariance Sigma (PA's asymptotic
covariance of the H outputs plus the noise variances), the band
mu_h +/- c sqrt(Sigma_hh), h = 1..H, covers all H outputs with probability
P(max_h |Z_h| <= c) for Z ~ N(0, R), R = the correlation matrix of Sigma. Taking c as
the (1 - alpha) quantile of max_h |Z_h| gives joint coverage 1 - alpha under the
asymptotics, where Bonferroni's z_{1 - alpha/(2H)} gives at least 1 - alpha and is
wider whenever the outputs are correlated (at independence the two nearly agree:
Sidak's z_{(1 + (1 - alpha)^{1/H})/2} against z_{1 - alpha/(2H)}).

The quantile is estimated by Monte Carlo with common random numbers: one fixed
set of ``n_draws`` standard normal vectors Z0 (seeded), mapped to N(0, R) by the
Cholesky factor L of each sequence's R (L Z0), so the critical values are a smooth,
deterministic function of R. With 20,000 draws the Monte Carlo standard error of
the coverage P(max |Z| <= c) is about 0.2 points.
"""

from __future__ import annotations

import numpy as np

#: Monte Carlo draws of max_h |Z_h| per sequence, and the seed of the common draws.
N_DRAWS = 20_000
DRAW_SEED = 20231210


def correlation(covariance: np.ndarray) -> np.ndarray:
    """(m, H, H) correlation matrices of (m, H, H) covariances with a positive diagonal."""
    sd = np.sqrt(np.diagonal(covariance, axis1=1, axis2=2))
    return covariance / (sd[:, :, None] * sd[:, None, :])


def max_abs_normal_quantiles(corr: np.ndarray, alpha: float, n_draws: int = N_DRAWS, seed: int = DRAW_SEED,
                             chunk: int = 8) -> np.ndarray:
    """(m,) the (1 - alpha) quantile of max_h |Z_h|, Z ~ N(0, corr[i]), for every (H x H) matrix in ``corr``."""
    corr = np.asarray(corr, dtype=float)
    m, H, _ = corr.shape
    draws = np.random.default_rng(seed).standard_normal((n_draws, H))
    jitter = 1e-12 * np.eye(H)  # a numerically semi-definite R (two outputs perfectly correlated) still factors
    out = np.empty(m)
    for start in range(0, m, chunk):
        factors = np.linalg.cholesky(corr[start:start + chunk] + jitter)  # (c, H, H)
        maxima = np.abs(draws @ factors.transpose(0, 2, 1)).max(axis=-1)  # (c, n_draws)
        out[start:start + chunk] = np.quantile(maxima, 1 - alpha, axis=1)
    return out
