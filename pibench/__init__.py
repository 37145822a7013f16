"""pibench: a benchmark harness for prediction intervals on time series.

Everything lives under this one import name: :mod:`pibench.methods` (the interval
methods and the ``IntervalMethod`` contract), :mod:`pibench.data_loaders`,
:mod:`pibench.benchmarks` (suites, protocols, the runner, the CLI) and
:mod:`pibench.reports` (metrics, tables, figures, HTML). The Python API::

    from pibench import run, load_results, IntervalMethod, Interval, register

    results = run(suite="default", results_dir="results")
    results.summary              # a DataFrame, one row per task

``python -m pibench`` is the command line (``pibench --help``).
"""

from pathlib import Path as _Path

# Installed, the subpackages sit inside this folder. In a source checkout they are the repository's
# top-level folders beside it (setuptools' package-dir maps them for an install, editable or not);
# a checkout used without installing finds them here.
_CHECKOUT = _Path(__file__).resolve().parent.parent
if not (_Path(__file__).parent / "methods").is_dir() and (_CHECKOUT / "methods" / "base.py").is_file():
    __path__.append(str(_CHECKOUT))

from pibench.api import Results, load_results, run  # noqa: E402
from pibench.benchmarks.provenance import PIBENCH_VERSION as __version__  # noqa: E402
from pibench.methods.base import Interval, IntervalMethod, register  # noqa: E402

__all__ = ["Interval", "IntervalMethod", "Results", "__version__", "load_results", "register", "run"]
