"""The AutoReg baseline's intervals equal statsmodels' own one-step prediction intervals."""

import dataclasses

import numpy as np
import pytest
from statsmodels.tsa.ar_model import AutoReg

from pibench.data_loaders.synthetic import ar_problem
from pibench.methods.catalog import get_method


@pytest.mark.parametrize("lags,trend", [(1, "c"), (3, "c"), (2, "n")])
def test_intervals_match_statsmodels_get_prediction(lags, trend):
    problem = ar_problem(n_train=300, n_test=5, phi=(0.5, -0.2), seed=4)
    W = 300
    method = get_method("autoreg")(alpha=0.1, lags=lags, trend=trend).fit(problem.window(0, W))
    fitted = AutoReg(problem.y[:W, 0], lags=lags, trend=trend).fit()
    # one step past the fitted sample: statsmodels' own interval
    iv = method.predict_interval(problem.X[W : W + 1])
    pred = fitted.get_prediction(start=W, end=W)
    assert iv.point[0, 0] == pytest.approx(pred.predicted_mean[0], rel=1e-9)
    assert (iv.lower[0, 0], iv.upper[0, 0]) == pytest.approx(tuple(pred.conf_int(alpha=0.1)[0]), rel=1e-9)
    # later steps between refits: the fitted parameters applied to the revealed history
    # (statsmodels' append(refit=False) gives the same mean; it re-estimates sigma2, we keep the fit's)
    reference = fitted
    for t in range(W + 1, W + 4):
        method.update(problem.y[t - 1 : t])
        reference = reference.append(problem.y[t - 1 : t, 0])
        iv = method.predict_interval(problem.X[t : t + 1])
        mean = reference.get_prediction(start=t, end=t).predicted_mean[0]
        half = 1.6448536269514722 * np.sqrt(fitted.sigma2)
        assert (iv.lower[0, 0], iv.point[0, 0], iv.upper[0, 0]) == pytest.approx(
            (mean - half, mean, mean + half), rel=1e-9)


def test_too_short_window_is_a_clear_error():
    problem = ar_problem(n_train=300, n_test=5, seed=0)
    with pytest.raises(ValueError, match="longer window"):
        get_method("autoreg")(lags=5).fit(problem.window(0, 8))


def test_order_chosen_by_bic_and_reported():
    problem = ar_problem(n_train=3000, n_test=5, phi=(0.5, -0.3), seed=1)
    method = get_method("autoreg")(lags="bic", max_lags=10).fit(problem.window(0, 3000))
    assert method.diagnostics() == {"selected_lags": "1,2", "ar_order": 2, "candidate_lags": 10,
                                    "autoreg_singular_fits": 0}
    reference = AutoReg(problem.y[:3000, 0], lags=2, trend="c").fit()
    iv = method.predict_interval(problem.X[3000:3001])
    assert iv.point[0, 0] == pytest.approx(reference.get_prediction(start=3000, end=3000).predicted_mean[0])


def test_white_noise_selects_no_lag_and_fits_a_constant():
    rng = np.random.default_rng(3)
    y = 5.0 + rng.normal(size=(2000, 1))
    from pibench.data_loaders.problems import SeriesData

    method = get_method("autoreg")(lags="bic", max_lags=5).fit(SeriesData(y=y, X=np.zeros((2000, 1, 1))))
    assert method.diagnostics() == {"selected_lags": "", "ar_order": 0, "candidate_lags": 5,
                                    "autoreg_singular_fits": 0}
    iv = method.predict_interval(np.zeros((1, 1, 1)))
    half = 1.6448536269514722 * y[:, 0].std()  # AutoReg(0): the MLE variance of y around its mean
    assert iv.point[0, 0] == pytest.approx(y.mean(), rel=1e-9)
    assert iv.upper[0, 0] - iv.point[0, 0] == pytest.approx(half, rel=1e-9)
    method.update(np.array([[100.0]]))  # no lag: the next forecast does not move
    assert method.predict_interval(np.zeros((1, 1, 1))).point[0, 0] == pytest.approx(y.mean(), rel=1e-9)


@pytest.mark.parametrize("lags", [2, "bic"])
def test_a_series_far_from_zero_gets_the_intervals_of_the_same_series_near_it(lags):
    """y + 1e12: the same model moved up (least squares on the raw values was near singular there, its
    intervals tens of millions wide)."""
    problem = ar_problem(n_train=300, n_test=5, phi=(0.5, -0.2), seed=4)
    far = dataclasses.replace(problem, y=problem.y + 1e12)  # (a problem's arrays are read-only)
    near_iv, far_iv = (get_method("autoreg")(alpha=0.1, lags=lags).fit(p.window(0, 300)).predict_interval(
        p.X[300:301]) for p in (problem, far))
    assert far_iv.upper[0, 0] - far_iv.lower[0, 0] == pytest.approx(near_iv.upper[0, 0] - near_iv.lower[0, 0],
                                                                    rel=1e-3)
    assert far_iv.point[0, 0] - 1e12 == pytest.approx(near_iv.point[0, 0], abs=1e-3)


@pytest.mark.parametrize("lags", [1, "aic"])
def test_a_constant_window_is_counted_not_warned_at_every_refit(lags, recwarn):
    """A window held constant (a price at a cap) has collinear lags: statsmodels' SingularMatrixWarning was
    printed at every refit. It is counted once per fit (autoreg_singular_fits); the fit is statsmodels' own
    minimum-norm one, a band of zero width at the constant."""
    problem = ar_problem(n_train=300, n_test=5, seed=0)
    y = problem.y.copy()
    y[:100] = 2.5
    flat = dataclasses.replace(problem, y=y)
    method = get_method("autoreg")(alpha=0.1, lags=lags)
    method.fit(flat.window(0, 100))
    iv = method.predict_interval(flat.X[100:101])
    assert iv.lower[0, 0] == pytest.approx(2.5) and iv.upper[0, 0] == pytest.approx(2.5)
    method.fit(flat.window(150, 250))  # an ordinary window: not counted
    method.fit(flat.window(0, 100))
    assert method.diagnostics()["autoreg_singular_fits"] == 2
    assert not [w for w in recwarn if "rank-deficient" in str(w.message)]
