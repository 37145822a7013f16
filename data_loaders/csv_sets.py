"""Bring-your-own sets of sequences: a long table (sequence id, step, value), CSV or parquet.

Each sequence is its rows ordered by step. :func:`csv_sets_problem` keeps the last
``input_length + horizon`` values of every sequence (x the first
``input_length``, y the last ``horizon``) and splits the sequences into train /
calibration / test, in one of three ways:

* at random (default): a ``RandomState(replicate)`` permutation, ``calibration_fraction``
  and ``test_fraction`` of the sequences (0.2 each), the rest train; with ``group_column``,
  of the groups, each group whole in one part;
* ``split_column``: a column of the file naming each sequence's part (``train``,
  ``calibration`` or ``test``, the same on all its rows); every seed sees the same split;
* ``test_ids``: a file of the test sequences' ids (one per line, or a CSV with the
  ``id_column``); the other sequences are split at random, ``calibration_fraction``
  of them calibration, the rest train.

``group_column``: a column naming the group each sequence belongs to (a patient with
several sequences, the channels of one recording), the same on all its rows: sequences
of a group move together, so a random split keeps each group whole (``test_ids`` and
``split_column`` split as they say), and the statistics resample and count whole groups
(:attr:`~pibench.data_loaders.problems.SetProblem.test_clusters`).

The test sequences' ids travel with the problem, so stored predictions name them.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from pibench.data_loaders.paths import DataNotFoundError
from pibench.data_loaders.problems import SetProblem
from pibench.data_loaders.step_order import gap_text, skipped, step_key, step_numbers, usual_step
from pibench.data_loaders.tables import (
    check_magnitude,
    comma_hint,
    header_below_hint,
    read_table,
    where_relative,
)
from pibench.data_loaders.validation import did_you_mean

PARTS = ("train", "calibration", "test")


class LongSequences(NamedTuple):
    """Sequences read from a long table: ids (n,), values ordered by step (one array per id), and each
    sequence's part when the file names it (else None); ``steps``: each sequence's steps as numbers (dates as
    nanoseconds), in the same order; ``groups``: each sequence's group where the file names it (else None)."""

    ids: np.ndarray
    sequences: list[np.ndarray]
    parts: np.ndarray | None
    steps: list[np.ndarray]
    groups: np.ndarray | None = None


#: The column the steps are ordered by (the step column read as numbers or dates).
STEP_KEY = "__step_order__"


def read_long_sequences(path: str | os.PathLike, *, id_column: str = "id", step_column: str = "step",
                        value_column: str = "value", split_column: str | None = None,
                        group_column: str | None = None) -> LongSequences:
    """The sequences of a long CSV or parquet file (one row per id and step)."""
    path = Path(path).expanduser()
    roles = {"id_column": id_column, "step_column": step_column, "value_column": value_column,
             "split_column": split_column, "group_column": group_column}
    named = [(role, column) for role, column in roles.items() if column]
    for i, (role, column) in enumerate(named):
        other = next((r for r, c in named[i + 1:] if c == column), None)
        if other:  # the steps sorted by the values, the ids benchmarked as values: numbers of nothing
            raise ValueError(f"{role} and {other} both name the column {column!r}: each role needs a column of its "
                             "own.")
    if not path.is_file():
        raise DataNotFoundError(f"sequence file {path} does not exist{where_relative(path)}; give the path of a CSV "
                                "or parquet file.")  # (an optional entry is skipped)
    # ids and group labels as the file writes them: 007 is not 7
    frame = read_table(path, text_columns=(id_column, *(c for c in (split_column, group_column) if c)))
    wanted = [id_column, step_column, value_column] + [c for c in (split_column, group_column) if c]
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        hint = header_below_hint(frame, missing) or did_you_mean(missing[0], frame.columns)
        raise ValueError(f"{path}: no column(s) {missing}; the file has {list(frame.columns)} (give the column "
                         f"names with id_column / step_column / value_column).{hint}")
    blank = (frame[id_column].isna() | (frame[id_column].astype(str).str.strip() == "")).to_numpy()
    if blank.any():  # pandas would leave such rows out of every sequence, without a word
        raise ValueError(f"{path}: {int(blank.sum())} row(s) have a blank {id_column!r} (first rows "
                         f"{np.flatnonzero(blank)[:5].tolist()}, counted from 0 under the header); give each row its "
                         "sequence's id (a CSV cell NA, None, null or n/a reads as blank: write such an id otherwise).")
    ids = frame[id_column].astype(str)
    spaced = ids[ids != ids.str.strip()]
    if len(spaced) and spaced.str.strip().isin(set(ids[ids == ids.str.strip()])).any():
        # split and group labels are read stripped; an id is kept as written, so 'P1 ' would be a sequence of its own
        twin = spaced[spaced.str.strip().isin(set(ids))].iloc[0]
        raise ValueError(f"{path}: the ids {twin!r} and {twin.strip()!r} differ only by spaces around them (first "
                         f"row {int(np.flatnonzero((ids == twin).to_numpy())[0])}, counted from 0 under the header); "
                         "they would be two sequences: write each id one way.")
    values = pd.to_numeric(frame[value_column], errors="coerce")
    bad = ~np.isfinite(values.to_numpy(float))
    if bad.any():
        raise ValueError(f"{path}: {int(bad.sum())} row(s) have a missing, infinite or non-numeric "
                         f"{value_column!r} (first rows {np.flatnonzero(bad)[:5].tolist()}, counted from 0 under the "
                         f"header); clean or drop them.{comma_hint(frame[value_column].to_numpy()[bad])}")
    check_magnitude(values.to_numpy(float), [value_column], path)
    if np.ptp(values.to_numpy(float)) == 0:  # as a constant series is refused: every band would cover
        raise ValueError(f"{path}: every {value_column!r} is {float(values.iloc[0]):g}; constant sequences have no "
                         "uncertainty to bound.")
    key = step_key(frame[step_column], f"the step column {step_column!r}", path)  # numbers or dates, never text
    frame = frame.assign(**{value_column: values, STEP_KEY: key})
    if frame.duplicated([id_column, STEP_KEY]).any():
        first = frame[frame.duplicated([id_column, STEP_KEY])].iloc[0]
        raise ValueError(f"{path}: sequence {str(first[id_column])!r} has step {first[step_column]} twice; one row "
                         "per (id, step).")
    frame = frame.sort_values([id_column, STEP_KEY], kind="stable")
    groups = frame.groupby(id_column, sort=True)
    ids = np.asarray(list(groups.groups))
    sequences = [g.to_numpy(float) for _, g in groups[value_column]]
    steps = [step_numbers(g) for _, g in groups[STEP_KEY]]
    parts = _parts(groups, split_column, path) if split_column else None
    labels = _one_per_sequence(groups, group_column, "group", path) if group_column else None
    # ids that are all plain whole numbers (no leading zeros) keep their numeric order, as a parquet file
    # of the same ids gives; other ids their text order
    text = [str(i) for i in ids]
    if all(t.isdigit() and (t == "0" or not t.startswith("0")) for t in text):
        order = np.argsort([int(t) for t in text], kind="stable")
        ids, sequences, steps = ids[order], [sequences[k] for k in order], [steps[k] for k in order]
        parts = parts[order] if parts is not None else None
        labels = labels[order] if labels is not None else None
    return LongSequences(ids, sequences, parts, steps, labels)


def _one_per_sequence(groups, column: str, what: str, path: Path, one: str | None = None,
                      fold_case: bool = False) -> np.ndarray:
    """Each sequence's value of ``column`` (as text, stripped; lower case with ``fold_case``), which must be
    given (a blank cell would make one group of every unlabelled sequence) and the same on all its rows (a
    sequence belongs to one ``one``, default ``what``)."""
    cells = groups.obj[column]
    blank = (cells.isna() | (cells.astype(str).str.strip() == "")).groupby(groups.obj[groups.keys]).any()
    if blank.any():
        first = [str(i) for i in blank.index[blank.to_numpy()][:5]]
        raise ValueError(f"{path}: the {what} column {column!r} is blank for {int(blank.sum())} sequence(s) (first "
                         f"ids {first}); give each sequence its {one or what} on every row (a CSV cell NA, None, "
                         "null or n/a reads as blank: write such a label otherwise).")
    labels = groups[column].agg(lambda s: set(s.astype(str).str.strip().str.lower() if fold_case
                                              else s.astype(str).str.strip()))
    mixed = [str(i) for i, v in labels.items() if len(v) != 1]
    if mixed:
        raise ValueError(f"{path}: the {what} column {column!r} changes within sequence(s) {mixed[:5]}; a sequence "
                         f"belongs to one {one or what}.")
    return np.array([next(iter(v)) for v in labels])


def skipped_steps_note(ids: np.ndarray, steps: list[np.ndarray], need: int, step_column: str) -> str | None:
    """A note where the last ``need`` steps of some sequence skip (:func:`~pibench.data_loaders.step_order.skipped`,
    against the file's usual step, the most common one). Their values are used as consecutive all the same."""
    used = [s[-need:] for s in steps]
    every = np.concatenate([np.diff(s) for s in used]) if used else np.array([])
    if not len(every):
        return None
    usual = usual_step(every)
    uneven = [(i, s, skips) for i, s in zip(ids, used) if (skips := skipped(s, usual)).any()]
    if not uneven:
        return None
    first_id, first_steps, first_skips = uneven[0]
    at = int(np.flatnonzero(first_skips)[0])
    return (f"{len(uneven)} of {len(ids)} sequence(s) skip steps in {step_column!r} over the "
            f"{need} steps used (sequence {str(first_id)!r}: {gap_text(first_steps, at, usual)}): their values are "
            "used as consecutive; fill or drop the gaps if they matter")


def _parts(groups, split_column: str, path: Path) -> np.ndarray:
    """Each sequence's part from ``split_column``: one of :data:`PARTS`, the same on all its rows."""
    parts = _one_per_sequence(groups, split_column, "split", path, one="part", fold_case=True)
    unknown = sorted(set(parts.tolist()) - set(PARTS))
    if unknown:
        raise ValueError(f"{path}: the split column {split_column!r} holds {unknown}; use {', '.join(PARTS)}.")
    empty = [p for p in PARTS if not (parts == p).any()]
    if empty:
        raise ValueError(f"{path}: the split column {split_column!r} names no {empty[0]} sequence; each of "
                         f"{', '.join(PARTS)} needs at least one.")
    return parts


def _read_test_ids(path: Path, id_column: str, ids: np.ndarray, data_path: Path) -> tuple[np.ndarray, str | None]:
    """Positions in ``ids`` of the ids listed in ``path`` (a CSV with ``id_column``, or one id per line), and a
    line naming the ids listed more than once (each is one test sequence), if any."""
    if not path.is_file():
        raise ValueError(f"test_ids file {path} does not exist{where_relative(path)}; give a file of test sequence "
                         "ids.")
    try:
        text = path.read_text(encoding="utf-8-sig")  # Excel's "CSV UTF-8" starts with a byte order mark
    except UnicodeDecodeError as exc:
        raise ValueError(f"test_ids file {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as "
                         "UTF-8, one id per line or a CSV with the id column.") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and id_column in [name.strip() for name in lines[0].split(",")]:  # a table with a header
        listed = read_table(path, text_columns=(id_column,))[id_column].astype(str).str.strip().tolist()
    else:  # one id per line
        listed = lines
    position = {str(i): k for k, i in enumerate(ids)}
    unknown = [i for i in listed if i not in position]
    if unknown:
        raise ValueError(f"test_ids file {path}: {len(unknown)} id(s) are not sequences of {data_path} (first "
                         f"{unknown[:5]}); list ids of the {id_column!r} column.")
    chosen = np.unique([position[i] for i in listed])
    if not 0 < len(chosen) < len(ids) - 1:
        raise ValueError(f"test_ids file {path} lists {len(chosen)} of {len(ids)} sequences; leave at least two "
                         "for training and calibration, and name at least one.")
    repeated = [i for i, count in Counter(listed).items() if count > 1]
    note = (f"test_ids file {path} lists {len(repeated)} id(s) more than once (first {repeated[:5]}); each is one "
            f"test sequence, so the test has {len(chosen)}, not {len(listed)}") if repeated else None
    return chosen, note


def split_by_replicate(n: int, replicate: int, calibration_fraction: float, test_fraction: float | None,
                       unit: str = "sequences"):
    """(train, calibration, test) index arrays of a ``RandomState(replicate)`` permutation of n ``unit``
    (``test_fraction`` None: no test part)."""
    test = 0.0 if test_fraction is None else test_fraction
    if not (0 < calibration_fraction < 1 and (test_fraction is None or 0 < test < 1)
            and calibration_fraction + test < 1):
        raise ValueError(f"calibration_fraction={calibration_fraction} and test_fraction={test_fraction} must be "
                         "in (0, 1) and leave a training part.")
    perm = np.random.RandomState(int(replicate)).permutation(n)
    n_cal, n_test = int(round(calibration_fraction * n)), int(round(test * n))
    if min(n_cal, n - n_cal - n_test) < 1 or (test_fraction is not None and n_test < 1):
        sizes = {"training": n - n_cal - n_test, "calibration": n_cal, **({"test": n_test} if test_fraction else {})}
        shares = {"calibration": calibration_fraction, "test": test_fraction}
        empty = [name for name, size in sizes.items() if size < 1]
        rounded = [f"{name}_fraction={shares[name]} of {n} rounds to 0" for name in empty if name in shares]
        raise ValueError(f"{n} {unit} leave no {' and no '.join(empty)} part" + (
            f" ({'; '.join(rounded)}): raise {'it' if len(rounded) == 1 else 'them'} or give more {unit}."
            if rounded else f": give more {unit}."))
    n_train = n - n_cal - n_test
    return perm[:n_train], perm[n_train:n_train + n_cal], perm[n_train + n_cal:]


def split_whole_groups(groups: np.ndarray, replicate: int, calibration_fraction: float,
                       test_fraction: float | None) -> tuple[np.ndarray, ...]:
    """(train, calibration, test) index arrays of the sequences whose ``groups`` (n,) labels they hold, each
    group whole in one part: the groups (sorted) split as :func:`split_by_replicate` splits sequences, so a
    patient's sequences are never both trained on and tested."""
    names, codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    parts = split_by_replicate(len(names), replicate, calibration_fraction, test_fraction, unit="groups")
    return tuple(np.flatnonzero(np.isin(codes, part)) for part in parts)


def _random_split(n: int, groups: np.ndarray | None, replicate: int, calibration_fraction: float,
                  test_fraction: float | None) -> tuple[np.ndarray, ...]:
    """:func:`split_whole_groups` where the sequences come in groups, else :func:`split_by_replicate`."""
    if groups is None:
        return split_by_replicate(n, replicate, calibration_fraction, test_fraction)
    return split_whole_groups(groups, replicate, calibration_fraction, test_fraction)


def csv_sets_problem(
    *,
    path: str | os.PathLike,
    input_length: int,
    horizon: int,
    id_column: str = "id",
    step_column: str = "step",
    value_column: str = "value",
    replicate: int = 0,
    calibration_fraction: float = 0.2,
    test_fraction: float | None = None,
    split_column: str | None = None,
    test_ids: str | None = None,
    group_column: str | None = None,
) -> SetProblem:
    """Your own sets of sequences; see the module docstring."""
    if input_length < 1 or horizon < 1:
        raise ValueError(f"input_length={input_length} and horizon={horizon} must be >= 1.")
    if split_column and (test_ids or test_fraction is not None):
        raise ValueError("split_column gives the whole split: leave out test_ids and test_fraction.")
    if test_ids and test_fraction is not None:
        raise ValueError("test_ids names the test sequences: leave out test_fraction.")
    ids, sequences, parts, steps, groups = read_long_sequences(path, id_column=id_column, step_column=step_column,
                                                               value_column=value_column, split_column=split_column,
                                                               group_column=group_column)
    need = input_length + horizon
    short = [str(i) for i, s in zip(ids, sequences) if len(s) < need]
    if short:
        raise ValueError(f"{path}: {len(short)} sequence(s) have fewer than input_length + horizon = {need} steps "
                         f"(first ids {short[:5]}); drop them, or shorten "
                         + ("input_length or horizon." if input_length > 1 else "the horizon."))
    values = np.stack([s[-need:] for s in sequences])
    gaps = skipped_steps_note(ids, steps, need, step_column)
    repeated = None
    if parts is not None:
        train, calibration, test = (np.flatnonzero(parts == part) for part in PARTS)
    elif test_ids:
        test, repeated = _read_test_ids(Path(test_ids).expanduser(), id_column, ids, Path(path))
        rest = np.setdiff1d(np.arange(len(values)), test)
        train, calibration, _ = _random_split(len(rest), None if groups is None else np.asarray(groups)[rest],
                                              replicate, calibration_fraction, None)
        train, calibration = rest[train], rest[calibration]
    else:
        train, calibration, test = _random_split(len(values), groups, replicate, calibration_fraction,
                                                 0.2 if test_fraction is None else test_fraction)
    notes = [note for note in (gaps, repeated, _groups_across_note(groups, test, group_column)) if note]
    return SetProblem.from_indices(f"csv_sets:{Path(path).name}", values[:, :input_length, None],
                                   values[:, input_length:], train, calibration, test,
                                   metadata={"source": str(path), **({"test_ids": test_ids} if test_ids else {}),
                                             **({"notes": notes} if notes else {})},
                                   ids=ids, clusters=groups)


def _groups_across_note(groups: np.ndarray | None, test: np.ndarray, group_column: str | None) -> str | None:
    """A line where a split given by ``test_ids`` or ``split_column`` puts some sequences of a group in the test
    and others outside it (the random split never does): the methods then train on a test group's own
    sequences, and the test is not of unseen groups."""
    if groups is None:
        return None
    labels = np.asarray(groups)
    tested = np.zeros(len(labels), dtype=bool)
    tested[test] = True
    across = sorted(set(labels[tested]) & set(labels[~tested]), key=str)
    if not across:
        return None
    return (f"{len(across)} group(s) of {group_column!r} have sequences both in the test and outside it (first "
            f"{[str(g) for g in across[:3]]}): the methods train or calibrate on those groups' other sequences, so "
            "the test is not of unseen groups; put whole groups in the test, or leave the split to the random one, "
            "which keeps groups whole")
