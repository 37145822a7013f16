"""Datasets by name: each entry builds a validated problem from keyword parameters.

Built-in synthetic datasets take a ``seed`` (derived by the runner from the task
config); file-backed datasets take ``data_dir``. ``csv:PATH:TARGET`` on the
command line is the generic CSV loader (:mod:`pibench.data_loaders.csv_series`).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pibench.data_loaders import synthetic
from pibench.data_loaders.covid import covid_problem
from pibench.data_loaders.csv_series import csv_problem
from pibench.data_loaders.csv_sets import csv_sets_problem
from pibench.data_loaders.eeg import eeg_problem
from pibench.data_loaders.fesp import fesp_problem
from pibench.data_loaders.mimic import mimic_problem
from pibench.data_loaders.packaged import LOADERS as PACKAGED_LOADERS
from pibench.data_loaders.packaged import PACKAGED
from pibench.data_loaders.problems import Problem
from pibench.data_loaders.regime import regime_problem
from pibench.data_loaders.typed_params import check_arguments
from pibench.data_loaders.validation import UnknownParameters, did_you_mean


@dataclass(frozen=True)
class DatasetEntry:
    loader: Callable[..., Problem]
    shape: str  # "series" or "set"
    description: str

    def accepts(self, param: str) -> bool:
        return param in inspect.signature(self.loader).parameters


DATASETS: dict[str, DatasetEntry] = {
    "ar": DatasetEntry(synthetic.ar_problem, "series", "synthetic linear Gaussian AR(p) series (built in)"),
    "nlar": DatasetEntry(synthetic.nlar_problem, "series", "synthetic NLAR(7) series, paper section 5.2 (built in)"),
    "expar": DatasetEntry(synthetic.expar_problem, "series", "synthetic EXPAR(1) series, paper section 5.2 (built in)"),
    "regime": DatasetEntry(regime_problem, "series",
                           "synthetic AR series with Markov-switching noise scale and its oracle (built in)"),
    "seasonal_sets": DatasetEntry(
        synthetic.seasonal_ar_sets, "set", "synthetic exchangeable sequences with a known oracle (built in)"
    ),
    "fesp": DatasetEntry(fesp_problem, "series", "French electricity spot prices, 24 hourly series (file)"),
    "csv": DatasetEntry(csv_problem, "series", "your own CSV: csv:PATH:TARGET or params path/target/..."),
    "eeg": DatasetEntry(eeg_problem, "set", "UCI EEG, control subjects: 40 inputs -> 10 steps (staged file)"),
    "covid": DatasetEntry(covid_problem, "set", "UK COVID-19 cases of 380 areas: 100 days -> 50 (staged file)"),
    "mimic": DatasetEntry(mimic_problem, "set", "MIMIC-III WBC counts, 3-45 visits -> 2 (your credentialed file)"),
    "csv_sets": DatasetEntry(csv_sets_problem, "set", "your own sets: long CSV/parquet (id, step, value)"),
    # real series that ship with arch and statsmodels (data_loaders/packaged.py)
    **{name: DatasetEntry(PACKAGED_LOADERS[name], "series", spec.description) for name, spec in PACKAGED.items()},
}


def parse_dataset_arg(text: str) -> tuple[str, dict]:
    """``NAME`` or ``csv:PATH:TARGET`` -> (name, params)."""
    if text.startswith("csv:"):
        path, sep, target = text[4:].rpartition(":")
        # a column name with a colon: the split after the first part that is a file
        splits = [(text[4:i], text[i + 1:]) for i, c in enumerate(text) if c == ":" and i > 4]
        path, target = next(((p, t) for p, t in splits if t and Path(p).expanduser().is_file()), (path, target))
        if not sep or not path or not target:
            raise ValueError(f"{text!r}: write a CSV dataset as csv:PATH:TARGET, e.g. csv:prices.csv:price.")
        return "csv", {"path": path, "target": target}
    check_dataset_name(text)
    return text, {}


def check_dataset_name(name: str) -> DatasetEntry:
    if name not in DATASETS:
        raise ValueError(
            f"unknown dataset {name!r}.{did_you_mean(name, DATASETS)} Available: {', '.join(DATASETS)} (or "
            "csv:PATH:TARGET). Run `pibench list` for descriptions."
        )
    return DATASETS[name]


#: Loader arguments the runner sets, and where a user sets them instead. (An explicit ``seed`` or
#: ``replicate`` is allowed: it pins the data across the suite's seeds, and is part of the task's config.)
RUNNER_SET = {"data_dir": "give the data folder with --data-dir or PIBENCH_DATA"}
#: Loader arguments a message never lists as the dataset's own.
_NOT_LISTED = ("seed", "replicate", *RUNNER_SET)


def required_params(name: str) -> list[str]:
    """The parameters dataset ``name`` cannot do without (no default), less those the runner sets."""
    return [p.name for p in inspect.signature(DATASETS[name].loader).parameters.values()
            if p.default is p.empty and p.name not in _NOT_LISTED]


def check_dataset_params(name: str, params: dict) -> None:
    """Names, types and presence of a dataset's parameters, before any file is opened (ValueError with the fix)."""
    entry = check_dataset_name(name)
    reserved = [k for k in params if k in RUNNER_SET]
    if reserved:
        raise ValueError(f"dataset {name!r}: {reserved[0]} is not a dataset parameter: {RUNNER_SET[reserved[0]]}.")
    unknown = [k for k in params if not entry.accepts(k)]
    if unknown:
        allowed = [p for p in inspect.signature(entry.loader).parameters if p not in _NOT_LISTED]
        raise UnknownParameters(f"dataset {name!r} has no parameter(s) {unknown}; it takes {allowed}."
                                f"{did_you_mean(unknown[0], allowed)}", unknown)
    missing = [p for p in required_params(name) if p not in params]
    if missing:
        raise ValueError(f"dataset {name!r} needs the parameter(s) {missing}; give them in a suite file: "
                         f"[[datasets]] name = \"{name}\" params = {{ {', '.join(f'{p} = ...' for p in missing)} }}.")
    check_arguments(entry.loader, params, f"dataset {name!r}")


def load_dataset(name: str, params: dict, *, seed: int = 0, replicate: int = 0,
                 data_dir: str | os.PathLike | None = None) -> Problem:
    """Build dataset ``name``; ``seed``, ``replicate`` and ``data_dir`` go to the loaders that take them.

    ``seed`` is the task's derived data seed (generators); ``replicate`` the suite's
    seed itself, for file datasets split as their authors did (``RandomState(replicate)``).
    """
    entry = check_dataset_name(name)
    check_dataset_params(name, params)
    kwargs = dict(params)
    if entry.accepts("seed"):
        kwargs.setdefault("seed", seed)
    if entry.accepts("replicate"):
        kwargs.setdefault("replicate", replicate)
    if entry.accepts("data_dir"):
        kwargs["data_dir"] = data_dir
    return entry.loader(**kwargs)
