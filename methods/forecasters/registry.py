"""Base point forecasters shared by the split-conformal methods, by name."""

from __future__ import annotations

from pibench.methods.forecasters.linear import LinearForecaster
from pibench.methods.forecasters.mlp import MLPForecaster
from pibench.methods.param_checks import in_range, one_of, positive, positive_int

FORECASTERS = {"mlp": MLPForecaster, "linear": LinearForecaster}


def check_forecaster(name: str, *, hidden: int, epochs: int, lr: float, momentum: float, batch_size: int) -> None:
    """Raise ValueError for an unknown base forecaster or an MLP setting out of range (no data needed)."""
    one_of("base", name, FORECASTERS)
    if name == "mlp":
        for key, value in (("hidden", hidden), ("epochs", epochs), ("batch_size", batch_size)):
            positive_int(key, value)
        positive("lr", lr)
        in_range("momentum", momentum, 0, 1, closed_low=True)


def make_forecaster(name: str, **params):
    """Build the base forecaster ``name`` with its parameters (linear takes none)."""
    if name not in FORECASTERS:
        raise ValueError(f"unknown base forecaster {name!r}; choose one of {sorted(FORECASTERS)}.")
    if name == "linear":
        return LinearForecaster()
    return FORECASTERS[name](**params)
