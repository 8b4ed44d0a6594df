"""torch's releases from PyPI, or from PyTorch's test channel (its release candidates).

PyTorch uploads each release candidate to its test channel
(``https://download.pytorch.org/whl/test/torch/``), a PEP 503 HTML index whose files carry the
final version and a local label (``torch-2.16.0+cpu-cp311-…``, ``+cu130``) and no upload time,
weeks before the final release reaches PyPI. A release there that PyPI does not have is a
candidate. :func:`read_releases` reads either source into the one
:class:`~adapter_matrix.upstream.index.Upstream` index: ``pypi`` (or a recorded PEP 691 answer)
as ``validate --upstream`` reads it, a URL or a recorded page of the test channel with its
local labels read as the public version.
"""

from __future__ import annotations

import json

from ..urls import PYTORCH_INDEX
from . import metadata as _metadata
from .index import TIMEOUT, Upstream, UpstreamError, parse_index, read_answer, read_upstream
from .simple_html import is_html, parse_page

__all__ = ["TEST_CHANNEL", "read_releases"]

TEST_CHANNEL = PYTORCH_INDEX.format(label="test") + "/torch/"


def read_releases(source: str, *, timeout: float = TIMEOUT) -> Upstream:
    """torch's releases from ``source``: ``pypi``, a recorded answer (JSON, or a PEP 503 page),
    or an index's URL (the test channel). :class:`UpstreamError` when it cannot be read."""
    if source == "pypi":
        return read_upstream(source, timeout=timeout)
    if source.startswith(("https://", "http://")):
        try:
            raw, headers = _metadata.http_get(source, {"Accept": "text/html"}, timeout)
        except _metadata.MetadataError as exc:
            raise UpstreamError(f"cannot read {exc} \u2014 check the network, or pass a recorded page") from None
        kind = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
        origin = source
    else:
        raw, origin = read_answer(source, timeout=timeout)
        kind = ""
    if is_html(kind, raw):
        document = parse_page(raw.decode("utf-8", "replace"), "torch", origin)
    else:
        try:
            document = json.loads(raw)
        except ValueError as exc:
            raise UpstreamError(f"{origin} is neither a PEP 691 answer nor a PEP 503 page ({exc})") from None
    return parse_index(document, source, origin, local=True)
