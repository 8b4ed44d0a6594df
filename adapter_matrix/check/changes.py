"""One vocabulary for a change, as uv prints one: ``- torch==2.16.0`` / ``+ torch==2.15.0``,
and "upgrade"/"downgrade" for packages and dimensions (a driver toolkit) alike.

Every surface that says what a fix changes (``check``'s fixes, the stack's, the selector
page's system changes) calls :func:`change`, so a move down from torch 2.16 is a
"downgrade torch from 2.16 to 2.15.0" wherever it is said, as a move down from CANN 9.9.9 is
a "downgrade cann from 9.9.9 to 9.1.0".
"""

from __future__ import annotations

from typing import Any, List, NamedTuple, Optional

from packaging.version import InvalidVersion, Version

__all__ = ["Change", "change"]


class Change(NamedTuple):
    """What one change does to one package or dimension value."""

    name: str
    old: Optional[str]  # None: nothing installed
    new: Optional[str]  # None: removed
    verb: str  # install | remove | upgrade | downgrade | reinstall | change

    @property
    def text(self) -> str:
        """``downgrade torch from 2.16.0 to 2.15.0``, ``install torch 2.15.0``."""
        if self.verb == "install":
            return f"install {self.name} {self.new}"
        if self.verb == "remove":
            return f"remove {self.name} {self.old}"
        return f"{self.verb} {self.name} from {self.old} to {self.new}"

    @property
    def lines(self) -> List[str]:
        """uv's lines: ``- torch==2.16.0`` then ``+ torch==2.15.0``."""
        return [f"- {self.name}=={self.old}"] * (self.old is not None) + [f"+ {self.name}=={self.new}"] * (
            self.new is not None
        )


def _version(value: Any) -> Optional[Version]:
    """The version a value compares by: a dimension value's (``Value.version``), a
    :class:`Version`, or a text that parses as one; ``None`` for a name (an enumeration)."""
    if value is None or isinstance(value, Version):
        return value
    if hasattr(value, "absent"):  # a dimension Value: its version, None for a name
        found: Optional[Version] = value.version
        return found
    try:
        return Version(str(value))
    except InvalidVersion:
        return None


def change(name: str, old: Any, new: Any) -> Change:
    """The change from ``old`` to ``new`` of ``name`` (either ``None``: installed or removed).
    An absent dimension value (``Value.absent``) counts as nothing installed."""
    old = None if old is None or getattr(old, "absent", False) else old
    new = None if new is None or getattr(new, "absent", False) else new
    if old is None and new is None:
        return Change(name, None, None, "change")
    if old is None:
        return Change(name, None, str(new), "install")
    if new is None:
        return Change(name, str(old), None, "remove")
    before, after = _version(old), _version(new)
    if before is None or after is None:
        verb = "change"  # names: no direction
    elif Version(after.public) == Version(before.public):
        verb = "reinstall"  # the same version, another build (2.8.0 -> 2.8.0+cpu): a local label sorts higher
    elif after > before:
        verb = "upgrade"
    else:
        verb = "downgrade"
    return Change(name, str(old), str(new), verb)
