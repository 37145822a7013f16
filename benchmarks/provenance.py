"""What produced a result: the code version (part of every task's identity), package versions, git commit, host."""

from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from pibench.methods.code_identity import describe_change, source_digest

#: pibench's version, read from the source (pyproject.toml takes it from here), so an installed
#: tree and a plain checkout of the same source name the same code version.
PIBENCH_VERSION = "0.1.0"

PACKAGES = ("pibench", "numpy", "pandas", "torch", "scipy", "statsmodels", "mapie", "joblib")


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


#: The source that can change a stored number: everything a task runs. The CLI, the
#: report writers and the performance scripts only present results, so editing them
#: keeps stored results valid.
RESULT_SOURCES = ("data_loaders/**/*.py", "methods/**/*.py", "benchmarks/*.py", "reports/metrics.py")
PRESENTATION_ONLY = ("benchmarks/perf_*.py", "benchmarks/peak_memory.py")
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _result_source_files() -> list[Path]:
    files = {p for pattern in RESULT_SOURCES for p in PROJECT_ROOT.glob(pattern)}
    files -= {p for pattern in PRESENTATION_ONLY for p in PROJECT_ROOT.glob(pattern)}
    return sorted(files)


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``<pibench version>+src.<hash>``: :data:`PIBENCH_VERSION` and a sha256 of :data:`RESULT_SOURCES`, each
    file read as :func:`~pibench.methods.code_identity.source_digest` (its tokens, comments aside).

    Part of every task id and cache key, so results computed by other code are
    never taken for current ones (a commit that touches only docs, comments, the
    CLI or the reports keeps them). It reads the source files alone, never the installed
    package's metadata: a pip-installed tree and a plain checkout of the same
    source give the same version.
    """
    h = hashlib.sha256()
    for path in _result_source_files():
        h.update(f"{path.relative_to(PROJECT_ROOT).as_posix()}\0{source_digest(path.read_bytes())}\0".encode())
    return f"{PIBENCH_VERSION}+src.{h.hexdigest()[:12]}"


def identity_change(before: dict, after: dict) -> str | None:
    """What differs between two task identities, in words (None if nothing does): the data, pibench's
    code, or the source of a method defined outside pibench (naming its file)."""
    reasons = []
    if before.get("data") != after.get("data"):
        old, new = str(before.get("data"))[:12], str(after.get("data"))[:12]
        reasons.append(f"the data changed (fingerprint {old} -> {new})")
    if before.get("code") != after.get("code"):
        reasons.append(f"pibench code changed ({before.get('code')} -> {after.get('code')})")
    plugin = describe_change(before.get("plugin"), after.get("plugin"))
    if plugin:
        reasons.append(plugin)
    return "; ".join(reasons) or None


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """HEAD of the checkout pibench runs from (suffix '+dirty' if modified), or None."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def provenance() -> dict:
    return {"versions": package_versions(), "git_commit": git_commit(), "code_version": code_version(),
            "host": platform.node(), "python": platform.python_version()}
