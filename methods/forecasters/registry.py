"""Base point forecasters shared by the split-conformal methods, by name."""

from __future__ import annotations

from pibench.methods.forecasters.linear import LinearForecaster
from pibench.methods.forecasters.mlp import MLPForecaster
from pibench.methods.forecasters.pa import PAForecaster
from pibench.methods.pa.method import PA
from pibench.methods.param_checks import in_range, one_of, positive, positive_int

FORECASTERS = {"mlp": MLPForecaster, "linear": LinearForecaster, "pa": PAForecaster}
#: base forecasters that report their own predictive sd (``predict_sd``): the ``scale = "model"`` ones
WITH_OWN_SD = ("pa",)
#: A method's settings of its network base.
NETWORK_SETTINGS = ("hidden", "epochs", "lr", "momentum", "batch_size")


def check_forecaster(method) -> None:
    """Raise ValueError for ``method``'s unknown base forecaster or a setting of its out of range, a network
    setting whatever the base (hidden = -5 passed with the linear one, which trains no network) (no data
    needed)."""
    name, base_params = method.base, getattr(method, "base_params", None)
    hidden, epochs, lr, momentum, batch_size = (getattr(method, key) for key in NETWORK_SETTINGS)
    one_of("base", name, FORECASTERS)
    if base_params and name != "pa":
        raise ValueError(f"base_params set the PA base's other settings; base={name!r} takes none. Remove them.")
    if name == "pa":
        fixed = {"alpha", "random_state", "hidden", "epochs", "lr", "momentum", "batch_size"}
        settings = sorted(set(PA().get_params()) - fixed)  # what base_params may set
        unknown = sorted(set(base_params or {}) - set(settings))
        if unknown:
            raise ValueError(f"base_params has no key(s) {unknown}; the PA base takes {settings} (hidden, epochs, "
                             "lr, momentum and batch_size are the method's own parameters).")
        try:
            PA(hidden=hidden, epochs=epochs, lr=lr, momentum=momentum, batch_size=batch_size,
               **(base_params or {})).check_params()
        except ValueError as exc:  # where the fix is a setting of base_params, say so
            if not any(f"{key}=" in str(exc) for key in settings):
                raise
            raise ValueError(f"the PA base (its settings {', '.join(settings)} go in base_params = {{ ... }}): "
                             f"{exc}") from None
    else:
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
