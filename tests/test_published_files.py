"""A data file other than the published one (its pinned sha256) is named before a run: a note where it loads, the
reason beside the error where it does not."""

import gzip
import shutil
import warnings
from pathlib import Path

import pytest

from pibench import RunNote, run
from pibench.benchmarks.preflight import SetupError, prepare_tasks
from pibench.benchmarks.suite import build_tasks, load_suite
from pibench.data_loaders.paths import DATASET_FILES, unpublished_file_line

FESP = DATASET_FILES["fesp"]


def fesp_copy(shared_data_dir: Path, folder: Path, edit=None) -> Path:
    """``folder`` laid out as a data dir with fesp's file, edited by ``edit(bytes) -> bytes`` if given."""
    target = folder / FESP.relpath
    target.parent.mkdir(parents=True)
    shutil.copyfile(shared_data_dir / FESP.relpath, target)
    if edit is not None:
        target.write_bytes(edit(target.read_bytes()))
    return folder


def fesp_tasks():
    return build_tasks(load_suite("fesp", quick=True), methods=["autoreg"])


def test_the_published_file_runs_without_a_note(shared_data_dir, tmp_path):
    prepared = prepare_tasks(fesp_tasks(), str(fesp_copy(shared_data_dir, tmp_path / "d")))
    assert prepared.tasks and not any("published" in n for n in prepared.notes)


def one_price_changed(data: bytes) -> bytes:
    """fesp's gzipped CSV with its last price one euro higher."""
    lines = gzip.decompress(data).decode().splitlines()
    head, price, rest = lines[-1].split(",", 2)
    return gzip.compress("\n".join([*lines[:-1], f"{head},{float(price) + 1},{rest}"]).encode() + b"\n")


def test_an_edited_file_runs_with_a_note_and_a_broken_one_is_refused_with_the_reason(shared_data_dir, tmp_path):
    edited = fesp_copy(shared_data_dir, tmp_path / "edited", one_price_changed)
    prepared = prepare_tasks(fesp_tasks(), str(edited))
    (note,) = [n for n in prepared.notes if "published" in n]
    assert note.startswith("dataset 'fesp': ") and "is not the published file (sha256 " in note
    assert "not on the paper's data" in note and f"pibench data fetch fesp --data-dir {edited} --force" in note
    broken = fesp_copy(shared_data_dir, tmp_path / "broken", lambda data: data[: len(data) // 2])
    with pytest.raises(SetupError, match=r"is not the published file \(sha256 .*pibench data fetch fesp --data-dir .*"
                                         r"--force"):
        prepare_tasks(fesp_tasks(), str(broken))


def test_a_python_run_warns_its_notes(shared_data_dir, tmp_path):
    """run() says what the command line prints above its table: here, the data file is not the published one."""
    edited = fesp_copy(shared_data_dir, tmp_path / "d", one_price_changed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run("fesp", quick=True, methods=["autoreg"], data_dir=edited, results_dir=tmp_path / "r", progress=False)
    lines = [str(w.message) for w in caught if issubclass(w.category, RunNote)]
    assert any("is not the published file" in line for line in lines), lines


def test_the_line_names_only_a_known_file_with_another_checksum():
    assert unpublished_file_line("fesp", {f"/x/{FESP.filename}": FESP.sha256}) is None
    assert unpublished_file_line("fesp", {"/x/other.csv": "0" * 64}) is None  # a file of the user's own name
    assert unpublished_file_line("mimic", {"/x/mimic_wbc.csv": "0" * 64}) is None  # no pinned checksum
    line = unpublished_file_line("covid", {f"/x/{DATASET_FILES['covid'].filename}": "0" * 64})
    assert line is not None and "000000000000..." in line and "no public download" in line
