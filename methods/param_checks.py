"""Checks of a method's parameters that need no data, so a run can refuse a bad suite before any work.

:func:`check_types` compares every constructor argument with its annotation (or,
unannotated, with its default's type), as :mod:`pibench.data_loaders.typed_params` reads
them; the range checks below say which values are allowed. Each error names the parameter, the value
and what to give instead.
"""

from __future__ import annotations

import numpy as np

from pibench.data_loaders.typed_params import accepts, describe, parameter_types


def expected_types(cls: type) -> dict[str, object]:
    """Parameter -> the type it must have, over the constructors of ``cls`` and its bases."""
    out: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is not None and klass is not object:
            out.update(parameter_types(init))
    return out


def check_types(method) -> None:
    """Raise one ValueError naming every parameter whose value has the wrong type."""
    wrong = [f"{name}={getattr(method, name)!r} must be {describe(hint)}"
             for name, hint in expected_types(type(method)).items() if not accepts(hint, getattr(method, name))]
    if wrong:
        raise ValueError(f"{method.name}: parameter{'s' if len(wrong) > 1 else ''} " + "; ".join(wrong) + ".")


def positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}={value!r} must be a whole number >= 1.")


def non_negative_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name}={value!r} must be a whole number >= 0.")


def positive(name: str, value) -> None:
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name}={value!r} must be a finite number > 0.")


def in_range(name: str, value, low: float, high: float, *, closed_low: bool = False,
             closed_high: bool = False) -> None:
    """low < value < high, with either end included on request."""
    above = value >= low if closed_low else value > low
    below = value <= high if closed_high else value < high
    if not (np.isfinite(value) and above and below):
        interval = f"{'[' if closed_low else '('}{low:g}, {high:g}{']' if closed_high else ')'}"
        raise ValueError(f"{name}={value!r} must lie in {interval}.")


def one_of(name: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(f"{name}={value!r}; choose one of {sorted(choices)}.")
