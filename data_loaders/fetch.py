"""Download a dataset's public file into the data directory, checksum-verified.

``fetch("fesp")`` streams the file to a temporary file next to its destination,
checks its sha256 against :data:`pibench.data_loaders.paths.DATASET_FILES`, then moves it
into place with :func:`os.replace`, so a partial or wrong download never sits at
the destination.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from pibench.data_loaders.fingerprint import CHUNK_SIZE, sha256_of
from pibench.data_loaders.paths import DATA_ENV_VAR, get_data_file, resolve_data_dir

TIMEOUT_S = 60.0


class FetchError(RuntimeError):
    """A download failed (network / HTTP / disk); the message says how to get the file by hand."""


def _progress_bar(total: int | None, desc: str, enabled: bool):
    if not (enabled and total):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc)


def fetch(
    dataset_key: str,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    url: str | None = None,
    sha256: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> Path:
    """Download ``dataset_key``'s file to ``resolve_data_dir(data_dir)/<folder>/<filename>``.

    ``url`` overrides the table's URL (e.g. a mirror); ``sha256`` overrides the
    expected checksum. An existing file with the right checksum is returned as is
    unless ``force``. Raises ValueError for datasets without a public URL or on a
    checksum mismatch, :class:`FetchError` (a RuntimeError) on network errors.
    """
    df = get_data_file(dataset_key)
    src = url if url is not None else df.url
    if src is None:
        raise ValueError(
            f"dataset {dataset_key!r} has no public download. {df.instructions}"
        )
    expected = (sha256 if sha256 is not None else df.sha256)
    expected = expected.lower() if expected else None
    if expected is None and df.url is None:  # no published file to check a copy against (MIMIC-III's is yours)
        raise ValueError(f"dataset {dataset_key!r} has no published file to check a copy against; put yours at "
                         f"DIR/{df.folder}/{df.filename} yourself. {df.instructions}")
    parsed = urllib.parse.urlparse(src)
    copy = Path(urllib.request.url2pathname(parsed.path)) if parsed.scheme == "file" else None  # --url PATH
    if copy is not None and not copy.is_file():
        raise ValueError(f"--url {copy}: no such file; give the path of your copy of {df.filename}.")

    dest = resolve_data_dir(data_dir) / df.folder / df.filename
    found = ""  # what is in the way, said if getting the file fails
    if dest.is_file() and not force:
        there = sha256_of(dest)
        if expected is None or there == expected:
            return dest
        found = (f"{dest} is there but is not the published file (sha256 {there[:12]}..., published "
                 f"{expected[:12]}...); ")

    manual = (
        f"Download {src} by hand and save it as {dest} (or put it under any DIR as "
        f"DIR/{df.folder}/{df.filename} and pass --data-dir DIR / set {DATA_ENV_VAR}=DIR)."
    )
    created = [p for p in (dest.parent, *dest.parent.parents) if not p.exists()]  # removed again on failure
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise FetchError(f"cannot create {dest.parent}: {e}. {manual}") from e

    tmp_fd, tmp_name = tempfile.mkstemp(
        dir=dest.parent, prefix=f".{df.filename}.", suffix=".part"
    )
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        try:
            with os.fdopen(tmp_fd, "wb") as out:
                req = urllib.request.Request(src, headers={"User-Agent": "pibench-fetch"})
                with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                    length = resp.headers.get("Content-Length")
                    total = int(length) if length and length.isdigit() else None
                    bar = _progress_bar(total, df.filename, progress)
                    try:
                        while chunk := resp.read(CHUNK_SIZE):
                            out.write(chunk)
                            h.update(chunk)
                            if bar is not None:
                                bar.update(len(chunk))
                    finally:
                        if bar is not None:
                            bar.close()
        except urllib.error.HTTPError as e:
            raise FetchError(
                f"{found}downloading {dataset_key} failed: HTTP {e.code} {e.reason} for {src}. {manual}"
            ) from e
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise FetchError(
                f"{found}could not reach {src} to download {dataset_key} ({reason}). {manual}"
            ) from e

        got = h.hexdigest()
        if expected is not None and got != expected and copy is not None:
            raise ValueError(
                f"{copy} is not the published {dataset_key} "
                f"file (sha256 {got[:12]}..., published {expected[:12]}...); nothing was placed. "
                + (f"Get the published file from {df.url}." if df.url else df.instructions)
            )
        if expected is not None and got != expected:
            raise ValueError(
                f"checksum mismatch for {dataset_key} downloaded from {src}: "
                f"expected sha256 {expected}, got {got}. The file was discarded; the "
                f"upstream file may have changed or the download was corrupted. {manual}"
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        for folder in created:  # innermost first: the folders this call made, if still empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return dest
