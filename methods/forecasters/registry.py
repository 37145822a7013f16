"""Base point forecasters shared by the split-conformal methods, by name."""

from __future__ import annotations

from methods.forecasters.linear import LinearForecaster
from methods.forecasters.mlp import MLPForecaster

FORECASTERS = {"mlp": MLPForecaster, "linear": LinearForecaster}


def make_forecaster(name: str, **params):
    """Build the base forecaster ``name`` with its parameters (linear takes none)."""
    if name not in FORECASTERS:
        raise ValueError(f"unknown base forecaster {name!r}; choose one of {sorted(FORECASTERS)}.")
    if name == "linear":
        return LinearForecaster()
    return FORECASTERS[name](**params)
