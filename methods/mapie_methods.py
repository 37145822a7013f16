"""MAPIE's ACI and EnbPI (``mapie.regression.TimeSeriesRegressor``, MAPIE 1.6) as pibench methods.

``mapie_aci`` and ``mapie_enbpi`` run MAPIE itself, one ``TimeSeriesRegressor``
per series g of the panel, so that its numbers can sit next to pibench's ``aci``
and ``enbpi`` in one table. Base estimator: ``base="linear"`` (sklearn
``LinearRegression``) or ``base="mlp"`` (``StandardScaler`` + ``MLPRegressor``:
100 logistic units, SGD, lr 1e-3, momentum 0.9, batches of 100, max_iter 300;
sklearn defaults otherwise: Nesterov momentum, L2 penalty 1e-4, early stop when
the loss stalls for 10 epochs, y not standardised, where pibench's MLP uses plain
momentum and 300 full epochs on a standardised y). Model seeds follow pibench:
``SeedSequence([random_state, window start])``, one per series.

* ``mapie_aci``: the first ``1 - calibration_fraction`` of the window fits the
  estimator, which is handed to MAPIE as ``cv="prefit"``; ``fit`` on the rest
  computes the scores (split conformal, as pibench). ``update`` calls
  ``adapt_conformal_inference``. ``refit`` fits a new estimator on the new window
  and re-runs MAPIE's ``fit`` on the same regressor: MAPIE keeps alpha_t there
  (``current_alpha`` survives ``fit``), so alpha_t persists as in pibench's aci.
* ``mapie_enbpi``: ``cv=Subsample(n_models)`` (iid, ``block_length=1``) or
  ``BlockBootstrap(n_models, length=block_length, overlapping=True)``, fitted
  once; ``predict(ensemble=True)`` is EnbPI-V2's centre (mean over i of the
  leave-one-out predictions); ``update(ensemble=True)`` slides the scores.
  ``refit`` keeps the models (as pibench's enbpi) unless ``refit_models=True``,
  which re-runs MAPIE's ``fit`` on the new window (new models *and* new scores;
  pibench's enbpi keeps its residual stream).

Where MAPIE 1.6 differs from pibench (docs/guide/methods.md); each is shown by
``tests/test_mapie_crosscheck.py``:

1. Quantile (``mapie.utils._compute_regression_quantile``): the width is the
   k-th smallest of the n scores, k = ceil((1 - a)(n + 1)) (numpy "lower" at
   level k/n), infinite if k > n; pibench interpolates linearly at level 1 - a.
   They agree iff (n - 1)(1 - a) is an integer and 1 - a <= 1/2; for
   1 - a > 1/2 (e.g. a = 0.1) MAPIE is strictly wider, since k - 1 > (n - 1)(1 - a).
2. ACI clipping (``TimeSeriesRegressor.adapt_conformal_inference``):
   alpha_{t+1} is clipped to [0, 1]. pibench never clips: alpha_t <= 0 gives an
   infinite interval and alpha_t >= 1 an empty one (a sure miss), and alpha_t
   can stray beyond; MAPIE at alpha_t = 1 gives +/- the smallest score.
3. ACI errors (same function): covered iff lower < y < upper, so a point on a
   bound is a miss; pibench counts it as covered.
4. ACI alpha (``TimeSeriesRegressor._get_alpha``): ``predict`` rounds alpha to
   two decimals (``np.round``), and the rounded value is both alpha_1 and the
   target of the update; ``adapt_conformal_inference`` looks alpha up unrounded,
   so with more decimals it raises KeyError. ``mapie_aci`` refuses such alphas.
5. ACI gamma (``_check_gamma``): MAPIE requires 0 <= gamma <= 1.
6. Infinite ACI bounds: MAPIE 1.6's symmetric (absolute) score ignores
   ``allow_infinite_bounds`` (``BaseRegressionScore.get_bounds`` computes the
   symmetric quantile with ``unbounded=False``) and raises once k > n, i.e.
   alpha_t < 1/(n + 1). ``score="absolute"`` here uses :class:`AbsoluteScore`,
   which passes ``unbounded=True`` there and is otherwise MAPIE's score.
7. Score: ``TimeSeriesRegressor``'s default score is signed (``default_sym_ =
   False``): y - y_hat with separate alpha/2 quantiles below and above, i.e.
   asymmetric intervals. pibench uses |y - y_hat|; so does ``score="absolute"``
   (default); ``score="signed"`` runs MAPIE's default.
8. EnbPI point: ``predict``/``update`` default to ``ensemble=False``, i.e. the
   model fitted on the whole window (an extra fit) for the point and the new
   residuals; the wrappers pass ``ensemble=True`` (EnbPI-V2's mean of the
   leave-one-out predictions, as pibench).
9. EnbPI blocks (``mapie.subsample.BlockBootstrap``): each resample is
   n // L + 1 blocks, i.e. (n // L + 1) L indices (more than n); pibench's
   moving blocks are cut to n. With ``block_length=1`` ``Subsample`` is used,
   n iid indices, as pibench. All B models share one ``random_state`` (MAPIE
   clones the estimator); pibench seeds each model.
10. EnbPI points that are in every resample: MAPIE keeps a NaN score in their
    slot (ignored by the quantile, n smaller) until it slides out; pibench
    drops them, keeping a window of the n' usable residuals.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from mapie.conformity_scores import AbsoluteConformityScore
from mapie.regression import TimeSeriesRegressor
from mapie.subsample import BlockBootstrap, Subsample
from mapie.utils import _compute_regression_quantile
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.base import Interval, IntervalMethod, register
from pibench.methods.forecasters.split import proper_training_size, window_seeds

BASES = ("linear", "mlp")
SCORES = ("absolute", "signed")


class AbsoluteScore(AbsoluteConformityScore):
    """MAPIE's |y - y_hat| score, with infinite bounds where MAPIE's signed score gives them.

    Identical to ``AbsoluteConformityScore`` except when ``allow_infinite_bounds``
    is set and k = ceil((1 - alpha)(n + 1)) > n: MAPIE 1.6 raises there, this
    returns an infinite interval (difference 6 of the module docstring).
    """

    def get_bounds(self, X, alpha_np, estimator, conformity_scores, ensemble=False, method="base",
                   optimize_beta=False, allow_infinite_bounds=False, **predict_params):
        if not allow_infinite_bounds or method == "plus" or optimize_beta:
            return super().get_bounds(X, alpha_np, estimator, conformity_scores, ensemble=ensemble, method=method,
                                      optimize_beta=optimize_beta, allow_infinite_bounds=allow_infinite_bounds,
                                      **predict_params)
        y_pred, y_low, y_up = self._get_predictions(X, alpha_np, estimator, ensemble, **predict_params)
        width = _compute_regression_quantile(conformity_scores[..., np.newaxis], 1 - alpha_np, axis=0, unbounded=True)
        return y_pred, y_low - width, y_up + width


def make_estimator(base: str, seed: int):
    """An unfitted sklearn regressor: OLS, or the paper's MLP on standardised features."""
    if base == "linear":
        return LinearRegression()
    return Pipeline([
        ("scale", StandardScaler()),
        ("mlp", MLPRegressor(hidden_layer_sizes=(100,), activation="logistic", solver="sgd",
                             learning_rate_init=1e-3, momentum=0.9, batch_size=100, max_iter=300,
                             random_state=int(seed))),
    ])


def _quiet_fit_warnings() -> None:
    """Inside ``catch_warnings``: silence max_iter reached, and batch_size > n (sklearn uses n)."""
    warnings.simplefilter("ignore", ConvergenceWarning)
    warnings.filterwarnings("ignore", message="Got `batch_size` less than 1 or larger than sample size")


def _fit_estimator(base: str, seed: int, X: np.ndarray, y: np.ndarray):
    with warnings.catch_warnings():
        _quiet_fit_warnings()
        return make_estimator(base, seed).fit(X, y)


class _MapieSeriesMethod(IntervalMethod):
    """One ``TimeSeriesRegressor`` per series of the panel."""

    shape = "series"
    # constructor parameters of every subclass, and the fitted regressors (one per series)
    base: str
    score: str
    regressors_: list[TimeSeriesRegressor]

    def _check_param_values(self) -> None:
        super()._check_param_values()
        if self.base not in BASES:
            raise ValueError(f"base={self.base!r}; choose one of {BASES}.")
        if self.score not in SCORES:
            raise ValueError(
                f"score={self.score!r}; choose 'absolute' (|y - y_hat|, as pibench) or 'signed' (MAPIE's default).")

    def _score(self):
        return AbsoluteScore() if self.score == "absolute" else None

    def _confidence_level(self) -> float:
        return 1.0 - float(self.alpha)

    def _interval(self, X: np.ndarray, **predict_kwargs) -> Interval:
        X = np.asarray(X, dtype=float)
        if X.ndim != 3 or X.shape[1] != len(self.regressors_):
            raise ValueError(f"X must be (m, {len(self.regressors_)}, p); got shape {X.shape}.")
        point, lower, upper = (np.empty(X.shape[:2]) for _ in range(3))
        for g, reg in enumerate(self.regressors_):
            y_pred, bounds = reg.predict(X[:, g, :], confidence_level=self._confidence_level(), **predict_kwargs)
            point[:, g], lower[:, g], upper[:, g] = y_pred, bounds[:, 0, 0], bounds[:, 1, 0]
        self.last_X_ = X
        return Interval(lower=lower, upper=upper, point=point)

    def _revealed(self, y: np.ndarray) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        if y.shape != self.last_X_.shape[:2]:
            raise ValueError(f"y must have the shape {self.last_X_.shape[:2]} of the last prediction; got {y.shape}.")
        return y


@register
class MapieACI(_MapieSeriesMethod):
    """MAPIE's ACI on a split-conformal base estimator; see the module docstring."""

    name = "mapie_aci"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, gamma: float = 0.01, base: str = "mlp",
                 calibration_fraction: float = 0.5, score: str = "absolute"):
        super().__init__(alpha=alpha, random_state=random_state)
        self.gamma, self.base = gamma, base
        self.calibration_fraction, self.score = calibration_fraction, score

    def _check_param_values(self) -> None:
        super()._check_param_values()
        alpha = self.alpha
        if np.round(alpha, 2) != alpha:
            raise ValueError(
                f"alpha={alpha}: MAPIE's ACI rounds alpha to two decimals (it would run at "
                f"{np.round(alpha, 2)}); pass an alpha with at most two decimals.")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma={self.gamma}: MAPIE's ACI requires 0 <= gamma <= 1 (0 is split conformal).")

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        proper_training_size(n_steps, self.calibration_fraction)

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> MapieACI:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        self.check_params()
        seeds = window_seeds(self.random_state, data.start, data.y.shape[1])
        self.regressors_ = [TimeSeriesRegressor(method="aci", cv="prefit", conformity_score=self._score(),
                                                random_state=int(s)) for s in seeds]
        self.alpha_path_: list[np.ndarray] = []
        return self.refit(data)

    def refit(self, data: SeriesData) -> MapieACI:
        """New base fits and scores for this window; MAPIE's alpha_t (``current_alpha``) is kept."""
        n_train = proper_training_size(data.n_steps, self.calibration_fraction)
        seeds = window_seeds(self.random_state, data.start, data.y.shape[1])
        for g, reg in enumerate(self.regressors_):
            X, y = data.X[:, g, :], data.y[:, g]
            reg.set_params(estimator=_fit_estimator(self.base, seeds[g], X[:n_train], y[:n_train]))
            reg.fit(X[n_train:], y[n_train:])
        return self

    def alpha_t(self) -> np.ndarray:
        """(G,) MAPIE's current alpha_t per series."""
        key = np.round(float(self.alpha), 2)
        return np.array([getattr(reg, "current_alpha", {}).get(key, key) for reg in self.regressors_], dtype=float)

    def predict_interval(self, X: np.ndarray) -> Interval:
        return self._interval(X, allow_infinite_bounds=True)

    def update(self, y: np.ndarray) -> None:
        y = self._revealed(y)
        self.alpha_path_.append(self.alpha_t())
        for g, reg in enumerate(self.regressors_):
            reg.adapt_conformal_inference(self.last_X_[:, g, :], y[:, g], gamma=self.gamma,
                                          confidence_level=self._confidence_level())

    def diagnostics(self) -> dict:
        """How many (step, series) pairs MAPIE's clipping held at alpha_t = 0 or 1."""
        path = np.array(self.alpha_path_[1:] + [self.alpha_t()]) if getattr(self, "alpha_path_", None) else np.zeros(0)
        return {"n_alpha_t_at_0": int(np.sum(path == 0.0)), "n_alpha_t_at_1": int(np.sum(path == 1.0))}


@register
class MapieEnbPI(_MapieSeriesMethod):
    """MAPIE's EnbPI (V2 centre: ``ensemble=True``); see the module docstring."""

    name = "mapie_enbpi"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, n_models: int = 20, block_length: int = 1,
                 refit_models: bool = False, base: str = "mlp", score: str = "absolute"):
        super().__init__(alpha=alpha, random_state=random_state)
        self.n_models, self.block_length, self.refit_models = n_models, block_length, refit_models
        self.base, self.score = base, score

    def resampler(self, seed: int):
        """MAPIE's bootstrap: iid ``Subsample`` or overlapping ``BlockBootstrap``."""
        if self.block_length == 1:
            return Subsample(n_resamplings=self.n_models, random_state=int(seed))
        return BlockBootstrap(n_resamplings=self.n_models, length=self.block_length, overlapping=True,
                              random_state=int(seed))

    def _check_param_values(self) -> None:
        super()._check_param_values()
        if isinstance(self.n_models, bool) or not isinstance(self.n_models, (int, np.integer)) or self.n_models < 2:
            raise ValueError(f"n_models={self.n_models!r}: EnbPI needs an integer number >= 2 of bootstrap models.")

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        n = n_steps
        need = math.ceil(max(1 / self.alpha, 1 / (1 - self.alpha)))  # in floats, as MAPIE checks it
        symmetric = self.score == "absolute"  # a signed score's two tails: half the scores each
        window = need if symmetric else 2 * need
        if n < window:  # MAPIE's own check, otherwise met only after the window's B fits
            raise ValueError(f"a window of {n} steps is too short for alpha={self.alpha:g}: MAPIE's EnbPI takes a "
                             f"quantile of the window's out-of-bag scores ({'all' if symmetric else 'half'} of "
                             f"them), which needs at least max(1 / alpha, 1 / (1 - alpha)) = {need}; use a window "
                             f"of at least {window} steps (more with few models: a step in every resample has no "
                             "score) or a larger alpha.")
        if (isinstance(self.block_length, bool) or not isinstance(self.block_length, (int, np.integer))
                or not 1 <= self.block_length <= n):
            raise ValueError(
                f"block_length={self.block_length!r} must be an integer in [1, {n}] (the window length); "
                "1 is the iid bootstrap.")

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> MapieEnbPI:
        if calibration is not None:
            raise TypeError(f"{self.name} fits a series window only; it takes no calibration set.")
        n, G = data.y.shape
        self.check_params()
        self.check_window(n)
        seeds = window_seeds(self.random_state, data.start, G)
        self.regressors_ = []
        for g in range(G):
            reg = TimeSeriesRegressor(estimator=make_estimator(self.base, seeds[g]), method="enbpi",
                                      cv=self.resampler(seeds[g]), agg_function="mean",
                                      conformity_score=self._score(), random_state=int(seeds[g]))
            with warnings.catch_warnings():  # points in every resample: counted in diagnostics() instead
                _quiet_fit_warnings()
                warnings.filterwarnings("ignore", message="WARNING: at least one point of training set")
                warnings.filterwarnings("ignore", message="Mean of empty slice", category=RuntimeWarning)
                reg.fit(data.X[:, g, :], data.y[:, g])
            self.regressors_.append(reg)
        self.n_unused_points_ = int(sum(np.isnan(reg.conformity_scores_).sum() for reg in self.regressors_))
        return self

    def refit(self, data: SeriesData) -> MapieEnbPI:
        """Keep the models and the score stream (default), or refit MAPIE from scratch on ``data``."""
        return self.fit(data) if self.refit_models else self

    # A point in every resample has no leave-one-out model: MAPIE divides 0 by 0 for it, then nanmean drops it.
    def predict_interval(self, X: np.ndarray) -> Interval:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self._interval(X, ensemble=True)

    def update(self, y: np.ndarray) -> None:
        y = self._revealed(y)
        for g, reg in enumerate(self.regressors_):
            with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
                # MAPIE warns on every call that update's signature changed
                warnings.filterwarnings("ignore", message=r"\s*This function behavior has been changed")
                reg.update(self.last_X_[:, g, :], y[:, g], ensemble=True)

    def diagnostics(self) -> dict:
        """Training points (summed over series) in every resample at the last fit: NaN scores in MAPIE."""
        return {"n_unused_points": int(getattr(self, "n_unused_points_", 0))}
