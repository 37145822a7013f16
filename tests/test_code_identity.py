"""The code version comes from the source alone: a pip-installed tree, a plain checkout and this one agree."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pibench.benchmarks.provenance import RESULT_SOURCES, code_version
from pibench.methods.code_identity import source_digest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("benchmarks", "data_loaders", "methods", "reports", "pibench")
PRINT_VERSION = "from pibench.benchmarks.provenance import code_version; print(code_version())"


def version_in(tree: Path, cwd: Path) -> str:
    """code_version() of the pibench source under ``tree``, imported from there alone."""
    run = subprocess.run([sys.executable, "-c", PRINT_VERSION + "; import pibench.benchmarks as b; print(b.__file__)"],
                         capture_output=True, text=True, cwd=cwd, timeout=120,
                         env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "HOME": str(cwd)})
    assert run.returncode == 0, run.stderr
    version, where = run.stdout.split()
    assert Path(where).resolve().is_relative_to(tree.resolve())  # the copy ran, not this checkout
    return version


def test_a_plain_checkout_not_installed_has_this_code_version(tmp_path):
    copy = tmp_path / "checkout"
    for package in PACKAGES:
        shutil.copytree(ROOT / package, copy / package, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    version = version_in(copy, tmp_path)
    assert version == code_version() and "unknown" not in version


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="building a wheel offline needs setuptools")
def test_a_pip_installed_tree_has_this_code_version(tmp_path):
    target = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                            "--no-index", "--target", str(target), str(ROOT)], capture_output=True, text=True,
                           timeout=300, cwd=tmp_path)
    if build.returncode != 0 and "setuptools" in build.stderr:
        pytest.skip(f"this environment's setuptools cannot build pibench offline: {build.stderr[-200:]}")
    assert build.returncode == 0, build.stderr
    assert version_in(target, tmp_path) == code_version()


def test_the_version_changes_with_a_result_sources_code_not_its_comments(tmp_path):
    copy = tmp_path / "checkout"
    for package in PACKAGES:
        shutil.copytree(ROOT / package, copy / package, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    assert "reports/metrics.py" in RESULT_SOURCES
    with open(copy / "reports" / "metrics.py", "a") as fh:
        fh.write("\n\n# a comment\n")
    assert version_in(copy, tmp_path) == code_version()
    with open(copy / "reports" / "metrics.py", "a") as fh:
        fh.write("UNUSED = 1\n")
    assert version_in(copy, tmp_path) != code_version()


SOURCE = b'''"""Doc."""
import numpy as np


def width(x, scale=2.0):
    """The width,
    scaled."""
    if x > 0:
        x = np.sqrt(x)
    print(f"{x=} {scale:.3g}")
    return scale * x
'''


@pytest.mark.parametrize("edit, same", [
    ((b"import numpy", b"# mine\nimport numpy"), True),                          # a comment line
    ((b"scale * x\n", b"scale * x  # why\n\n\n"), True),                         # a trailing comment, blank lines
    ((b"scale=2.0", b"scale = 2.0"), True),                                      # spaces in a line
    ((b"\n", b"\r\n"), True),                                    # Windows line endings, in the docstring too
    ((b"{x=}", b"{x= }"), False),                                                # printed: 'x=1' vs 'x= 1'
    ((b"{scale:.3g}", b"{scale:.4g}"), False),
    ((b"        x = np.sqrt(x)", b"            x = np.sqrt(x)"), True),             # another indent, same blocks
    ((b"        x = np.sqrt(x)\n    print", b"        x = np.sqrt(x)\n        print"), False),  # moved into a block
    ((b"scale=2.0", b"scale=2.00"), False),                                      # another token, same number
    ((b'"""Doc."""', b'"""Docs."""'), False),                                    # a docstring is compiled
    ((b"return scale * x\n", b"return scale * x\n(\n"), False),                  # no longer tokenizes: its bytes
])
def test_a_source_digest_reads_what_python_compiles(edit, same):
    edited = SOURCE.replace(*edit)
    assert edited != SOURCE
    assert (source_digest(edited) == source_digest(SOURCE)) is same


def test_a_records_plugin_files_are_read_only_where_they_are_plain_files(tmp_path):
    """The files a record names (an untrusted field) are hashed where they are regular files, never imported: an
    edited one is named, a FIFO (a read would block), a folder or a missing path is left unchecked."""
    import os

    from pibench.methods.code_identity import files_changed_on_disk

    helper = tmp_path / "helper.py"
    helper.write_text("def f():\n    return 1\n")
    identity = {"helper": source_digest(helper.read_bytes())[:12], "helper:C": "code:0"}
    assert files_changed_on_disk(identity, {"helper": str(helper)}) == []
    helper.write_text("def f():\n    return 2\n")
    assert files_changed_on_disk(identity, {"helper": str(helper)}) == ["helper"]
    os.mkfifo(tmp_path / "fifo")
    for odd in (str(tmp_path / "fifo"), str(tmp_path), str(tmp_path / "gone.py"), "", "\0"):
        assert files_changed_on_disk(identity, {"helper": odd}) == [], odd
