"""The set protocol end to end with a split-conformal set method defined here
(docs/guide/protocols.md, docs/guide/methods.md)."""

import numpy as np
import pytest

from pibench.benchmarks.protocols import run_set
from pibench.data_loaders.problems import SetData
from pibench.data_loaders.synthetic import seasonal_ar_oracle, seasonal_ar_sets
from pibench.methods.base import Interval, IntervalMethod
from pibench.reports.metrics import default_cap, set_metrics


class LinearBonferroniConformal(IntervalMethod):
    """Least squares on the last 12 inputs per horizon; Bonferroni split-conformal widths."""

    name = "test_linear_bonferroni"
    shape = "set"

    def _design(self, x):
        return np.concatenate([np.ones((len(x), 1)), x[:, -12:, 0]], axis=1)

    def fit(self, train: SetData, calibration: SetData | None = None):
        self.coef_ = np.linalg.lstsq(self._design(train.x), train.y, rcond=None)[0]
        scores = np.abs(calibration.y - self._design(calibration.x) @ self.coef_)
        n, H = scores.shape
        level = min((n + 1) * (1 - self.alpha / H) / n, 1.0)
        self.width_ = np.quantile(scores, level, axis=0)
        return self

    def predict_interval(self, x):
        point = self._design(x) @ self.coef_
        return Interval(point - self.width_, point + self.width_, point)


def test_set_protocol_joint_coverage_and_oracle_comparison():
    problem = seasonal_ar_sets(n_train=1500, n_calibration=1000, n_test=3000, horizon=4, seed=7)
    out = run_set(problem, LinearBonferroniConformal(alpha=0.1))
    assert out.y.shape == (3000, 4) and out.n_fits == 1
    metrics = set_metrics(out.y, out.lower, out.upper, 0.1, default_cap(*problem.train_target_range()))
    # Bonferroni split conformal guarantees joint coverage >= 90% (finite-sample, marginal)
    assert metrics["joint_coverage"] >= 0.88
    assert len(metrics["per_horizon_coverage"]) == 4
    # no method beats the oracle's joint Bonferroni length on average
    lo, hi = seasonal_ar_oracle(problem, alpha=0.1, joint=True)
    assert metrics["mean_length"] >= np.mean(hi - lo) * 0.98


def test_set_protocol_rejects_wrong_output_shape():
    class Wrong(LinearBonferroniConformal):
        def predict_interval(self, x):
            iv = super().predict_interval(x)
            return Interval(iv.lower[:, :1], iv.upper[:, :1], iv.point[:, :1])

    problem = seasonal_ar_sets(n_train=50, n_calibration=30, n_test=20, horizon=3, seed=0)
    with pytest.raises(ValueError, match="shape"):
        run_set(problem, Wrong(alpha=0.1))
