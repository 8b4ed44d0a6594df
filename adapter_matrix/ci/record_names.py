"""Names that become paths: the cell and release names records carry, vetted before any write.

A record names its cell and release, and the evidence folder files it as
``<release>/<cell>.json``. Records arrive from anywhere (a downloaded CI artifact), so a
name must be one plain path component: :func:`check_name`.
"""

from __future__ import annotations

from ..errors import AdapterMatrixError

__all__ = ["EvidenceError", "RELEASE_FILE", "check_name"]


class EvidenceError(AdapterMatrixError, ValueError):
    """An evidence source that does not exist, or a record that cannot be judged or written."""


# The file a frozen release keeps beside its records (adapter_matrix.ci.frozen); never a cell's name.
RELEASE_FILE = "release.json"
_NAME_LIMIT = 200


def check_name(name: object, what: str) -> str:
    """``name`` if it can be one path component of the evidence folder, else :class:`EvidenceError`.

    No path separators, no ``..``, no drive letter, no control characters (NUL included),
    not empty, not hidden, at most 200 characters, and never the name of a frozen
    release's own file.
    """
    if not isinstance(name, str):
        raise EvidenceError(f"the {what} name is {type(name).__name__}, not a string")
    shown = repr(name[:60])
    if not name:
        raise EvidenceError(f"the {what} name is empty")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise EvidenceError(f"the {what} name {shown} holds a control character")
    if "/" in name or "\\" in name or ":" in name or ".." in name or name.startswith("."):
        raise EvidenceError(f"the {what} name {shown} is not a plain name (no /, \\, :, .. or leading dot)")
    if len(name) > _NAME_LIMIT or f"{name}.json" == RELEASE_FILE:
        raise EvidenceError(f"the {what} name {shown} is too long or reserved")
    return name
