"""pibench: a benchmark harness for prediction intervals on time series.

Everything lives under this one import name: :mod:`pibench.methods` (the interval
methods and the ``IntervalMethod`` contract), :mod:`pibench.data_loaders`,
:mod:`pibench.benchmarks` (suites, protocols, the runner, the CLI) and
:mod:`pibench.reports` (metrics, tables, figures, HTML). The Python API::

    from pibench import run, load_results, IntervalMethod, Interval, SeriesData, SetData, register

    results = run(suite="default", results_dir="results")
    results.summary              # a DataFrame, one row per task

``python -m pibench`` is the command line (``pibench --help``).
"""

from pibench.api import Results, RunNote, TasksFailed, load_results, run
from pibench.benchmarks.backends import ClusterLost
from pibench.benchmarks.provenance import PIBENCH_VERSION as __version__
from pibench.data_loaders.problems import SeriesData, SetData
from pibench.methods.base import BEFORE_OUTSIDE_REGISTRATION, Interval, IntervalMethod, NotApplicable, register


def _import_builtin_methods() -> None:
    """pibench's own methods, imported before a class from outside registers (their names are taken first)."""
    from pibench.methods.catalog import import_builtin_methods

    import_builtin_methods()


BEFORE_OUTSIDE_REGISTRATION.append(_import_builtin_methods)  # every ``pibench.*`` import runs this module first

__all__ = [
    "ClusterLost",
    "Interval",
    "IntervalMethod",
    "NotApplicable",
    "Results",
    "RunNote",
    "SeriesData",
    "SetData",
    "TasksFailed",
    "__version__",
    "load_results",
    "register",
    "run",
]
