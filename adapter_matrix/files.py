"""Reading and writing the files the tool touches, safely: the one place that opens them.

Reads (:func:`read_regular`) accept regular files only and stop at a size limit, so a
FIFO, ``/dev/zero`` or a folder passed as a matrix or a document is a clear message,
never a hang or an exhausted memory. Writes (:func:`atomic_write`) go through one
helper, so a reader sees the old file or the new one, never a half: ``table --update``,
``validate --write``, ``new-shim``, ``schema --output``, the result records, and the
cache's compiled matrices and memos. :func:`printable` escapes what files, the
environment and programs say before it reaches a terminal. See docs/security.md.

Only small standard modules are imported here: the cache and the import-time guard
(inside ``import torch``) use this module.
"""

from __future__ import annotations

import os
import stat

from . import limits
from .errors import AdapterMatrixError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a warm `check` never does)
if TYPE_CHECKING:
    import re
    from typing import Any, Callable, Dict, Iterator, Optional, Tuple, Union

__all__ = [
    "read_toml",
    "dunder_version",
    "FileReadError",
    "FileWriteError",
    "read_regular",
    "atomic_write",
    "make_folders",
    "write_failed",
    "read_keeping_newlines",
    "private_folder",
    "untrusted_reason",
    "printable",
    "unified_diff",
    "JSONFileError",
    "json_files",
    "sha256_file",
]

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once instead of waiting for a writer
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class FileReadError(AdapterMatrixError, OSError):
    """A file that cannot be read: ``path`` and ``reason``, one line for the user."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot read {printable(path)}: {reason}")
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return str(self.args[0])


class FileWriteError(AdapterMatrixError, OSError):
    """A file that cannot be written (full disk, read-only or missing folder): one line."""

    def __init__(self, path: str, reason: str, errno_: Optional[int] = None) -> None:
        super().__init__(f"cannot write {printable(path)}: {reason}")
        self.path = path
        self.reason = reason
        self.errno = errno_

    def __str__(self) -> str:
        return str(self.args[0])


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "it is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "it is a FIFO (named pipe), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "it is a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "it is a socket, not a regular file"
    return "it is not a regular file"


def read_regular(
    path: str, limit: Optional[int] = limits.MAX_READ_BYTES, *, truncate: bool = False, follow: bool = True
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Anything else (a folder, a FIFO, a device, a socket) is a :class:`FileReadError`
    before a byte is read; so is a file larger than ``limit``, unless ``truncate`` asks
    for its first ``limit`` bytes (a file detector reads a prefix). ``limit=None``
    reads the whole file. ``follow=False`` refuses a symbolic link (an entry of a shared
    cache or records folder is never one the tool wrote).
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY | (0 if follow else _NOFOLLOW))
    except OSError as exc:
        raise FileReadError(path, _reason(exc, path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileReadError(path, _kind(info.st_mode))
        if limit is not None and info.st_size > limit and not truncate:
            raise FileReadError(
                path, f"it is {info.st_size >> 20} MiB, more than the {limit >> 20} MiB a file may have"
            )
        chunks = []
        left = limit if limit is not None else -1
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            if left > 0:
                left -= len(chunk)
        if left == 0 and not truncate and os.read(fd, 1):  # it grew while we read
            raise FileReadError(path, f"it is larger than the {limit >> 20} MiB a file may have")  # type: ignore[operator]
        return b"".join(chunks)
    except OSError as exc:
        if isinstance(exc, FileReadError):
            raise
        raise FileReadError(path, _reason(exc, path)) from None
    finally:
        os.close(fd)


def _reason(exc: OSError, path: str) -> str:
    """What went wrong, in words: the folder that is missing or is a file, a full disk."""
    import errno

    folder = os.path.dirname(os.path.abspath(path))
    if exc.errno == errno.ENOENT and not os.path.isdir(folder):
        return f"the folder {printable(folder)} does not exist"
    if exc.errno == errno.ENOTDIR:
        return f"a part of {printable(folder)} is a file, not a folder"
    if exc.errno == errno.ENOSPC:
        return "the disk is full (no space left on the device); the file is unchanged"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "it is a symbolic link, which this folder never holds: remove it"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    if exc.errno == errno.EISDIR:
        return "it is a folder, not a file"
    return exc.strerror or str(exc)


def atomic_write(
    path: str,
    data: Union[str, bytes],
    write: Optional[Callable[[Any, Any], None]] = None,
    *,
    mode: Optional[int] = None,
    follow: bool = True,
) -> None:
    """Replace ``path`` with ``data`` so that readers see the old file or the new one only.

    The temporary file is created next to the target with ``O_CREAT|O_EXCL`` (a planted
    file or symbolic link of the same name is never followed), written, flushed to disk
    and renamed over the target. Text is written as UTF-8 with its line endings as
    given. ``mode`` sets the new file's permissions (the cache uses 0600); by default an
    existing file keeps its mode and a new one gets the umask's. ``write`` performs the
    write into the open file (tests pass one that fails midway to prove the original
    survives). A symbolic link *as the target* is written through: its target is
    replaced and the link stays (this repository's ``compat.yaml`` links to the
    adapter's packaged copy). ``follow=False`` is for files in shared folders (caches,
    results, evidence), where a link at the entry's name is planted, never the user's:
    the link itself is replaced and its target left alone.

    Raises :class:`FileWriteError` with one readable line; the target is then unchanged.
    """
    if follow:
        path = os.path.realpath(path)
    else:  # the folder may be a link (a cache moved elsewhere); the entry's own name never
        path = os.path.join(os.path.realpath(os.path.dirname(path) or "."), os.path.basename(path))
    folder = os.path.dirname(path)
    base = os.path.basename(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp, fd = "", -1
    for _ in range(16):
        tmp = os.path.join(folder, f".{base}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY,
                0o600 if mode is not None else 0o666,
            )
            break
        except FileExistsError:
            continue
        except OSError as exc:
            raise FileWriteError(path, _reason(exc, path), exc.errno) from None
    else:  # pragma: no cover - 16 collisions of 48 random bits
        raise FileWriteError(path, "cannot create a temporary file next to it")
    try:
        with os.fdopen(fd, "wb") as fh:
            if write is None:
                fh.write(payload)
            else:
                import io

                text = io.TextIOWrapper(fh, encoding="utf-8", newline="", write_through=True)
                write(text, data)
                text.flush()
                text.detach()
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        else:
            try:
                os.chmod(tmp, os.stat(path, follow_symlinks=follow).st_mode & 0o7777)
            except FileNotFoundError:
                pass
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, FileWriteError):
            raise FileWriteError(path, _reason(exc, path), exc.errno) from None
        raise


def write_failed(exc: OSError, path: str) -> OSError:
    """``exc``, raised while writing ``path`` (a folder made, a link created), as the one
    readable line a :class:`FileWriteError` says; one the tool worded already (a
    :class:`FileWriteError`, a :class:`FileReadError`) is kept as it is."""
    if isinstance(exc, AdapterMatrixError):
        return exc
    return FileWriteError(path, _reason(exc, path), exc.errno)


def make_folders(path: str) -> None:
    """``os.makedirs(path, exist_ok=True)``, a failure (a read-only file system, a file in
    the way) as a :class:`FileWriteError` naming the folder, never an ``[Errno N]`` line."""
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise FileWriteError(path, "it is a file, not a folder") from None
    except OSError as exc:
        raise write_failed(exc, path) from None


def read_keeping_newlines(path: str) -> Tuple[str, Callable[[str], str]]:
    """A text file to edit in place: its text with ``\n`` line endings and no byte-order mark,
    and what writes an edited text back in the file's own (a CRLF file, a Windows checkout's,
    stays CRLF: the edit's diff is the lines added, not every line). ``OSError``,
    ``UnicodeDecodeError``."""
    with open(path, encoding="utf-8", newline="") as fh:
        raw = fh.read()
    # a byte-order mark (a Windows editor's) is set aside too: the YAML and TOML an edit parses
    # see the text from its first character, and the file gets its mark back
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    crlf = raw.count("\r\n") * 2 > raw.count("\n")

    def back(text: str) -> str:
        return bom + (text.replace("\n", "\r\n") if crlf else text)

    return raw[len(bom) :].replace("\r\n", "\n"), back


def private_folder(path: str) -> None:
    """Create ``path`` and its missing parents readable by the user alone (0700), as a
    cache folder. (``os.makedirs`` gives its mode to the last folder only.)"""
    missing = []
    current = os.path.abspath(path)
    while not os.path.isdir(current) and os.path.dirname(current) != current:
        missing.append(current)
        current = os.path.dirname(current)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:  # a concurrent run made it; a file there fails the write that follows
            pass


def untrusted_reason(path: str, stop: str) -> Optional[str]:
    """Why the cache entry ``path`` must not be trusted, or None.

    The entry must be owned by this user (or root) and writable by no one else; so must
    each folder from it up to ``stop`` (the cache's root, included), except that a
    sticky folder such as ``/tmp`` may be shared: nobody else can rename or replace what
    it holds. Whoever could have written the entry could have planted it.
    """
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    stop = os.path.abspath(stop)
    target = current = os.path.abspath(path)
    while True:
        try:
            info = os.lstat(current)
        except OSError as exc:
            return f"{printable(current)}: {exc.strerror}"
        if uid is not None and info.st_uid not in (uid, 0):
            return f"{printable(current)} is owned by another user (uid {info.st_uid})"
        shared = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if shared and not (current != target and stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX):
            return f"{printable(current)} is writable by {'others' if info.st_mode & stat.S_IWOTH else 'its group'}"
        if current == stop or os.path.dirname(current) == current:
            return None
        current = os.path.dirname(current)


# control characters, C1 codes, line and paragraph separators, bidi marks and overrides
_CONTROL_CHARS = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_control = None  # compiled on first use: `re` costs a warm `check` 4 ms, and most texts are plain


def printable(text: object, keep_newlines: bool = False) -> str:
    """``text`` with its control characters (escape sequences, carriage returns, bidi
    overrides) written as Python escapes (``\\x1b``): what a file, an environment variable
    or a program's output says cannot retitle, clear or rewrite the user's terminal."""
    global _control
    value = str(text)
    if value.isprintable():  # every character _CONTROL_CHARS names is a non-printable one (Cc, Cf, Zl, Zp)
        return value
    if _control is None:
        import re

        _control = re.compile(_CONTROL_CHARS)
    if not _control.search(value):
        return value

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if keep_newlines and char in "\n\t":
            return char
        return repr(char)[1:-1]

    return _control.sub(escape, value)


def unified_diff(old: str, new: str, path: str) -> str:
    """``old`` (the file on disk) against ``new`` (what the tool would write), as a unified diff."""
    import difflib

    return "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"{path} (on disk)", f"{path} (generated)")
    )


class JSONFileError(AdapterMatrixError, ValueError):
    """A ``.json`` file that cannot be read or parsed: ``path`` and ``reason``."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def json_files(folder: str, limit: int = limits.JSON_LIMIT, skip: Tuple[str, ...] = ()) -> Iterator[Tuple[str, Any]]:
    """(path, parsed content) of every ``*.json`` file under ``folder``, recursively (a
    folder of downloaded CI artifacts works as is), except those named in ``skip``;
    :class:`JSONFileError` for a bad one: unreadable, not UTF-8, not JSON, nested too
    deeply to parse, or larger than ``limit`` bytes (read no further)."""
    import json

    for base, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".json") or name in skip:
                continue
            path = os.path.join(base, name)
            try:  # a FIFO or device named *.json is refused, never waited on
                raw = read_regular(path, limit + 1, truncate=True)
            except FileReadError as exc:
                raise JSONFileError(path, exc.reason) from None
            if len(raw) > limit:
                raise JSONFileError(path, f"larger than {_size(limit)}, the most a record may be")
            try:
                doc = json.loads(raw.decode("utf-8"))
            except RecursionError:
                raise JSONFileError(path, "nested too deeply") from None
            except UnicodeDecodeError as exc:
                raise JSONFileError(path, f"not UTF-8 (byte {exc.start})") from None
            except ValueError as exc:
                raise JSONFileError(path, str(exc)[:300]) from None
            yield path, doc


def _size(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 else f"{n // 2**10} KiB" if n >= 2**10 else f"{n} bytes"


def read_toml(path: str) -> Optional[Dict[str, Any]]:
    """A TOML file (pyproject.toml) as a dict; None when it cannot be read or parsed."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, ValueError):
        return None  # `validate --pyproject` reports a broken file


def dunder_version(path: str) -> Optional[str]:
    """``__version__ = "X"`` in a Python file, read without importing it (importing an adapter activates it)."""
    import ast

    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, ValueError, SyntaxError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if (
                any(isinstance(t, ast.Name) and t.id == "__version__" for t in targets)
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                return value.value
    return None


def sha256_file(path: str) -> str:
    """The sha256 of a file's bytes, read a MiB at a time (a source archive is hundreds of MB)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
