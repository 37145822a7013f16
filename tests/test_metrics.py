"""Tests for reports.metrics against hand-computed values on tiny arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from pibench.reports.metrics import (
    cap_bounds,
    coverage,
    coverage_by_group,
    covered,
    default_cap,
    joint_coverage,
    length_stats,
    longest_miss_run,
    per_horizon_coverage,
    rolling_coverage,
    series_metrics,
    set_metrics,
    winkler_score,
    worst_rolling_coverage,
)

INF = np.inf
T, F = True, False


# --------------------------------------------------------------------------- #
# coverage
# --------------------------------------------------------------------------- #
def test_coverage_toy_case():
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    lower = np.array([0.0, 2.5, 3.0, 5.0, -INF])
    upper = np.array([2.0, 3.0, 3.0, 6.0, INF])
    # 1 in [0,2] yes; 2 in [2.5,3] no; 3 in [3,3] yes (empty interval, y on it);
    # 4 in [5,6] no; 5 in (-inf,inf) yes  -> 3/5
    np.testing.assert_array_equal(covered(y, lower, upper), [T, F, T, F, T])
    assert coverage(y, lower, upper) == pytest.approx(0.6)


def test_boundary_points_are_covered():
    # y exactly on lower, exactly on upper, and on a zero-length interval.
    y = np.array([1.0, 2.0, 7.0])
    lower = np.array([1.0, 0.0, 7.0])
    upper = np.array([3.0, 2.0, 7.0])
    np.testing.assert_array_equal(covered(y, lower, upper), [T, T, T])
    assert coverage(y, lower, upper) == 1.0


def test_covered_keeps_shape():
    y = np.zeros((2, 3))
    assert covered(y, y - 1, y + 1).shape == (2, 3)


def test_joint_vs_per_horizon_coverage_3x2():
    y = np.zeros((3, 2))
    lower = np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]])
    upper = np.array([[1.0, 1.0], [1.0, 2.0], [2.0, 2.0]])
    # covered: row0 [T, T], row1 [T, F], row2 [F, F]
    # per horizon: h0 = 2/3, h1 = 1/3; joint: only row0 all-covered -> 1/3;
    # marginal: 3 of 6 -> 0.5
    np.testing.assert_allclose(per_horizon_coverage(y, lower, upper), [2 / 3, 1 / 3])
    assert joint_coverage(y, lower, upper) == pytest.approx(1 / 3)
    assert coverage(y, lower, upper) == pytest.approx(0.5)


def test_coverage_by_group():
    cov = np.array([[T, F], [T, F], [F, T], [T, F]])
    # col0: 3/4, col1: 1/4
    np.testing.assert_allclose(coverage_by_group(cov), [0.75, 0.25])


# --------------------------------------------------------------------------- #
# capping and lengths
# --------------------------------------------------------------------------- #
def test_default_cap():
    # span = 4 - 0 = 4 -> (0 - 4, 4 + 4)
    assert default_cap(0.0, 4.0) == (-4.0, 8.0)
    # span = 5 - (-1) = 6 -> (-7, 11)
    assert default_cap(-1.0, 5.0) == (-7.0, 11.0)
    # constant training target: span -> 1.0 -> (3 - 1, 3 + 1)
    assert default_cap(3.0, 3.0) == (2.0, 4.0)


def test_cap_bounds_only_replaces_infinite():
    lower = np.array([-INF, 1.0, -INF, -50.0])
    upper = np.array([INF, 2.0, 0.0, INF])
    lo, up = cap_bounds(lower, upper, (-4.0, 8.0))
    np.testing.assert_array_equal(lo, [-4.0, 1.0, -4.0, -50.0])
    np.testing.assert_array_equal(up, [8.0, 2.0, 0.0, 8.0])
    # inputs are not modified in place
    assert np.isinf(lower[0]) and np.isinf(upper[0])


def test_length_stats_one_infinite_interval():
    lower = np.array([0.0, 1.0, -INF, 2.0])
    upper = np.array([1.0, 4.0, 5.0, 8.0])
    stats = length_stats(lower, upper, cap=(-10.0, 10.0))
    # capped lengths: 1, 3, 5 - (-10) = 15, 6
    # mean = (1 + 3 + 15 + 6) / 4 = 25 / 4 = 6.25
    # deviations: -5.25, -3.25, 8.75, -0.25
    # squares: 27.5625 + 10.5625 + 76.5625 + 0.0625 = 114.75; / 4 = 28.6875
    # sorted: 1, 3, 6, 15 -> median = (3 + 6) / 2 = 4.5
    # q25 at position 0.75 -> 1 + 0.75 * (3 - 1) = 2.5
    # q75 at position 2.25 -> 6 + 0.25 * (15 - 6) = 8.25 ; iqr = 5.75
    assert stats["mean_length"] == pytest.approx(6.25)
    assert stats["std_length"] == pytest.approx(math.sqrt(28.6875))
    assert stats["median_length"] == pytest.approx(4.5)
    assert stats["iqr_length"] == pytest.approx(5.75)
    assert stats["n_infinite"] == 1


def test_length_stats_counts_intervals_not_bounds():
    # first interval is infinite on both sides: still one infinite interval
    lower = np.array([[-INF, 0.0], [1.0, 1.0]])
    upper = np.array([[INF, INF], [2.0, 1.0]])
    stats = length_stats(lower, upper, cap=(-4.0, 8.0))
    # capped lengths: 8 - (-4) = 12, 8 - 0 = 8, 1, 0 (empty interval)
    # mean = 21 / 4 = 5.25
    assert stats["n_infinite"] == 2
    assert stats["mean_length"] == pytest.approx(5.25)


# --------------------------------------------------------------------------- #
# Winkler score
# --------------------------------------------------------------------------- #
def test_winkler_three_points_below_and_above():
    y = np.array([0.0, -1.0, 5.0])
    lower = np.array([-1.0, 0.0, 1.0])
    upper = np.array([1.0, 2.0, 3.0])
    # alpha = 0.2 -> 2 / alpha = 10; all widths = 2
    # point 0 covered:        2
    # point 1 below (l=0):    2 + 10 * (0 - (-1)) = 12
    # point 2 above (u=3):    2 + 10 * (5 - 3)    = 22
    # mean = 36 / 3 = 12
    assert winkler_score(y, lower, upper, alpha=0.2, cap=(-100.0, 100.0)) == pytest.approx(12.0)


def test_winkler_takes_the_width_on_capped_bounds_and_no_penalty_where_an_infinite_bound_covers():
    y = np.array([0.0, 20.0, -30.0])
    lower = np.array([-INF, -1.0, -1.0])
    upper = np.array([1.0, INF, INF])
    # cap = (-10, 10), alpha = 0.5 -> 2 / alpha = 4
    # point 0: [-10, 1], covered -> 11
    # point 1: [-1, +inf) covers y = 20, beyond the cap: width 11, no penalty (a capped bound charged 4 * 10)
    # point 2: [-1, +inf), y = -30 below the finite bound -> 11 + 4 * (-1 - (-30)) = 127
    # mean = 149 / 3
    assert winkler_score(y, lower, upper, alpha=0.5, cap=(-10.0, 10.0)) == pytest.approx(149 / 3)
    covered = (y >= lower) & (y <= upper)
    assert list(covered) == [True, True, False]  # the penalty goes with the coverage


# --------------------------------------------------------------------------- #
# rolling coverage and miss runs
# --------------------------------------------------------------------------- #
def test_rolling_coverage_six_steps():
    cov = np.array([T, T, F, F, T, T])
    # window 3: (1+1+0)/3, (1+0+0)/3, (0+0+1)/3, (0+1+1)/3
    np.testing.assert_allclose(rolling_coverage(cov, 3), [2 / 3, 1 / 3, 1 / 3, 2 / 3])
    assert worst_rolling_coverage(cov, 3) == pytest.approx(1 / 3)
    # window 1 is the sequence itself; window 6 is the overall mean 4/6
    np.testing.assert_allclose(rolling_coverage(cov, 1), [1, 1, 0, 0, 1, 1])
    np.testing.assert_allclose(rolling_coverage(cov, 6), [4 / 6])


def test_rolling_coverage_2d_averages_columns_first():
    cov = np.array([[T, T], [T, F], [F, F], [T, T]])
    # per step: 1, 0.5, 0, 1 ; window 2: 0.75, 0.25, 0.5 ; worst 0.25
    np.testing.assert_allclose(rolling_coverage(cov, 2), [0.75, 0.25, 0.5])
    assert worst_rolling_coverage(cov, 2) == pytest.approx(0.25)


def test_rolling_coverage_short_sequence_returns_overall_mean():
    cov = np.array([T, F, T])
    # n_steps = 3 < window = 5 -> [2/3]
    out = rolling_coverage(cov, 5)
    assert out.shape == (1,)
    assert out[0] == pytest.approx(2 / 3)


@pytest.mark.parametrize("window", [0, -1])
def test_rolling_coverage_rejects_bad_window(window):
    with pytest.raises(ValueError):
        rolling_coverage(np.array([T, F]), window)


def test_longest_miss_run_1d():
    assert longest_miss_run(np.array([T, F, F, T, F, F, F, T])) == 3
    assert longest_miss_run(np.array([T, T, T])) == 0
    assert longest_miss_run(np.array([F, F, F, F])) == 4
    assert longest_miss_run(np.array([F, T, T, F, F])) == 2  # runs at both ends


def test_longest_miss_run_2d():
    cov = np.array(
        [
            [F, T, T],
            [F, F, T],
            [T, F, T],
            [T, F, T],
            [F, T, T],
        ]
    )
    # col0: F F T T F -> 2 ; col1: T F F F T -> 3 ; col2: none -> 0 ; max = 3
    assert longest_miss_run(cov) == 3


def test_longest_miss_run_2d_does_not_join_columns():
    # col0 ends with a run of 2 misses, col1 starts with a run of 2 misses:
    # they must not merge into a run of 4.
    cov = np.array([[T, F], [T, F], [F, T], [F, T]])
    assert longest_miss_run(cov) == 2


# --------------------------------------------------------------------------- #
# bundles
# --------------------------------------------------------------------------- #
def test_series_metrics_hand_computed():
    y = np.array([[0.0, 0.0], [0.0, 5.0], [0.0, 0.0]])
    lower = np.array([[-1.0, -INF], [-1.0, -1.0], [1.0, -1.0]])
    upper = np.array([[1.0, 1.0], [1.0, 1.0], [4.0, 1.0]])
    m = series_metrics(y, lower, upper, alpha=0.5, cap=(-3.0, 3.0), rolling_window=2)
    # covered: [[T, T], [T, F], [F, T]] -> coverage 4/6
    # capped lengths (row-major): 2, 1-(-3)=4, 2, 2, 3, 2 -> sorted 2,2,2,2,3,4
    #   mean 15/6 = 2.5; E[L^2] = (4+4+4+4+9+16)/6 = 41/6; var = 41/6 - 6.25 = 7/12
    #   median (2+2)/2 = 2; q25 (pos 5*0.25 = 1.25) = 2;
    #   q75 (pos 5*0.75 = 3.75) = 2 + 0.75*(3-2) = 2.75; iqr = 0.75
    # winkler (2/alpha = 4): 2, 4, 2, 2 + 4*(5-1) = 18, 3 + 4*(1-0) = 7, 2 -> 35/6
    # per-step coverage 1, 0.5, 0.5 -> window 2: 0.75, 0.5 -> worst 0.5
    # miss runs: col0 [T,T,F] -> 1, col1 [T,F,T] -> 1
    assert m["coverage"] == pytest.approx(4 / 6)
    assert m["mean_length"] == pytest.approx(2.5)
    assert m["std_length"] == pytest.approx(math.sqrt(7 / 12))
    assert m["median_length"] == pytest.approx(2.0)
    assert m["iqr_length"] == pytest.approx(0.75)
    assert m["n_infinite"] == 1
    assert m["winkler"] == pytest.approx(35 / 6)
    assert m["worst_rolling_coverage"] == pytest.approx(0.5)
    assert m["longest_miss_run"] == 1
    assert isinstance(m["coverage_by_group"], list)
    assert m["coverage_by_group"] == pytest.approx([2 / 3, 2 / 3])
    assert m["n_test"] == 6


def test_set_metrics_hand_computed():
    y = np.zeros((3, 2))
    lower = np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]])
    upper = np.array([[1.0, 1.0], [1.0, 2.0], [2.0, 2.0]])
    m = set_metrics(y, lower, upper, alpha=0.5, cap=(-3.0, 3.0))
    # covered: [[T, T], [T, F], [F, F]]
    # lengths 2, 2, 2, 1, 1, 1 -> mean 1.5, std 0.5, median 1.5,
    #   sorted 1,1,1,2,2,2: q25 (pos 1.25) = 1, q75 (pos 3.75) = 2 -> iqr 1
    # winkler (2/alpha = 4): 2, 2, 2, 1 + 4*1 = 5, 5, 5 -> 21/6 = 3.5
    assert m["coverage"] == pytest.approx(0.5)
    assert m["joint_coverage"] == pytest.approx(1 / 3)
    assert isinstance(m["per_horizon_coverage"], list)
    assert m["per_horizon_coverage"] == pytest.approx([2 / 3, 1 / 3])
    assert m["mean_length"] == pytest.approx(1.5)
    assert m["std_length"] == pytest.approx(0.5)
    assert m["median_length"] == pytest.approx(1.5)
    assert m["iqr_length"] == pytest.approx(1.0)
    assert m["n_infinite"] == 0
    assert m["winkler"] == pytest.approx(3.5)
    assert m["n_test"] == 3


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #
def test_shape_mismatch_names_shapes():
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        coverage(np.zeros(3), np.zeros(2), np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        length_stats(np.zeros((2, 2)), np.ones(4), cap=(0.0, 1.0))


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.1])
def test_alpha_outside_unit_interval(alpha):
    y = np.zeros(3)
    with pytest.raises(ValueError, match=rf"alpha={alpha} is outside \(0, 1\)"):
        winkler_score(y, y - 1, y + 1, alpha=alpha, cap=(-5.0, 5.0))
    with pytest.raises(ValueError, match="is outside"):
        set_metrics(y.reshape(3, 1), y.reshape(3, 1) - 1, y.reshape(3, 1) + 1, alpha, (-5.0, 5.0))
    with pytest.raises(ValueError, match="is outside"):
        series_metrics(y, y - 1, y + 1, alpha, (-5.0, 5.0))


@pytest.mark.parametrize("which", ["y", "lower", "upper"])
def test_nan_raises(which):
    arrs = {"y": np.zeros(3), "lower": -np.ones(3), "upper": np.ones(3)}
    arrs[which][1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        coverage(arrs["y"], arrs["lower"], arrs["upper"])
    with pytest.raises(ValueError, match="NaN"):
        winkler_score(arrs["y"], arrs["lower"], arrs["upper"], 0.1, (-5.0, 5.0))


# --------------------------------------------------------------------------- #
# invariant: Gaussian target with the exact 90% interval
# --------------------------------------------------------------------------- #
def test_gaussian_invariant_coverage_and_winkler():
    rng = np.random.default_rng(12345)
    n, alpha, u = 200_000, 0.1, 1.6449
    y = rng.standard_normal(n)
    lower, upper = np.full(n, -u), np.full(n, u)
    assert abs(coverage(y, lower, upper) - 0.90) < 0.005
    # E[S] = (u - l) + (2/alpha) * (E(-u - Y)_+ + E(Y - u)_+)
    #      = 2u + (2/alpha) * 2 * (phi(u) - u * (1 - Phi(u)))
    expected = 2 * u + (2 / alpha) * 2 * (norm.pdf(u) - u * norm.sf(u))
    got = winkler_score(y, lower, upper, alpha=alpha, cap=(-10.0, 10.0))
    assert got == pytest.approx(expected, rel=0.01)
