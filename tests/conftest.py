"""Shared fixtures: where the real (read-only) data files are; one torch thread for small networks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from threadpoolctl import threadpool_limits

from pibench.data_loaders.paths import DATA_ENV_VAR, DATASET_FILES


def pytest_configure(config):
    """A pytest-xdist worker takes its share of the cores for torch's and BLAS's threads (the cores over the
    workers): each would take them all, and threads that outnumber the cores wait on each other's spinning. On 2
    cores, tests/test_pa_intervals.py and tests/test_conditional_coverage.py took 165 s side by side (5.3 CPU
    minutes) and 90 s (2.7) so; beside more load the LSTM curvature test took 693 s, 57 s alone."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if os.environ.get("PYTEST_XDIST_WORKER") and workers > 1:
        threads = max(1, torch.get_num_threads() // workers)
        torch.set_num_threads(threads)
        threadpool_limits(threads)  # the pools loaded now, kept for the worker's life
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # those loaded later (scipy's
            os.environ.setdefault(name, str(threads))  # own OpenBLAS, scikit-learn's OpenMP) and subprocesses


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The shared data folder (``<dir>/french_electricity_prices/zaffran2022_prices.csv.gz``).

    ``$PIBENCH_DATA`` if it holds the fesp file; else ``<clone>/../shared/data``
    (CI clones the repo next to ``shared/``); else the test is skipped. Data files
    are read in place, never copied into the repository.
    """
    env = os.environ.get(DATA_ENV_VAR)
    if env and (Path(env).expanduser() / DATASET_FILES["fesp"].relpath).is_file():
        return Path(env).expanduser()
    sibling = Path(__file__).resolve().parents[2] / "shared" / "data"
    if sibling.is_dir():
        return sibling
    pytest.skip("real data not available")


@pytest.fixture
def one_torch_thread():
    """Small networks train several times faster on one thread than on two contended ones (same results:
    seeds 0-5 of tests/test_pa_sparsity.py agree bit for bit). Use with ``pytest.mark.usefixtures``."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


#: The longest test files, started first: with one worker per core (pytest-xdist, a file per worker) the
#: README's commands (about 8 min) then run beside everything else instead of after it.
SLOW_FIRST = ("test_readme_commands.py", "test_device_run.py", "test_conditional_coverage.py")


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the others keep their order
