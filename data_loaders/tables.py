"""Reading a user's table (CSV or parquet) with errors that name the file and the fix."""

from __future__ import annotations

import csv
import itertools
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

#: Largest magnitude a value may have: squares and sums of squares (variances, least squares,
#: Gram matrices of thousands of rows) must stay far from float64's 1.8e308.
MAX_MAGNITUDE = 1e100


#: What usually gives a row more fields than its header.
SPLIT_NUMBER_HINT = ("A comma inside a number (1,234.5, or a decimal comma 3,14) splits it: remove thousands "
                     "separators, write decimals with a point, or quote such values.")


#: Suffixes of files pandas decompresses: their fields are counted by the index pandas made only.
COMPRESSED = (".gz", ".bz2", ".zip", ".xz", ".zst", ".tar")

#: A number written with thousands separators (19,249.02) or a decimal comma (3,14): no number to pandas.
COMMA_NUMBER = re.compile(r"-?\d{1,3}(,\d{3})+(\.\d+)?|-?\d+,\d+")


def comma_hint(values: np.ndarray) -> str:
    """" Values such as '19,249.02' have a comma inside: ..." when one of ``values`` (cells that are no
    number) is a number written with a comma, else ""."""
    comma = next((str(v).strip() for v in np.ravel(values) if COMMA_NUMBER.fullmatch(str(v).strip())), None)
    return (f" Values such as {comma!r} have a comma inside: remove thousands separators and write decimals with "
            "a point." if comma else "")


def header_below_hint(frame: pd.DataFrame, missing: list[str]) -> str:
    """" The line under the first names them ..." where the columns ``missing`` from ``frame`` are values of its
    first row (a title line above the header, read as the header), else ""."""
    first = {str(v).strip() for v in frame.iloc[0]} if len(frame) else set()
    return (f" The line under the first names {', '.join(map(repr, missing))}: the first line "
            f"({', '.join(map(str, frame.columns))}) is a title above the header; remove it."
            if missing and set(missing) <= first else "")


def _title_line(path: Path) -> str | None:
    """The file's first line where it is a comment or title above the header (it starts with '#', or the line
    under it holds no number where it has more fields: the real header), else None; None for a compressed file."""
    if path.suffix.lower() in COMPRESSED:
        return None
    with open(path, newline="", encoding="utf-8-sig") as fh:
        lines = [line.rstrip("\r\n") for line in itertools.islice(fh, 2)]
    if len(lines) < 2:
        return None
    top, under = (next(csv.reader([line], skipinitialspace=True), []) for line in lines)
    if lines[0].lstrip().startswith("#"):
        return lines[0]
    numbers = [field for field in under if re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", field)]
    return lines[0] if len(under) > len(top) and not numbers else None


def _check_first_row(path: Path, frame: pd.DataFrame) -> None:
    """ValueError if the first data row has more fields than the header: pandas takes the extra leading
    field(s) as an index, shifting every column (a later longer row is a ParserError). Found by the index
    pandas made, or, where that is a plain 0, 1, 2, ... (a first column of steps or consecutive years), by
    counting the fields of the file's first rows (a plain text file)."""
    header = [str(c) for c in frame.columns]
    if not isinstance(frame.index, pd.RangeIndex):
        fields = frame.index.nlevels + len(header)
        trailing = bool(frame[frame.columns[-1]].isna().all())  # shifted left, the empty last field is last
    elif path.suffix.lower() in COMPRESSED:
        return
    else:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = (row for row in csv.reader(itertools.islice(fh, 100), skipinitialspace=True) if row)
            header, first = next(rows, []), next(rows, [])
        fields, trailing = len(first), all(not field.strip() for field in first[len(header):])
    if fields > len(header):
        title = _title_line(path)
        if title is not None:
            raise ValueError(f"{path}: its first line ({title!r}) is no header but a title or comment above it (the "
                             "next line names the columns): remove that line, so that the header comes first.")
        why = ("the row ends with a comma the header lacks: remove trailing commas." if trailing
               else SPLIT_NUMBER_HINT)
        raise ValueError(f"{path}: the first data row has {fields} fields but the header names {len(header)} "
                         f"columns ({', '.join(header)}), so every value would shift a column. "
                         f"{why[0].upper()}{why[1:]}")


def where_relative(path: str | os.PathLike) -> str:
    """Why ``path`` is no file, for a message: a folder, or where a relative path is read from (a suite file's
    paths too: not from the suite file's folder); "" for an absolute one."""
    if Path(path).is_dir():
        return " as a file: it is a folder (give the path of a file in it)"
    if Path(path).is_absolute():
        return ""
    return f" (a relative path is read from the folder pibench runs in, {Path.cwd()})"


def read_table(path: Path, text_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """The file as a DataFrame (parquet by its suffix, else CSV); ValueError if it is empty or unreadable.
    ``text_columns`` of a CSV are read as written (ids: ``007`` stays ``007``, never the number 7)."""
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty (0 bytes); give a file with a header row and one row per step.")
    try:
        frame = (pd.read_parquet(path) if path.suffix == ".parquet"  # "a", "b": the space after a comma is no part
                 else pd.read_csv(path, dtype=dict.fromkeys(text_columns, str), skipinitialspace=True))
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} holds no columns; give a file with a header row and one row per step.") from None
    except pd.errors.ParserError as exc:
        longer = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if longer is None:
            raise ValueError(f"{path} could not be read as CSV ({str(exc).strip()[:120]}); give a comma-separated "
                             "text file with a header row.") from None
        expected, line, saw = longer.groups()
        raise ValueError(f"{path}: line {line} has {saw} fields but the header names {expected} columns. "
                         f"{SPLIT_NUMBER_HINT}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8 (Excel: "
                         "\"CSV UTF-8\").") from None
    except (ValueError, OSError) as exc:
        kind = "parquet" if path.suffix == ".parquet" else "CSV"
        raise ValueError(f"{path} could not be read as {kind} ({type(exc).__name__}: {str(exc)[:120]}); "
                         "give a comma-separated text file with a header row, or a .parquet file.") from None
    if frame.empty:
        raise ValueError(f"{path} has a header but no data rows; give one row per step.")
    only = str(frame.columns[0]) if len(frame.columns) == 1 else ""
    separator = next((c for c in (";", "\t", "|") if c in only), None)
    if separator is not None:
        raise ValueError(f"{path} reads as one column {str(frame.columns[0])[:60]!r}: its fields are separated by "
                         f"{separator!r}, not commas; save it comma-separated, with decimal points (3.14, not 3,14).")
    if path.suffix != ".parquet":
        _check_first_row(path, frame)
    return frame


def check_magnitude(values: np.ndarray, columns: list[str], path: Path) -> None:
    """ValueError if a value exceeds :data:`MAX_MAGNITUDE` (the arithmetic of every method would overflow)."""
    big = np.abs(values) > MAX_MAGNITUDE
    if big.any():
        column = columns[int(np.argwhere(big)[0][-1])] if values.ndim == 2 else columns[0]
        raise ValueError(f"{path}: {int(big.sum())} value(s) exceed {MAX_MAGNITUDE:g} in magnitude (first in "
                         f"column {column!r}); squares of such values overflow. Rescale the column (e.g. divide "
                         "by a power of ten) before benchmarking.")
