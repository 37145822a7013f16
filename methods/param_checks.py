"""Checks of a method's parameters that need no data, so a run can refuse a bad suite before any work.

:func:`check_types` compares every constructor argument with its annotation (or,
unannotated, with its default's type); the range checks below say which values
are allowed. Each error names the parameter, the value and what to give instead.
"""

from __future__ import annotations

import inspect
import types
import typing

import numpy as np

_NUMBER = (int, float, np.integer, np.floating)


def _accepts(hint, value) -> bool:
    origin = typing.get_origin(hint)
    if hint is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_accepts(h, value) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if isinstance(value, bool) and hint is not bool:
        return False  # True is an int to Python, never a count or a rate to a user
    if hint is float:
        return isinstance(value, _NUMBER)
    if hint is int:
        return isinstance(value, (int, np.integer))
    hint = origin or hint
    if hint in (tuple, list):
        return isinstance(value, (tuple, list))  # suite files give lists
    return isinstance(value, hint) if isinstance(hint, type) else True


def _describe(hint) -> str:
    text = getattr(hint, "__name__", None) if not typing.get_args(hint) else None
    return text or str(hint).replace("typing.", "")


def expected_types(cls: type) -> dict[str, object]:
    """Parameter -> the type it must have: the annotation, else the default's type (none if neither)."""
    out: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        try:
            hints = typing.get_type_hints(init)
        except Exception:  # an annotation that does not resolve: fall back on the defaults
            hints = {}
        for p in inspect.signature(init).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.name in hints:
                out[p.name] = hints[p.name]
            elif p.default is not p.empty and p.default is not None:
                out[p.name] = float if isinstance(p.default, _NUMBER) and not isinstance(p.default, bool) \
                    else type(p.default)
    return out


def check_types(method) -> None:
    """Raise ValueError for the first parameter whose value has the wrong type."""
    for name, hint in expected_types(type(method)).items():
        value = getattr(method, name)
        if not _accepts(hint, value):
            raise ValueError(f"{method.name}: parameter {name}={value!r} must be {_describe(hint)}.")


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
