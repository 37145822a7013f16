"""Normalized conformity scores: the residual divided by a causal scale estimate (Lei et al. 2018's
locally weighted scores, with an online scale).

A calibration residual r_i is scored r_i / s_i with s_i the scale before it; at test
step t the interval is y_hat_t +/- q_t s_t, q_t whatever the method's calibrator makes
of the scores, and the revealed |y_t - y_hat_t| / s_t is the score the calibrator sees.
The scale is updated after every revealed step, so it only ever uses the past. The
first window's calibration residuals start the scale; a later window's residuals are
scored from the scale the stream has reached, which they leave unchanged. Three scales:

* :class:`EWMAScale`, s <- decay * s + (1 - decay) * |r|, an exponentially weighted
  moving average of absolute residuals, started at the power of two nearest the mean
  absolute residual of the first calibration part. With ``decay = 1`` the scale stays at
  that power of two, so every score and width is the absolute method's times an exact
  constant: the intervals are the absolute-score method's, bit for bit.
* :class:`GARCHScale`, s^2 <- omega + a r^2 + b s^2, a GARCH(1, 1) conditional variance
  (Bollerslev 1986) whose parameters the ``arch`` package fits by Gaussian maximum
  likelihood on each window's calibration residuals (zero mean).
* :class:`ModelScale`, s_t = sd(x_t), the base forecaster's own predictive standard deviation
  (``base = "pa"``: PA's sqrt(varsigma2(x)/n + sigma2_hat), docs/guide/methods.md), known before y_t and
  not learnt from the revealed residuals: the score is PA's studentized residual and the
  calibrator only fixes the scale of PA's band (conformalised PA).
"""

from __future__ import annotations

import warnings

import numpy as np


class RunningScale:
    """The running scale of G series (module doc): ``score`` a window's calibration residuals, ``update``
    after each revealed step, ``current`` for the next one. Subclasses say how the scale starts and steps."""

    def __init__(self) -> None:
        self.value: np.ndarray | None = None

    def _start(self, residuals: np.ndarray) -> np.ndarray:
        """(G,) the scale before the first calibration residual."""
        raise NotImplementedError

    def _step(self, scale: np.ndarray, abs_residual: np.ndarray) -> np.ndarray:
        """(G,) the scale after a step whose absolute residual is ``abs_residual``."""
        raise NotImplementedError

    def _learn(self, residuals: np.ndarray) -> None:
        """Fit the scale's parameters to a window's calibration residuals (nothing by default)."""

    def score(self, residuals: np.ndarray) -> np.ndarray:
        """Calibration scores r_i / s_i (n_cal, G) of a window's residuals in time order."""
        residuals = np.asarray(residuals, dtype=float)
        self._learn(residuals)
        scale = self._start(residuals) if self.value is None else self.value
        scores = np.empty_like(residuals)
        for i, r in enumerate(residuals):
            scores[i] = r / scale
            scale = self._step(scale, np.abs(r))
        if self.value is None:
            self.value = scale
        return scores

    def _started(self) -> np.ndarray:
        """The running scale (G,); RuntimeError before the first window's residuals were scored."""
        if self.value is None:
            raise RuntimeError(f"{type(self).__name__}: score a window's calibration residuals first.")
        return self.value

    def update(self, abs_residual: np.ndarray) -> None:
        """After a revealed step: fold |y - y_hat| (G,) into the scale."""
        self.value = self._step(self._started(), abs_residual)

    def current(self) -> np.ndarray:
        """(G,) the scale for the next step (kept above the smallest positive float: a divisor)."""
        return np.maximum(self._started(), np.finfo(float).tiny)


class EWMAScale(RunningScale):
    """s <- decay * s + (1 - decay) * |r|, started at a power of two (module doc)."""

    def __init__(self, decay: float):
        super().__init__()
        self.decay = float(decay)

    def _start(self, residuals: np.ndarray) -> np.ndarray:
        # the power of two nearest the mean: dividing and multiplying by it is exact
        mean = np.abs(residuals).mean(axis=0)
        return np.where(mean > 0, 2.0 ** np.round(np.log2(np.where(mean > 0, mean, 1.0))), 1.0)

    def _step(self, scale: np.ndarray, abs_residual: np.ndarray) -> np.ndarray:
        return self.decay * scale + (1.0 - self.decay) * abs_residual


class GARCHScale(RunningScale):
    """s_t^2 = omega + a r_{t-1}^2 + b s_{t-1}^2 per series, refitted on every window (module doc).

    The variance starts at the first window's mean squared residual. A series whose
    residuals are constant, or whose fit fails, keeps its previous parameters (at first:
    omega = its mean squared residual, a = b = 0, a constant scale).
    """

    def __init__(self) -> None:
        super().__init__()
        self.params: np.ndarray | None = None  # (3, G): omega, a, b

    def _learn(self, residuals: np.ndarray) -> None:
        from arch import arch_model  # imported here: only normalized GARCH scores need it

        mean_square = np.mean(residuals**2, axis=0)
        params = self.params.copy() if self.params is not None else np.stack(
            [np.maximum(mean_square, np.finfo(float).tiny), np.zeros_like(mean_square), np.zeros_like(mean_square)])
        for g, series in enumerate(residuals.T):
            spread = float(np.sqrt(mean_square[g]))
            if not np.isfinite(spread) or spread == 0 or np.ptp(series) == 0:
                continue
            with warnings.catch_warnings():  # a failed fit is detected below, not printed
                warnings.simplefilter("ignore")
                fit = arch_model(series / spread, mean="Zero", vol="GARCH", p=1, q=1, rescale=False).fit(
                    disp="off", show_warning=False)
            omega, a, b = (float(fit.params[k]) for k in ("omega", "alpha[1]", "beta[1]"))
            # arch keeps a + b <= 1
            if fit.convergence_flag == 0 and omega > 0 and a >= 0 and b >= 0 and a + b <= 1 + 1e-9:
                params[:, g] = omega * spread**2, a, b  # back to the residuals' units
        self.params = params

    def _start(self, residuals: np.ndarray) -> np.ndarray:
        return np.sqrt(np.maximum(np.mean(residuals**2, axis=0), np.finfo(float).tiny))

    def _step(self, scale: np.ndarray, abs_residual: np.ndarray) -> np.ndarray:
        if self.params is None:
            raise RuntimeError("GARCHScale: fit the parameters on a window's calibration residuals first.")
        omega, a, b = self.params
        return np.sqrt(omega + a * abs_residual**2 + b * scale**2)


class ModelScale(RunningScale):
    """s_t = sd(x_t), the base model's predictive sd (module doc): the method hands over the window's
    calibration sds with :meth:`use_window` and the next step's sd with :meth:`at`."""

    def __init__(self) -> None:
        super().__init__()
        self.calibration_sd: np.ndarray | None = None

    def use_window(self, calibration_sd: np.ndarray) -> None:
        """(n_cal, G) the model's sd on the calibration steps of the window just fitted."""
        self.calibration_sd = np.maximum(np.asarray(calibration_sd, dtype=float), np.finfo(float).tiny)

    def at(self, sd: np.ndarray) -> None:
        """(G,) the model's sd for the step about to be predicted."""
        self.value = np.asarray(sd, dtype=float)

    def score(self, residuals: np.ndarray) -> np.ndarray:
        if self.calibration_sd is None or self.calibration_sd.shape != np.shape(residuals):
            raise RuntimeError("ModelScale: hand over the window's calibration sds (use_window) first.")
        return np.asarray(residuals, dtype=float) / self.calibration_sd

    def _step(self, scale: np.ndarray, abs_residual: np.ndarray) -> np.ndarray:
        return scale  # the model's sd does not learn from revealed residuals
