"""Positioned readers of a parsed YAML document: mappings checked against the schema's
declared keys, scalars converted to versions, specifiers, dates and Python releases, lists
and mappings of them.

A :class:`Reader` never raises for a user mistake: each reader records a positioned
diagnostic (``compat.yaml:12:5: ...``) and returns ``None`` or an empty value, so one load
reports every error. The model builder (:mod:`adapter_matrix.matrix.loader`) and the
``companions:`` section (:mod:`adapter_matrix.matrix.companions`) read through it.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from typing import Callable, Dict, Optional, Tuple, TypeVar

from packaging.specifiers import InvalidSpecifier
from packaging.version import InvalidVersion, Version

from .diagnostics import Diagnostics
from .model import SCHEMA_VERSION, PythonVersion, Spec
from .schema import FOLDER_PATTERN, STRUCTS, URL_PATTERN
from .source import YAML_BOOL, Mapping, Node, Scalar, Sequence

__all__ = ["Reader", "parse_date"]

T = TypeVar("T")


def _is_location(text: str, folders: bool) -> bool:
    """Whether ``text`` is an index's URL, or with ``folders`` also a folder of wheels, as the
    JSON schema's patterns say (:data:`~adapter_matrix.matrix.schema.URL_PATTERN`)."""
    if re.match(URL_PATTERN, text):
        return True
    return folders and "://" not in text and re.match(FOLDER_PATTERN, text) is not None


def _spec(text: str) -> Spec:
    """:meth:`Spec.parse` of the text with its whitespace runs made single spaces (packaging
    reads ">=2.1,\\n<2.5" from a block scalar; messages and tables need one line), also
    parsing the versions that packaging only parses when it compares (a 5,000-digit number
    makes a specifier that fails in ``contains``)."""
    spec = Spec.parse(" ".join(text.split()))
    for s in spec.specifier:
        if s.operator != "===":
            try:
                Version(s.version.replace(".*", ""))
            except ValueError:
                raise InvalidSpecifier(text) from None
    return spec


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


def parse_date(text: str) -> _dt.date:
    """YYYY-MM-DD only: Python 3.11+ ``fromisoformat`` also reads 20240130 and 2024-W05-2,
    which would make a file valid on one Python and invalid on another."""
    if not _ISO_DATE.match(text):
        raise ValueError(f"Invalid isoformat string: {text!r}")
    return _dt.date.fromisoformat(text)


class Reader:
    """Reads the nodes of one document, recording diagnostics as it goes."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.diags = Diagnostics()
        self.schema_version = SCHEMA_VERSION  # until the file says which

    def fields(self, node: Node, struct_name: str, what: str) -> Dict[str, Node]:
        """Check a mapping against its declared keys; return key -> value node."""
        struct = STRUCTS[struct_name]
        if not isinstance(node, Mapping):
            self.diags.error(
                node.mark, f"{what} must be a mapping, found {node.describe()}", "see `adapter-matrix schema`"
            )
            return {}
        out: Dict[str, Node] = {}
        for key, value in node:
            if key.text not in struct.keys:
                close = difflib.get_close_matches(key.text, struct.keys, n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}?" if close else "allowed keys: " + ", ".join(struct.keys)
                self.diags.error(key.mark, f"unknown key {key.text!r} in {what}", hint)
                continue
            since = struct.field(key.text).since
            if since > self.schema_version:
                self.diags.error(
                    key.mark,
                    f"{key.text!r} in {what} needs schema-version {since} (this file says {self.schema_version})",
                    f"write `schema-version: {since}`: version-{self.schema_version} files mean the same under it",
                )
                continue
            out[key.text] = value
        for required in struct.required_in(self.schema_version):
            if required not in out and not any(k.text == required for k, _ in node):
                self.diags.error(node.mark, f"{what} is missing the required key {required!r}", f"add `{required}:`")
        return out

    def scalar(self, node: Node, what: str) -> Optional[Scalar]:
        if isinstance(node, Scalar) and not node.is_null and node.text != "":
            return node
        self.diags.error(node.mark, f"{what} must be a single value, found {node.describe()}")
        return None

    def convert(self, node: Node, what: str, parse_text: Callable[[str], T], hint: str) -> Optional[T]:
        s = self.scalar(node, what)
        if s is None:
            return None
        try:
            return parse_text(s.text)
        except (ValueError, InvalidVersion, InvalidSpecifier) as exc:
            detail = str(exc) if not isinstance(exc, (InvalidVersion, InvalidSpecifier)) else ""
            message = f"bad {what} {s.text!r}" + (f": {detail}" if detail and s.text not in detail else "")
            self.diags.error(s.mark, message, hint)
            return None

    def string(self, node: Optional[Node], what: str) -> Optional[str]:
        if node is None:
            return None
        s = self.scalar(node, what)
        return s.text if s else None

    def location(self, node: Optional[Node], what: str, folders: bool = False) -> Optional[str]:
        """A package index's URL (``index-url``), or with ``folders`` also a folder of wheels
        (``find-links``: ``/opt/wheels``, ``./wheels``); an error at its place otherwise: pip
        and uv would fail on it only when a command is run, far from this file."""
        text = self.string(node, what)
        if text is None or node is None or _is_location(text, folders):
            return text
        if folders:
            self.diags.error(
                node.mark,
                f"{what} {text!r} is neither a URL nor a folder",
                "give a page of wheels (https://...) or a folder: /opt/wheels, ./wheels (from where pip runs), "
                "file:///opt/wheels",
            )
        else:
            self.diags.error(
                node.mark,
                f"{what} {text!r} is not a URL",
                "give the index's address, e.g. https://download.pytorch.org/whl/cpu (file:///srv/index for a local one)",
            )
        return None

    def version(self, node: Node, what: str) -> Optional[Version]:
        return self.convert(node, what, Version, "write a PEP 440 version such as 2.4.1")

    def spec(self, node: Node, what: str) -> Optional[Spec]:
        return self.convert(node, what, _spec, "write a PEP 440 specifier set such as '>=2.1,<2.5' or a version")

    def date(self, node: Optional[Node], what: str) -> Optional[_dt.date]:
        if node is None:
            return None
        return self.convert(node, what, parse_date, "write the date as YYYY-MM-DD")

    def python(self, node: Node, what: str) -> Optional[PythonVersion]:
        found = self.convert(
            node, what, PythonVersion.parse, "write a Python feature release such as '3.11' or '3.13t'"
        )
        if found is not None and found.version.major == 3 and found.version.minor < 5:
            # no torch release ever had a wheel for Python 3.0-3.4; 3.1 is what a YAML tool (or a
            # spreadsheet) writes for an unquoted 3.10, read as the number 3.1
            assert isinstance(node, Scalar)
            meant = f"{found}0"
            self.diags.error(
                node.mark,
                f"Python {found} has no torch wheel (no torch release supports Python 3.0\u20133.4)",
                f"did you mean '{meant}'? an unquoted {meant} is the number {found} to YAML: write it quoted, "
                f'"{meant}"'
                if found.version.minor in (1, 2)
                else "write a Python feature release such as '3.11'",
            )
            return None
        return found

    def boolean(self, node: Optional[Node], what: str, default: bool) -> bool:
        if node is None:
            return default
        if isinstance(node, Scalar) and node.tag == YAML_BOOL and not node.quoted:
            return node.text.lower() in ("true", "yes", "on", "y")
        self.diags.error(node.mark, f"{what} must be true or false, found {node.describe()}")
        return default

    def items(self, node: Optional[Node], what: str) -> Tuple[Node, ...]:
        if node is None:
            return ()
        if isinstance(node, Sequence):
            return node.items
        self.diags.error(
            node.mark, f"{what} must be a list, found {node.describe()}", "write it as a YAML list (`- item`)"
        )
        return ()

    def entries(self, node: Optional[Node], what: str) -> Tuple[Tuple[Scalar, Node], ...]:
        if node is None:
            return ()
        if isinstance(node, Mapping):
            return node.entries
        self.diags.error(node.mark, f"{what} must be a mapping, found {node.describe()}")
        return ()

    def list_of(self, node: Optional[Node], what: str, convert: Callable[[Node, str], Optional[T]]) -> Tuple[T, ...]:
        out = []
        for item in self.items(node, what):
            value = convert(item, what)
            if value is not None:
                out.append(value)
        return tuple(out)

    def torch_line_key(self, key: Scalar, what: str) -> Optional[Version]:
        """A key naming a torch minor line (``"2.4"``), else an error and ``None``."""
        minor = self.convert(key, "torch minor", Version, f"{what} are keyed by minor, e.g. '2.4'")
        if minor is not None and (len(minor.release) != 2 or minor.local or minor.pre or minor.post or minor.dev):
            self.diags.error(
                key.mark, f"{what}: {key.text!r} is not a minor release line", "key it by MAJOR.MINOR, e.g. '2.4'"
            )
            return None
        return minor
