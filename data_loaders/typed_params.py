"""Parameters checked against their annotations before any work: datasets' loaders and methods' constructors.

A suite file is TOML, so a value arrives as a bool, an integer, a float, a
string, a list or a table. :func:`accepts` says whether such a value fits a
parameter's annotation, strictly where a loose reading would be unsafe or
silently wrong: a ``bool`` takes only ``true`` / ``false`` (never ``"false"``,
``"yes"`` or ``1``: a string ``"false"`` is truthy and would, say, unpickle an
untrusted file), an ``int`` takes no ``10.7`` and no ``true``, a ``float`` takes
whole numbers too, and ``list[str]`` / ``tuple[float, float]`` check their items.
"""

from __future__ import annotations

import inspect
import os
import types
import typing

import numpy as np

_NUMBER = (int, float, np.integer, np.floating)


def accepts(hint, value) -> bool:
    """True iff ``value`` (as read from a suite file or given in Python) fits the annotation ``hint``."""
    origin = typing.get_origin(hint)
    if hint is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(accepts(h, value) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, (bool, np.bool_))
    if isinstance(value, (bool, np.bool_)):
        return False  # True is an int to Python, never a count, a rate or a path to a user
    if hint is float:
        return isinstance(value, _NUMBER)
    if hint is int:
        return isinstance(value, (int, np.integer))
    if hint is os.PathLike:
        return isinstance(value, os.PathLike)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    args = typing.get_args(hint)
    container = origin or hint
    if container in (tuple, list):
        if not isinstance(value, (tuple, list)):  # suite files give lists for both
            return False
        if container is tuple and args and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(accepts(h, v) for h, v in zip(args, value))
        return not args or all(accepts(args[0], v) for v in value)
    if container is dict:
        return isinstance(value, dict)
    return isinstance(value, container) if isinstance(container, type) else True


def describe(hint) -> str:
    """The annotation as a user reads it: ``bool``, ``int``, ``list[str] | None``."""
    if hint is bool:
        return "true or false (a TOML boolean, not a string or a number)"
    text = getattr(hint, "__name__", None) if not typing.get_args(hint) else None
    return text or str(hint).replace("typing.", "").replace("os.PathLike", "path")


def parameter_types(func) -> dict[str, object]:
    """Keyword parameter -> the type it must have: the annotation, else the default's type (none if neither)."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # an annotation that does not resolve: fall back on the defaults
        hints = {}
    out: dict[str, object] = {}
    for p in inspect.signature(func).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in hints:
            out[p.name] = hints[p.name]
        elif p.default is not p.empty and p.default is not None:
            out[p.name] = float if isinstance(p.default, _NUMBER) and not isinstance(p.default, bool) \
                else type(p.default)
    return out


def check_arguments(func, arguments: dict, where: str) -> None:
    """Raise ValueError for the first of ``arguments`` whose value does not fit ``func``'s annotation."""
    types_ = parameter_types(func)
    for name, value in arguments.items():
        if name in types_ and not accepts(types_[name], value):
            raise ValueError(f"{where}: parameter {name} = {value!r} must be {describe(types_[name])}.")
