"""The ``IntervalMethod`` contract and the method registry.

A method follows scikit-learn's conventions: the constructor stores parameters
only, ``fit`` returns self, learned state ends in ``_``. Two problem shapes
(SPEC §1) and their call sequences, driven by :mod:`benchmarks.protocols`:

* series (``shape = "series"``)::

      m.fit(window)                      # SeriesData: y (W, G), X (W, G, p)
      for each test step t:
          m.refit(window_t)              # online protocol only, every k steps
          iv = m.predict_interval(X_t)   # X_t (1, G, p) -> arrays (1, G)
          m.update(y_t)                  # y_t (1, G) revealed

  ``fit`` starts from scratch; ``refit`` retrains on a new window but keeps the
  online state that ``update`` built (e.g. ACI's alpha_t).

* set (``shape = "set"``)::

      m.fit(train, calibration)          # SetData each; methods without a
      iv = m.predict_interval(x_test)    # calibration step train on both

A new method is one module: subclass, decorate with :func:`register`, done.
Other packages add methods through the ``pibench.methods`` entry-point group.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import ClassVar, Literal

import numpy as np

from data_loaders.problems import SeriesData, SetData
from data_loaders.validation import check_alpha

ENTRY_POINT_GROUP = "pibench.methods"


@dataclass(frozen=True)
class Interval:
    """Prediction intervals: lower, upper and point arrays of one shape.

    Bounds may be infinite (e.g. ACI with alpha_t <= 0). An empty interval is
    stored as lower == upper == point.
    """

    lower: np.ndarray
    upper: np.ndarray
    point: np.ndarray

    def __post_init__(self) -> None:
        arrays = [np.asarray(a, dtype=float) for a in (self.lower, self.upper, self.point)]
        if len({a.shape for a in arrays}) != 1:
            raise ValueError(
                f"lower, upper and point must share a shape; got {[a.shape for a in arrays]}."
            )
        if any(np.isnan(a).any() for a in arrays):
            raise ValueError("interval bounds or point contain NaN: the method produced invalid output.")
        for name, a in zip(("lower", "upper", "point"), arrays):
            object.__setattr__(self, name, a)

    @property
    def length(self) -> np.ndarray:
        return self.upper - self.lower


class IntervalMethod(ABC):
    """Base class of every interval method; see the module docstring for the contract."""

    name: ClassVar[str] = ""
    shape: ClassVar[Literal["series", "set"]] = "series"

    def __init__(self, alpha: float = 0.1, random_state: int = 0) -> None:
        self.alpha = alpha
        self.random_state = random_state

    # -- scikit-learn style parameter access, used for provenance -------------
    @classmethod
    def _param_names(cls) -> list[str]:
        names: list[str] = []
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None:
                continue
            for p in inspect.signature(init).parameters.values():
                if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    continue
                if p.name not in names:
                    names.append(p.name)
        return names

    def get_params(self) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def _check_alpha(self) -> float:
        return check_alpha(self.alpha)

    # -- the contract -----------------------------------------------------------
    @abstractmethod
    def fit(self, data, calibration: SetData | None = None) -> IntervalMethod:
        """Fit from scratch (series: a SeriesData window; sets: train and calibration)."""

    def refit(self, data: SeriesData) -> IntervalMethod:
        """Retrain on a new sliding window, keeping online state (default: ``fit``)."""
        return self.fit(data)

    @abstractmethod
    def predict_interval(self, X: np.ndarray) -> Interval:
        """Intervals for X: series (m, G, p) -> (m, G); sets (m, T, d) -> (m, H)."""

    def update(self, y: np.ndarray) -> None:
        """Reveal the targets of the last prediction (series, online); default: ignore."""

    def diagnostics(self) -> dict:
        """Scalar facts about the run worth recording (e.g. how often a fallback fired)."""
        return {}


_REGISTRY: dict[str, type[IntervalMethod]] = {}


def register(cls: type[IntervalMethod]) -> type[IntervalMethod]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"{cls.__qualname__} must set a non-empty class attribute `name`.")
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(
            f"method name {cls.name!r} is already registered by {existing.__module__}.{existing.__qualname__}; "
            "choose another name."
        )
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtin_and_plugins() -> None:
    import methods.builtin  # noqa: F401  (registers the built-in methods)

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _REGISTRY:
            cls = ep.load()
            if not (isinstance(cls, type) and issubclass(cls, IntervalMethod)):
                raise ValueError(
                    f"entry point {ep.name!r} in group {ENTRY_POINT_GROUP!r} must point to an "
                    f"IntervalMethod subclass, got {cls!r}."
                )
            _REGISTRY.setdefault(ep.name, cls)


def available_methods() -> dict[str, type[IntervalMethod]]:
    """All registered methods by name (built-in and entry-point plugins)."""
    _load_builtin_and_plugins()
    return dict(sorted(_REGISTRY.items()))


def get_method(name: str) -> type[IntervalMethod]:
    """The method class registered as ``name``; a ValueError lists the choices."""
    methods = available_methods()
    if name not in methods:
        raise ValueError(
            f"unknown method {name!r}; available: {', '.join(methods)}. "
            "Run `pibench list` to see methods, datasets and suites."
        )
    return methods[name]
