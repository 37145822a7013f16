"""ACI (docs/guide/methods.md) against a hand-worked sequence of alpha_t updates, and its coverage."""

import numpy as np
import pytest

from pibench.benchmarks.protocols import run_series
from pibench.data_loaders.problems import SeriesData
from pibench.data_loaders.synthetic import ar_problem
from pibench.methods.calibration.aci import aci_width
from pibench.methods.calibration.quantile import linear_quantile
from pibench.methods.catalog import get_method
from pibench.methods.forecasters.split import WindowFit


def make_aci(alpha, gamma, scores):
    method = get_method("aci")(alpha=alpha, gamma=gamma, base="linear")
    method.window_fit_ = WindowFit(residuals=np.asarray(scores, float)[:, None],
                                   predict=lambda X: np.zeros(X.shape[:2]))
    method.sorted_scores_ = np.sort(np.asarray(scores, dtype=float))[:, None]
    method._reset_online_state(SeriesData(y=np.zeros((1, 1)), X=np.zeros((1, 1, 1))))
    return method


def step(method, y):
    iv = method.predict_interval(np.zeros((1, 1, 1)))
    method.update(np.array([[y]]))
    return float(iv.lower[0, 0]), float(iv.upper[0, 0])


def test_linear_quantile_matches_numpy():
    rng = np.random.default_rng(0)
    scores = np.sort(rng.exponential(size=(37, 3)), axis=0)
    levels = rng.uniform(size=(5, 3))
    expected = np.array([[np.quantile(scores[:, g], q) for g, q in enumerate(row)] for row in levels])
    np.testing.assert_allclose(linear_quantile(scores, levels), expected, rtol=1e-12)


def test_hand_worked_sequence_reaching_empty_intervals():
    # scores 1..5, n = 5; quantile at level q: h = 4 q, s[floor h] + frac * (next - s[floor h])
    m = make_aci(alpha=0.8, gamma=0.5, scores=[5, 1, 4, 2, 3])
    # t=1: alpha_1 = 0.8, level 0.2, h = 0.8 -> 1 + 0.8 = 1.8; y = 0 covered
    assert step(m, 0.0) == pytest.approx((-1.8, 1.8))
    # alpha_2 = 0.8 + 0.5 (0.8 - 0) = 1.2 >= 1: empty interval [0, 0]; it is a miss even though y = 0
    assert step(m, 0.0) == (0.0, 0.0)
    # alpha_3 = 1.2 + 0.5 (0.8 - 1) = 1.1: empty again; y = 5 missed
    assert step(m, 5.0) == (0.0, 0.0)
    # alpha_4 = 1.1 - 0.1 = 1.0: still >= 1, empty
    assert step(m, 5.0) == (0.0, 0.0)
    # alpha_5 = 0.9: level 0.1, h = 0.4 -> 1.4; y = 3 missed
    assert step(m, 3.0) == pytest.approx((-1.4, 1.4))
    # alpha_6 = 0.9 - 0.1 = 0.8
    assert m.alpha_t_[0] == pytest.approx(0.8)
    assert np.allclose(np.ravel(m.alpha_path_), [0.8, 1.2, 1.1, 1.0, 0.9])


def test_hand_worked_sequence_reaching_infinite_intervals():
    m = make_aci(alpha=0.1, gamma=0.5, scores=[1, 2, 3, 4, 5])
    # alpha_1 = 0.1: level 0.9, h = 3.6 -> 4 + 0.6 = 4.6; y = 10 missed
    assert step(m, 10.0) == pytest.approx((-4.6, 4.6))
    # alpha_2 = 0.1 + 0.5 (0.1 - 1) = -0.35 <= 0: infinite interval, covers anything
    assert step(m, 1e9) == (-np.inf, np.inf)
    # alpha_3 = -0.35 + 0.05 = -0.30: still infinite; alpha_t is not clipped
    assert step(m, 0.0) == (-np.inf, np.inf)
    assert m.alpha_t_[0] == pytest.approx(-0.25)


def test_gamma_zero_keeps_alpha_constant():
    m = make_aci(alpha=0.1, gamma=0.0, scores=np.arange(1, 11))
    widths = [step(m, y)[1] for y in [0.0, 100.0, -100.0, 0.5]]
    assert widths == pytest.approx([np.quantile(np.arange(1, 11), 0.9)] * 4)


def test_aci_width_vectorised_over_gammas():
    scores = np.sort(np.array([[3.0, 1.0], [1.0, 2.0], [2.0, 3.0]]), axis=0)
    width, empty = aci_width(scores, np.array([[0.5, 0.5], [-0.1, 1.0]]))
    np.testing.assert_allclose(width[0], [2.0, 2.0])
    assert width[1, 0] == np.inf and width[1, 1] == 0.0
    assert empty.tolist() == [[False, False], [False, True]]


def test_refit_keeps_alpha_t_but_fit_resets_it():
    problem = ar_problem(n_train=400, n_test=50, seed=1)
    m = get_method("aci")(alpha=0.1, gamma=0.05, base="linear").fit(problem.window(0, 400))
    m.predict_interval(problem.X[400:401])
    m.update(problem.y[400:401] + 100.0)  # a certain miss
    assert m.alpha_t_[0] == pytest.approx(0.1 + 0.05 * (0.1 - 1))
    m.refit(problem.window(1, 401))
    assert m.alpha_t_[0] == pytest.approx(0.1 + 0.05 * (0.1 - 1))
    m.fit(problem.window(1, 401))
    assert m.alpha_t_[0] == pytest.approx(0.1)


@pytest.mark.parametrize("base", ["linear"])
def test_split_conformal_covers_ar1_at_nominal_level(base):
    """gamma = 0 on a linear AR(1): 2,000 online test points, coverage within 87-93%."""
    problem = ar_problem(n_train=1000, n_test=2000, phi=(0.6,), seed=0)
    method = get_method("aci")(alpha=0.1, gamma=0.0, base=base, random_state=0)
    out = run_series(problem, method, kind="online", window=500, retrain_every=1)
    covered = ((out.y >= out.lower) & (out.y <= out.upper)).mean()
    assert out.y.size == 2000
    assert 0.87 <= covered <= 0.93
    # the oracle interval length is 2 * 1.6449 = 3.29 for N(0, 1) noise
    assert np.mean(out.upper - out.lower) == pytest.approx(3.29, rel=0.08)


def test_vectorised_grid_equals_the_step_by_step_method():
    from pibench.methods.calibration.aci import aci_online

    problem = ar_problem(n_train=300, n_test=200, seed=5)
    gammas = [0.0, 0.005, 0.05, 0.3]
    runs = [run_series(problem, get_method("aci")(gamma=g, base="linear"), kind="offline", window=300)
            for g in gammas]
    m = get_method("aci")(base="linear").fit(problem.window(0, 300))
    points = m.window_fit_.predict(problem.X[300:])
    lower, upper = aci_online(points, problem.y[300:], m.sorted_scores_, 0.1, gammas)
    for k, out in enumerate(runs):
        np.testing.assert_allclose(lower[k], out.lower, rtol=1e-12)
        np.testing.assert_allclose(upper[k], out.upper, rtol=1e-12)
    assert np.isinf(upper[3]).any()  # gamma = 0.3 drives alpha_t below 0 at some step


def test_a_window_of_too_few_calibration_scores_for_the_level_is_noted_before_the_run():
    """window = 4 (2 calibration scores) ran without a word: ACI at gamma = 0, split conformal for 90%, covered
    37% there. The note says so where the calibration part holds fewer than (1 - alpha) / alpha scores, the
    fewest for which ceil((n + 1)(1 - alpha)) <= n (a finite conformal quantile), and names a window that has them."""
    from pibench.benchmarks.preflight import prepare_tasks
    from pibench.benchmarks.suite import build_tasks, load_suite

    aci = get_method("aci")
    for alpha, need in ((0.1, 9), (0.2, 4), (0.05, 19)):
        method = aci(alpha=alpha)
        short = method.window_note(2 * need - 2)  # a calibration half of need - 1 scores
        assert short is not None and f"{need - 1} calibration scores" in short and f"the {need} that" in short
        assert method.window_note(2 * need) is None
    assert get_method("conformal_pid")(alpha=0.1).window_note(4) is None  # an online radius the scores only start
    # NexCP: the scores' weights, sum of decay^i, must reach (1 - alpha) / alpha (review: at decay 0.99 a window of
    # 18, nine scores, was silent, every width infinite); by hand, 0.99 (1 - 0.99^9) / 0.01 = 8.56 < 9 <= 9.47 (ten)
    from pibench.methods.calibration.nexcp import nexcp_width

    nexcp = get_method("nexcp")
    assert "9 calibration scores (calibration_fraction=0.5) weighing 8.56 at decay=0.99" in nexcp().window_note(18)
    assert "a window of at least 20 steps" in nexcp().window_note(18) and nexcp().window_note(20) is None
    scores = np.arange(1.0, 11.0)[:, None]
    assert np.isinf(nexcp_width(scores[:9], 0.1, 0.99)).all() and np.isfinite(nexcp_width(scores, 0.1, 0.99)).all()
    with pytest.raises(ValueError, match=r"decay=0.85 at alpha=0.1: .* every interval would be infinite; give decay "
                                         r"above 0.9"):
        nexcp(alpha=0.1, decay=0.85).check_params()
    assert np.isinf(nexcp_width(np.arange(1.0, 10001.0)[:, None], 0.1, 0.85)).all()  # whatever the window
    problem = ar_problem(n_train=200, n_test=200, seed=0)
    out = run_series(problem, aci(alpha=0.1, gamma=0.0, base="linear"), kind="online", window=8,
                     retrain_every=1)
    covered = ((out.lower <= out.y) & (out.y <= out.upper)).mean()
    assert covered < 0.8  # what the note is for: 4 scores do not reach the 90% quantile (0.68-0.73 over seeds 0-4)
    suite = load_suite("default", quick=True)
    tasks = build_tasks({**suite, "protocol": {**suite.get("protocol", {}), "window": 4}}, methods=["aci", "sf_ogd"],
                        datasets=["ar1"])
    _, notes = prepare_tasks(tasks)
    assert [n for n in notes if "calibration scores" in n] == [
        "dataset 'ar1': window=4 leaves aci 2 calibration scores (calibration_fraction=0.5), fewer than the 9 that a "
        "finite 90% conformal quantile needs: its intervals will be too short, or infinite; give a window of at "
        "least 17 steps or a larger calibration_fraction"]
