"""The sha256 of each file of one release on an index: what ``check --emit requirements`` writes
as ``--hash`` options.

The project's Simple API page (PEP 691 JSON, or a PEP 503 HTML page whose links carry
``#sha256=`` fragments) lists every file with its hashes; a ``file:`` index (a folder, as pip
reads one) is read from disk. An index that cannot be read, or gives no sha256 for the
release, gives no hash: the caller writes the pin without one and says so.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import List, Mapping, Optional

from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ..names import canonical_name
from . import metadata as _metadata
from . import simple_html
from .companion_index import ACCEPT_ANY

__all__ = ["release_hashes"]

_TIMEOUT = 10.0  # a hash is a nicety: an index that is slow to answer is not waited for long


def _page(url: str) -> Optional[Mapping[str, object]]:
    """The project page at ``url`` as PEP 691 data, or None when it cannot be read."""
    parts = urllib.parse.urlsplit(url)
    try:
        if parts.scheme == "file":
            folder = Path(urllib.request.url2pathname(parts.path))
            text = (folder / "index.html").read_text(encoding="utf-8", errors="replace")
            return simple_html.parse_page(text, folder.name, url)
        body, reply = _metadata.http_get(url, {"Accept": ACCEPT_ANY}, _TIMEOUT)
        if simple_html.is_html(reply.get("content-type", ""), body):
            return simple_html.parse_page(
                body.decode("utf-8", errors="replace"), url.rstrip("/").rsplit("/", 1)[-1], url
            )
        data = json.loads(body)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError, _metadata.MetadataError):
        return None


def release_hashes(name: str, version: str, index_url: Optional[str] = None) -> Optional[List[str]]:
    """The sha256 digests of every file of ``name`` ``version`` on ``index_url`` (PyPI's, or
    ``$ADAPTER_MATRIX_INDEX_URL``'s, when None), sorted; empty when the index gives none, None
    when its page cannot be read (no network, a refused connection: not the same sentence)."""
    url = f"{index_url.rstrip('/')}/{canonical_name(name)}/" if index_url else _metadata.simple_url(name)
    page = _page(url)
    if page is None:
        return None
    files = page.get("files")
    if not isinstance(files, list):
        return []
    try:
        wanted = Version(version)
    except InvalidVersion:
        return []
    out = set()
    for entry in files:
        if not isinstance(entry, dict):
            continue
        filename = str(entry.get("filename", ""))
        try:
            found = (
                parse_wheel_filename(filename)[1] if filename.endswith(".whl") else parse_sdist_filename(filename)[1]
            )
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue
        digests = entry.get("hashes")
        if found == wanted and isinstance(digests, dict) and isinstance(digests.get("sha256"), str):
            out.add(digests["sha256"])
    return sorted(out)
