"""Calibrators of docs/guide/methods.md: BOA, NexCP weights, AgACI, EnbPI, NexCP.

Hand-worked cases write their arithmetic in the comments and compare against
literals; the rest are invariants (normalisation, vectorisation, reductions to
simpler methods) and coverage on a linear AR(1) with a linear base model.
"""

import math

import numpy as np
import pytest

from pibench.benchmarks.protocols import run_series
from pibench.data_loaders.problems import SeriesData
from pibench.data_loaders.synthetic import ar_problem
from pibench.methods.agaci import GAMMA_GRID, AgACI
from pibench.methods.calibration.aci import aci_width
from pibench.methods.calibration.boa import BernsteinOnlineAggregation
from pibench.methods.calibration.nexcp import nexcp_width
from pibench.methods.catalog import get_method
from pibench.methods.enbpi import EnbPI, bootstrap_indices, loo_weights
from pibench.methods.forecasters.split import WindowFit
from pibench.methods.nexcp import NexCP


def coverage(out) -> float:
    return float(((out.y >= out.lower) & (out.y <= out.upper)).mean())


@pytest.fixture(scope="module")
def ar1():
    """AR(1), phi = 0.6, N(0, 1) noise: 600 training rows, 800 online test rows."""
    return ar_problem(n_train=600, n_test=800, phi=(0.6,), seed=0)


ONLINE = dict(kind="online", window=400, retrain_every=50)


# --------------------------------------------------------------------------- BOA


def test_boa_hand_worked_two_experts_where_eta_is_capped_by_one_over_B2():
    # tau = 0.9, expert A = 1.2, expert B = 0.0 (constant), one series; y = 2 then y = 0.
    boa = BernsteinOnlineAggregation(2, (1,), tau=0.9)
    E = np.array([[1.2], [0.0]])
    # step 1: eta = 1, R = 0 -> p = w0 * 1 * e^0 normalised = (1/2, 1/2); b_hat = 0.6
    np.testing.assert_allclose(boa.weights().ravel(), [0.5, 0.5], rtol=0, atol=1e-15)
    assert boa.predict(E)[0] == pytest.approx(0.6, rel=1e-12)
    boa.update(E, np.array([2.0]))
    # y = 2 >= 0.6: 1{y < b_hat} - tau = -0.9
    # r_A = -0.9 (0.6 - 1.2) = 0.54, r_B = -0.9 (0.6 - 0) = -0.54
    # B = max(2^-20, 0.54) = 0.54; log2 0.54 = -0.889 -> ceil 0 -> B2 = 2^0 = 1
    # V = 0.54^2 = 0.2916; sqrt(log 2 / 0.2916) = 1.5418 > 1/B2 = 1 -> eta = 1
    # R_A = (0.54 - 1 * 0.2916 + 1 * 1{0.54 > 1/2}) / 2 = 1.2484 / 2 = 0.6242
    # R_B = (-0.54 - 0.2916 + 0) / 2 = -0.4158
    np.testing.assert_allclose(boa.B.ravel(), [0.54, 0.54], rtol=1e-12)
    np.testing.assert_allclose(boa.V.ravel(), [0.2916, 0.2916], rtol=1e-12)
    np.testing.assert_allclose(boa.eta.ravel(), [1.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(boa.R.ravel(), [0.6242, -0.4158], rtol=1e-12)
    # step 2: p_A / p_B = (1 * e^{0.6242}) / (1 * e^{-0.4158}) = e^{1.04} = 2.8292170
    # p_A = 2.8292170 / 3.8292170 = 0.7388500; b_hat = 1.2 * 0.7388500 = 0.8866200
    np.testing.assert_allclose(boa.weights().ravel(), [0.7388500, 0.2611500], rtol=1e-6)
    assert boa.predict(E)[0] == pytest.approx(0.8866200, rel=1e-6)
    boa.update(E, np.array([0.0]))
    # y = 0 < 0.8866200: 1 - 0.9 = 0.1
    # r_A = 0.1 (0.8866200 - 1.2) = -0.0313380, r_B = 0.1 * 0.8866200 = 0.0886620
    # B stays 0.54 -> B2 = 1; V_A = 0.2916 + 0.00098207 = 0.29258207, V_B = 0.2916 + 0.00786095 = 0.29946095
    # sqrt(log 2 / V) = 1.5392, 1.5214, both > 1 -> eta = 1
    # R_A = 0.6242 + (-0.0313380 - 0.00098207) / 2 = 0.6080400
    # R_B = -0.4158 + (0.0886620 - 0.00786095) / 2 = -0.3753995   (eta r_B = 0.089 < 1/2)
    np.testing.assert_allclose(boa.V.ravel(), [0.29258207, 0.29946095], rtol=1e-7)
    np.testing.assert_allclose(boa.eta.ravel(), [1.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(boa.R.ravel(), [0.6080400, -0.3753995], rtol=1e-6)
    # step 3: p_A = 1 / (1 + e^{-(0.6080400 + 0.3753995)}) = 1 / (1 + e^{-0.9834394}) = 0.7277901
    np.testing.assert_allclose(boa.weights().ravel(), [0.7277901, 0.2722099], rtol=1e-6)
    assert boa.predict(E)[0] == pytest.approx(1.2 * 0.7277901, rel=1e-6)  # 0.8733482


def test_boa_hand_worked_two_experts_with_bernstein_rates():
    # tau = 0.9, expert A = 1.0, expert B = 0.0; y = 2 then y = 0.
    boa = BernsteinOnlineAggregation(2, (1,), tau=0.9)
    E = np.array([[1.0], [0.0]])
    boa.update(E, np.array([2.0]))
    # step 1: b_hat = 0.5; r_A = -0.9 (0.5 - 1) = 0.45, r_B = -0.45
    # B = 0.45; log2 0.45 = -1.152 -> ceil -1 -> B2 = 0.5, 1/B2 = 2
    # V = 0.2025; sqrt(log 2 / 0.2025) = sqrt(3.4229500) = 1.8501214 < 2 -> eta = 1.8501214
    # eta r^2 = 0.3746496; eta r_A = 0.8326 > 1/2 -> B2 term 0.5 for A only
    # R_A = (0.45 - 0.3746496 + 0.5) / 2 = 0.2876752, R_B = (-0.45 - 0.3746496) / 2 = -0.4123248
    np.testing.assert_allclose(boa.eta.ravel(), [1.8501214, 1.8501214], rtol=1e-7)
    np.testing.assert_allclose(boa.R.ravel(), [0.2876752, -0.4123248], rtol=1e-6)
    # p_A / p_B = e^{1.8501214 * 0.7} = e^{1.2950850} -> p_A = 0.7850066
    np.testing.assert_allclose(boa.weights().ravel(), [0.7850066, 0.2149934], rtol=1e-6)
    assert boa.predict(E)[0] == pytest.approx(0.7850066, rel=1e-6)
    boa.update(E, np.array([0.0]))
    # step 2: y = 0 < 0.7850066 -> 0.1; r_A = 0.1 (0.7850066 - 1) = -0.0214993, r_B = 0.0785007
    # V_A = 0.2025 + 0.000462221 = 0.2029622, V_B = 0.2025 + 0.0061624 = 0.2086624
    # eta_A = sqrt(0.6931472 / 0.2029622) = 1.8480134, eta_B = sqrt(0.6931472 / 0.2086624) = 1.8225971 (< 2)
    # R_A = 0.2876752 + (-0.0214993 - 1.8480134 * 0.000462221) / 2 = 0.2764984
    # R_B = -0.4123248 + (0.0785007 - 1.8225971 * 0.0061624) / 2 = -0.3786902  (eta r_B = 0.143 < 1/2)
    np.testing.assert_allclose(boa.eta.ravel(), [1.8480134, 1.8225971], rtol=1e-7)
    np.testing.assert_allclose(boa.R.ravel(), [0.2764984, -0.3786902], rtol=1e-6)
    # p ∝ w0 eta e^{eta R}: A: 1.8480134 e^{0.5109728} = 3.0804759, B: 1.8225971 e^{-0.6901986} = 0.9139886
    # p_A = 3.0804759 / 3.9944645 = 0.7711862 (the eta prefactor matters: the etas now differ)
    np.testing.assert_allclose(boa.weights().ravel(), [0.7711862, 0.2288138], rtol=1e-6)
    assert boa.predict(E)[0] == pytest.approx(0.7711862, rel=1e-6)


def test_boa_weights_are_positive_and_sum_to_one():
    rng = np.random.default_rng(1)
    K, G = 5, 3
    boa = BernsteinOnlineAggregation(K, (G,), tau=0.25)
    for _ in range(300):
        experts = rng.normal(size=(K, G)) + np.arange(K)[:, None] * 0.3
        w = boa.weights()
        assert w.shape == (K, G)
        assert np.all(w > 0)
        np.testing.assert_allclose(w.sum(axis=0), 1.0, rtol=1e-12)
        pred = boa.predict(experts)
        assert np.all(pred >= experts.min(axis=0) - 1e-12) and np.all(pred <= experts.max(axis=0) + 1e-12)
        boa.update(experts, rng.normal(size=G))


def test_boa_single_expert_before_any_update_is_that_expert():
    boa = BernsteinOnlineAggregation(1, (2,), tau=0.9)
    e = np.array([[2.0, -1.5]])
    np.testing.assert_array_equal(boa.weights(), [[1.0, 1.0]])
    np.testing.assert_array_equal(boa.predict(e), [2.0, -1.5])


def test_boa_single_expert_predicts_that_expert_after_updates():
    boa = BernsteinOnlineAggregation(1, (1,), tau=0.9)
    rng = np.random.default_rng(0)
    for _ in range(5):
        e = rng.normal(size=(1, 1))
        assert boa.predict(e)[0] == e[0, 0]
        boa.update(e, rng.normal(size=1))
    e = np.array([[3.0]])
    assert boa.predict(e)[0] == 3.0


def test_boa_learns_the_true_quantile_expert():
    # y ~ N(0, 1) iid, tau = 0.9: expert A = z_0.9 = 1.2816 is the pinball-loss minimiser, B = 0.
    rng = np.random.default_rng(0)
    boa = BernsteinOnlineAggregation(2, (1,), tau=0.9)
    E = np.array([[1.2816], [0.0]])
    for y in rng.standard_normal(3000):
        boa.update(E, np.array([y]))
    assert boa.weights()[0, 0] > 0.9


def test_boa_vectorised_over_series_equals_separate_runs():
    rng = np.random.default_rng(2)
    K, G, T = 4, 3, 200
    experts = rng.normal(size=(T, K, G)) + np.linspace(-1, 1, K)[None, :, None]
    ys = rng.normal(size=(T, G))
    joint = BernsteinOnlineAggregation(K, (G,), tau=0.75)
    alone = [BernsteinOnlineAggregation(K, (1,), tau=0.75) for _ in range(G)]
    for t in range(T):
        pj = joint.predict(experts[t])
        for g in range(G):
            assert pj[g] == pytest.approx(alone[g].predict(experts[t][:, g : g + 1])[0], rel=1e-12, abs=1e-14)
            alone[g].update(experts[t][:, g : g + 1], ys[t, g : g + 1])
        joint.update(experts[t], ys[t])
    for g in range(G):
        np.testing.assert_allclose(joint.weights()[:, g], alone[g].weights()[:, 0], rtol=1e-12)
        np.testing.assert_allclose(joint.R[:, g], alone[g].R[:, 0], rtol=1e-12)


def test_boa_rejects_bad_arguments():
    with pytest.raises(ValueError):
        BernsteinOnlineAggregation(0, (1,), tau=0.5)
    with pytest.raises(ValueError):
        BernsteinOnlineAggregation(2, (1,), tau=1.0)


# ------------------------------------------------------------------ nexcp_width


# n = 4, decay 0.5: w_i = 0.5^(5 - i) = [0.0625, 0.125, 0.25, 0.5]; sum + 1 = 1.9375
# normalised: w~ = [1, 2, 4, 8] / 31 = [0.032258, 0.064516, 0.129032, 0.258065]
# residuals in time order (oldest first) [3, 1, 4, 2]; sorted 1 (w~ 2/31), 2 (8/31), 3 (1/31), 4 (4/31)
# cumulative mass: 2/31 = 0.0645, 10/31 = 0.3226, 11/31 = 0.3548, 15/31 = 0.4839 (< 1: 16/31 sits on +inf)
HAND_RESIDUALS = np.array([[3.0], [1.0], [4.0], [2.0]])


@pytest.mark.parametrize(
    "alpha, expected",
    [
        (0.95, 1.0),  # 1 - alpha = 0.05 <= 2/31
        (0.70, 2.0),  # 0.30 in (2/31, 10/31]
        (0.66, 3.0),  # 0.34 in (10/31, 11/31]
        (0.60, 4.0),  # 0.40 in (11/31, 15/31]
        (16 / 31, 4.0),  # 1 - alpha = 15/31 exactly: reached on the last finite residual
        (0.50, np.inf),  # 0.50 > 15/31 = 0.4839: the finite mass never gets there
        (0.10, np.inf),
    ],
)
def test_nexcp_width_hand_worked(alpha, expected):
    assert nexcp_width(HAND_RESIDUALS, alpha, decay=0.5)[0] == expected


def test_nexcp_width_uses_time_order_not_sorted_order():
    # The same residuals in another time order: [1, 2, 3, 4] -> w~ of 1, 2, 3, 4 = 1/31, 2/31, 4/31, 8/31
    # cumulative 1/31, 3/31, 7/31, 15/31; alpha = 0.70 (0.30 = 9.3/31) -> 4, not 2 as above
    assert nexcp_width(np.array([[1.0], [2.0], [3.0], [4.0]]), 0.70, decay=0.5)[0] == 4.0
    assert nexcp_width(HAND_RESIDUALS, 0.70, decay=0.5)[0] == 2.0


def test_nexcp_width_decay_one_is_split_conformal_order_statistic():
    rng = np.random.default_rng(3)
    r = rng.exponential(size=(19, 1))
    # n = 19, alpha = 0.1: ceil(20 * 0.9) = 18 -> the 18th smallest residual
    assert nexcp_width(r, 0.1, decay=1.0)[0] == np.sort(r[:, 0])[17]
    # generic n, alpha: ceil((n + 1)(1 - alpha))-th smallest
    for n, alpha in [(10, 0.2), (30, 0.1), (99, 0.05), (7, 0.3)]:
        r = rng.exponential(size=(n, 1))
        k = math.ceil((n + 1) * (1 - alpha))
        assert k <= n
        assert nexcp_width(r, alpha, decay=1.0)[0] == np.sort(r[:, 0])[k - 1], (n, alpha)
    # n = 5, alpha = 0.1: ceil(6 * 0.9) = ceil(5.4) = 6 > 5 -> +inf
    assert nexcp_width(rng.exponential(size=(5, 1)), 0.1, decay=1.0)[0] == np.inf
    # n = 9, alpha = 0.05: ceil(10 * 0.95) = ceil(9.5) = 10 > 9 -> +inf
    assert nexcp_width(rng.exponential(size=(9, 1)), 0.05, decay=1.0)[0] == np.inf


def test_nexcp_width_vectorised_over_columns():
    rng = np.random.default_rng(4)
    r = rng.exponential(size=(40, 6))
    r[:, 3] = r[:, 0]  # ties across columns do not matter
    for decay in (1.0, 0.97, 0.8):
        joint = nexcp_width(r, 0.1, decay=decay)
        assert joint.shape == (6,)
        for g in range(6):
            assert joint[g] == nexcp_width(r[:, g : g + 1], 0.1, decay=decay)[0]
    # decay 0.8 over 40 points: finite mass = 0.8 (1 - 0.8^40) / 0.2 / (that + 1) = 0.8 < 0.9 -> inf everywhere
    assert np.all(np.isinf(nexcp_width(r, 0.1, decay=0.8)))


def test_nexcp_width_rejects_bad_decay():
    for decay in (0.0, -0.5, 1.01):
        with pytest.raises(ValueError):
            nexcp_width(HAND_RESIDUALS, 0.1, decay=decay)


# ------------------------------------------------------------------------ AgACI


def prime(method, scores, window_y):
    """Give a split-conformal method fixed calibration scores, point = X[..., 0], and a window for the cap."""
    scores = np.asarray(scores, dtype=float)[:, None]
    method.window_fit_ = WindowFit(residuals=scores, predict=lambda X: X[:, :, 0].astype(float))
    method.sorted_scores_ = np.sort(scores, axis=0)
    data = SeriesData(y=np.asarray(window_y, dtype=float)[:, None], X=np.zeros((len(window_y), 1, 1)))
    method._reset_online_state(data)
    method._on_refit(data)
    return method


def one_step(method, x, y):
    iv = method.predict_interval(np.array([[[x]]]))
    method.update(np.array([[y]]))
    return float(iv.lower[0, 0]), float(iv.upper[0, 0])


# scores 1..10: width at level 0.9 = s[8.1] = 9 + 0.1 = 9.1
# window y in [-3, 5]: span 8 -> cap (-3 - 8, 5 + 8) = (-11, 13)
SCORES, WINDOW_Y, CAP = np.arange(1, 11), [-3.0, 0.0, 5.0, 1.0], (-11.0, 13.0)
STEPS = [(0.0, 0.0), (5.0, 100.0), (-5.0, -100.0), (0.0, 9.0), (5.0, 30.0), (-5.0, 4.0)]  # (point, y)


def expected_aci():
    aci = prime(get_method("aci")(alpha=0.1, gamma=0.0, base="linear"), SCORES, WINDOW_Y)
    out = [one_step(aci, x, y) for x, y in STEPS]
    # point 0: (-9.1, 9.1); point 5: (-4.1, 14.1); point -5: (-14.1, 4.1): finite, beyond the cap (-11, 13) too
    np.testing.assert_allclose(out[:3], [(-9.1, 9.1), (-4.1, 14.1), (-14.1, 4.1)], rtol=1e-12)
    return out


def test_agaci_single_gamma_zero_expert_is_split_conformal():
    """Finite expert bounds are aggregated as they are, also where they pass the cap (AgACI in
    docs/guide/methods.md: only infinite ones are capped)."""
    expected = expected_aci()
    m = prime(AgACI(alpha=0.1, gammas=(0.0,), base="linear"), SCORES, WINDOW_Y)
    assert m.cap_ == pytest.approx(CAP)
    got = [one_step(m, x, y) for x, y in STEPS]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_agaci_two_identical_gamma_zero_experts_are_split_conformal():
    # Two identical experts: r_1 = r_2, so R, eta stay equal and the weights stay (1/2, 1/2):
    # the aggregate is the common ACI gamma = 0 interval.
    expected = expected_aci()
    m = prime(AgACI(alpha=0.1, gammas=(0.0, 0.0), base="linear"), SCORES, WINDOW_Y)
    assert m.cap_ == pytest.approx(CAP)
    got = [one_step(m, x, y) for x, y in STEPS]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(m.alpha_t_, 0.1)


def test_agaci_infinite_expert_bounds_are_capped():
    m = prime(AgACI(alpha=0.1, gammas=(0.0, 0.5), base="linear"), SCORES, WINDOW_Y)
    one_step(m, 0.0, 1000.0)  # a sure miss for both experts (width 9.1)
    # alpha_t: gamma 0 stays 0.1; gamma 0.5: 0.1 + 0.5 (0.1 - 1) = -0.35 <= 0 -> infinite interval
    np.testing.assert_allclose(m.alpha_t_[:, 0], [0.1, -0.35])
    iv = m.predict_interval(np.array([[[0.0]]]))
    raw_lower, raw_upper, empty, lower_k, upper_k, _, _ = m.experts_
    assert raw_lower[1, 0] == -np.inf and raw_upper[1, 0] == np.inf
    np.testing.assert_allclose(lower_k[:, 0], [-9.1, -11.0])  # -inf replaced by the cap
    np.testing.assert_allclose(upper_k[:, 0], [9.1, 13.0])
    assert np.isfinite(iv.lower).all() and np.isfinite(iv.upper).all()
    assert -11.0 <= iv.lower[0, 0] <= -9.1 and 9.1 <= iv.upper[0, 0] <= 13.0
    m.update(np.array([[0.0]]))
    assert np.isfinite(m.boa_lower_.R).all() and np.isfinite(m.boa_upper_.R).all()


def test_agaci_infinite_expert_is_never_narrower_than_a_finite_one():
    """An expert at alpha_t <= 0 covers everything; where a finite expert reaches past the window's cap (point 5:
    upper 14.1 > 13), the infinite one takes that finite bound, not the narrower cap."""
    m = prime(AgACI(alpha=0.1, gammas=(0.0, 0.5), base="linear"), SCORES, WINDOW_Y)
    one_step(m, 0.0, 1000.0)  # a sure miss: gamma 0.5's alpha_t goes to -0.35, its interval infinite
    m.predict_interval(np.array([[[5.0]]]))
    _, raw_upper, _, lower_k, upper_k, _, _ = m.experts_
    assert raw_upper[1, 0] == np.inf
    np.testing.assert_allclose(upper_k[:, 0], [14.1, 14.1])  # the widest finite bound, past the cap 13
    np.testing.assert_allclose(lower_k[:, 0], [-4.1, -11.0])  # the cap, wider than any finite bound


def test_agaci_a_nan_expert_bound_is_an_error_not_a_capped_interval():
    """A NaN calibration score makes a NaN width: it stays NaN (only infinite bounds are capped), and the
    interval's own check names it, where replacing it by the cap would have hidden it."""
    m = prime(AgACI(alpha=0.1, gammas=(0.0, 0.01), base="linear"), np.r_[np.arange(1.0, 10.0), np.nan], WINDOW_Y)
    with pytest.raises(ValueError, match="NaN"):
        m.predict_interval(np.array([[[0.0]]]))


def test_gamma_grid_matches_spec():
    assert len(GAMMA_GRID) == 30 and GAMMA_GRID[0] == 0.0
    assert list(GAMMA_GRID) == sorted(set(GAMMA_GRID))
    assert GAMMA_GRID[-1] == pytest.approx(0.09)


def test_agaci_covers_ar1(ar1):
    m = AgACI(alpha=0.1, base="linear", random_state=0)
    out = run_series(ar1, m, **ONLINE)
    assert out.y.shape == (800, 1)
    assert np.isfinite(out.lower).all() and np.isfinite(out.upper).all()
    assert 0.86 <= coverage(out) <= 0.94
    n_crossed = m.diagnostics()["n_crossed"]
    assert isinstance(n_crossed, int) and n_crossed >= 0


# ------------------------------------------------------------------------ EnbPI


def test_bootstrap_indices_iid():
    idx = bootstrap_indices(17, 6, np.random.default_rng(0))
    assert idx.shape == (6, 17)
    assert idx.min() >= 0 and idx.max() < 17
    assert np.issubdtype(idx.dtype, np.integer)


def test_bootstrap_indices_moving_blocks():
    n, L, B = 11, 3, 200  # 4 blocks of 3 = 12, truncated to 11: the last block keeps 2 steps
    idx = bootstrap_indices(n, B, np.random.default_rng(1), block_length=L)
    assert idx.shape == (B, n)
    assert idx.min() >= 0 and idx.max() < n
    for j in range(0, n, L):
        block = idx[:, j : j + L]
        np.testing.assert_array_equal(np.diff(block, axis=1), 1)  # consecutive within each block
    assert idx[:, 9:].shape[1] == 2
    # the block starts range over 0..n - L = 8
    assert set(idx[:, ::L].ravel()) == set(range(n - L + 1))


def test_loo_weights_hand_worked():
    # model 0 uses {0, 1}, model 1 uses {1, 2}, model 2 uses {0, 1, 2}
    out, v = loo_weights(np.array([[0, 0, 1], [1, 2, 2], [0, 1, 2]]), 3)
    # out[b, i] = 1{i not in resample b}
    assert out.tolist() == [[False, False, True], [True, False, False], [False, False, False]]
    # usable points: 0 (excluded by model 1 only -> f_{-0} = f_1), 2 (model 0 only -> f_{-2} = f_0);
    # point 1 is in every resample. test = (f_{-0} + f_{-2}) / 2 = 0.5 f_0 + 0.5 f_1 + 0 f_2
    np.testing.assert_allclose(v, [0.5, 0.5, 0.0], rtol=0, atol=1e-15)


def test_loo_weights_sum_to_one_and_reproduce_loo_mean():
    rng = np.random.default_rng(5)
    n, B = 25, 8
    idx = bootstrap_indices(n, B, rng)
    out, v = loo_weights(idx, n)
    assert np.all(v >= 0)
    assert v.sum() == pytest.approx(1.0, rel=1e-12)
    # sum_b v_b f_b equals the mean over usable i of f_{-i} = mean of f_b over the b with out[b, i]
    f = rng.normal(size=B)
    usable = [i for i in range(n) if out[:, i].any()]
    loo_mean = np.mean([f[out[:, i]].mean() for i in usable])
    assert v @ f == pytest.approx(loo_mean, rel=1e-12)


def test_enbpi_covers_ar1(ar1):
    m = EnbPI(alpha=0.1, base="linear", n_models=10, random_state=0)
    out = run_series(ar1, m, **ONLINE)
    assert out.y.shape == (800, 1)
    assert 0.86 <= coverage(out) <= 0.94


def test_enbpi_residual_window_slides(ar1):
    m = EnbPI(alpha=0.1, base="linear", n_models=10).fit(ar1.window(200, 600))
    before = m.residuals_.copy()
    assert before.ndim == 2 and before.shape[1] == 1 and 0 < before.shape[0] <= 400
    # the width is the linear-interpolation 0.9 quantile of the current residuals
    iv = m.predict_interval(ar1.X[600:601])
    assert iv.upper[0, 0] - iv.point[0, 0] == pytest.approx(np.quantile(before[:, 0], 0.9), rel=1e-12)
    y = ar1.y[600:601]
    m.update(y)
    assert m.residuals_.shape == before.shape
    np.testing.assert_array_equal(m.residuals_[:-1], before[1:])
    assert m.residuals_[-1, 0] == pytest.approx(abs(y[0, 0] - iv.point[0, 0]), rel=1e-12)


@pytest.mark.parametrize("refit_models", [False, True])
def test_enbpi_refit_keeps_or_refits_models(ar1, refit_models):
    m = EnbPI(alpha=0.1, base="linear", n_models=10, refit_models=refit_models).fit(ar1.window(0, 400))
    X = ar1.X[600:601]
    p0 = m.predict_interval(X).point.copy()
    model0, residuals0 = m.model_, m.residuals_.copy()
    m.refit(ar1.window(150, 550))
    p1 = m.predict_interval(X).point
    np.testing.assert_array_equal(m.residuals_, residuals0)  # the residual stream continues either way
    if refit_models:
        assert m.model_ is not model0
        assert not np.allclose(p1, p0, rtol=0, atol=1e-10)
    else:
        assert m.model_ is model0
        np.testing.assert_array_equal(p1, p0)


# ------------------------------------------------------------------------ NexCP


def test_nexcp_covers_ar1(ar1):
    m = NexCP(alpha=0.1, base="linear", decay=0.99)
    out = run_series(ar1, m, **ONLINE)
    assert out.y.shape == (800, 1)
    assert 0.86 <= coverage(out) <= 0.94
    assert m.diagnostics() == {"n_infinite_widths": 0}


def test_nexcp_decay_one_is_the_higher_order_statistic_of_split_conformal(ar1):
    window = ar1.window(200, 600)  # 400 steps: 200 train the base, n = 200 calibrate
    nex = NexCP(alpha=0.1, base="linear", decay=1.0).fit(window)
    aci = get_method("aci")(alpha=0.1, gamma=0.0, base="linear").fit(window)
    s = aci.sorted_scores_[:, 0]
    assert s.size == 200
    np.testing.assert_array_equal(np.sort(nex.window_fit_.residuals, axis=0)[:, 0], s)  # same base fit
    # k = ceil(201 * 0.9) = ceil(180.9) = 181 -> the 181st smallest score, s[180]
    assert nex.width_[0] == s[180]
    # ACI gamma = 0 interpolates at h = 199 * 0.9 = 179.1: s[179] + 0.1 (s[180] - s[179]) <= s[180]
    aci_w = aci_width(aci.sorted_scores_, np.array([0.1]))[0][0]
    assert aci_w == pytest.approx(s[179] + 0.1 * (s[180] - s[179]), rel=1e-12)
    assert aci_w <= nex.width_[0]
    # NexCP's interval is the same on every step until the next refit
    ivs = [nex.predict_interval(ar1.X[t : t + 1]) for t in (600, 601)]
    for _t, iv in zip((600, 601), ivs):
        assert iv.upper[0, 0] - iv.point[0, 0] == pytest.approx(s[180], rel=1e-12)


def test_nexcp_counts_infinite_widths(ar1):
    # a window of 12 steps, 6 residuals at decay 0.99: finite mass 5.8 / 6.8 = 0.85 < 0.9 -> +inf at every step
    # (decay 0.5, below 1 - alpha, is refused: every width would be infinite whatever the window)
    m = NexCP(alpha=0.1, base="linear", decay=0.99).fit(ar1.window(588, 600))
    for t in range(600, 603):
        iv = m.predict_interval(ar1.X[t : t + 1])
        assert iv.lower[0, 0] == -np.inf and iv.upper[0, 0] == np.inf
        m.update(ar1.y[t : t + 1])
    assert m.diagnostics() == {"n_infinite_widths": 3}


def test_nexcp_fit_restarts_diagnostics(ar1):
    m = NexCP(alpha=0.1, base="linear", decay=0.99).fit(ar1.window(588, 600))
    m.predict_interval(ar1.X[600:601])
    assert m.diagnostics() == {"n_infinite_widths": 1}
    m.fit(ar1.window(589, 601))
    assert m.diagnostics() == {"n_infinite_widths": 0}
