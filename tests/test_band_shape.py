"""The band-shape analysis (reports/band_shape.py): length at equal coverage, own shape vs a constant one."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from pibench.reports.band_shape import set_arrays, shape_gain


def test_set_arrays_reads_a_predictions_frame_by_hand():
    frame = pd.DataFrame({"item": [1, 0, 1, 0], "sequence": ["b", "a", "b", "a"], "horizon": [1, 1, 2, 2],
                          "y": [10.0, 0.0, 11.0, 1.0], "lower": [8.0, -1.0, 7.0, -3.0],
                          "upper": [12.0, 1.0, 15.0, 3.0], "point": [10.0, 0.0, 11.0, 0.0]})
    y, point, half = set_arrays(frame)
    np.testing.assert_array_equal(y, [[0.0, 1.0], [10.0, 11.0]])  # item 0 first, horizons in order
    np.testing.assert_array_equal(point, [[0.0, 0.0], [10.0, 11.0]])
    np.testing.assert_array_equal(half, [[1.0, 3.0], [2.0, 4.0]])


def test_a_constant_band_gains_nothing():
    rng = np.random.default_rng(0)
    y, point = rng.normal(size=(1000, 3)), np.zeros((1000, 3))
    half = np.broadcast_to([1.0, 2.0, 3.0], (1000, 3)).copy()  # a per-horizon profile, the same for all
    out = shape_gain(y, point, half, alpha=0.1, splits=20)
    assert out["length_ratio"] == pytest.approx(1.0, rel=1e-12)
    assert out["coverage_own"] == out["coverage_constant"]


def test_the_true_scale_as_shape_gives_the_oracle_gain():
    # y = s_i Z with s_i = 4 for 30% of the sequences, 1 for the rest (H = 1). The true shape s_i makes the
    # score |Z|: length 2 z_0.95 E[s]. A constant width must cover the mixture: 2 t with
    # 0.7 P(|Z| <= t) + 0.3 P(|Z| <= t / 4) = 0.9, t = 3.872. Ratio by hand: 0.807.
    rng = np.random.default_rng(1)
    n = 20_000
    s = np.where(rng.random(n) < 0.3, 4.0, 1.0)
    y, point, half = (s * rng.normal(size=n))[:, None], np.zeros((n, 1)), s[:, None]
    t = brentq(lambda t: 0.7 * (2 * norm.cdf(t) - 1) + 0.3 * (2 * norm.cdf(t / 4) - 1) - 0.9, 0.1, 20)
    expected = (2 * norm.ppf(0.95) * 1.9) / (2 * t)
    out = shape_gain(y, point, half, alpha=0.1, splits=20)
    assert abs(out["coverage_own"] - 0.9) < 0.01 and abs(out["coverage_constant"] - 0.9) < 0.01
    assert out["length_ratio"] == pytest.approx(expected, rel=0.03)  # the shape is worth a fifth of the length


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="finite and positive"):
        shape_gain(np.zeros((10, 1)), np.zeros((10, 1)), np.full((10, 1), np.inf), alpha=0.1)
    with pytest.raises(ValueError, match="at least 4"):
        shape_gain(np.zeros((3, 1)), np.zeros((3, 1)), np.ones((3, 1)), alpha=0.1)


def test_the_command_reads_a_store(tmp_path, capsys):
    from pibench import run
    from pibench.benchmarks.band_shape import main, shape_table

    run(methods=["oracle"], datasets=["seasonal_sets"], seeds=[0], results_dir=tmp_path, progress=False)
    table, left_out = shape_table(str(tmp_path), splits=10)
    assert left_out == []
    assert list(table["method"]) == ["oracle"]
    assert table["length_ratio"].iloc[0] == pytest.approx(1.0, rel=1e-12)  # its widths are the same for all
    main([str(tmp_path), "--splits", "5"])
    assert "length_ratio" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no finished set task"):
        main([str(tmp_path / "empty")])
