"""A dataset's entry as a suite file writes it (TOML), for the fixes errors and notes give, and for suites
pibench writes itself."""

from __future__ import annotations

import json
import math
import re

import numpy as np


def toml_key(name: str) -> str:
    """``name`` as a TOML key: bare where it can be (``region``), else quoted (``"my region"``)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else _toml_string(name)


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but not its surrogate pairs (characters beyond the
    BMP are written as they are) and TOML forbids a raw DEL."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(value) -> str:
    """``value`` (a bool, number, string, list or table; numpy scalars as the numbers they hold) as TOML
    writes it; lists and tables inline."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if math.isfinite(value) else ("nan" if value != value else ("inf" if value > 0 else "-inf"))
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def dataset_entry(name: str, params: dict) -> str:
    """``[[datasets]] name = "csv" params = { ... }``: the entry of dataset ``name`` with ``params`` (those
    that are None left out), as an error's fix shows it on one line."""
    given = {k: v for k, v in params.items() if v is not None}
    return f"[[datasets]] name = {toml_value(name)} params = {toml_value(given)}"
