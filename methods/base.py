"""The ``IntervalMethod`` contract and the method registry.

A method follows scikit-learn's conventions: the constructor stores parameters
only, ``fit`` returns self, learned state ends in ``_``. Two problem shapes
(docs/guide/datasets.md) and their call sequences, driven by :mod:`pibench.benchmarks.protocols`:

* series (``shape = "series"``)::

      m.fit(window)                      # SeriesData: y (W, G), X (W, G, p)
      for each test step t:
          m.refit(window_t)              # online protocol only, every k steps
          iv = m.predict_interval(X_t)   # X_t (1, G, p) -> arrays (1, G)
          m.update(y_t)                  # y_t (1, G) revealed

  ``fit`` starts from scratch; ``refit`` retrains on a new window but keeps the
  online state that ``update`` built (e.g. ACI's alpha_t). A method with
  ``serves_spans = True`` (no online state: PA, PA-RNN) is asked once per fit for
  all the steps it serves, ``predict_interval(X[t0:t1])``, and gets no ``update``;
  the others are shown those steps' inputs first (``anticipate(X[t0:t1])``), to
  compute ahead what depends on each X_t alone.

* set (``shape = "set"``)::

      m.fit(train, calibration)          # SetData each; methods without a
      iv = m.predict_interval(x_test)    # calibration step train on both

A method that serves both shapes says ``shape = "any"`` (the oracle).

The arrays a method is given are read-only views of the problem that every task of
a worker shares: copy what you change (``y = data.y.copy()``; ``torch.tensor``
copies, ``torch.as_tensor`` shares). A task whose method changed them anyway
fails, and the tasks after it load the data again.

Every answer is checked as it comes: its arrays have the shape of the targets
asked for, and no lower bound lies above its upper one (an empty interval is
lower == upper == point), unless the class sets ``may_cross = True`` (quantiles
estimated apart: MQ-RNN, AgACI's aggregated bounds), where crossing is an outcome
its diagnostics count.

A new method is one module anywhere under ``methods/``: subclass, decorate with
:func:`register`, done (:mod:`pibench.methods.catalog` imports every module of the
package). Other packages add methods through the ``pibench.methods`` entry-point group.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np

from pibench.data_loaders.problems import SeriesData, SetData
from pibench.data_loaders.validation import check_alpha
from pibench.methods.code_identity import SNAPSHOT_ATTRIBUTE, is_pibench_class, take_snapshot
from pibench.methods.param_checks import check_types


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
        for name, a in zip(("lower", "upper", "point"), arrays):
            missing = np.isnan(a)
            if missing.any():
                where = tuple(int(i) for i in np.argwhere(missing)[0])
                raise ValueError(f"the interval's {name} is NaN at {int(missing.sum())} of {a.size} point(s) (first "
                                 f"at index {where}): give finite bounds (+-inf for a side without one, as ACI "
                                 "does) and a finite point; a NaN often comes from a statistic of too few values "
                                 "(a std or a quantile of an empty window) or a division by zero.")
        lower, upper, point = arrays
        for name, wrong, sign in (("lower", np.isposinf(lower), "+inf"), ("upper", np.isneginf(upper), "-inf"),
                                  ("point", np.isinf(point), "infinite")):
            if wrong.any():
                where = tuple(int(i) for i in np.argwhere(wrong)[0])
                raise ValueError(f"the interval's {name} is {sign} at {int(wrong.sum())} of {wrong.size} point(s) "
                                 f"(first at index {where}): give finite bounds (-inf as a lower bound and +inf as "
                                 "an upper one for a side without one, as ACI does) and a finite point; an infinite "
                                 "value often comes from an overflow (the exp of a large number) or a division by "
                                 "zero.")
        for name, a in zip(("lower", "upper", "point"), arrays):
            object.__setattr__(self, name, a)

    @property
    def length(self) -> np.ndarray:
        return self.upper - self.lower


class NotApplicable(ValueError):
    """Raised by :meth:`IntervalMethod.prepare` when the method cannot serve a problem by its nature (the
    oracle on data whose law is unknown): the runner leaves that method out on that dataset with one line,
    where any other ValueError stops the run as a user error."""


class IntervalMethod(ABC):
    """Base class of every interval method; see the module docstring for the contract."""

    name: ClassVar[str] = ""
    shape: ClassVar[Literal["series", "set", "any"]] = "series"
    #: series: ``predict_interval`` takes consecutive test steps (m, G, p) -> (m, G) in one call, each answered as
    #: m calls of one step would be (up to float rounding: the steps batched), and ``update`` ignores y (no online
    #: state). The protocol then asks for all the steps of a fit at once: one batched pass instead of m (PA's
    #: Jacobians; on a GPU, m host round trips fewer).
    serves_spans: ClassVar[bool] = False
    #: lower > upper is an outcome of the method (quantiles fitted or aggregated apart: MQ-RNN, AgACI), which
    #: counts it in its diagnostics; for any other method the protocol stops at a crossed interval (a bug).
    may_cross: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Snapshot the source of the module that defines the new class, now, while it is the code being
        run (:mod:`pibench.methods.code_identity`): what names the class's results."""
        super().__init_subclass__(**kwargs)
        if cls.serves_spans and cls.update is not IntervalMethod.update:
            raise TypeError(f"{cls.__qualname__} serves spans (serves_spans = True) but defines update: a method "
                            "asked for a fit's steps at once sees no targets between them; set serves_spans = False.")
        setattr(cls, SNAPSHOT_ATTRIBUTE, take_snapshot(cls))

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

    def params_but_seed(self) -> dict:
        """Every parameter but ``random_state``: fits that train together as one network (a cell) share them."""
        return {k: v for k, v in self.get_params().items() if k != "random_state"}

    @classmethod
    def _check_cell(cls, methods: Sequence[IntervalMethod]) -> None:
        """Fits that train together (``fit_together``) must be of this class and share every setting but the
        seed; each must be valid."""
        if any(type(m) is not cls or m.params_but_seed() != methods[0].params_but_seed() for m in methods):
            raise ValueError(f"{cls.name} fits train together only with equal settings.")
        for m in methods:
            m.check_params()

    def _take_from_cell(self, key: object) -> tuple | None:
        """What a ``fit_together`` left for this method (``trained_together_ = (key, *trained)``), if it was
        trained on the data ``key`` names: ``trained``, else None. Taken either way (one fit uses it)."""
        left = self.__dict__.pop("trained_together_", None)
        return tuple(left[1:]) if left is not None and left[0] == key else None

    @classmethod
    def handles(cls, shape: str) -> bool:
        """Whether the method runs on problems of ``shape`` ("series" or "set")."""
        return cls.shape in (shape, "any")

    # -- checks that need no data (the runner calls them before any task starts) -
    def check_params(self) -> None:
        """Raise ValueError naming a parameter of the wrong type or out of range.

        Types come from the constructor's annotations (:mod:`pibench.methods.param_checks`);
        ranges from :meth:`_check_param_values`. ``fit`` calls it too.
        """
        check_types(self)
        self._check_param_values()

    def _check_param_values(self) -> None:
        """Range checks of the parameters; extend (calling super) in a method with its own."""
        check_alpha(self.alpha)

    def prepare(self, problem) -> None:
        """See the whole problem before any fit: check it (ValueError) or read what only it knows
        (the oracle reads the true conditional law). Raise :class:`NotApplicable` where the method cannot
        serve such a problem at all. The runner calls it; default: nothing."""

    @classmethod
    def check_calls(cls, shape: str) -> None:
        """Raise ValueError if a method of the contract cannot take the arguments the protocols of ``shape``
        ("series" or "set") pass it (a ``def predict_interval(self):`` failed inside every task)."""
        calls = {"series": (("fit", "data"), ("refit", "data"), ("predict_interval", "X"), ("update", "y"),
                            ("anticipate", "X")),
                 "set": (("fit", "train", "calibration"), ("predict_interval", "X"))}[shape]
        for name, *arguments in calls:
            function = getattr(cls, name)
            try:
                signature = inspect.signature(function)
            except (TypeError, ValueError):
                continue  # a callable without a signature to read: its call will tell
            try:
                signature.bind(None, *arguments)
            except TypeError:
                raise ValueError(f"{cls.__name__}.{name}{signature} cannot be called as the {shape} protocol calls "
                                 f"it, {name}({', '.join(arguments)}): define it as def {name}(self, "
                                 f"{', '.join(arguments if name != 'fit' else ['data', 'calibration=None'])})."
                                 ) from None

    def check_window(self, n_steps: int, n_groups: int = 1) -> None:
        """Raise ValueError if this method cannot fit windows of ``n_steps`` steps of ``n_groups`` series."""
        if n_steps < 2:
            raise ValueError(f"{self.name} needs a window of at least 2 steps; got {n_steps}.")

    def window_note(self, n_steps: int) -> str | None:
        """A line where windows of ``n_steps`` steps are valid but too short for the method to do what it is for
        (too few calibration scores for its level), said before a run; default None."""
        return None

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

    def anticipate(self, X: np.ndarray) -> None:
        """Series: the inputs (m, G, p) of the m steps this fit will serve, given once before the first is
        asked for. A method may compute ahead what depends on each X_t alone (a base model's forecasts, in
        one batch), never anything from the targets: X_t's lags hold targets of earlier steps that ``update``
        has not revealed yet. Default: nothing."""

    def diagnostics(self) -> dict:
        """Scalar facts about the run worth recording (e.g. how often a fallback fired)."""
        return {}


_REGISTRY: dict[str, type[IntervalMethod]] = {}

M = TypeVar("M", bound=type[IntervalMethod])
#: The problem shapes a method can serve (:attr:`IntervalMethod.shape`).
SHAPES = ("series", "set", "any")


#: Called before a class from outside pibench is registered: the ``pibench`` package adds the import of the
#: built-in methods, so that their names are taken first (this module cannot import the catalog above it).
BEFORE_OUTSIDE_REGISTRATION: list[Callable[[], None]] = []


class MethodReplaced(UserWarning):
    """A method name was registered again by the same qualified class: a reload or a re-run notebook cell."""


def register(cls: M) -> M:
    """Class decorator: make ``cls`` available under ``cls.name``; returns ``cls`` itself (its type kept).

    Registering again under the same name the same qualified class (module and qualified name: what
    ``importlib.reload`` or re-running a notebook cell produces) replaces the entry, with a one-line
    :class:`MethodReplaced` warning; another class under a taken name is refused.
    """
    if not (isinstance(cls, type) and issubclass(cls, IntervalMethod)):
        what = f"class {cls.__qualname__}" if isinstance(cls, type) else f"{type(cls).__name__} " \
            f"{getattr(cls, '__qualname__', repr(cls))}"
        raise ValueError(f"@register takes a subclass of IntervalMethod; {what} is not one: define it as class "
                         "Mine(IntervalMethod): ... (from pibench import IntervalMethod).")
    if not isinstance(cls.name, str) or not cls.name or cls.name != cls.name.strip() or any(
            c.isspace() or c in ",:'\"" for c in cls.name):
        raise ValueError(f"{cls.__qualname__}.name = {cls.name!r}: give a name without spaces, commas, colons or "
                         "quotes (it is typed after --methods and shown in every table), e.g. name = \"my_band\".")
    if cls.shape not in SHAPES:
        raise ValueError(f"{cls.__qualname__}.shape = {cls.shape!r}: give one of {', '.join(map(repr, SHAPES))} "
                         "(a method for series, for sets of sequences, or for both).")
    if not is_pibench_class(cls):  # pibench's names first: a clash with one is refused here, not by a later run
        for hook in BEFORE_OUTSIDE_REGISTRATION:
            hook()
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        where = f"{existing.__module__}.{existing.__qualname__}"
        if where != f"{cls.__module__}.{cls.__qualname__}":
            renamed = (" (a class renamed in a re-run notebook cell or a reloaded module keeps its old name's entry: "
                       "keep the class's name, or restart the kernel)" if existing.__module__ == cls.__module__ else "")
            raise ValueError(f"method name {cls.name!r} is already registered by {where}; choose another "
                             f"name{renamed}.")
        caller = sys._getframe(1)
        # registry=None: every reload says so, not only the first (no global filter is changed)
        warnings.warn_explicit(f"method {cls.name!r}: {where} registered again; the new definition replaces the "
                               "old one.", MethodReplaced, caller.f_code.co_filename, caller.f_lineno,
                               module=caller.f_globals.get("__name__"), registry=None)
    _REGISTRY[cls.name] = cls
    return cls


def registered_methods() -> dict[str, type[IntervalMethod]]:
    """The methods registered so far (the catalog imports the built-in modules and plugins first)."""
    return dict(_REGISTRY)
