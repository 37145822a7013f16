"""Where the benchmark's data files live, and how to find (or get) them.

Layout: ``<data dir>/<folder>/<filename>``, one folder per dataset (see
:data:`DATASET_FILES`). The data directory is chosen by :func:`resolve_data_dir`:
an explicit argument (the CLI's ``--data-dir``), else ``$PIBENCH_DATA``, else
``$XDG_CACHE_HOME/pibench/data`` (``~/.cache/pibench/data``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DATA_ENV_VAR = "PIBENCH_DATA"


@dataclass(frozen=True)
class DataFile:
    """One dataset's file: where it goes, where it comes from, how to check it."""

    dataset_key: str
    folder: str
    filename: str
    url: str | None
    sha256: str | None
    instructions: str

    @property
    def relpath(self) -> Path:
        """Path relative to the data directory."""
        return Path(self.folder) / self.filename


DATASET_FILES: dict[str, DataFile] = {
    "fesp": DataFile(
        dataset_key="fesp",
        folder="french_electricity_prices",
        filename="zaffran2022_prices.csv.gz",
        url=(
            "https://raw.githubusercontent.com/scikit-learn-contrib/MAPIE/master/"
            "examples/data/zaffran2022_prices.csv.gz"
        ),
        sha256="f28a25d685d5396197f8823232aa8a8297a607ab28189e693eb7d1df8c8b2c9e",
        instructions=(
            "Run `pibench data fetch fesp` to download it (MAPIE's BSD-3 backup of "
            "Zaffran et al. 2022's Prices_2016_2019_extract.csv)."
        ),
    ),
    "covid": DataFile(
        dataset_key="covid",
        folder="uk_covid_ltla",
        filename="covid_ltla_newcases_380x150.csv",
        url=None,
        sha256="3710da498ea849b238ed7664ac290ecf9e5cbf6f6f3811ab6b460af3b5cba1ea",
        instructions=(
            "This file is a reconstruction (from CF-RNN's processed pickles) and has "
            "no public download: copy it from the project's shared data folder "
            "(uk_covid_ltla/covid_ltla_newcases_380x150.csv), or see that folder's "
            "SOURCE.md for how it was rebuilt."
        ),
    ),
    "eeg": DataFile(
        dataset_key="eeg",
        folder="eeg_uci_smni_cmi",
        filename="eeg_smni_cmi_control_20subj.npz",
        url=None,
        sha256="3f164ae40650788bfd648ea20140f4f7cac06b09f19f31742c5f10460cad5597",
        instructions=(
            "This file is derived (the 10 control subjects of the UCI EEG database's large set, "
            "converted from the raw trial files) and has no public download: copy "
            "eeg_uci_smni_cmi/eeg_smni_cmi_control_20subj.npz from the project's shared data folder "
            "(its SOURCE.md says how it was built). The older 16-subject file "
            "eeg_smni_cmi_16subj_kaggle_subset.npz is no longer read: it lacks 4 subjects."
        ),
    ),
    "mimic": DataFile(
        dataset_key="mimic",
        folder="mimic3_format_only",
        filename="mimic_wbc.csv",
        url=None,
        sha256=None,
        instructions=(
            "MIMIC-III is credentialed PhysioNet data and is not distributed: obtain "
            "access at https://physionet.org/content/mimiciii/, build a long table of "
            "daily WBC (high) counts with columns id, step, value (docs/guide/datasets.md, "
            "`mimic`) and place it there yourself, or give its path with the "
            "dataset's `path` parameter (CF-RNN's mimic.p pickle also works, with "
            "trust_pickle = true)."
        ),
    ),
}


class DataNotFoundError(FileNotFoundError, ValueError):
    """A dataset's file is not where it was looked for (the message says how to fix it)."""


def get_data_file(dataset_key: str) -> DataFile:
    """The :class:`DataFile` of ``dataset_key``; ValueError listing known keys otherwise."""
    try:
        return DATASET_FILES[dataset_key]
    except KeyError:
        known = ", ".join(sorted(DATASET_FILES))
        raise ValueError(f"unknown dataset {dataset_key!r}; known datasets: {known}") from None


def _default_data_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache).expanduser() if cache else Path.home() / ".cache"
    return base / "pibench" / "data"


def _resolve_with_source(data_dir: str | os.PathLike[str] | None) -> tuple[Path, str]:
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser(), "argument (--data-dir)"
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser(), f"environment variable {DATA_ENV_VAR}"
    return _default_data_dir(), "default (~/.cache/pibench/data or $XDG_CACHE_HOME/pibench/data)"


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The data directory: ``data_dir`` if given, else ``$PIBENCH_DATA``, else the cache default."""
    return _resolve_with_source(data_dir)[0]


def data_path(dataset_key: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where ``dataset_key``'s file is expected (whether or not it exists)."""
    return resolve_data_dir(data_dir) / get_data_file(dataset_key).relpath


def locate(dataset_key: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Path of ``dataset_key``'s file; :class:`DataNotFoundError` (saying how to get it) if missing."""
    df = get_data_file(dataset_key)
    root, source = _resolve_with_source(data_dir)
    path = root / df.relpath
    if path.is_file():
        return path
    if df.url is not None:
        how = (
            f"Run `pibench data fetch {df.dataset_key}` (with the same --data-dir / "
            f"{DATA_ENV_VAR}) to download it there, or pass "
            f"`--data-dir DIR` / set {DATA_ENV_VAR}=DIR pointing at a folder laid out as "
            f"DIR/{df.folder}/{df.filename}."
        )
    else:
        how = (
            f"{df.instructions} Put it at DIR/{df.folder}/{df.filename} and pass "
            f"`--data-dir DIR` or set {DATA_ENV_VAR}=DIR."
        )
    raise DataNotFoundError(
        f"{dataset_key} data file not found: looked for {path} "
        f"(data directory {root} from {source}). {how}"
    )


def unpublished_file_line(dataset_key: str, files: dict[str, str], consequence: str = "",
                          data_dir: str | os.PathLike[str] | None = None) -> str | None:
    """A line when ``files`` ({path: sha256}, what a load read) hold ``dataset_key``'s file (by its name) with
    another sha256 than the one pinned in :data:`DATASET_FILES` (edited, truncated, another version), with
    ``consequence`` after the checksums and how to get the published file (into ``data_dir``, the one the run
    was given, if any); None otherwise, and for a dataset without a pinned checksum."""
    df = DATASET_FILES.get(dataset_key)
    if df is None or df.sha256 is None:
        return None
    for path, sha256 in files.items():
        if Path(path).name == df.filename and sha256 != df.sha256:
            where = f" --data-dir {data_dir}" if data_dir is not None and str(data_dir) != "" else ""
            fix = (f"`pibench data fetch {dataset_key}{where} --force` gets it again" if df.url is not None
                   else df.instructions)
            return (f"{path} is not the published file (sha256 {sha256[:12]}..., published {df.sha256[:12]}...)"
                    f"{consequence}. {fix}")
    return None
