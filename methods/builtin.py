"""Built-in methods, imported for their registration side effect."""

from methods import aci, autoreg  # noqa: F401
