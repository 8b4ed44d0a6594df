"""The core metadata (``METADATA``) of a wheel on an index, read without downloading it.

An index that implements PEP 658/714 serves each wheel's metadata beside it
(``<wheel url>.metadata``, announced by the ``core-metadata`` key of the PEP 691 answer).
Where it does not (PyPI's mirror here announces nothing and answers 404), the metadata is
read out of the wheel itself with HTTP range requests: a wheel is a zip file, its central
directory sits at the end, and ``*.dist-info/METADATA`` is one small member. One request
for the last 64 KiB usually holds both; a torchvision wheel of 8 MB costs about 10 KB.

The network is touched only through :func:`http_get` (tests replace it).
"""

from __future__ import annotations

import functools
import io
import ssl
import urllib.error
import urllib.request
import zipfile
from email.parser import HeaderParser
from typing import Dict, List, Mapping, Optional, Tuple

from .._version import __version__
from ..errors import AdapterMatrixError

__all__ = ["MetadataError", "http_get", "wheel_metadata", "headers", "HEADERS_KEPT"]

TIMEOUT = 60.0
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


def http_get(url: str, headers: Mapping[str, str], timeout: float = TIMEOUT) -> Tuple[bytes, Dict[str, str]]:
    """GET ``url``; (body, response headers). The one place that touches the network."""
    request = urllib.request.Request(url, headers=dict(headers, **{"User-Agent": f"adapter-matrix/{__version__}"}))
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=_tls()) as response:
            return response.read(), {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as exc:
        raise MetadataError(f"{url}: HTTP {exc.code} {exc.reason}", exc.code) from None
    except (urllib.error.URLError, OSError) as exc:
        raise MetadataError(f"{url}: {getattr(exc, 'reason', exc)}") from None


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

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.size - self.position)
        if count <= 0:
            return 0
        data = self._bytes(self.position, count)
        buffer[: len(data)] = data
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
