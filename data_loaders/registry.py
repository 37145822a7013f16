"""Datasets by name: each entry builds a validated problem from keyword parameters.

Built-in synthetic datasets take a ``seed`` (derived by the runner from the task
config); file-backed datasets take ``data_dir``. ``csv:PATH:TARGET`` on the
command line is the generic CSV loader (:mod:`data_loaders.csv_series`).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass

from data_loaders import synthetic
from data_loaders.csv_series import csv_problem
from data_loaders.fesp import fesp_problem
from data_loaders.problems import Problem


@dataclass(frozen=True)
class DatasetEntry:
    loader: Callable[..., Problem]
    shape: str  # "series" or "set"
    description: str

    def accepts(self, param: str) -> bool:
        return param in inspect.signature(self.loader).parameters


DATASETS: dict[str, DatasetEntry] = {
    "ar": DatasetEntry(synthetic.ar_problem, "series", "synthetic linear Gaussian AR(p) series (built in)"),
    "nlar": DatasetEntry(synthetic.nlar_problem, "series", "synthetic NLAR(7) series, SPEC §1.3 (built in)"),
    "expar": DatasetEntry(synthetic.expar_problem, "series", "synthetic EXPAR(1) series, SPEC §1.3 (built in)"),
    "seasonal_sets": DatasetEntry(
        synthetic.seasonal_ar_sets, "set", "synthetic exchangeable sequences with a known oracle (built in)"
    ),
    "fesp": DatasetEntry(fesp_problem, "series", "French electricity spot prices, 24 hourly series (file)"),
    "csv": DatasetEntry(csv_problem, "series", "your own CSV: csv:PATH:TARGET or params path/target/..."),
}


def parse_dataset_arg(text: str) -> tuple[str, dict]:
    """``NAME`` or ``csv:PATH:TARGET`` -> (name, params)."""
    if text.startswith("csv:"):
        path, sep, target = text[4:].rpartition(":")
        if not sep or not path or not target:
            raise ValueError(f"{text!r}: write a CSV dataset as csv:PATH:TARGET, e.g. csv:prices.csv:price.")
        return "csv", {"path": path, "target": target}
    check_dataset_name(text)
    return text, {}


def check_dataset_name(name: str) -> DatasetEntry:
    if name not in DATASETS:
        raise ValueError(
            f"unknown dataset {name!r}; available: {', '.join(DATASETS)} (or csv:PATH:TARGET). "
            "Run `pibench list` for descriptions."
        )
    return DATASETS[name]


def load_dataset(name: str, params: dict, *, seed: int = 0, data_dir: str | os.PathLike | None = None) -> Problem:
    """Build dataset ``name``; ``seed`` and ``data_dir`` go to the loaders that take them."""
    entry = check_dataset_name(name)
    kwargs = dict(params)
    if "data_dir" in kwargs:
        raise ValueError("give the data folder with --data-dir or PIBENCH_DATA, not as a dataset parameter.")
    unknown = [k for k in kwargs if not entry.accepts(k)]
    if unknown:
        allowed = [p for p in inspect.signature(entry.loader).parameters if p not in ("seed", "data_dir")]
        raise ValueError(f"dataset {name!r} has no parameter(s) {unknown}; it takes {allowed}.")
    if entry.accepts("seed"):
        kwargs.setdefault("seed", seed)
    if entry.accepts("data_dir"):
        kwargs["data_dir"] = data_dir
    return entry.loader(**kwargs)
