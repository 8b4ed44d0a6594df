"""The core metadata (``METADATA``) of a wheel on an index, read without downloading it.

An index that implements PEP 658/714 serves each wheel's metadata beside it
(``<wheel url>.metadata``, announced by the ``core-metadata`` key of the PEP 691 answer).
Where it does not (PyPI's mirror here announces nothing and answers 404), the metadata is
read out of the wheel itself with HTTP range requests: a wheel is a zip file, its central
directory sits at the end, and ``*.dist-info/METADATA`` is one small member. One request
for the last 64 KiB usually holds both; a torchvision wheel of 8 MB costs about 10 KB.

The network is touched only through :func:`http_get` (tests replace it), which retries a
transient failure as pip does (urllib3's ``Retry``), and many reads run at once through
:func:`fan_out`, which reports its progress to the command line (:func:`reporting`).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import ssl
import urllib.parse
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextvars import ContextVar
from email.parser import HeaderParser
from typing import (
    TYPE_CHECKING,
    Any,
    BinaryIO,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
)

import urllib3

from .._version import __version__
from ..errors import AdapterMatrixError
from ..names import canonical_name
from ..urls import PYPI_SIMPLE

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = [
    "MetadataError",
    "http_get",
    "http_download",
    "unreachable",
    "simple_url",
    "fan_out",
    "reporting",
    "wheel_metadata",
    "headers",
    "HEADERS_KEPT",
    "INDEX_ENV",
]

TIMEOUT = 60.0
INDEX_ENV = "ADAPTER_MATRIX_INDEX_URL"  # the Simple API `--upstream pypi` reads instead: a mirror, a test's server
# As pip: a request is retried 5 times after a transient failure (DNS, a refused or reset
# connection, a timeout, a truncated answer, these statuses), waiting 0.25 s, then 0.5 s, 1 s, 2 s.
RETRIES = 5
BACKOFF = 0.25
TRANSIENT = (429, 500, 502, 503, 504, 520, 527)
POOL = 16  # connections kept per host: as many as reads in flight (fan_out's workers)
TAIL = 65536  # bytes asked for first: the central directory and, usually, METADATA too
HEADERS_KEPT = ("Metadata-Version", "Name", "Version", "Requires-Python", "Requires-Dist")


class MetadataError(AdapterMatrixError, RuntimeError):
    """A wheel's metadata could not be read; the message names the wheel and why
    (``status``: the HTTP status, when the server answered one)."""

    def __init__(self, message: str, status: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status


@functools.lru_cache(maxsize=None)
def _tls() -> ssl.SSLContext:
    """One TLS context for every request: building one loads the CA bundle (about 90 ms),
    and an import reads a thousand ranges (torch-npu: 512 wheels, 3 requests each)."""
    return ssl.create_default_context()


@functools.lru_cache(maxsize=None)
def _manager(proxy: Optional[str]) -> urllib3.PoolManager:
    """One pool of kept-alive connections per proxy (or none) for every request: an import
    reads a thousand ranges, and a new TLS handshake each would cost more than the reads."""
    if proxy:
        return urllib3.ProxyManager(proxy, maxsize=POOL, ssl_context=_tls())
    return urllib3.PoolManager(maxsize=POOL, ssl_context=_tls())


def _pool(url: str) -> urllib3.PoolManager:
    """The pool for ``url``: through the proxy the environment names for its scheme
    (``https_proxy``, ``no_proxy``), as urllib and pip do."""
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(parts.hostname or ""):
        return _manager(proxy)
    return _manager(None)


def http_get(url: str, headers: Mapping[str, str], timeout: float = TIMEOUT) -> Tuple[bytes, Dict[str, str]]:
    """GET ``url``; (body, response headers). The one place that touches the network: a
    transient failure is retried :data:`RETRIES` times with backoff, then it is one
    :class:`MetadataError` that says so."""
    retries = _Retry(total=RETRIES, backoff_factor=BACKOFF, status_forcelist=TRANSIENT, raise_on_status=False)
    sent = dict(headers, **{"User-Agent": f"adapter-matrix/{__version__}"})
    try:
        response = _pool(url).request(
            "GET", url, headers=sent, timeout=timeout, retries=retries, enforce_content_length=True
        )  # a truncated answer is an error, retried (urllib3 1.26 accepts it by default)
    except urllib3.exceptions.MaxRetryError as exc:
        raise MetadataError(f"{url}: {_reason(exc.reason)} (tried {RETRIES + 1} times)") from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise MetadataError(f"{url}: {_reason(exc)}") from None
    if response.status >= 400:
        tried = f" (tried {RETRIES + 1} times)" if response.status in TRANSIENT else ""
        raise MetadataError(f"{url}: HTTP {response.status} {response.reason}{tried}", response.status)
    return response.data, {k.lower(): v for k, v in response.headers.items()}


def http_download(url: str, out: BinaryIO, limit: int, timeout: float = TIMEOUT) -> int:
    """GET ``url`` into ``out``, streamed (a source archive is hundreds of MB), retried as
    :func:`http_get`; the bytes written. More than ``limit`` bytes is a :class:`MetadataError`."""
    retries = urllib3.Retry(total=RETRIES, backoff_factor=BACKOFF, status_forcelist=TRANSIENT, raise_on_status=False)
    sent = {"User-Agent": f"adapter-matrix/{__version__}"}
    try:
        response = _pool(url).request("GET", url, headers=sent, timeout=timeout, retries=retries, preload_content=False)
    except urllib3.exceptions.MaxRetryError as exc:
        raise MetadataError(f"{url}: {_reason(exc.reason)} (tried {RETRIES + 1} times)") from None
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise MetadataError(f"{url}: {_reason(exc)}") from None
    try:
        if response.status >= 400:
            raise MetadataError(f"{url}: HTTP {response.status} {response.reason}", response.status)
        written = 0
        for chunk in response.stream(1 << 20):
            written += len(chunk)
            if written > limit:
                raise MetadataError(f"{url}: larger than the {limit >> 20} MiB allowed")
            out.write(chunk)
        return written
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise MetadataError(f"{url}: {_reason(exc)}") from None
    finally:
        response.release_conn()


def unreachable(url: str, timeout: float = TIMEOUT) -> Optional[str]:
    """``None`` when the server at ``url`` answers at all (any HTTP status), else why not, in a
    line: a HEAD request (an index's root page can be megabytes), retried as :func:`http_get`."""
    retries = _Retry(total=RETRIES, backoff_factor=BACKOFF, status_forcelist=(), raise_on_status=False)
    sent = {"User-Agent": f"adapter-matrix/{__version__}"}
    try:
        _pool(url).request("HEAD", url, headers=sent, timeout=timeout, retries=retries).release_conn()
    except urllib3.exceptions.MaxRetryError as exc:
        return f"{url}: {_reason(exc.reason)} (tried {RETRIES + 1} times)"
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        return f"{url}: {_reason(exc)}"
    return None


def _reason(exc: Optional[BaseException]) -> str:
    """What failed, in a line, by its real cause: a DNS failure, a refused connection, a
    timeout (urllib3's connection errors subclass its timeout: asked first; urllib3 names its
    connection object first: left out)."""
    if isinstance(exc, urllib3.exceptions.NameResolutionError):
        return f"DNS failure: cannot resolve {getattr(exc.conn, 'host', '') or 'the host'}"
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(exc).lower():
            return "connection refused"
        return "cannot connect: " + re.sub(r"^<[^>]*>: ", "", str(exc)).removeprefix(
            "Failed to establish a new connection: "
        )
    if isinstance(exc, urllib3.exceptions.TimeoutError):
        return "timed out"
    if isinstance(exc, urllib3.exceptions.ProtocolError) and exc.args[1:]:
        return f"connection broken ({exc.args[1]!r})"
    return re.sub(r"^<[^>]*>: ", "", str(exc)) or type(exc).__name__


def simple_url(name: str) -> str:
    """Where ``--upstream pypi`` reads the file list of ``name``: PyPI's Simple API, or the one
    $ADAPTER_MATRIX_INDEX_URL names (a mirror that serves PEP 691 JSON)."""
    root = os.environ.get(INDEX_ENV) or PYPI_SIMPLE + "/"
    return f"{root.rstrip('/')}/{canonical_name(name)}/"


Report = Callable[[str, int, int], None]  # (what is read, how many are done, of how many)
_REPORT: ContextVar[Optional[Report]] = ContextVar("adapter_matrix_report", default=None)
T = TypeVar("T")


Note = Callable[[str], None]  # a line to show as it happens (a retry and its cause)
_NOTE: ContextVar[Optional[Note]] = ContextVar("adapter_matrix_note", default=None)


@contextlib.contextmanager
def noting(note: Note) -> Iterator[None]:
    """Within the block, each retry of a request is told to ``note`` as it happens, with its cause."""
    token = _NOTE.set(note)
    try:
        yield
    finally:
        _NOTE.reset(token)


class _Retry(urllib3.Retry):
    """urllib3's Retry, telling each retry as it happens ("retry 1 of 5 of URL: connection
    refused") where a command line listens (:func:`noting`)."""

    def increment(self, *args: Any, **kwargs: Any) -> urllib3.Retry:  # type: ignore[override]  # passed through
        new = super().increment(*args, **kwargs)
        note = _NOTE.get()
        if note is not None:
            said = dict(zip(("method", "url", "response", "error", "_pool"), args), **kwargs)
            error, response, pool, url = said.get("error"), said.get("response"), said.get("_pool"), said.get("url")
            cause = _reason(error) if error is not None else f"HTTP {response.status}" if response is not None else "?"
            where = f"{pool.scheme}://{pool.host}:{pool.port}{url}" if pool is not None and url else (url or "")
            note(f"retry {len(new.history)} of {RETRIES} of {where}: {cause}")
        return new


@contextlib.contextmanager
def reporting(report: Report) -> Iterator[None]:
    """Within the block, every :func:`fan_out` reports its progress to ``report``."""
    token = _REPORT.set(report)
    try:
        yield
    finally:
        _REPORT.reset(token)


def fan_out(read: Callable[[T], None], items: Sequence[T], what: str, workers: int) -> None:
    """``read`` each of ``items``, ``workers`` at a time, reporting ``(what, done, total)`` as
    each ends (:func:`reporting`). The first error ends it: the reads not yet started are
    cancelled and the error is raised, once."""
    report = _REPORT.get()
    if report is not None:
        report(what, 0, len(items))
    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(read, item) for item in items]
        try:
            for done, future in enumerate(as_completed(futures), 1):
                future.result()
                if report is not None:
                    report(what, done, len(items))
        except BaseException:
            for future in futures:
                future.cancel()
            raise


class _RangeFile(io.RawIOBase):
    """A seekable read-only file over HTTP range requests, fetching what zipfile reads."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url, self.timeout = url, timeout
        body, reply = http_get(url, {"Range": f"bytes=-{TAIL}"}, timeout)
        content_range = reply.get("content-range", "")
        if "/" not in content_range:  # the server ignored the range: it sent the whole file
            self.size = len(body)
            self.chunks: List[Tuple[int, bytes]] = [(0, body)]
        else:
            self.size = int(content_range.rsplit("/", 1)[1])
            self.chunks = [(self.size - len(body), body)]
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = base + offset
        return self.position

    def _bytes(self, start: int, count: int) -> bytes:
        for begin, data in self.chunks:
            if begin <= start and start + count <= begin + len(data):
                return data[start - begin : start - begin + count]
        end = min(self.size, start + max(count, 16384)) - 1
        data, _reply = http_get(self.url, {"Range": f"bytes={start}-{end}"}, self.timeout)
        self.chunks.append((start, data))
        return data[:count]

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        count = min(len(view), self.size - self.position)
        if count <= 0:
            return 0
        data = self._bytes(self.position, count)
        view[: len(data)] = data
        self.position += len(data)
        return len(data)


def wheel_metadata(url: str, announced: bool, timeout: float = TIMEOUT) -> str:
    """The ``METADATA`` text of the wheel at ``url``: from ``url.metadata`` when the index
    announces it (PEP 658), else out of the wheel through range requests."""
    if announced:
        body, _reply = http_get(url + ".metadata", {}, timeout)
        return body.decode("utf-8", errors="replace")
    try:
        archive = zipfile.ZipFile(_RangeFile(url, timeout))
        names = [n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        if len(names) != 1:
            raise MetadataError(f"{url}: {len(names)} .dist-info/METADATA members")
        return archive.read(names[0]).decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise MetadataError(f"{url}: not a readable wheel ({exc})") from None


def headers(text: str) -> str:
    """The headers of a ``METADATA`` text that this tool reads (:data:`HEADERS_KEPT`), in
    order, one per line: what a recorded answer keeps of it."""
    message = HeaderParser().parsestr(text, headersonly=True)
    return "".join(f"{key}: {value}\n" for key, value in message.items() if key in HEADERS_KEPT)
