"""The oracle: the best possible interval of a synthetic series, as a row beside every method.

A built-in synthetic dataset knows each step's true conditional mean and scale given
the past (:mod:`data_loaders.oracle`; the regime series' oracle also knows the regime).
The oracle interval is mean_t +/- z_{alpha/2} scale_t: it covers at exactly 1 - alpha,
at every step, with the shortest Gaussian interval that does. It learns nothing: the
protocol drives it like any method, and it walks the test span step by step.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from data_loaders.oracle import series_oracle
from data_loaders.problems import SeriesData, SeriesProblem
from methods.base import Interval, IntervalMethod, register


@register
class Oracle(IntervalMethod):
    """The true conditional interval of a synthetic series (known mean and scale): the best possible row."""

    name = "oracle"

    def prepare(self, problem) -> None:
        truth = series_oracle(problem) if isinstance(problem, SeriesProblem) else None
        if truth is None:
            raise ValueError(f"dataset {problem.name!r} has no oracle: the oracle runs on the built-in synthetic "
                             "series (ar, nlar, expar, regime), whose conditional law is known.")
        self.mean_, self.scale_ = truth
        self.step_ = problem.test_start

    def fit(self, data: SeriesData, calibration=None) -> Oracle:
        self.check_params()
        if not hasattr(self, "mean_"):
            raise RuntimeError("the oracle needs prepare(problem) before fit (the runner calls it).")
        return self

    def refit(self, data: SeriesData) -> Oracle:
        return self  # the truth does not move with the window

    def predict_interval(self, X: np.ndarray) -> Interval:
        t = self.step_
        half = norm.ppf(1 - self.alpha / 2) * self.scale_[t:t + 1]
        point = self.mean_[t:t + 1]
        return Interval(point - half, point + half, point)

    def update(self, y: np.ndarray) -> None:
        self.step_ += 1
