"""Reading an index over a network that fails (issue 58): every read is retried as pip retries
(DNS, a reset connection, a truncated answer, 5xx, a timeout; 5 times, with backoff), then fails
as one clear error; a batch of reads shows its progress, a bar on a terminal and plain lines in a
log. The index is a server on the loopback interface that fails one request in five
($ADAPTER_MATRIX_INDEX_URL points the tool at it): no test here uses the network."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlsplit

import pytest
import yaml

from adapter_matrix.upstream import metadata as md

from .helpers import FIXTURES, REPO, cli

RECORDED = FIXTURES / "pypi" / "2026-12-05"
LINES = ("2.12.", "2.13.", "2.14.")  # a part of torch-npu's history: 56 files, 46 wheels read


class FlakyIndex:
    """A PEP 691 index on 127.0.0.1 (keep-alive, range requests) whose every ``fail_every``-th
    request fails, in turn: HTTP 503, a reset connection, a truncated body, HTTP 502;
    ``always`` names paths that always answer 503."""

    MODES = ("503", "reset", "truncated", "502")

    def __init__(self, files: Dict[str, bytes], fail_every: int = 5, always: Tuple[str, ...] = ()) -> None:
        self.files, self.fail_every, self.always = files, fail_every, always
        self.requests: List[str] = []
        self.failures: List[str] = []
        self.lock = threading.Lock()
        index = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                with index.lock:
                    number = len(index.requests)
                    index.requests.append(path)
                    failing = path in index.always or (
                        index.fail_every and number % index.fail_every == index.fail_every - 1
                    )
                    mode = "503" if path in index.always else index.MODES[len(index.failures) % len(index.MODES)]
                    if failing:
                        index.failures.append(mode)
                body = index.files.get(path)
                if failing:
                    return self.fail(mode, body or b"x" * 100)
                if body is None:
                    return self.answer(404, b"not found")
                wanted = self.headers.get("Range")
                if wanted is None:
                    return self.answer(200, body)
                first, last = re.match(r"bytes=(\d*)-(\d*)", wanted).groups()
                start = len(body) - int(last) if not first else int(first)
                end = len(body) - 1 if not first or not last else min(int(last), len(body) - 1)
                start = max(start, 0)
                self.answer(206, body[start : end + 1], {"Content-Range": f"bytes {start}-{end}/{len(body)}"})

            def answer(self, status: int, body: bytes, headers: Optional[Dict[str, str]] = None) -> None:
                self.send_response(status)
                for key, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def fail(self, mode: str, body: bytes) -> None:
                if mode in ("503", "502"):
                    return self.answer(int(mode), b"try again")
                if mode == "truncated":
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                # reset: no answer at all, an RST instead of a FIN
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()

            def finish(self) -> None:
                try:
                    super().finish()
                except (OSError, ValueError):  # the socket a failure closed
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: object, client_address: object) -> None:
                pass  # the failures are on purpose

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _wheel(metadata: str, name: str) -> bytes:
    buffer = io.BytesIO()
    dist_info = "-".join(name.split("-")[:2])
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{dist_info}.dist-info/METADATA", metadata)
        archive.writestr("torch_npu/_C.so", b"\0" * 70_000)  # past the first range read
        archive.writestr(f"{dist_info}.dist-info/RECORD", "")
    return buffer.getvalue()


def _part() -> dict:
    """The part of the recorded torch-npu answer this index serves (:data:`LINES`)."""
    document = json.loads((RECORDED / "torch-npu.json").read_text())
    files = [f for f in document["files"] if f["filename"].split("-")[1].startswith(LINES)]
    versions = sorted({f["filename"].split("-")[1] for f in files})
    return dict(document, files=files, versions=versions)


def _index_files(base: str) -> Dict[str, bytes]:
    """Path -> body: torch's answer, torch-npu's with a URL per file, and each file: half the
    wheels announce their METADATA (PEP 658), the others are read by range requests."""
    part = _part()
    served: Dict[str, bytes] = {"/simple/torch/": (RECORDED / "torch.json").read_bytes()}
    files = []
    for number, entry in enumerate(part["files"]):
        recorded = {k: v for k, v in entry.items() if k != "metadata"}
        url = f"/files/{entry['filename']}"
        text = "Metadata-Version: 2.1\n" + entry.get("metadata", "Name: torch-npu\n")
        if number % 2:
            recorded["core-metadata"] = True
            served[url + ".metadata"] = text.encode()
        served[url] = _wheel(text, entry["filename"])
        files.append(dict(recorded, url=base + url))
    served["/simple/torch-npu/"] = json.dumps(dict(part, files=files)).encode()
    return served


@pytest.fixture
def flaky(monkeypatch) -> Iterator[FlakyIndex]:
    index = FlakyIndex({})
    index.files.update(_index_files(index.url))
    monkeypatch.setenv(md.INDEX_ENV, index.url + "/simple/")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    yield index
    index.close()


def _data(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _recorded_import(tmp_path: Path) -> dict:
    """The same part imported from a recorded folder, offline: what the live import must equal."""
    folder = tmp_path / "recorded"
    folder.mkdir()
    (folder / "torch-npu.json").write_text(json.dumps(_part()))
    (folder / "torch.json").write_bytes((RECORDED / "torch.json").read_bytes())
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(folder), "-o", str(tmp_path / "recorded.yaml"))
    assert res.code == 0, res.err
    assert res.err == ""  # a recorded folder: no progress to show
    return _data(tmp_path / "recorded.yaml")


def test_an_import_from_an_index_failing_one_request_in_five_succeeds_and_logs_its_progress(flaky, tmp_path):
    out = tmp_path / "compat.yaml"
    res = cli("init", "--from-index", "torch-npu", "--upstream", "pypi", "-o", str(out))
    assert res.code == 0, res.err
    assert len(flaky.failures) >= 10 and set(flaky.failures) == set(FlakyIndex.MODES), flaky.failures
    assert _data(out) == _recorded_import(tmp_path)  # every fact read, despite the failures
    # not a terminal: a plain line per step on stderr, stdout keeps the answer
    assert res.err.splitlines() == ["torch-npu wheels: 46 to do"]  # one line per step
    assert "written" in res.out and "wheels" not in res.out


def test_the_progress_shows_as_a_bar_on_a_terminal(flaky, tmp_path):
    """Under a pseudo-terminal, as a user runs it."""
    import pty

    out = tmp_path / "compat.yaml"
    env = dict(os.environ, COLUMNS="100", TERM="xterm")
    env.pop("NO_COLOR", None)
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "adapter_matrix",
            "init",
            "--from-index",
            "torch-npu",
            "--upstream",
            "pypi",
            "-o",
            str(out),
        ],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        cwd=REPO,
        env=env,
        close_fds=True,
    )
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    assert proc.wait(timeout=60) == 0, seen.decode(errors="replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))  # colors, cursor moves
    assert "torch-npu wheels" in text and "46/46" in text and "━" in text, text
    assert "written" in text and flaky.failures


def test_a_read_that_keeps_failing_is_one_clear_error_after_five_retries(flaky, tmp_path, monkeypatch):
    monkeypatch.setattr(md, "BACKOFF", 0.0)
    (broken,) = [p for p in flaky.files if p.endswith(".metadata")][:1]
    flaky.always = (broken,)
    res = cli("init", "--from-index", "torch-npu", "--upstream", "pypi", "-o", str(tmp_path / "x.yaml"))
    assert res.code == 2
    errors = [line for line in res.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in res.err, res.err
    assert re.search(r"cannot read the metadata of torch_npu-\S+\.whl: \S+: HTTP 503 .*\(tried 6 times\)", errors[0])
    assert flaky.requests.count(broken) == 6  # the first try and 5 retries, as pip
    assert not (tmp_path / "x.yaml").exists()


def test_the_torch_answer_is_retried_too(flaky, monkeypatch):
    from adapter_matrix.upstream.index import UpstreamError, read_upstream

    flaky.fail_every = 2  # the odd requests fail: torch's answer comes on its retry
    md.http_get(flaky.url + "/simple/torch-npu/", {})
    assert read_upstream("pypi").lines() and flaky.failures == ["503"]
    monkeypatch.setattr(md, "BACKOFF", 0.0)
    flaky.always = ("/simple/torch/",)
    with pytest.raises(
        UpstreamError, match=r"cannot read http://127\.0\.0\.1:\d+/simple/torch/: HTTP 503 .*tried 6 times"
    ):
        read_upstream("pypi")


def test_a_dns_failure_and_a_timeout_are_retried(flaky, monkeypatch):
    real = socket.getaddrinfo
    failed = []

    def getaddrinfo(host, *args, **kwargs):
        if not failed:
            failed.append(host)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    flaky.fail_every = 0
    body, _headers = md.http_get(flaky.url + "/simple/torch/", {})
    assert failed == ["127.0.0.1"] and body == flaky.files["/simple/torch/"]

    slow = threading.Event()
    original = flaky.server.RequestHandlerClass.do_GET

    def late(handler) -> None:
        if not slow.is_set():  # the first answer comes after the client gave up on it
            slow.set()
            time.sleep(1.0)
        original(handler)

    monkeypatch.setattr(flaky.server.RequestHandlerClass, "do_GET", late)
    body, _headers = md.http_get(flaky.url + "/simple/torch-npu/", {}, timeout=0.3)
    assert slow.is_set() and json.loads(body)["name"] == "torch-npu"


def test_a_reported_fan_out_counts_every_read_and_stops_at_the_first_error():
    seen: List[Tuple[str, int, int]] = []
    with md.reporting(lambda what, done, total: seen.append((what, done, total))):
        md.fan_out(lambda item: None, list(range(5)), "items", 2)
    assert seen == [("items", n, 5) for n in range(6)]
    started = []

    def read(item: int) -> None:
        started.append(item)
        if item == 0:
            raise ValueError("the first read fails")
        time.sleep(0.05)

    with pytest.raises(ValueError, match="the first read fails"):
        md.fan_out(read, list(range(50)), "items", 1)
    assert len(started) < 50  # the reads not started were cancelled


def test_table_resolve_counts_its_pip_resolutions(monkeypatch):
    """`table --resolve` reads the index through pip (which retries as pip does): its progress
    is the resolutions done."""
    from adapter_matrix.tables import resolve

    monkeypatch.setattr(resolve, "resolve", lambda commands, python, index_url, pip, platform: {"install": []})
    monkeypatch.setattr(resolve, "reachable", lambda url: None)  # PyPI answers, here without the network
    combinations = [
        {"commands": ["pip install a==1"], "python": python, "torch": "2.1.0"} for python in ("3.10", "3.11", "3.12")
    ] + [{"commands": ["pip install b==1"], "python": "3.11", "torch": "2.1.0"}]
    seen: List[Tuple[str, int, int]] = []
    found = resolve.check_commands(combinations, progress=lambda *report: seen.append(report))
    assert found == (3, [], []) and seen == [("pip resolutions", n, 3) for n in range(4)]


def test_a_refused_connection_and_a_dns_failure_say_so_and_each_retry_shows_as_it_happens(monkeypatch):
    """Issue 67: a refused connection printed as "timed out (tried 6 times)", retried silently."""
    monkeypatch.setattr(md, "BACKOFF", 0.0)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    seen: List[str] = []
    with md.noting(seen.append), pytest.raises(md.MetadataError) as refused:
        md.http_get(f"http://127.0.0.1:{port}/simple/torch/", {})
    assert "connection refused" in str(refused.value) and "timed out" not in str(refused.value)
    assert len(seen) == md.RETRIES and seen[0].startswith(f"retry 1 of {md.RETRIES} of http://127.0.0.1:{port}/")
    assert all(line.endswith(": connection refused") for line in seen), seen

    def getaddrinfo(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with pytest.raises(md.MetadataError, match=r"DNS failure: cannot resolve index\.invalid"):
        md.http_get("http://index.invalid/simple/torch/", {})
