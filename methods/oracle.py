"""The oracle: the best possible interval of a synthetic series, as a row beside every method.

A built-in synthetic dataset knows each step's true conditional mean and scale given
the past (:mod:`pibench.data_loaders.oracle`; the regime series' oracle also knows the regime).
The oracle interval is mean_t +/- z_{alpha/2} scale_t: it covers at exactly 1 - alpha,
at every step, with the shortest Gaussian interval that does. It learns nothing: the
protocol drives it like any method, and it walks the test span step by step. On the
sets of ``seasonal_sets`` it gives each test sequence's true conditional interval per
horizon at Bonferroni's per-horizon level 1 - alpha/H, the joint level handled as the
set methods handle it.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from pibench.data_loaders.oracle import series_oracle, set_oracle
from pibench.data_loaders.problems import SeriesData, SeriesProblem, SetProblem
from pibench.methods.base import Interval, IntervalMethod, NotApplicable, register


@register
class Oracle(IntervalMethod):
    """The true conditional interval of a synthetic series or set (known law): the best possible row."""

    name = "oracle"
    shape = "any"

    def prepare(self, problem: SeriesProblem | SetProblem) -> None:
        if isinstance(problem, SetProblem):
            sets = set_oracle(problem, self.alpha)
            if sets is not None:
                self.sets_ = sets
                return
        else:
            series = series_oracle(problem)
            if series is not None:
                (self.mean_, self.scale_), self.step_ = series, problem.test_start
                return
        raise NotApplicable(f"dataset {problem.name!r} has no oracle: the oracle runs on the built-in synthetic "
                            "data (ar, nlar, expar, regime, seasonal_sets), whose conditional law is known.")

    def fit(self, data: SeriesData, calibration=None) -> Oracle:
        self.check_params()
        if not hasattr(self, "mean_") and not hasattr(self, "sets_"):
            raise RuntimeError("the oracle needs prepare(problem) before fit (the runner calls it).")
        return self

    def refit(self, data: SeriesData) -> Oracle:
        return self  # the truth does not move with the window

    def predict_interval(self, X: np.ndarray) -> Interval:
        if hasattr(self, "sets_"):  # all test sequences at once
            lower, upper, mean = self.sets_
            if len(X) != len(mean):
                raise ValueError(f"the oracle knows {len(mean)} test sequences; asked for {len(X)}.")
            return Interval(lower, upper, mean)
        t = self.step_
        half = norm.ppf(1 - self.alpha / 2) * self.scale_[t:t + 1]
        point = self.mean_[t:t + 1]
        return Interval(point - half, point + half, point)

    def update(self, y: np.ndarray) -> None:
        self.step_ += 1
