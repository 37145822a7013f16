"""Downloads (data_loaders.fetch) against a local HTTP server on 127.0.0.1 only."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pibench.data_loaders import fetch as fetch_mod
from pibench.data_loaders import paths
from pibench.data_loaders.fetch import FetchError, fetch
from pibench.data_loaders.fingerprint import sha256_of
from pibench.data_loaders.paths import DATA_ENV_VAR, DATASET_FILES, locate

FESP_REL = Path("french_electricity_prices") / "zaffran2022_prices.csv.gz"


def _payload() -> bytes:
    rows = ["Date,Spot,hour"] + [
        f"2019-01-{1 + i // 24:02d} {i % 24:02d}:00:00,{40 + (i * 7) % 13}.5,{i % 24}"
        for i in range(200)
    ]
    return gzip.compress(("\n".join(rows) + "\n").encode(), mtime=0)


class _Server:
    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.requests: list[str] = []
        self.send_length = True
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                server.requests.append(self.path)
                if self.path != "/prices.csv.gz":
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/gzip")
                if server.send_length:
                    self.send_header("Content-Length", str(len(server.payload)))
                self.end_headers()
                self.wfile.write(server.payload)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        host, port = self.httpd.server_address[:2]
        self.base = f"http://{host}:{port}"
        self.url = f"{self.base}/prices.csv.gz"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def payload() -> bytes:
    return _payload()


@pytest.fixture
def server(payload: bytes) -> Iterator[_Server]:
    srv = _Server(payload)
    try:
        yield srv
    finally:
        srv.close()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(DATA_ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    # urllib would send even 127.0.0.1 requests through a configured proxy.
    for var in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # Belt and braces: nothing here may reach the real URL.
    monkeypatch.setitem(
        DATASET_FILES,
        "fesp",
        dataclasses.replace(DATASET_FILES["fesp"], url="http://127.0.0.1:9/unreachable"),
    )


@pytest.fixture
def fesp_sha(monkeypatch: pytest.MonkeyPatch, payload: bytes) -> str:
    """Make the table's fesp checksum that of the test payload."""
    sha = hashlib.sha256(payload).hexdigest()
    monkeypatch.setitem(DATASET_FILES, "fesp", dataclasses.replace(DATASET_FILES["fesp"], sha256=sha))
    return sha


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_sha256_of_matches_hashlib(tmp_path: Path) -> None:
    data = os.urandom(3 * fetch_mod.CHUNK_SIZE + 17)
    p = tmp_path / "f.bin"
    p.write_bytes(data)
    assert sha256_of(p) == hashlib.sha256(data).hexdigest()
    assert sha256_of(str(p), chunk_size=7) == hashlib.sha256(data).hexdigest()


def test_fetch_downloads_verifies_and_places(
    server: _Server, payload: bytes, fesp_sha: str, tmp_path: Path
) -> None:
    out = fetch("fesp", tmp_path / "d", url=server.url, progress=False)
    assert out == tmp_path / "d" / FESP_REL
    assert out.read_bytes() == payload
    assert sha256_of(out) == fesp_sha
    assert server.requests == ["/prices.csv.gz"]
    assert _leftovers(out.parent) == [out.name]  # no temp file left behind
    assert locate("fesp", tmp_path / "d") == out


def test_fetch_with_progress_bar(server: _Server, payload: bytes, fesp_sha: str, tmp_path: Path) -> None:
    out = fetch("fesp", tmp_path, url=server.url, progress=True)
    assert out.read_bytes() == payload


def test_fetch_without_content_length(
    server: _Server, payload: bytes, fesp_sha: str, tmp_path: Path
) -> None:
    server.send_length = False
    out = fetch("fesp", tmp_path, url=server.url, progress=True)
    assert out.read_bytes() == payload


def test_fetch_uses_env_data_dir(
    monkeypatch: pytest.MonkeyPatch, server: _Server, payload: bytes, fesp_sha: str, tmp_path: Path
) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "env"))
    out = fetch("fesp", url=server.url, progress=False)
    assert out == tmp_path / "env" / FESP_REL
    assert out.read_bytes() == payload


def test_fetch_default_dir(server: _Server, payload: bytes, fesp_sha: str, tmp_path: Path) -> None:
    out = fetch("fesp", url=server.url, progress=False)
    assert out == tmp_path / "xdg" / "pibench" / "data" / FESP_REL


def test_second_fetch_does_not_download(
    server: _Server, payload: bytes, fesp_sha: str, tmp_path: Path
) -> None:
    first = fetch("fesp", tmp_path, url=server.url, progress=False)
    second = fetch("fesp", tmp_path, url=server.url, progress=False)
    assert first == second
    assert len(server.requests) == 1
    fetch("fesp", tmp_path, url=server.url, progress=False, force=True)
    assert len(server.requests) == 2
    assert second.read_bytes() == payload


def test_existing_corrupt_file_is_replaced(
    server: _Server, payload: bytes, fesp_sha: str, tmp_path: Path
) -> None:
    dest = tmp_path / FESP_REL
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"truncated")
    out = fetch("fesp", tmp_path, url=server.url, progress=False)
    assert out.read_bytes() == payload
    assert len(server.requests) == 1


def test_sha256_argument_overrides_table(server: _Server, payload: bytes, tmp_path: Path) -> None:
    sha = hashlib.sha256(payload).hexdigest()
    out = fetch("fesp", tmp_path, url=server.url, sha256=sha.upper(), progress=False)
    assert out.read_bytes() == payload


def test_checksum_mismatch_raises_and_leaves_nothing(server: _Server, tmp_path: Path) -> None:
    wrong = "0" * 64
    with pytest.raises(ValueError, match="checksum mismatch") as ei:
        fetch("fesp", tmp_path, url=server.url, sha256=wrong, progress=False)
    msg = str(ei.value)
    assert wrong in msg
    assert hashlib.sha256(server.payload).hexdigest() in msg
    assert not (tmp_path / FESP_REL).exists()
    assert _leftovers(tmp_path / FESP_REL.parent) == []


def test_checksum_mismatch_against_table(server: _Server, tmp_path: Path) -> None:
    # The (patched) table still carries the real MAPIE checksum, which the payload does not match.
    with pytest.raises(ValueError, match=DATASET_FILES["fesp"].sha256):
        fetch("fesp", tmp_path, url=server.url, progress=False)
    assert _leftovers(tmp_path / FESP_REL.parent) == []


def test_http_404_names_url(server: _Server, fesp_sha: str, tmp_path: Path) -> None:
    bad = f"{server.base}/missing.csv.gz"
    with pytest.raises(FetchError) as ei:
        fetch("fesp", tmp_path, url=bad, progress=False)
    msg = str(ei.value)
    assert isinstance(ei.value, RuntimeError)
    assert bad in msg and "404" in msg
    assert str(tmp_path / FESP_REL) in msg  # says where to put a manual download
    assert server.requests == ["/missing.csv.gz"]
    assert _leftovers(tmp_path / FESP_REL.parent) == []


def test_connection_refused_names_url(fesp_sha: str, tmp_path: Path) -> None:
    # Bind then close a port on 127.0.0.1 so nothing listens there.
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/prices.csv.gz"
    with pytest.raises(RuntimeError, match="by hand") as ei:
        fetch("fesp", tmp_path, url=url, progress=False)
    assert url in str(ei.value)
    assert _leftovers(tmp_path / FESP_REL.parent) == []


@pytest.mark.parametrize("key", ["covid", "eeg", "mimic"])
def test_no_url_datasets_raise_with_instructions(key: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no public download") as ei:
        fetch(key, tmp_path, progress=False)
    assert DATASET_FILES[key].instructions in str(ei.value)
    assert not (tmp_path / DATASET_FILES[key].folder).exists()


def test_unknown_dataset(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="known datasets"):
        fetch("nope", tmp_path, progress=False)


def _shared_fesp_candidates() -> list[Path]:
    rel = paths.DATASET_FILES["fesp"].relpath
    out = []
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        out.append(Path(env) / rel)
    out.append(Path("/work/shared/data") / rel)
    return out


# Evaluated at import time, before the autouse fixture clears PIBENCH_DATA.
_SHARED_FESP = _shared_fesp_candidates()
_REAL_FESP_SHA = paths.DATASET_FILES["fesp"].sha256


def test_real_fesp_checksum_matches_shared_copy() -> None:
    for p in _SHARED_FESP:
        if p.is_file():
            assert sha256_of(p) == _REAL_FESP_SHA
            return
    pytest.skip(f"no local copy of the fesp file at {', '.join(map(str, _SHARED_FESP))}")


def test_cli_fetch_offline_is_one_line_with_the_manual_route(tmp_path: Path, capsys) -> None:
    from pibench.cli import main

    code = main(["data", "fetch", "fesp", "--data-dir", str(tmp_path)])  # the URL points at a closed local port
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert "could not reach http://127.0.0.1:9/unreachable" in err
    assert f"save it as {tmp_path / FESP_REL}" in err
    assert _leftovers(tmp_path / FESP_REL.parent) == []


def test_cli_fetch_from_a_copy_you_have_checks_it(payload: bytes, fesp_sha: str, tmp_path: Path, capsys) -> None:
    """``--url PATH``: a copy on this machine is placed where pibench looks, after its checksum passes; a wrong
    copy is refused and leaves nothing behind. A dataset without a public download can be placed so too."""
    from pibench.cli import main

    good, bad = tmp_path / "prices.csv.gz", tmp_path / "other.csv.gz"
    good.write_bytes(payload)
    bad.write_bytes(payload + b"x")
    assert main(["data", "fetch", "fesp", "--data-dir", str(tmp_path / "d"), "--url", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad} is not the published fesp file (sha256 " in err and "nothing was placed" in err
    assert not (tmp_path / "d").exists()  # not even the folders it made for the file
    assert main(["data", "fetch", "fesp", "--data-dir", str(tmp_path / "d"), "--url", str(good)]) == 0
    placed = tmp_path / "d" / FESP_REL
    assert placed.read_bytes() == payload and str(placed) in capsys.readouterr().out
    covid = DATASET_FILES["covid"]
    copy = tmp_path / "covid.csv"
    copy.write_bytes(b"not the covid file")
    assert main(["data", "fetch", "covid", "--data-dir", str(tmp_path / "d"), "--url", copy.as_uri()]) == 2
    assert f"published {covid.sha256[:12]}..." in capsys.readouterr().err
    assert main(["data", "fetch", "fesp", "--data-dir", str(tmp_path / "d"), "--url", str(tmp_path / "gone.gz")]) == 2
    assert f"--url {tmp_path / 'gone.gz'}: no such file; give the path of your copy" in capsys.readouterr().err
    assert main(["data", "fetch", "fesp", "--data-dir", str(tmp_path / "d"), "--url", str(bad)]) == 0
    assert "the published file was there already: --url was not read" in capsys.readouterr().out
    assert main(["data", "fetch", "mimic", "--data-dir", str(tmp_path / "d"), "--url", str(copy)]) == 2
    assert "has no published file to check a copy against" in capsys.readouterr().err
    assert not (tmp_path / "d" / DATASET_FILES["mimic"].folder).exists()


def test_cli_fetch_offline_over_a_wrong_file_says_the_file_is_wrong(fesp_sha: str, tmp_path: Path, capsys) -> None:
    from pibench.cli import main

    dest = tmp_path / FESP_REL
    dest.parent.mkdir(parents=True)
    dest.write_bytes(b"an edited copy")
    assert main(["data", "fetch", "fesp", "--data-dir", str(tmp_path)]) == 2  # the URL: a closed local port
    err = capsys.readouterr().err
    assert f"{dest} is there but is not the published file (sha256 " in err and "could not reach" in err
    assert dest.read_bytes() == b"an edited copy"  # left as it was
