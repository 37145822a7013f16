"""Synthetic generators against known facts of their data-generating processes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from pibench.data_loaders.problems import SeriesProblem, SetProblem
from pibench.data_loaders.synthetic import (
    ar_problem,
    expar_mean,
    expar_problem,
    lag_matrix,
    nlar_mean,
    nlar_problem,
    oracle_half_width,
    seasonal_ar_oracle,
    seasonal_ar_sets,
    series_problem,
    simulate_ar,
    simulate_expar,
    simulate_nlar,
)

N = 20_000
ALPHA = 0.1


@pytest.fixture(scope="module")
def nlar_series() -> np.ndarray:
    return simulate_nlar(N, seed=1)


@pytest.fixture(scope="module")
def seasonal() -> SetProblem:
    return seasonal_ar_sets(n_train=50, n_calibration=50, n_test=N, seed=3)


# ------------------------------------------------------------------ determinism


@pytest.mark.parametrize(
    "simulate",
    [
        lambda seed: simulate_nlar(300, seed),
        lambda seed: simulate_expar(300, seed),
        lambda seed: simulate_ar(300, [0.5, -0.2], seed),
        lambda seed: seasonal_ar_sets(n_train=5, n_calibration=5, n_test=5, seed=seed).test.y,
    ],
    ids=["nlar", "expar", "ar", "seasonal_ar"],
)
def test_same_seed_same_output_different_seed_different(simulate):
    a, b, c = simulate(7), simulate(7), simulate(8)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_burn_in_is_discarded_from_a_zero_start():
    y = simulate_ar(10, [0.5], seed=0, burn_in=0)
    eta = np.random.default_rng(0).standard_normal(10)
    assert y[0] == pytest.approx(eta[0])  # y_1 = 0.5 * 0 + eta_1
    assert y[1] == pytest.approx(0.5 * y[0] + eta[1])


# -------------------------------------------------------------- series models


def test_expar_residuals_are_standard_normal_noise():
    y = simulate_expar(N, seed=2)
    resid = y[1:] - expar_mean(y[:-1])
    assert abs(resid.mean()) < 0.03
    assert abs(resid.std() - 1.0) < 0.03


def test_expar_mean_formula():
    assert expar_mean(0.0) == 0.0
    assert expar_mean(1.0) == pytest.approx((0.8 - 1.1 * np.exp(-50.0)) * 1.0)
    assert expar_mean(0.1) == pytest.approx((0.8 - 1.1 * np.exp(-0.5)) * 0.1)


def test_nlar_residuals_are_standard_normal_noise(nlar_series):
    X, target = lag_matrix(nlar_series, 7)
    resid = target - nlar_mean(X)
    assert abs(resid.mean()) < 0.03
    assert abs(resid.std() - 1.0) < 0.03
    # The mean is a genuine predictor: residuals are far less variable than the series.
    assert nlar_series.std() > 1.5


def test_nlar_mean_formula_at_a_point():
    lags = np.array([1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 4.0])
    g1 = 1 / (1 + np.exp(-0.46 * (0.29 * 1 - 0.87 * 2 + 0.40 * 4 - 6.68)))
    g2 = 1 / (1 + np.exp(-1.17e-3 * (0.83 * 1 - 0.53 * 2 - 0.18 * 4 + 0.38)))
    expected = -0.17 + 0.85 * 1 + 0.14 * 2 - 0.31 * 3 + 0.08 * 4 + 12.80 * g1 + 2.44 * g2
    assert nlar_mean(lags) == pytest.approx(expected)
    assert nlar_mean(np.tile(lags, (3, 1))).shape == (3,)
    with pytest.raises(ValueError, match="7"):
        nlar_mean(np.zeros(6))


def test_ar1_variance_and_autocorrelation():
    y = simulate_ar(N, [0.6], seed=4)
    assert y.var() == pytest.approx(1.0 / (1.0 - 0.36), rel=0.05)
    yc = y - y.mean()
    rho1 = (yc[1:] @ yc[:-1]) / (yc @ yc)
    assert abs(rho1 - 0.6) < 0.03


def test_ar_noise_std_and_intercept_scale_the_process():
    y = simulate_ar(N, [0.6], seed=4, noise_std=2.0, intercept=1.0)
    assert y.mean() == pytest.approx(1.0 / (1.0 - 0.6), abs=0.15)
    assert y.var() == pytest.approx(4.0 / (1.0 - 0.36), rel=0.05)


@pytest.mark.parametrize("coefs", [[1.0], [1.2], [-1.0], [0.5, 0.5], [0.3, 0.8]])
def test_non_stationary_ar_raises(coefs):
    with pytest.raises(ValueError, match="not stationary"):
        simulate_ar(100, coefs, seed=0)


def test_stationary_ar2_is_accepted():
    assert simulate_ar(50, [0.5, 0.3], seed=0).shape == (50,)


# -------------------------------------------------------------- lag features


def test_lag_matrix_small_example():
    X, target = lag_matrix(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 2)
    np.testing.assert_array_equal(X, [[2, 1], [3, 2], [4, 3]])
    np.testing.assert_array_equal(target, [3, 4, 5])


def test_lag_matrix_too_short_raises():
    with pytest.raises(ValueError, match="too short"):
        lag_matrix(np.arange(3.0), 3)


def test_series_problem_shapes_and_test_start():
    y = np.arange(100.0)
    problem = series_problem("toy", y, n_lags=3, n_test=20, noise_std=0.5)
    assert isinstance(problem, SeriesProblem)
    assert problem.y.shape == (97, 1)
    assert problem.X.shape == (97, 1, 3)
    assert problem.test_start == 77 and problem.n_test == 20
    assert problem.feature_names == ("lag_1", "lag_2", "lag_3")
    assert problem.metadata["oracle_noise_std"] == 0.5
    # Row r predicts y[3 + r] from y[2 + r], y[1 + r], y[r].
    assert problem.y[0, 0] == 3.0
    np.testing.assert_array_equal(problem.X[0, 0], [2.0, 1.0, 0.0])
    assert problem.time[0] == 3


@pytest.mark.parametrize("n_test", [0, 97, 200])
def test_series_problem_rejects_bad_n_test(n_test):
    with pytest.raises(ValueError, match="n_test"):
        series_problem("toy", np.arange(100.0), n_lags=3, n_test=n_test)


def test_series_problem_without_noise_std_has_no_oracle():
    assert "oracle_noise_std" not in series_problem("toy", np.arange(10.0), 2, 3).metadata


@pytest.mark.parametrize(
    "build, n_lags",
    [
        (lambda: ar_problem(n_train=300, n_test=200), 1),
        (lambda: ar_problem(n_train=300, n_test=200, phi=(0.5, 0.2), n_lags=1), 1),
        (lambda: nlar_problem(n_train=300, n_test=200), 15),
        (lambda: nlar_problem(n_train=300, n_test=200, n_lags=3), 3),
        (lambda: expar_problem(n_train=300, n_test=200), 1),
    ],
)
def test_registry_constructors(build, n_lags):
    problem = build()
    assert problem.n_steps == 500 and problem.test_start == 300
    assert problem.X.shape == (500, 1, n_lags)
    assert problem.metadata["oracle_noise_std"] == 1.0
    # The stored oracle mean leaves residuals with the innovation's scale.
    resid = problem.y[:, 0] - problem.metadata["conditional_mean"]
    assert 0.8 < resid.std() < 1.2


def test_registry_constructor_conditional_mean_matches_features():
    problem = ar_problem(n_train=50, n_test=50, phi=(0.6,))
    np.testing.assert_allclose(problem.metadata["conditional_mean"], 0.6 * problem.X[:, 0, 0])
    problem = expar_problem(n_train=50, n_test=50)
    np.testing.assert_allclose(problem.metadata["conditional_mean"], expar_mean(problem.X[:, 0, 0]))
    problem = nlar_problem(n_train=50, n_test=50, n_lags=8)
    np.testing.assert_allclose(problem.metadata["conditional_mean"], nlar_mean(problem.X[:, 0, :7]))


# ----------------------------------------------------------- seasonal AR sets


def test_seasonal_ar_split_shapes():
    problem = seasonal_ar_sets()
    assert (problem.train.n, problem.calibration.n, problem.test.n) == (600, 200, 400)
    assert problem.train.x.shape == (600, 40, 1)
    assert problem.test.y.shape == (400, 5)
    assert problem.metadata["test_conditional_mean"].shape == (400, 5)
    assert problem.metadata["oracle_sd"].shape == (5,)


def test_seasonal_ar_oracle_sd_formula():
    sd = oracle_half_width(3, phi=0.5, noise_std=2.0, alpha=ALPHA) / norm.ppf(1 - ALPHA / 2)
    np.testing.assert_allclose(sd, [2.0, 2.0 * np.sqrt(1.25), 2.0 * np.sqrt(1.3125)])


def test_seasonal_ar_standardised_residuals(seasonal):
    meta = seasonal.metadata
    z = (seasonal.test.y - meta["test_conditional_mean"]) / meta["oracle_sd"]
    assert np.all(np.abs(z.std(axis=0) - 1.0) < 0.03)
    assert np.all(np.abs(z.mean(axis=0)) < 0.03)


def test_seasonal_ar_oracle_marginal_coverage(seasonal):
    meta = seasonal.metadata
    half = norm.ppf(1 - ALPHA / 2) * meta["oracle_sd"]
    lo, hi = meta["test_conditional_mean"] - half, meta["test_conditional_mean"] + half
    y = seasonal.test.y
    coverage = ((y >= lo) & (y <= hi)).mean(axis=0)
    assert np.all(np.abs(coverage - (1 - ALPHA)) < 0.02), coverage
    # seasonal_ar_oracle builds the same interval.
    lo2, hi2 = seasonal_ar_oracle(seasonal, ALPHA)
    np.testing.assert_allclose(lo2, lo)
    np.testing.assert_allclose(hi2, hi)


def test_seasonal_ar_oracle_bonferroni_joint_coverage(seasonal):
    lo, hi = seasonal_ar_oracle(seasonal, ALPHA, joint=True)
    y = seasonal.test.y
    joint = ((y >= lo) & (y <= hi)).all(axis=1).mean()
    assert joint >= 1 - ALPHA - 0.01
    # Without the correction, joint coverage falls clearly short of 1 - alpha.
    lo, hi = seasonal_ar_oracle(seasonal, ALPHA, joint=False)
    assert ((y >= lo) & (y <= hi)).all(axis=1).mean() < 1 - ALPHA - 0.05


def test_seasonal_ar_stationary_start():
    problem = seasonal_ar_sets(
        n_train=N, n_calibration=1, n_test=1, amplitude_range=(0.0, 0.0), phi=0.7, seed=5
    )
    stationary_var = 1.0 / (1.0 - 0.49)
    x = problem.train.x[:, :, 0]
    assert x[:, 0].var() == pytest.approx(stationary_var, rel=0.05)
    assert x[:, -1].var() == pytest.approx(stationary_var, rel=0.05)


@pytest.mark.parametrize("kwargs", [{"phi": 1.0}, {"noise_std": 0.0}, {"horizon": 0}])
def test_seasonal_ar_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        seasonal_ar_sets(**kwargs)
