"""PA as an IntervalMethod for series problems (docs/guide/methods.md; the paper runs it offline on fesp).

One network per series g of the panel (fesp: 24 hourly MLPs), trained together as
one stack (:class:`~pibench.methods.pa.networks.StackedMLPs`: each group's gradient, prior,
noise and mask are its own) with prior annealing on standardised features and
target, sparsified, refined, and each given asymptotic-normal intervals. Intervals
are mapped back to the raw target scale (an affine map, so coverage is unchanged
and lengths scale by the target's standard deviation).

The annealing schedule must end within the training: T1 <= T2 <= T3 <= epochs
(``pa_rnn``: <= iterations). A shorter training is refused before any work, with the
schedule scaled to it in the message: it would never anneal the prior, and report plain
SGD as PA.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import torch

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.base import Interval, IntervalMethod, register
from pibench.methods.forecasters.scaling import Standardizer
from pibench.methods.pa.intervals import HessianKind, fit_asymptotic_normal
from pibench.methods.pa.networks import StackedMLPs
from pibench.methods.pa.trainer import PASettings, train_pa
from pibench.methods.param_checks import one_of, positive_int


@register
class PA(IntervalMethod):
    """Prior-annealed sparse MLP with asymptotic-normal prediction intervals."""

    name = "pa"
    shape = "series"
    serves_spans = True

    def __init__(self, alpha: float = 0.1, random_state: int = 0, hidden: int = 100, epochs: int = 300,
                 lr: float = 1e-3, momentum: float = 0.9, batch_size: int = 100, T1: int = 150, T2: int = 160,
                 T3: int = 260, s1: float = 0.01, s0_init: float = 1e-5, s0_end: float = 1e-6, lam: float = 1e-7,
                 tau: float = 1.0, refine_epochs: int = 50, hessian: str = "auto"):
        super().__init__(alpha=alpha, random_state=random_state)
        self.hidden, self.epochs, self.lr, self.momentum, self.batch_size = hidden, epochs, lr, momentum, batch_size
        self.T1, self.T2, self.T3, self.s1, self.s0_init, self.s0_end = T1, T2, T3, s1, s0_init, s0_end
        self.lam, self.tau, self.refine_epochs, self.hessian = lam, tau, refine_epochs, hessian

    def _settings(self) -> PASettings:
        return PASettings(epochs=self.epochs, lr=self.lr, momentum=self.momentum, batch_size=self.batch_size,
                          T1=self.T1, T2=self.T2, T3=self.T3, s1=self.s1, s0_init=self.s0_init,
                          s0_end=self.s0_end, lam=self.lam, tau=self.tau, refine_epochs=self.refine_epochs)

    def _check_param_values(self) -> None:
        super()._check_param_values()
        positive_int("hidden", self.hidden)
        one_of("hessian", self.hessian, ("auto", "exact", "ggn"))
        self._settings().check()

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> PA:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        seed = int(np.random.SeedSequence([self.random_state, data.start]).generate_state(1)[0])
        return self.fit_arrays(data.X, data.y, seed)

    def fit_arrays(self, X: np.ndarray, y: np.ndarray, seed: int) -> PA:
        """Train the stack on X (n, G, p), y (n, G) with torch seed ``seed`` and give each group its intervals
        (what :meth:`fit` does with the window's seed; the ``base = "pa"`` forecaster calls it directly)."""
        self.check_params()
        settings = self._settings()
        n, G, p = X.shape
        self.x_scaler_ = Standardizer().fit(X)
        self.y_scaler_ = Standardizer().fit(y)
        Xs = torch.as_tensor(self.x_scaler_.transform(X), dtype=torch.float32)
        ys = torch.as_tensor(self.y_scaler_.transform(y), dtype=torch.float32)
        torch.manual_seed(seed)
        stack = StackedMLPs(G, p, self.hidden)
        masks = train_pa(stack, Xs, ys, settings, seed=seed)
        hessian = cast(HessianKind, self.hessian)  # checked against the kinds by check_params
        self.intervals_ = [fit_asymptotic_normal(stack.group(g), stack.group_masks(masks, g), Xs[:, g].double(),
                                                 ys[:, g].double(), hessian=hessian) for g in range(G)]
        self.n_kept_ = [int(fitted.n_kept) for fitted in self.intervals_]
        return self

    def point(self, X: np.ndarray) -> np.ndarray:
        """(m, G) point forecasts in target units (no Jacobians)."""
        Xs = torch.as_tensor(self.x_scaler_.transform(X), dtype=torch.float64)
        point = np.stack([np.asarray(fitted.point(Xs[:, g]), dtype=float).reshape(len(X), -1)[:, 0]
                          for g, fitted in enumerate(self.intervals_)], axis=1)
        return self.y_scaler_.inverse_transform(point)

    def point_and_sd(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(m, G) point forecasts and predictive sd sqrt(varsigma2(x)/n + sigma2_hat), target units
        (paper section 4)."""
        Xs = torch.as_tensor(self.x_scaler_.transform(X), dtype=torch.float64)
        parts = [fitted.predictive_variance(Xs[:, g]) for g, fitted in enumerate(self.intervals_)]
        point = np.stack([np.asarray(part[0], dtype=float)[:, 0] for part in parts], axis=1)
        sd = np.stack([np.sqrt(np.asarray(part[2], dtype=float)[:, 0]) for part in parts], axis=1)
        return self.y_scaler_.inverse_transform(point), sd * np.asarray(self.y_scaler_.std_, dtype=float)

    def predict_interval(self, X: np.ndarray) -> Interval:
        Xs = torch.as_tensor(self.x_scaler_.transform(X), dtype=torch.float64)
        parts = [fitted.predict(Xs[:, g], self.alpha) for g, fitted in enumerate(self.intervals_)]
        point, lower, upper = (np.stack([np.asarray(part[k], dtype=float) for part in parts], axis=1)
                               for k in range(3))
        inverse = self.y_scaler_.inverse_transform
        return Interval(lower=inverse(lower), upper=inverse(upper), point=inverse(point))

    def diagnostics(self) -> dict:
        fitted = getattr(self, "intervals_", [])
        kept = getattr(self, "n_kept_", [])
        return {"mean_kept_weights": float(np.mean(kept)) if kept else 0.0, "max_kept_weights": max(kept, default=0),
                "exact_hessian_not_pd": int(sum(f.diagnostics.get("exact_not_pd", False) for f in fitted)),
                "pinv_fallbacks": int(sum(f.diagnostics.get("fallback") is not None for f in fitted)),
                "mean_identified_weights": float(np.mean([f.diagnostics["rank"] for f in fitted])) if fitted else 0.0}
