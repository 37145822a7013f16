"""MIMIC-III white-blood-cell counts as sets of variable-length sequences (docs/guide/datasets.md; user-supplied only).

MIMIC-III is credentialed PhysioNet data: pibench never ships or downloads it.
Give a file you built (the paper follows Lin et al. 2022: Levofloxacin patients,
daily ``WBC high``):

* a long table, CSV or parquet, with columns ``id`` (patient), ``step`` (visit
  order) and ``value`` (the count), the default ``DIR/mimic3_format_only/mimic_wbc.csv``;
* or CF-RNN's pickle, a dict ``{'longitudinal': [N, T_max, 30], 'trajectory_lengths': [N]}``
  (target feature ``wbchigh``, index 23), only with ``trust_pickle = true``:
  unpickling runs whatever code the file holds.

Sequences with ``min_visits`` to ``max_visits`` visits are kept (5 to 47: 2,992
in the paper); y = the last ``horizon`` visits, x = the visits before, padded at
the end with NaN to the longest (the networks pack them; no padding is fed).
Per replicate s a ``RandomState(s)`` permutation splits them 43% / 47% / 10%.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np

from pibench.data_loaders.csv_sets import read_long_sequences, split_by_replicate
from pibench.data_loaders.paths import locate
from pibench.data_loaders.problems import SetProblem

PICKLE_SUFFIXES = (".p", ".pkl", ".pickle")
WBC_HIGH = 23  # index of ``wbchigh`` among the 30 features of CF-RNN's pickle


def _from_pickle(path: Path, trust_pickle: bool) -> list[np.ndarray]:
    if trust_pickle is not True:  # only the boolean: a string "false" is truthy
        raise ValueError(f"{path} is a pickle, and unpickling runs whatever code the file holds. Only for a file "
                         "you built or trust, set trust_pickle = true in the dataset's params; otherwise convert it "
                         "to a long CSV (columns id, step, value).")
    with open(path, "rb") as fh:
        data = pickle.load(fh)  # noqa: S301  (the user vouched for this file with trust_pickle)
    if not isinstance(data, dict) or not {"longitudinal", "trajectory_lengths"} <= set(data):
        raise ValueError(f"{path}: expected a dict with 'longitudinal' [N, T, 30] and 'trajectory_lengths' [N].")
    series, lengths = np.asarray(data["longitudinal"], dtype=float), np.asarray(data["trajectory_lengths"], int)
    if series.ndim != 3 or series.shape[2] <= WBC_HIGH or lengths.shape != (series.shape[0],):
        raise ValueError(f"{path}: 'longitudinal' must be [N, T, 30] and 'trajectory_lengths' [N]; got "
                         f"{series.shape} and {lengths.shape}.")
    return [series[i, :length, WBC_HIGH] for i, length in enumerate(lengths)]


def mimic_problem(
    *,
    replicate: int = 0,
    data_dir: str | os.PathLike | None = None,
    path: str | None = None,
    trust_pickle: bool = False,
    min_visits: int = 5,
    max_visits: int = 47,
    horizon: int = 2,
) -> SetProblem:
    """Variable-length WBC sequences; see the module docstring."""
    source = Path(path).expanduser() if path else locate("mimic", data_dir)
    if source.suffix in PICKLE_SUFFIXES:
        sequences = _from_pickle(source, trust_pickle)
    else:
        sequences = read_long_sequences(source)[1]
    if not 1 <= horizon < min_visits <= max_visits:
        raise ValueError(f"need 1 <= horizon < min_visits <= max_visits; got {horizon}, {min_visits}, {max_visits}.")
    kept = [s for s in sequences if min_visits <= len(s) <= max_visits]
    if len(kept) < 10:
        raise ValueError(f"{source}: {len(kept)} of {len(sequences)} sequences have {min_visits} to {max_visits} "
                         "visits; too few to split.")
    if not all(np.isfinite(s).all() for s in kept):
        raise ValueError(f"{source}: a kept sequence has a missing or infinite value; clean the file.")
    longest = max(len(s) for s in kept) - horizon
    x = np.full((len(kept), longest, 1), np.nan)
    for i, s in enumerate(kept):
        x[i, :len(s) - horizon, 0] = s[:-horizon]
    y = np.stack([s[-horizon:] for s in kept])
    train, calibration, test = split_by_replicate(len(kept), replicate, calibration_fraction=0.47, test_fraction=0.10)
    return SetProblem.from_indices("mimic", x, y, train, calibration, test,
                                   metadata={"source": str(source), "n_sequences": len(kept)})
