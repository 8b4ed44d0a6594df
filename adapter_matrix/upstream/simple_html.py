"""A PEP 503 project page (the HTML Simple API) read as the PEP 691 answer it stands for.

Not every index speaks PEP 691's JSON: Intel's (``https://pytorch-extension.intel.com/
release-whl/stable/xpu/us/``), most static indexes on a CDN, and ``pip download -d`` mirrors
serve the HTML form of the same API (PEP 503), where each file is an anchor::

    <a href="../../intel_extension_for_pytorch-2.8.10%2Bxpu-cp311-cp311-linux_x86_64.whl#sha256=…"
       data-requires-python="&gt;=3.9" data-yanked="broken ABI">intel_extension_for_pytorch-…whl</a>

:func:`parse_page` turns such a page into the dictionary PEP 691 defines for it (its section
"Project detail" maps each attribute): ``filename`` (the anchor's text, which PEP 503 says is
the URL's last path component), ``url`` (the ``href`` resolved against the page's URL),
``hashes`` (from the URL's fragment), ``requires-python`` (``data-requires-python``,
unescaped), ``yanked`` (PEP 592: ``data-yanked`` present is yanked, its value the reason) and
``core-metadata`` (PEP 658/714: ``data-core-metadata``, or the older
``data-dist-info-metadata``). The rest of :mod:`adapter_matrix.upstream` then reads one form.
"""

from __future__ import annotations

import html as _html
import urllib.parse
from html.parser import HTMLParser
from typing import Dict, List, Optional, Tuple, TypedDict, Union

from .index import UpstreamError

__all__ = ["HTML_TYPES", "IndexAnswer", "IndexFile", "is_html", "parse_page", "render_page"]

# PEP 691's "Project detail" answer and its file entries, as this tool reads and records them.
# Every key may be absent (an index answers what it knows; a recording keeps part): readers
# use ``.get`` and check a value's type where the JSON came from the network or a file.
MetadataFlag = Union[bool, Dict[str, str]]  # PEP 714: true, or {algorithm: hash}
IndexFile = TypedDict(  # the keys have hyphens: the functional form
    "IndexFile",
    {
        "filename": str,
        "url": str,
        "hashes": Dict[str, str],
        "requires-python": Optional[str],
        "yanked": Union[bool, str],  # false, true, or the reason (PEP 592)
        "upload-time": str,
        "core-metadata": MetadataFlag,
        "data-dist-info-metadata": MetadataFlag,
        "metadata": str,  # what this tool keeps of the wheel's METADATA (a recording's addition)
    },
    total=False,
)


class IndexAnswer(TypedDict, total=False):
    meta: Optional[Dict[str, object]]  # {"api-version": "1.0", ...}; a recording keeps null when the index gave none
    name: Optional[str]
    versions: Optional[List[str]]
    files: List[IndexFile]
    html: bool  # read from a PEP 503 page: a recording keeps it in that form


HTML_TYPES = ("application/vnd.pypi.simple.v1+html", "text/html")


def is_html(content_type: str, body: bytes) -> bool:
    """Whether an index's answer is a PEP 503 page: by its content type, else by its first byte."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind:
        return kind in HTML_TYPES
    return body.lstrip()[:1] == b"<"


class _Anchors(HTMLParser):
    """The anchors of a page (attributes and text) and its PEP 629 repository version."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: List[Tuple[Dict[str, Optional[str]], str]] = []
        self.version: Optional[str] = None
        self._open: Optional[Dict[str, Optional[str]]] = None
        self._text: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "a":
            self._open, self._text = dict(attrs), []
        elif tag == "meta":
            found = dict(attrs)
            if found.get("name") == "pypi:repository-version":
                self.version = found.get("content")

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            self.anchors.append((self._open, "".join(self._text).strip()))
            self._open = None


def _metadata_flag(value: Optional[str]) -> Optional[MetadataFlag]:
    """PEP 714's ``core-metadata`` for an attribute value: ``true``, or ``{algorithm: hash}``."""
    if value is None or value.strip().lower() == "false":
        return None
    algorithm, sep, digest = value.partition("=")
    return {algorithm: digest} if sep and digest else True


def _file(attrs: Dict[str, Optional[str]], text: str, page_url: str) -> Optional[IndexFile]:
    href = attrs.get("href")
    if not href:
        return None
    url, _sep, fragment = urllib.parse.urljoin(page_url, href).partition("#")
    filename = text or urllib.parse.unquote(url.rsplit("/", 1)[-1])
    entry: IndexFile = {"filename": filename, "url": url}
    algorithm, sep, digest = fragment.partition("=")
    entry["hashes"] = {algorithm: digest} if sep and digest else {}
    entry["requires-python"] = attrs.get("data-requires-python") or None
    if "data-yanked" in attrs:
        entry["yanked"] = attrs["data-yanked"] or True  # present without a reason: yanked all the same
    else:
        entry["yanked"] = False
    metadata = _metadata_flag(attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata")))
    if metadata is not None:
        entry["core-metadata"] = metadata
    return entry


def parse_page(html: str, name: str, page_url: str) -> IndexAnswer:
    """The PEP 691 answer a PEP 503 project page of ``name`` stands for (see the module's
    docstring); relative links resolve against ``page_url``. :class:`UpstreamError` for a page
    of an API version this tool does not read (PEP 629: major version 1 only)."""
    parser = _Anchors()
    parser.feed(html)
    parser.close()
    version = parser.version or "1.0"
    if version.split(".")[0] != "1":
        raise UpstreamError(f"{page_url}: repository version {version} (this tool reads the Simple API 1.x)")
    files = [f for f in (_file(attrs, text, page_url) for attrs, text in parser.anchors) if f is not None]
    return {"meta": {"api-version": version}, "name": name, "versions": None, "files": files}


def render_page(document: IndexAnswer) -> str:
    """A PEP 503 project page of a (trimmed) answer: what a recording of an HTML index keeps,
    one anchor a line. Links are the file names (a recording holds no file); the attributes
    are those :func:`parse_page` reads, so the page reads back to the same answer."""
    name = _html.escape(str(document.get("name", "")))
    lines = [
        "<!DOCTYPE html>",
        "<html>",
        "  <head>",
        '    <meta name="pypi:repository-version" content="1.0">',
        f"    <title>Links for {name}</title>",
        "  </head>",
        "  <body>",
        f"    <h1>Links for {name}</h1>",
    ]
    for entry in document.get("files", []):
        filename = entry["filename"]
        attrs = [f'href="{urllib.parse.quote(filename)}"']
        requires_python = entry.get("requires-python")
        if requires_python:
            attrs.append(f'data-requires-python="{_html.escape(requires_python)}"')
        yanked = entry.get("yanked")
        if yanked is True or isinstance(yanked, str):
            attrs.append(f'data-yanked="{_html.escape(yanked) if isinstance(yanked, str) else ""}"')
        metadata = entry.get("core-metadata", entry.get("data-dist-info-metadata"))
        if isinstance(metadata, dict) and metadata:
            algorithm, digest = next(iter(metadata.items()))
            attrs.append(f'data-core-metadata="{_html.escape(algorithm)}={_html.escape(digest)}"')
        elif metadata:
            attrs.append('data-core-metadata="true"')
        lines.append(f"    <a {' '.join(attrs)}>{_html.escape(filename)}</a><br>")
    lines += ["  </body>", "</html>"]
    return "\n".join(lines) + "\n"
