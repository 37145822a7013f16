"""Online conformal methods that learn the radius itself from the stream of test scores.

On the shared split-conformal base fits (fit once, calibrate many: no extra
training), the interval is y_hat_t +/- q_t, where q_t (one per series) is set by an
online calibrator from the scores s_i = |y_i - y_hat_i| revealed so far, not read
off the window's calibration quantiles as ACI does. The calibrator starts from the
first window's calibration scores and keeps its state across refits. A negative
radius is an empty interval (a miss, stored as [y_hat, y_hat]); an infinite one is
the whole line.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from pibench.methods.split_conformal import SplitConformalMethod


class OnlineCalibrator(Protocol):
    """What :class:`OnlineRadiusMethod` asks of its calibrator: the radius now, then the revealed scores."""

    def radius(self) -> np.ndarray: ...

    def update(self, scores: np.ndarray, radius: np.ndarray) -> object: ...


class OnlineRadiusMethod(SplitConformalMethod):
    """y_hat +/- q_t with q_t from :meth:`_new_calibrator` (``radius()``, ``update(scores, radius)``)."""

    reads_a_score_quantile = False  # the scores start the radius, which then learns online

    def _new_calibrator(self, calibration_scores: np.ndarray) -> OnlineCalibrator:
        raise NotImplementedError

    def _reset_online_state(self, data) -> None:
        self.calibrator_: OnlineCalibrator | None = None
        self.n_empty_ = 0

    def _calibrator(self) -> OnlineCalibrator:
        if self.calibrator_ is None:
            raise RuntimeError(f"{self.name}: fit before predicting or updating (no online calibrator yet).")
        return self.calibrator_

    def _on_refit(self, data) -> None:
        if self.calibrator_ is None:
            self.calibrator_ = self._new_calibrator(self.calibration_scores_)

    def _half_width(self) -> tuple[np.ndarray, np.ndarray]:
        self.radius_ = self._calibrator().radius()
        empty = self.radius_ < 0
        self.n_empty_ += int(empty.sum())
        return np.maximum(self.radius_, 0.0), empty

    def _observe(self, y: np.ndarray) -> None:
        scores = self.revealed_scores(y)
        self._calibrator().update(scores, self.radius_)

    def diagnostics(self) -> dict:
        return {"n_empty": int(getattr(self, "n_empty_", 0))}
