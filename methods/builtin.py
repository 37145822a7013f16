"""Built-in methods, imported for their registration side effect."""

from methods import aci, agaci, autoreg, enbpi, mapie_methods, nexcp  # noqa: F401
from methods.pa import method as pa, rnn_method as pa_rnn  # noqa: F401
