"""Synthetic problems whose data-generating process (and so the oracle) is known.

Series generators (single series, one step ahead):

* :func:`simulate_nlar`: the order-7 nonlinear autoregression (NLAR) with two
  logistic regimes; conditional mean :func:`nlar_mean`.
* :func:`simulate_expar`: the exponential autoregression (EXPAR) of order 1;
  conditional mean :func:`expar_mean`.
* :func:`simulate_ar`: a stationary linear AR(p).

All have N(0, 1) innovations (scaled by ``noise_std`` for the AR), so the oracle
one-step interval is ``mean +/- z_{alpha/2} * noise_std``. :func:`series_problem`
turns a simulated series into a :class:`SeriesProblem` whose features are its own
lags; :func:`ar_problem`, :func:`nlar_problem` and :func:`expar_problem` are the
defaults a dataset registry uses.

Set generator (exchangeable sequences, multi-horizon):

* :func:`seasonal_ar_sets`: sinusoid with a random amplitude and phase plus a
  stationary AR(1) error; given the past (and the sequence's amplitude and
  phase), each future value is exactly Gaussian, see :func:`seasonal_ar_oracle`.

Every generator draws from ``np.random.default_rng(seed)`` only, so the output is
a deterministic function of its arguments.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from pibench.data_loaders.problems import SeriesProblem, SetData, SetProblem
from pibench.data_loaders.validation import check_alpha

NLAR_ORDER = 7


def _check_length(n: int, burn_in: int) -> tuple[int, int]:
    n, burn_in = int(n), int(burn_in)
    if n < 1:
        raise ValueError(f"n={n} must be at least 1 (the number of points to return).")
    if burn_in < 0:
        raise ValueError(f"burn_in={burn_in} must be >= 0; use 0 to keep the start-up transient.")
    return n, burn_in


def check_counts(**counts) -> None:
    """ValueError naming the first of ``counts`` (n_train=..., n_test=...) that is below 1."""
    for key, value in counts.items():
        if int(value) < 1:
            raise ValueError(f"{key}={value} must be at least 1.")


# --------------------------------------------------------------------------- NLAR


def nlar_mean(lags: np.ndarray) -> np.ndarray:
    """Conditional mean of the order-7 NLAR given its last 7 values.

    ``lags[..., k] = y_{i-1-k}`` (k = 0..6). Returns, with shape ``lags.shape[:-1]``,

        m = -0.17 + 0.85 y_{i-1} + 0.14 y_{i-2} - 0.31 y_{i-3} + 0.08 y_{i-7}
            + 12.80 G1 + 2.44 G2,
        G1 = 1 / (1 + exp(-0.46 (0.29 y_{i-1} - 0.87 y_{i-2} + 0.40 y_{i-7} - 6.68))),
        G2 = 1 / (1 + exp(-1.17e-3 (0.83 y_{i-1} - 0.53 y_{i-2} - 0.18 y_{i-7} + 0.38))).
    """
    lags = np.asarray(lags, dtype=float)
    if lags.shape[-1:] != (NLAR_ORDER,):
        raise ValueError(
            f"nlar_mean needs the last {NLAR_ORDER} values on the last axis "
            f"(lags[..., 0] = y_(i-1), ..., lags[..., 6] = y_(i-7)); got shape {lags.shape}."
        )
    y1, y2, y3, y7 = lags[..., 0], lags[..., 1], lags[..., 2], lags[..., 6]
    g1 = 1.0 / (1.0 + np.exp(-0.46 * (0.29 * y1 - 0.87 * y2 + 0.40 * y7 - 6.68)))
    g2 = 1.0 / (1.0 + np.exp(-1.17e-3 * (0.83 * y1 - 0.53 * y2 - 0.18 * y7 + 0.38)))
    return -0.17 + 0.85 * y1 + 0.14 * y2 - 0.31 * y3 + 0.08 * y7 + 12.80 * g1 + 2.44 * g2


def simulate_nlar(n: int, seed: int, burn_in: int = 500) -> np.ndarray:
    """Simulate ``n`` points of y_i = nlar_mean(y_{i-1}, ..., y_{i-7}) + eta_i, eta ~ N(0, 1).

    The recursion starts from seven zeros; the first ``burn_in`` simulated points
    are discarded.
    """
    n, burn_in = _check_length(n, burn_in)
    rng = np.random.default_rng(seed)
    total = n + burn_in
    eta = rng.standard_normal(total)
    y = np.zeros(total + NLAR_ORDER)
    for i in range(NLAR_ORDER, total + NLAR_ORDER):
        # y[i-1], y[i-2], ..., y[i-7]
        y[i] = nlar_mean(y[i - NLAR_ORDER : i][::-1]) + eta[i - NLAR_ORDER]
    return y[NLAR_ORDER + burn_in :].copy()


# -------------------------------------------------------------------------- EXPAR


def expar_mean(y_prev: np.ndarray | float) -> np.ndarray:
    """Conditional mean of the EXPAR(1): m = (0.8 - 1.1 exp(-50 y_{i-1}^2)) y_{i-1}."""
    y_prev = np.asarray(y_prev, dtype=float)
    return (0.8 - 1.1 * np.exp(-50.0 * y_prev**2)) * y_prev


def simulate_expar(n: int, seed: int, burn_in: int = 500) -> np.ndarray:
    """Simulate ``n`` points of y_i = (0.8 - 1.1 exp(-50 y_{i-1}^2)) y_{i-1} + eta_i, eta ~ N(0, 1).

    Starts from y = 0 and discards the first ``burn_in`` simulated points.
    """
    n, burn_in = _check_length(n, burn_in)
    rng = np.random.default_rng(seed)
    total = n + burn_in
    eta = rng.standard_normal(total)
    y = np.zeros(total + 1)
    for i in range(1, total + 1):
        y[i] = float(expar_mean(y[i - 1])) + eta[i - 1]
    return y[1 + burn_in :].copy()


# ----------------------------------------------------------------------------- AR


def check_ar_stationary(coefs) -> np.ndarray:
    """Return ``coefs`` as an array; ValueError unless 1 - sum_k coefs[k] z^(k+1) has all roots |z| > 1."""
    coefs = np.atleast_1d(np.asarray(coefs, dtype=float))
    if coefs.ndim != 1:
        raise ValueError(f"AR coefficients must be a 1-d sequence (phi_1, ..., phi_p); got shape {coefs.shape}.")
    if not np.all(np.isfinite(coefs)):
        raise ValueError(f"AR coefficients {coefs.tolist()} contain NaN or inf.")
    if coefs.size == 0 or not np.any(coefs):
        return coefs
    # np.roots wants the highest degree first: -phi_p z^p - ... - phi_1 z + 1.
    roots = np.roots(np.concatenate([-coefs[::-1], [1.0]]))
    if roots.size and np.min(np.abs(roots)) <= 1.0 + 1e-10:
        raise ValueError(
            f"AR coefficients {coefs.tolist()} are not stationary: the polynomial "
            f"1 - sum_k phi_k z^k has a root of modulus {np.min(np.abs(roots)):.4g} <= 1. "
            "Shrink the coefficients so that every root lies outside the unit circle "
            "(for an AR(1), use |phi| < 1)."
        )
    return coefs


def simulate_ar(
    n: int,
    coefs,
    seed: int,
    noise_std: float = 1.0,
    intercept: float = 0.0,
    burn_in: int = 500,
) -> np.ndarray:
    """Simulate ``n`` points of y_i = intercept + sum_k coefs[k] y_{i-1-k} + noise_std * eta_i, eta ~ N(0, 1).

    The AR polynomial must be stationary (see :func:`check_ar_stationary`). Starts
    from zeros and discards the first ``burn_in`` simulated points.
    """
    n, burn_in = _check_length(n, burn_in)
    coefs = check_ar_stationary(coefs)
    noise_std = float(noise_std)
    if not noise_std > 0:
        raise ValueError(f"noise_std={noise_std} must be positive.")
    rng = np.random.default_rng(seed)
    p = coefs.size
    total = n + burn_in
    eta = rng.standard_normal(total)
    y = np.zeros(total + p)
    for i in range(p, total + p):
        past = y[i - p : i][::-1]  # y[i-1], ..., y[i-p]
        y[i] = intercept + float(coefs @ past) + noise_std * eta[i - p]
    return y[p + burn_in :].copy()


# ----------------------------------------------------------- series -> problem


def lag_matrix(y: np.ndarray, n_lags: int) -> tuple[np.ndarray, np.ndarray]:
    """Lagged design of a 1-d series: ``X[r, k] = y[n_lags + r - 1 - k]``, ``target[r] = y[n_lags + r]``.

    Returns X of shape (len(y) - n_lags, n_lags) and target of shape (len(y) - n_lags,).
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"lag_matrix needs a 1-d series; got shape {y.shape}.")
    n_lags = int(n_lags)
    if n_lags < 1:
        raise ValueError(f"n_lags={n_lags} must be at least 1.")
    n = y.shape[0]
    if n <= n_lags:
        raise ValueError(
            f"series of length {n} is too short for {n_lags} lags; "
            f"it needs more than {n_lags} points (simulate a longer series or use fewer lags)."
        )
    X = np.column_stack([y[n_lags - 1 - k : n - 1 - k] for k in range(n_lags)])
    return X, y[n_lags:].copy()


def series_problem(
    name: str,
    y: np.ndarray,
    n_lags: int,
    n_test: int,
    *,
    noise_std: float | None = None,
    conditional_mean: np.ndarray | None = None,
    metadata: dict | None = None,
) -> SeriesProblem:
    """A single-series (G = 1) :class:`SeriesProblem` whose features are ``n_lags`` lags of ``y``.

    The first ``n_lags`` points only serve as lags, so the problem has
    ``len(y) - n_lags`` rows; its last ``n_test`` rows are the test span. ``time``
    holds the rows' positions in ``y``. Optional oracle information goes into
    ``metadata``: ``oracle_noise_std`` (the innovation sd) and
    ``conditional_mean`` (the true one-step mean of each row, shape (rows,)).
    """
    X, target = lag_matrix(y, n_lags)
    rows = target.shape[0]
    n_test = int(n_test)
    if not 1 <= n_test <= rows - 1:
        raise ValueError(
            f"{name}: n_test={n_test} must lie in [1, {rows - 1}] so that the {rows} rows "
            f"({len(y)} points minus {n_lags} lags) leave a non-empty training span; "
            "lower n_test or supply a longer series."
        )
    meta = dict(metadata or {})
    meta["n_lags"] = int(n_lags)
    if noise_std is not None:
        meta["oracle_noise_std"] = float(noise_std)
    if conditional_mean is not None:
        conditional_mean = np.asarray(conditional_mean, dtype=float)
        if conditional_mean.shape != (rows,):
            raise ValueError(
                f"{name}: conditional_mean has shape {conditional_mean.shape}, expected ({rows},) "
                "(one value per row, i.e. per point of y after the first n_lags)."
            )
        meta["conditional_mean"] = conditional_mean
    return SeriesProblem(
        name=name,
        y=target[:, None],
        X=X[:, None, :],
        test_start=rows - n_test,
        time=np.arange(int(n_lags), len(y)),
        feature_names=tuple(f"lag_{k + 1}" for k in range(int(n_lags))),
        metadata=meta,
    )


def ar_problem(
    *,
    n_train: int = 2000,
    n_test: int = 2000,
    phi: tuple[float, ...] = (0.6,),
    noise_std: float = 1.0,
    n_lags: int | None = None,
    seed: int = 0,
) -> SeriesProblem:
    """Linear AR(p) problem: ``n_train`` rows precede ``n_test`` test rows; features are lags."""
    check_counts(n_train=n_train, n_test=n_test)
    coefs = check_ar_stationary(phi)
    n_lags = coefs.size if n_lags is None else int(n_lags)
    if n_lags < 1:
        raise ValueError(f"n_lags={n_lags} must be at least 1 (an AR(0) has no lags to use).")
    p = coefs.size
    rows = n_train + n_test
    # max(n_lags, p) leading points: the lags of the first row, and p of them for its oracle mean.
    full = simulate_ar(max(n_lags, p) + rows, coefs, seed, noise_std=noise_std)
    mean = lag_matrix(full, p)[0][-rows:] @ coefs if p else np.zeros(rows)
    return series_problem(
        "ar",
        full[-(n_lags + rows) :],
        n_lags,
        n_test,
        noise_std=noise_std,
        conditional_mean=mean,
        metadata={"phi": tuple(coefs.tolist()), "seed": seed, "generator": "ar"},
    )


def nlar_problem(
    *, n_train: int = 10000, n_test: int = 1000, n_lags: int = 15, seed: int = 0
) -> SeriesProblem:
    """Order-7 NLAR problem (:func:`simulate_nlar`); ``n_train`` rows precede ``n_test`` test rows."""
    check_counts(n_train=n_train, n_test=n_test, n_lags=n_lags)
    n_lags = int(n_lags)
    rows = n_train + n_test
    full = simulate_nlar(max(n_lags, NLAR_ORDER) + rows, seed)
    mean = nlar_mean(lag_matrix(full, NLAR_ORDER)[0][-rows:])
    return series_problem(
        "nlar",
        full[-(n_lags + rows) :],
        n_lags,
        n_test,
        noise_std=1.0,
        conditional_mean=mean,
        metadata={"seed": seed, "generator": "nlar"},
    )


def expar_problem(
    *, n_train: int = 10000, n_test: int = 1000, n_lags: int = 1, seed: int = 0
) -> SeriesProblem:
    """EXPAR(1) problem (:func:`simulate_expar`); ``n_train`` rows precede ``n_test`` test rows."""
    check_counts(n_train=n_train, n_test=n_test)
    n_lags = int(n_lags)
    y = simulate_expar(n_lags + n_train + n_test, seed)
    mean = expar_mean(y[max(n_lags, 1) - 1 : -1])
    return series_problem(
        "expar",
        y,
        n_lags,
        n_test,
        noise_std=1.0,
        conditional_mean=mean,
        metadata={"seed": seed, "generator": "expar"},
    )


# ------------------------------------------------------------ seasonal AR sets


def seasonal_ar_conditional_sd(horizon: int, phi: float, noise_std: float) -> np.ndarray:
    """sd of y_{T-1+h} given the past, h = 1..H: noise_std * sqrt((1 - phi^(2h)) / (1 - phi^2))."""
    h = np.arange(1, int(horizon) + 1)
    phi = float(phi)
    if phi == 0.0:
        return np.full(h.shape, float(noise_std))
    return float(noise_std) * np.sqrt((1.0 - phi ** (2 * h)) / (1.0 - phi**2))


def oracle_half_width(
    horizon: int, phi: float, noise_std: float, alpha: float, bonferroni: bool = False
) -> np.ndarray:
    """Per-horizon oracle half-widths z * sd_h, shape (H,).

    z = z_{1 - alpha/2} for marginal coverage 1 - alpha at each horizon; with
    ``bonferroni``, z = z_{1 - alpha/(2H)}, giving joint coverage >= 1 - alpha.
    """
    alpha = check_alpha(alpha)
    tail = alpha / (2 * int(horizon)) if bonferroni else alpha / 2
    return float(norm.ppf(1.0 - tail)) * seasonal_ar_conditional_sd(horizon, phi, noise_std)


def _simulate_seasonal_ar(
    rng: np.random.Generator,
    n: int,
    length: int,
    phi: float,
    noise_std: float,
    amplitude_range: tuple[float, float],
    period: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(values (n, length), AR errors z (n, length), amplitudes (n,), phases (n,))."""
    amp = rng.uniform(amplitude_range[0], amplitude_range[1], size=n)
    phase = rng.uniform(0.0, 2.0 * np.pi, size=n)
    eps = rng.standard_normal((n, length))
    z = np.empty((n, length))
    z[:, 0] = noise_std / np.sqrt(1.0 - phi**2) * eps[:, 0]
    for t in range(1, length):
        z[:, t] = phi * z[:, t - 1] + noise_std * eps[:, t]
    steps = np.arange(length)
    season = amp[:, None] * np.sin(2.0 * np.pi * steps[None, :] / period + phase[:, None])
    return season + z, z, amp, phase


def seasonal_ar_sets(
    *,
    n_train: int = 600,
    n_calibration: int = 200,
    n_test: int = 400,
    input_length: int = 40,
    horizon: int = 5,
    phi: float = 0.7,
    noise_std: float = 1.0,
    amplitude_range: tuple[float, float] = (1.0, 3.0),
    period: float = 12.0,
    seed: int = 0,
) -> SetProblem:
    """Exchangeable sequences y_t = a sin(2 pi t / period + c) + z_t, t = 0..T+H-1.

    z_t = phi z_{t-1} + noise_std eps_t with eps ~ N(0, 1) and z_0 ~ N(0, noise_std^2 / (1 - phi^2))
    (stationary start); a ~ U(amplitude_range) and c ~ U(0, 2 pi) per sequence, all
    sequences iid. x = y_0..y_{T-1} (T = input_length), y = y_T..y_{T+H-1}.

    Given the past and (a, c), target h (h = 1..H, time T-1+h) is exactly Gaussian:

        mean_h = a sin(2 pi (T-1+h) / period + c) + phi^h z_{T-1},
        var_h  = noise_std^2 (1 - phi^(2h)) / (1 - phi^2),
        with z_{T-1} = x_{T-1} - a sin(2 pi (T-1) / period + c).

    ``metadata`` holds ``test_conditional_mean`` (n_test, H), ``oracle_sd`` (H,),
    the test amplitudes / phases and the generator parameters; see
    :func:`seasonal_ar_oracle` for the oracle interval.
    """
    check_counts(n_train=n_train, n_calibration=n_calibration, n_test=n_test, input_length=input_length,
                 horizon=horizon)
    phi, noise_std, period = float(phi), float(noise_std), float(period)
    if not abs(phi) < 1.0:
        raise ValueError(f"phi={phi} must satisfy |phi| < 1 so the AR(1) error is stationary.")
    if not noise_std > 0:
        raise ValueError(f"noise_std={noise_std} must be positive.")
    if not period > 0:
        raise ValueError(f"period={period} must be positive.")
    low, high = (float(v) for v in amplitude_range)
    if not low <= high:
        raise ValueError(f"amplitude_range={amplitude_range} must be (low, high) with low <= high.")

    T, H = int(input_length), int(horizon)
    n_tr, n_cal, n_te = int(n_train), int(n_calibration), int(n_test)
    rng = np.random.default_rng(seed)
    values, z, amp, phase = _simulate_seasonal_ar(
        rng, n_tr + n_cal + n_te, T + H, phi, noise_std, (low, high), period
    )

    def split(lo: int, hi: int) -> SetData:
        return SetData(values[lo:hi, :T], values[lo:hi, T:])

    test = slice(n_tr + n_cal, n_tr + n_cal + n_te)
    h = np.arange(1, H + 1)
    future_t = T - 1 + h
    cond_mean = (
        amp[test, None] * np.sin(2.0 * np.pi * future_t[None, :] / period + phase[test, None])
        + phi ** h[None, :] * z[test, T - 1 : T]
    )
    metadata = {
        "test_conditional_mean": cond_mean,
        "oracle_sd": seasonal_ar_conditional_sd(H, phi, noise_std),
        "test_amplitude": amp[test].copy(),
        "test_phase": phase[test].copy(),
        "phi": phi,
        "noise_std": noise_std,
        "period": period,
        "amplitude_range": (low, high),
        "seed": seed,
        "generator": "seasonal_ar",
    }
    return SetProblem(
        name="seasonal_ar",
        train=split(0, n_tr),
        calibration=split(n_tr, n_tr + n_cal),
        test=split(n_tr + n_cal, n_tr + n_cal + n_te),
        metadata=metadata,
    )


def seasonal_ar_oracle(
    problem: SetProblem, alpha: float, joint: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Oracle (lower, upper) bounds for the test targets of a :func:`seasonal_ar_sets` problem.

    Each is (n_test, H): test_conditional_mean -/+ oracle_half_width. With
    ``joint=False`` each horizon covers with probability exactly 1 - alpha; with
    ``joint=True`` the Bonferroni z_{1 - alpha/(2H)} makes all H cover jointly
    with probability >= 1 - alpha.
    """
    meta = problem.metadata
    missing = {"test_conditional_mean", "phi", "noise_std"} - set(meta)
    if missing:
        raise ValueError(
            f"{problem.name}: metadata lacks {sorted(missing)}; the oracle needs a problem "
            "built by seasonal_ar_sets."
        )
    mean = np.asarray(meta["test_conditional_mean"], dtype=float)
    half = oracle_half_width(mean.shape[1], meta["phi"], meta["noise_std"], alpha, bonferroni=joint)
    return mean - half[None, :], mean + half[None, :]
