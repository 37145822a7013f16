"""Input checks shared by loaders, methods and protocols; each error says how to fix it."""

from __future__ import annotations

import numpy as np


def check_finite(values: np.ndarray, what: str) -> None:
    """Raise ValueError naming ``what`` and the first bad position if NaN or inf occur."""
    values = np.asarray(values, dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        kind = "NaN" if np.isnan(values[first]) else "inf"
        raise ValueError(
            f"{what} has {int(bad.sum())} non-finite value(s) ({kind} first at index {first}); "
            "drop or impute them before benchmarking."
        )


def check_alpha(alpha: float) -> float:
    """Miscoverage level must lie in the open interval (0, 1)."""
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(
            f"alpha={alpha} is outside (0, 1); alpha is the miscoverage level, "
            "e.g. alpha=0.1 for 90% intervals."
        )
    return alpha


class UnknownParameters(ValueError):
    """An entry gives parameters its method or dataset does not take (``names``)."""

    def __init__(self, message: str, names: list[str]):
        super().__init__(message)
        self.names = names


def did_you_mean(name: str, choices) -> str:
    """" Did you mean 'aci'?" for the closest of ``choices`` to a mistyped ``name`` (the same letters in another
    case; else the one choice that begins with it as a word, 'Date (local)' for 'date'; else difflib's ratio
    >= 0.6), or ""."""
    import difflib
    import re

    texts = [str(c) for c in choices]
    same_letters = [c for c in texts if c.lower() == str(name).lower()]  # 'Y' for 'y': too short for difflib
    first_word = [c for c in texts if str(name) and re.match(rf"{re.escape(str(name).lower())}\b", c.lower())]
    close = same_letters or (first_word if len(first_word) == 1 else []) or difflib.get_close_matches(
        str(name), texts, n=1)
    return f" Did you mean {close[0]!r}?" if close else ""
