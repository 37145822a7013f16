"""MAPIE 1.6's ACI and EnbPI against pibench's, on the same data and the same base models.

Agreement tests run the registered ``mapie_*`` wrappers and pibench's ``aci`` /
``enbpi`` (linear base: pibench's lstsq OLS and sklearn's LinearRegression agree
to ~1e-15) through ``run_series`` and compare every interval. They need a
configuration where the conventions coincide (methods/mapie_methods.py):

* quantile: MAPIE takes the k-th smallest of n scores, k = ceil(q (n + 1)),
  q = 1 - alpha_t; pibench interpolates at h = (n - 1) q. With h = m an integer,
  k = ceil(m + 2q), so the two agree iff 0 < q <= 1/2; for q > 1/2 (e.g.
  alpha = 0.1) they never do on continuous data, whatever n. So either
  q <= 1/2 on the grid (n - 1) q in N, or the quantile is converted explicitly;
* no alpha_t outside (0, 1) (MAPIE clips) and no y on a bound (MAPIE: a miss);
* alpha with two decimals (MAPIE rounds it).

The other tests pin each documented difference to a concrete case.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from mapie.conformity_scores import AbsoluteConformityScore
from mapie.regression import TimeSeriesRegressor
from sklearn.linear_model import LinearRegression

import pibench.methods.enbpi as enbpi_module
from pibench.benchmarks.protocols import run_series
from pibench.data_loaders.problems import SeriesData, SeriesProblem
from pibench.data_loaders.synthetic import ar_problem
from pibench.methods.aci import ACI
from pibench.methods.calibration.aci import aci_errors, aci_next_alpha, aci_width
from pibench.methods.catalog import get_method
from pibench.methods.mapie_methods import AbsoluteScore, MapieACI, MapieEnbPI, make_estimator

TIGHT = dict(rtol=1e-8, atol=1e-10)


def mapie_order_statistic(sorted_scores: np.ndarray, alpha_t: np.ndarray) -> np.ndarray:
    """MAPIE's width (mapie.utils._compute_regression_quantile): k-th smallest, k = ceil((1 - a)(n + 1))."""
    n, G = sorted_scores.shape
    k = np.ceil((1 - np.asarray(alpha_t, dtype=float)) * (n + 1)).astype(int)
    picked = sorted_scores[np.clip(k, 1, n) - 1, np.arange(G)]
    return np.where(k > n, np.inf, picked)


def run(problem, method, **protocol):
    return run_series(problem, method, kind="online", **protocol)


def assert_same_intervals(a, b):
    for attr in ("point", "lower", "upper"):
        np.testing.assert_allclose(getattr(a, attr), getattr(b, attr), **TIGHT, err_msg=attr)


def min_distance_to_bounds(out) -> float:
    return float(np.min(np.minimum(np.abs(out.y - out.lower), np.abs(out.y - out.upper))))


def prefit_aci(n_cal=30, seed=0, score=None):
    """A MAPIE ACI regressor on a prefit OLS model, its sorted scores and one test input."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30 + n_cal + 1, 2))
    y = X @ np.array([1.0, -2.0]) + rng.normal(size=len(X))
    est = LinearRegression().fit(X[:30], y[:30])
    reg = TimeSeriesRegressor(est, method="aci", cv="prefit", conformity_score=score or AbsoluteScore(),
                              random_state=0).fit(X[30:-1], y[30:-1])
    scores = np.sort(np.abs(y[30:-1] - est.predict(X[30:-1])))
    return reg, scores, X[-1:]


def mapie_bounds(reg, x, alpha):
    point, b = reg.predict(x, confidence_level=1 - alpha, allow_infinite_bounds=True)
    return float(point[0]), float(b[0, 0, 0]), float(b[0, 1, 0])


# --------------------------------------------------------------------------- quantile convention


def test_quantile_conventions_coincide_only_at_levels_at_most_one_half():
    """MAPIE's width is the order statistic; it equals numpy's linear quantile iff (n - 1) q is an
    integer and q <= 1/2; for q > 1/2 (k - 1 >= q (n + 1) - 1 > (n - 1) q) it is strictly wider."""
    for n in range(11, 60):
        reg, scores, x = prefit_aci(n_cal=n, seed=n)
        for alpha in (0.1, 0.2, 0.35, 0.5, 0.6, 0.8):
            point, lo, hi = mapie_bounds(reg, x, alpha)
            expected = mapie_order_statistic(scores[:, None], alpha)[0]
            assert hi - point == pytest.approx(expected, rel=1e-12) and point - lo == pytest.approx(expected, rel=1e-12)
            linear = np.quantile(scores, 1 - alpha)
            on_grid = abs((n - 1) * (1 - alpha) - round((n - 1) * (1 - alpha))) < 1e-9
            if on_grid and 1 - alpha <= 0.5:
                assert expected == pytest.approx(linear, rel=1e-12), (n, alpha)
            else:
                assert abs(expected - linear) > 1e-12, (n, alpha)
            if 1 - alpha > 0.5:
                assert expected > linear, (n, alpha)


# --------------------------------------------------------------------------- ACI agreement


def aci_problem(seed=3):
    return ar_problem(n_train=202, n_test=220, phi=(0.6,), seed=seed)


def test_aci_agrees_natively_where_conventions_coincide():
    """alpha = 0.8, n_cal = 101, gamma = 0.05: (n - 1)(1 - alpha_t) moves on integers (-4 per cover,
    +1 per miss), so pibench's linear quantile is exactly MAPIE's order statistic while q_t < 1/2."""
    problem = aci_problem()
    params = dict(alpha=0.8, gamma=0.05, base="linear")
    protocol = dict(window=202, retrain_every=25, test_steps=200)
    pib = get_method("aci")(**params)
    mp = get_method("mapie_aci")(**params)
    out_p, out_m = run(problem, pib, **protocol), run(problem, mp, **protocol)

    grid = 100 * (1 - np.ravel(pib.alpha_path_))
    assert np.allclose(grid, np.round(grid), atol=1e-9) and grid.min() >= 1 and grid.max() <= 49
    assert len(np.unique(np.round(grid))) > 5  # alpha_t really moved
    assert min_distance_to_bounds(out_p) > 1e-9
    assert_same_intervals(out_p, out_m)
    np.testing.assert_allclose(np.ravel(mp.alpha_path_), np.ravel(pib.alpha_path_), rtol=0, atol=1e-12)
    np.testing.assert_allclose(mp.alpha_t(), pib.alpha_t_, rtol=0, atol=1e-12)


class OrderStatisticACI(ACI):
    """pibench's ACI (scores, alpha_t recursion, error rule) with MAPIE's quantile instead of linear."""

    def _half_width(self):
        return mapie_order_statistic(self.sorted_scores_, self.alpha_t_), self.alpha_t_ >= 1


def test_aci_agrees_at_alpha_0_1_after_converting_the_quantile():
    problem = aci_problem(seed=5)
    params = dict(alpha=0.1, gamma=0.005, base="linear")
    protocol = dict(window=202, retrain_every=40, test_steps=200)
    pib, mp = OrderStatisticACI(**params), MapieACI(**params)
    out_p, out_m = run(problem, pib, **protocol), run(problem, mp, **protocol)

    path = np.ravel(pib.alpha_path_)
    assert 0 < path.min() and path.max() < 1 and np.ptp(path) > 0.02
    assert min_distance_to_bounds(out_p) > 1e-9
    assert_same_intervals(out_p, out_m)
    np.testing.assert_array_equal(np.ravel(mp.alpha_path_), path)  # same float operations, bit for bit
    # ... while pibench's own (linear) quantile gives narrower intervals on the same run
    plain = run(problem, get_method("aci")(**params), **protocol)
    assert np.all(plain.upper - plain.lower < out_m.upper - out_m.lower)


def test_panel_series_are_independent():
    a, b = aci_problem(seed=7), aci_problem(seed=8)
    panel = SeriesProblem(name="panel", y=np.concatenate([a.y, b.y], axis=1),
                          X=np.concatenate([a.X, b.X], axis=1), test_start=a.test_start)
    protocol = dict(window=202, retrain_every=50, test_steps=60)
    out = run(panel, MapieACI(alpha=0.1, gamma=0.01, base="linear"), **protocol)
    assert out.lower.shape == (60, 2)
    for g, single in enumerate((a, b)):
        one = run(single, MapieACI(alpha=0.1, gamma=0.01, base="linear"), **protocol)
        np.testing.assert_array_equal(out.upper[:, g], one.upper[:, 0])
        np.testing.assert_array_equal(out.lower[:, g], one.lower[:, 0])


def test_aci_refit_keeps_alpha_t_and_fit_resets_it():
    problem = aci_problem()
    m = MapieACI(alpha=0.1, gamma=0.05, base="linear").fit(problem.window(0, 202))
    for t in range(202, 212):  # far-off targets: ten misses
        m.predict_interval(problem.X[t:t + 1])
        m.update(problem.y[t:t + 1] + 100.0)
    low = m.alpha_t().copy()
    assert low[0] < 0.05
    m.refit(problem.window(10, 212))
    np.testing.assert_array_equal(m.alpha_t(), low)
    m.fit(problem.window(10, 212))
    np.testing.assert_array_equal(m.alpha_t(), [0.1])


# --------------------------------------------------------------------------- EnbPI agreement


def enbpi_problem(seed=11):
    return ar_problem(n_train=101, n_test=160, phi=(0.6,), seed=seed)


@pytest.mark.parametrize("block_length", [1, 4])
@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_enbpi_agrees_with_mapies_resamples(monkeypatch, alpha, block_length):
    problem = enbpi_problem()
    protocol = dict(window=101, retrain_every=40, test_steps=80)
    mp = MapieEnbPI(alpha=alpha, n_models=20, block_length=block_length, base="linear")
    out_m = run(problem, mp, **protocol)
    assert mp.diagnostics()["n_unused_points"] == 0  # else MAPIE keeps NaN slots (difference 10)

    # pibench's EnbPI on MAPIE's own resamples (same int seed -> split() yields them again)
    reg = mp.regressors_[0]
    first = problem.window(0, 101)
    idx = np.stack([train for train, _ in reg.cv.split(first.X[:, 0, :])])
    assert idx.shape == (20, 101 if block_length == 1 else (101 // block_length + 1) * block_length)
    monkeypatch.setattr(enbpi_module, "bootstrap_indices", lambda n, n_models, rng, block_length=1: idx)

    # MAPIE's width is the k-th smallest of n residuals: pibench's linear quantile at level (k-1)/(n-1).
    n = 101
    k = int(np.ceil((1 - alpha) * (n + 1)))
    pib_alpha = 1 - (k - 1) / (n - 1)
    if alpha == 0.5:  # n odd: the median in both conventions, no conversion at all
        assert pib_alpha == alpha
    pib = get_method("enbpi")(alpha=pib_alpha, n_models=20, block_length=block_length, base="linear")
    out_p = run(problem, pib, **protocol)
    assert min_distance_to_bounds(out_p) > 0  # (EnbPI's update does not depend on coverage anyway)
    assert_same_intervals(out_p, out_m)
    np.testing.assert_allclose(np.sort(pib.residuals_[:, 0]), np.sort(reg.conformity_scores_), **TIGHT)


def test_enbpi_refit_keeps_models_unless_asked():
    problem = enbpi_problem()
    m = MapieEnbPI(alpha=0.1, n_models=5, base="linear").fit(problem.window(0, 101))
    before = m.regressors_[0]
    assert m.refit(problem.window(5, 106)).regressors_[0] is before
    m2 = MapieEnbPI(alpha=0.1, n_models=5, base="linear", refit_models=True).fit(problem.window(0, 101))
    before2 = m2.regressors_[0]
    assert m2.refit(problem.window(5, 106)).regressors_[0] is not before2


# --------------------------------------------------------------------------- documented differences


def test_difference_mapie_clips_alpha_t():
    alpha, gamma = 0.1, 1.0
    # above 1: ten covers take pibench to alpha_t = 1.1 (empty interval), MAPIE to 1.0 (+/- smallest score)
    reg, scores, x = prefit_aci()
    a_pib = np.array([alpha])
    for _ in range(10):
        point, _, _ = mapie_bounds(reg, x, alpha)
        reg.adapt_conformal_inference(x, np.array([point]), gamma=gamma, confidence_level=1 - alpha)
        a_pib = aci_next_alpha(a_pib, alpha, gamma, np.zeros(1))
    assert reg.current_alpha[0.1] == 1.0 and a_pib[0] == pytest.approx(1.1)
    point, lo, hi = mapie_bounds(reg, x, alpha)
    assert hi - point == pytest.approx(scores[0])  # k = ceil(0 * (n + 1)) = 0 -> smallest score
    width, empty = aci_width(scores[:, None], a_pib)
    assert empty[0] and width[0] == 0.0

    # below 0: a miss, then a cover (of the infinite interval). MAPIE: 0 -> 0.1 (finite again);
    # pibench: -0.8 -> -0.7 (still infinite)
    reg, scores, x = prefit_aci()
    point, _, _ = mapie_bounds(reg, x, alpha)
    reg.adapt_conformal_inference(x, np.array([point + 1e6]), gamma=gamma, confidence_level=1 - alpha)
    a_pib = aci_next_alpha(np.array([alpha]), alpha, gamma, np.ones(1))
    assert reg.current_alpha[0.1] == 0.0 and a_pib[0] == pytest.approx(-0.8)
    point, lo, hi = mapie_bounds(reg, x, alpha)
    assert lo == -np.inf and hi == np.inf
    reg.adapt_conformal_inference(x, np.array([point]), gamma=gamma, confidence_level=1 - alpha)
    a_pib = aci_next_alpha(a_pib, alpha, gamma, np.zeros(1))
    assert reg.current_alpha[0.1] == pytest.approx(0.1) and a_pib[0] == pytest.approx(-0.7)
    assert np.isfinite(mapie_bounds(reg, x, alpha)[2])
    assert np.isinf(aci_width(scores[:, None], a_pib)[0][0])


def test_difference_point_on_a_bound_is_a_miss_in_mapie():
    alpha, gamma = 0.1, 0.1
    reg, scores, x = prefit_aci()
    _, lo, hi = mapie_bounds(reg, x, alpha)
    reg.adapt_conformal_inference(x, np.array([hi]), gamma=gamma, confidence_level=1 - alpha)
    err = aci_errors(np.array([hi]), np.array([lo]), np.array([hi]), np.array([False]))
    assert err[0] == 0.0  # pibench: covered
    assert reg.current_alpha[0.1] == pytest.approx(0.1 + gamma * (0.1 - 1))  # MAPIE: a miss -> 0.01
    assert aci_next_alpha(0.1, alpha, gamma, err[0]) == pytest.approx(0.11)


def test_difference_mapie_rounds_alpha_to_two_decimals():
    reg, scores, x = prefit_aci()
    assert mapie_bounds(reg, x, 0.125) == mapie_bounds(reg, x, 0.12)
    assert list(reg.current_alpha) == [0.12]  # np.round(0.125, 2): alpha_1 and the update's target
    point = mapie_bounds(reg, x, 0.125)[0]
    with pytest.raises(KeyError):  # the update looks alpha up unrounded: MAPIE's ACI cannot run at 0.125
        reg.adapt_conformal_inference(x, np.array([point]), gamma=1.0, confidence_level=0.875)
    reg.adapt_conformal_inference(x, np.array([point]), gamma=1.0, confidence_level=0.88)
    assert reg.current_alpha[0.12] == pytest.approx(0.24)  # target is the rounded alpha: 0.12 + (0.12 - 0)
    with pytest.raises(ValueError, match="two decimals"):
        MapieACI(alpha=0.125, base="linear").fit(aci_problem().window(0, 202))


def test_difference_symmetric_score_ignores_allow_infinite_bounds():
    """MAPIE's own AbsoluteConformityScore raises once alpha_t < 1/(n + 1); AbsoluteScore gives +/- inf."""
    n, alpha, gamma = 30, 0.1, 0.05
    raw, scores, x = prefit_aci(n_cal=n, score=AbsoluteConformityScore())
    fixed, _, _ = prefit_aci(n_cal=n)
    assert mapie_bounds(raw, x, alpha) == mapie_bounds(fixed, x, alpha)  # same numbers where MAPIE works
    for reg in (raw, fixed):
        for _ in range(2):  # two misses: alpha_t = 0.1 - 2 * 0.045 = 0.01 < 1/31
            reg.adapt_conformal_inference(x, np.array([1e6]), gamma=gamma, confidence_level=1 - alpha)
        assert reg.current_alpha[0.1] == pytest.approx(0.01)
    with pytest.raises(ValueError, match="unbounded=True"):
        mapie_bounds(raw, x, alpha)
    point, lo, hi = mapie_bounds(fixed, x, alpha)
    assert lo == -np.inf and hi == np.inf
    assert np.isinf(mapie_order_statistic(scores[:, None], 0.01)[0])


def test_difference_timeseries_default_score_is_signed():
    problem = enbpi_problem()
    window = problem.window(0, 101)
    ivs = {}
    for score in ("signed", "absolute"):
        m = MapieEnbPI(alpha=0.1, n_models=10, base="linear", score=score).fit(window)
        ivs[score] = m.predict_interval(problem.X[101:121])
        assert m.regressors_[0].conformity_score_function_.sym is (score == "absolute")
    s, a = ivs["signed"], ivs["absolute"]
    np.testing.assert_allclose(s.point, a.point, rtol=1e-12)
    np.testing.assert_allclose(a.upper - a.point, a.point - a.lower, rtol=1e-12)
    assert not np.allclose(s.upper - s.point, s.point - s.lower, rtol=1e-3)  # asymmetric


def test_difference_update_defaults_to_the_single_estimator():
    problem = enbpi_problem()
    m = MapieEnbPI(alpha=0.1, n_models=10, base="linear").fit(problem.window(0, 101))
    reg = m.regressors_[0]
    x, y = problem.X[101:102, 0, :], problem.y[101:102, 0]
    centre = m.predict_interval(problem.X[101:102]).point[0, 0]
    single = reg.estimator_.single_estimator_.predict(x)[0]
    assert abs(centre - single) > 1e-6
    scores = reg.conformity_scores_.copy()
    m.update(problem.y[101:102])
    assert reg.conformity_scores_[-1] == pytest.approx(abs(y[0] - centre), rel=1e-12)
    np.testing.assert_array_equal(reg.conformity_scores_[:-1], scores[1:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg.update(x, y)  # MAPIE's default, ensemble=False
    assert reg.conformity_scores_[-1] == pytest.approx(abs(y[0] - single), rel=1e-12)


def test_difference_block_bootstrap_resample_length():
    n, L = 50, 4
    X = np.zeros((n, 1))
    m = MapieEnbPI(n_models=3, block_length=L)
    lengths = {len(train) for train, _ in m.resampler(seed=0).split(X)}
    assert lengths == {(n // L + 1) * L}  # 52 > 50
    pib = enbpi_module.bootstrap_indices(n, 3, np.random.default_rng(0), block_length=L)
    assert pib.shape == (3, n)


# --------------------------------------------------------------------------- wrapper checks


def test_mlp_base_has_the_papers_settings_and_runs():
    mlp = make_estimator("mlp", seed=4).get_params()
    expected = dict(mlp__hidden_layer_sizes=(100,), mlp__activation="logistic", mlp__solver="sgd",
                    mlp__learning_rate_init=1e-3, mlp__momentum=0.9, mlp__batch_size=100, mlp__max_iter=300,
                    mlp__random_state=4)
    assert {k: mlp[k] for k in expected} == expected
    problem = ar_problem(n_train=120, n_test=20, phi=(0.6,), seed=2)
    outs = [run(problem, MapieACI(alpha=0.1, gamma=0.01, base="mlp", random_state=3), window=120,
                retrain_every=10) for _ in range(2)]
    assert np.all(np.isfinite(outs[0].upper)) and np.all(outs[0].upper > outs[0].lower)
    np.testing.assert_array_equal(outs[0].upper, outs[1].upper)  # seeded


@pytest.mark.parametrize("cls, params, match", [
    (MapieACI, dict(base="tree"), "base="),
    (MapieACI, dict(score="sym"), "score="),
    (MapieACI, dict(gamma=1.5), "gamma="),
    (MapieACI, dict(gamma=-0.1), "gamma="),
    (MapieACI, dict(alpha=1.0), "alpha="),
    (MapieACI, dict(calibration_fraction=1.0), "calibration_fraction="),
    (MapieEnbPI, dict(n_models=1), "n_models="),
    (MapieEnbPI, dict(block_length=0), "block_length="),
    (MapieEnbPI, dict(block_length=500), "block_length="),
    (MapieEnbPI, dict(base="tree"), "base="),
])
def test_bad_parameters_raise(cls, params, match):
    window = SeriesData(y=np.zeros((40, 1)) + np.arange(40)[:, None],
                        X=np.random.default_rng(0).normal(size=(40, 1, 1)))
    with pytest.raises(ValueError, match=match):
        cls(**{"base": "linear", **params}).fit(window)


def test_registered():
    assert get_method("mapie_aci") is MapieACI and get_method("mapie_enbpi") is MapieEnbPI


def test_mapie_aci_wrapper_gives_infinite_intervals_where_mapie_would_raise():
    problem = aci_problem()
    m = MapieACI(alpha=0.1, gamma=0.05, base="linear").fit(problem.window(0, 202))  # n_cal = 101
    t = 202
    while m.alpha_t()[0] >= 1 / 102:  # misses until k = ceil((1 - alpha_t) 102) > 101
        m.predict_interval(problem.X[t:t + 1])
        m.update(problem.y[t:t + 1] + 100.0)
        t += 1
    iv = m.predict_interval(problem.X[t:t + 1])
    assert iv.lower[0, 0] == -np.inf and iv.upper[0, 0] == np.inf
    m.update(problem.y[t:t + 1])  # covered: alpha_t grows again
    assert m.alpha_t()[0] == pytest.approx(m.alpha_path_[-1][0] + 0.05 * 0.1)


@pytest.mark.parametrize("window, alpha, need", [(6, 0.1, 10), (150, 0.005, 200), (9, 0.9, 11)])
def test_mapie_enbpi_refuses_a_window_too_short_for_its_alpha_before_any_fit(window, alpha, need):
    """MAPIE takes the (1 - alpha) quantile of the window's scores only if there are at least max(1 / alpha,
    1 / (1 - alpha)) of them; the run failed after the window's fits with MAPIE's "too low" message. The check
    is now the method's own, before any work; one step more passes."""
    m = MapieEnbPI(alpha=alpha, n_models=3)
    with pytest.raises(ValueError, match=rf"window of {window} steps is too short for alpha={alpha:g}.* = {need};"):
        m.check_window(window)
    m.check_window(need)
    signed = MapieEnbPI(alpha=alpha, n_models=3, score="signed")  # each tail's quantile from half the scores
    with pytest.raises(ValueError, match=rf"at least {2 * need} steps"):
        signed.check_window(2 * need - 1)
    signed.check_window(2 * need)
    from mapie.utils import _check_alpha_and_n_samples

    _check_alpha_and_n_samples(alpha, need)  # MAPIE's own check passes at that size
    with pytest.raises(ValueError, match="Number of samples of the score is too low"):
        _check_alpha_and_n_samples(alpha, need - 1)
