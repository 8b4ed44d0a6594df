"""Writing the files the tool owns: atomically, and with a readable diff of a change.

Every command that rewrites a file (``table --update``, ``validate --write``,
``new-shim``, ``schema --output``, the nox result records) goes through
:func:`atomic_write`, so a reader sees the old file or the new one, never a half.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from typing import Any, Callable, Iterator, Tuple

__all__ = ["atomic_write", "unified_diff", "JSONFileError", "json_files"]

def atomic_write(path: str, data: str, write: Callable[[Any, str], None] = lambda fh, s: fh.write(s)) -> None:
    """Replace ``path`` with ``data`` so that readers see the old file or the new one only.

    ``write`` performs the actual write into the open temporary file (tests pass one
    that fails midway to prove the original survives). A symbolic link is written
    through: its target is replaced and the link stays (this repository's
    ``compat.yaml`` is a link to the adapter's packaged copy).
    """
    path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            write(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def unified_diff(old: str, new: str, path: str) -> str:
    """``old`` (the file on disk) against ``new`` (what the tool would write), as a unified diff."""
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"{path} (on disk)", f"{path} (generated)"))


class JSONFileError(ValueError):
    """A ``.json`` file that cannot be read or parsed: ``path`` and ``reason``."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def json_files(folder: str) -> Iterator[Tuple[str, Any]]:
    """(path, parsed content) of every ``*.json`` file under ``folder``, recursively (a
    folder of downloaded CI artifacts works as is); :class:`JSONFileError` for a bad one."""
    for base, _dirs, files in os.walk(folder):
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(base, name)
            try:
                with open(path, encoding="utf-8") as fh:
                    yield path, json.load(fh)
            except (OSError, ValueError) as exc:
                raise JSONFileError(path, str(exc)) from None
