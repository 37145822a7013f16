"""Data directory resolution and file lookup (data_loaders.paths)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pibench.data_loaders.paths import (
    DATA_ENV_VAR,
    DATASET_FILES,
    DataFile,
    DataNotFoundError,
    data_path,
    locate,
    resolve_data_dir,
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_table_entries() -> None:
    assert set(DATASET_FILES) == {"fesp", "covid", "eeg", "mimic"}
    fesp = DATASET_FILES["fesp"]
    assert fesp.relpath == Path("french_electricity_prices/zaffran2022_prices.csv.gz")
    assert fesp.url and fesp.url.startswith("https://raw.githubusercontent.com/")
    assert DATASET_FILES["covid"].relpath == Path("uk_covid_ltla/covid_ltla_newcases_380x150.csv")
    assert DATASET_FILES["eeg"].relpath == Path(
        "eeg_uci_smni_cmi/eeg_smni_cmi_control_20subj.npz"
    )
    assert DATASET_FILES["mimic"].relpath == Path("mimic3_format_only/mimic_wbc.csv")
    for key, df in DATASET_FILES.items():
        assert df.dataset_key == key
        assert df.instructions
        if df.sha256 is not None:
            assert len(df.sha256) == 64 and int(df.sha256, 16) >= 0
    assert DATASET_FILES["mimic"].sha256 is None
    assert all(DATASET_FILES[k].url is None for k in ("covid", "eeg", "mimic"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fesp.url = "x"  # type: ignore[misc]
    assert isinstance(fesp, DataFile)


def test_resolve_default_is_home_cache(tmp_path: Path) -> None:
    assert resolve_data_dir() == tmp_path / "home" / ".cache" / "pibench" / "data"


def test_resolve_default_respects_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_data_dir() == tmp_path / "xdg" / "pibench" / "data"


def test_resolve_env_beats_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(None) == tmp_path / "env"


def test_resolve_argument_beats_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert resolve_data_dir(str(tmp_path / "arg")) == tmp_path / "arg"


def test_resolve_empty_env_falls_back_to_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, "")
    assert resolve_data_dir() == tmp_path / "home" / ".cache" / "pibench" / "data"


def _lay_out(root: Path, key: str) -> Path:
    df = DATASET_FILES[key]
    p = root / df.folder / df.filename
    p.parent.mkdir(parents=True)
    p.write_bytes(b"placeholder")
    return p


@pytest.mark.parametrize("key", sorted(DATASET_FILES))
def test_locate_finds_file_from_argument(tmp_path: Path, key: str) -> None:
    p = _lay_out(tmp_path / "d", key)
    assert locate(key, tmp_path / "d") == p
    assert data_path(key, tmp_path / "d") == p


def test_locate_finds_file_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    p = _lay_out(tmp_path / "d", "fesp")
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "d"))
    assert locate("fesp") == p


def test_locate_missing_fesp_message(tmp_path: Path) -> None:
    expected = tmp_path / "french_electricity_prices" / "zaffran2022_prices.csv.gz"
    with pytest.raises(DataNotFoundError) as ei:
        locate("fesp", tmp_path)
    msg = str(ei.value)
    assert str(expected) in msg
    assert "pibench data fetch fesp" in msg
    assert "PIBENCH_DATA" in msg
    assert "--data-dir" in msg
    assert "argument" in msg
    # usable as either base class
    assert isinstance(ei.value, FileNotFoundError)
    assert isinstance(ei.value, ValueError)


def test_locate_missing_names_env_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "env"))
    with pytest.raises(DataNotFoundError, match=DATA_ENV_VAR) as ei:
        locate("fesp")
    assert str(tmp_path / "env" / "french_electricity_prices") in str(ei.value)
    assert "environment variable" in str(ei.value)


def test_locate_missing_names_default_source(tmp_path: Path) -> None:
    with pytest.raises(DataNotFoundError, match="default") as ei:
        locate("fesp")
    assert str(tmp_path / "home" / ".cache" / "pibench" / "data") in str(ei.value)


@pytest.mark.parametrize("key", ["covid", "eeg", "mimic"])
def test_locate_missing_without_url_gives_instructions(tmp_path: Path, key: str) -> None:
    with pytest.raises(DataNotFoundError) as ei:
        locate(key, tmp_path)
    msg = str(ei.value)
    assert str(tmp_path / DATASET_FILES[key].folder / DATASET_FILES[key].filename) in msg
    assert DATASET_FILES[key].instructions in msg
    assert "pibench data fetch" not in msg


def test_locate_directory_in_place_of_file_is_missing(tmp_path: Path) -> None:
    (tmp_path / "french_electricity_prices" / "zaffran2022_prices.csv.gz").mkdir(parents=True)
    with pytest.raises(DataNotFoundError):
        locate("fesp", tmp_path)


def test_unknown_key_lists_known(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown dataset 'nope'") as ei:
        locate("nope", tmp_path)
    assert not isinstance(ei.value, DataNotFoundError)
    for key in DATASET_FILES:
        assert key in str(ei.value)
