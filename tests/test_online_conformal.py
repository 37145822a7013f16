"""Online conformal calibrators beyond the paper: hand-worked steps, coverage guarantees, reductions to ACI."""

import math

import numpy as np
import pytest

from pibench.benchmarks.protocols import run_series
from pibench.data_loaders.synthetic import ar_problem
from pibench.methods.calibration.aci import aci_next_alpha, aci_width
from pibench.methods.calibration.dtaci import DtACI, covering_level, default_eta_sigma
from pibench.methods.calibration.online_quantile import SAOCP, ScaleFreeOGD
from pibench.methods.calibration.pid import ConformalPID, saturation
from pibench.methods.catalog import get_method

ALPHA = 0.1


def run_calibrator(calibrator, scores):
    """Feed (T, G) scores; return the radii used and the errors."""
    radii, errors = [], []
    for s in scores:
        q = calibrator.radius()
        radii.append(q)
        errors.append(calibrator.update(s, q))
    return np.array(radii), np.array(errors)


# ----------------------------------------------------------------- hand-worked steps


def test_quantile_tracker_by_hand():
    calibration = np.array([[0.0], [4.0], [2.0], [1.0], [3.0]])  # (1 - alpha) quantile = 3.6, range 4
    tracker = ConformalPID(calibration, ALPHA, lr=0.5, window=10)
    radii, errors = run_calibrator(tracker, np.array([[5.0], [1.0], [2.0]]))
    # q1 = 3.6; s = 5 > 3.6 widens the range to 5: q2 = 3.6 + 0.5 * 5 * 0.9 = 5.85; s = 1: q3 = 5.85 - 0.5 * 5 * 0.1
    np.testing.assert_allclose(radii[:, 0], [3.6, 5.85, 5.6])
    np.testing.assert_allclose(errors[:, 0], [1, 0, 0])


def test_saturation_and_integrator_by_hand():
    np.testing.assert_allclose(saturation(np.array([2.0]), 10, c_sat=5.0, k_i=3.0),
                               3.0 * math.tan(2.0 * math.log(10) / 50))
    assert saturation(np.array([1e6]), 10, 5.0, 3.0)[0] == np.inf
    assert saturation(np.array([-1e6]), 10, 5.0, 3.0)[0] == -np.inf
    assert saturation(np.array([5.0]), 1, 5.0, 3.0)[0] == 0.0
    pid = ConformalPID(np.array([[0.0], [1.0]]), ALPHA, lr=0.0, integrator=True, c_sat=5.0, k_i=2.0)
    run_calibrator(pid, np.array([[10.0], [10.0]]))  # two misses: E = 2 (1 - alpha) = 1.8 after t = 2
    np.testing.assert_allclose(pid.radius() - pid.tracked, 2.0 * math.tan(1.8 * math.log(2) / (2 * 5.0)))


def test_sf_ogd_by_hand():
    ogd = ScaleFreeOGD(np.array([[2.0]]), ALPHA)  # D = sqrt(3) * 2
    # warm start on s = 2 from delta 0: g = -(1 - alpha) = -0.9, delta = 0 + D / sqrt(3 * 0.81) * 0.9 = 2
    np.testing.assert_allclose(ogd.radius(), [2.0])
    ogd.update(np.array([1.0]), ogd.radius())  # s <= delta: g = alpha = 0.1
    expected = 2.0 - math.sqrt(3) * 2 / math.sqrt(3 * (0.81 + 0.01)) * 0.1
    np.testing.assert_allclose(ogd.radius(), [expected])


def test_saocp_lifetimes_and_convergence_on_a_constant_stream():
    saocp = SAOCP(np.array([[1.0], [3.0]]), ALPHA, lifetime=8)
    assert [saocp._lifetime(t) for t in (1, 2, 3, 4, 6, 8)] == [8, 16, 8, 32, 16, 64]
    assert len(saocp.start) == 2 and saocp.start.tolist() == [1, 2]  # one expert per step of the warm start
    radii, _ = run_calibrator(saocp, np.full((300, 1), 2.0))
    # the 0.9 quantile of a constant is the constant; new experts keep restarting, so the radius hovers near it
    assert abs(radii[-100:, 0].mean() - 2.0) < 0.6
    assert len(saocp.start) < 40  # experts expire: about lifetime x log2(t) stay alive


def test_dtaci_covering_level_and_one_update_by_hand():
    sorted_scores = np.array([[0.0], [1.0], [2.0], [4.0]])  # Q(q) = linear interpolation over 3 gaps
    np.testing.assert_allclose(covering_level(sorted_scores, np.array([1.5])), [1 - 1.5 / 3])
    np.testing.assert_allclose(covering_level(sorted_scores, np.array([3.0])), [1 - 2.5 / 3])
    assert covering_level(sorted_scores, np.array([-1.0]))[0] == 1.0
    assert covering_level(sorted_scores, np.array([5.0]))[0] == 0.0
    # the interval at level beta(s) has exactly s as its radius
    beta = covering_level(sorted_scores, np.array([3.0]))
    np.testing.assert_allclose(aci_width(sorted_scores, beta)[0], [3.0])

    experts = DtACI(1, ALPHA, gammas=(0.1, 0.2), eta=1.0, sigma=0.0)
    experts.update(np.array([0.05]))  # both experts at 0.1 > beta: miss
    np.testing.assert_allclose(experts.levels[:, 0], [0.1 + 0.1 * (0.1 - 1), 0.1 + 0.2 * (0.1 - 1)])
    np.testing.assert_allclose(experts.weights[:, 0], [0.5, 0.5])  # equal losses: equal weights
    eta, sigma = default_eta_sigma(0.1, 8)
    assert eta == pytest.approx(2.76, abs=0.01) and sigma == 1 / 1000  # the paper's defaults at I = 500


# --------------------------------------------------- guarantees and i.i.d. calibration


def shifting_scores(T, seed=0):
    """Bounded in [0, 10], the scale jumping every 500 steps: a shift no fixed quantile tracks."""
    rng = np.random.default_rng(seed)
    scale = np.repeat(rng.choice([0.2, 1.0, 3.0], size=T // 500 + 1), 500)[:T]
    return np.clip(np.abs(rng.normal(size=T)) * scale, 0, 10)[:, None]


def with_endpoints(calibration):
    """Calibration scores that contain 0 and the bound 10, so the tracker's step lr * range stays lr * 10."""
    return np.vstack([[[0.0]], [[10.0]], calibration])


def test_quantile_tracker_long_run_coverage_bound_on_a_shifting_sequence():
    T, lr, B = 6000, 0.01, 10.0
    tracker = ConformalPID(with_endpoints(np.ones((50, 1))), ALPHA, lr=lr, window=10**6)
    _, errors = run_calibrator(tracker, shifting_scores(T))
    eta = lr * B
    # Angelopoulos et al. 2023, Prop. 1: |mean err - alpha| <= (B + eta) / (eta T) for scores in [0, B]
    assert abs(errors.mean() - ALPHA) <= (B + eta) / (eta * T)


def test_decaying_steps_long_run_coverage_bound():
    T, lr, B, eps = 6000, 0.05, 10.0, 0.1
    tracker = ConformalPID(with_endpoints(np.ones((50, 1))), ALPHA, lr=lr, window=10**6, decay=eps)
    _, errors = run_calibrator(tracker, shifting_scores(T, seed=1))
    eta_first, eta_last = lr * B, lr * B * T ** -(0.5 + eps)
    # Angelopoulos, Barber & Bates 2024: |mean err - alpha| <= (B + eta_1) / (eta_T T) for decreasing steps
    assert abs(errors.mean() - ALPHA) <= (B + eta_first) / (eta_last * T)


def test_dtaci_long_run_coverage_on_a_shifting_sequence():
    T = 6000
    scores = shifting_scores(T, seed=2)
    sorted_scores = np.sort(np.abs(np.random.default_rng(9).normal(size=(200, 1))), axis=0)  # mis-scaled calibration
    experts = DtACI(1, ALPHA, seed=0)
    errors = []
    for s in scores:
        level = experts.level()
        beta = covering_level(sorted_scores, s)
        errors.append(float(level[0] > beta[0]))
        experts.update(beta)
    gamma_min, gamma_max = min(experts.gammas[:, 0]), max(experts.gammas[:, 0])
    # Gibbs & Candes 2024, Prop. 3.1 (every expert's level stays within [-gamma_max, 1 + gamma_max]):
    # |mean err - alpha| <= (1 + 2 gamma_max) / (T gamma_min) + sigma-term; checked with a margin of 1 point
    assert abs(np.mean(errors) - ALPHA) <= (1 + 2 * gamma_max) / (T * gamma_min) + 0.01


@pytest.mark.parametrize("name", ["quantile_tracker", "aci_decay", "conformal_pid", "sf_ogd", "saocp", "dtaci"])
def test_iid_scores_cover_within_one_point(name):
    problem = ar_problem(n_train=1000, n_test=6000, phi=(0.6,), seed=3)
    method = get_method(name)(alpha=ALPHA, base="linear")
    out = run_series(problem, method, kind="online", window=500, retrain_every=100)
    covered = ((out.y >= out.lower) & (out.y <= out.upper)).mean()
    assert abs(covered - (1 - ALPHA)) <= 0.01


# ----------------------------------------------------------------- reductions to ACI


def test_dtaci_with_one_expert_is_aci():
    problem = ar_problem(n_train=800, n_test=1500, phi=(0.6,), seed=5)
    protocol = {"kind": "online", "window": 400, "retrain_every": 50}
    aci = run_series(problem, get_method("aci")(alpha=ALPHA, gamma=0.02, base="linear"), **protocol)
    dtaci = run_series(problem, get_method("dtaci")(alpha=ALPHA, gammas=(0.02,), sigma=0.0, base="linear"), **protocol)
    np.testing.assert_array_equal(dtaci.lower, aci.lower)
    np.testing.assert_array_equal(dtaci.upper, aci.upper)


def test_quantile_tracker_is_aci_on_the_quantile_scale():
    """With evenly spaced calibration scores 0..n-1 the quantile is linear in the level, Q(1 - a) = (1 - a)(n - 1),
    so ACI's update a += gamma (alpha - err) is the tracker's q += gamma (n - 1) (err - alpha)."""
    n, gamma = 101, 0.01
    calibration = np.arange(n, dtype=float)[:, None]
    tracker = ConformalPID(calibration, ALPHA, lr=gamma, window=10**6)
    scores = shifting_scores(2000, seed=4) * 9  # within [0, 90]: the range stays that of the calibration, 100
    level = np.array([ALPHA])
    for s in scores:
        width, _ = aci_width(calibration, level)
        q = tracker.radius()
        np.testing.assert_allclose(q, width, atol=1e-9)
        err = tracker.update(s, q)
        level = aci_next_alpha(level, ALPHA, gamma, err)
        assert 0 < level[0] < 1  # inside the levels where the map is linear


def test_every_split_conformal_method_shares_acis_base_fits_by_default():
    """A method parameter must not shadow a base-forecaster one (an `lr` of the tracker once trained the MLP at 0.1)."""
    from pibench.methods.catalog import available_methods
    from pibench.methods.split_conformal import SplitConformalMethod

    reference = get_method("aci")().split_forecaster().config()
    for name, cls in available_methods().items():
        if issubclass(cls, SplitConformalMethod):
            assert cls().split_forecaster().config() == reference, name
