"""The per-user cache, every cache's one home: where it is, which entries are trusted, and
answers kept with the stamps of what they were decided from.

Location: ``$ADAPTER_MATRIX_CACHE``, else ``$XDG_CACHE_HOME/adapter-matrix``, else
``~/.cache/adapter-matrix``; each cache is a folder of it (:func:`cache_folder`): compiled
matrices (``matrices``, :mod:`adapter_matrix.matrix.cache`), the binary check's verdicts
(``binary``), ``check``'s remembered answers (``check-answers``), the import-time guard's
memos (``runtime``), device builds (``builds``) and the stamped entries below.

An entry is a JSON object ``{"deps": [[path, stamp], ...], "report": {...}}``: the answer and
the ``stat`` (size, modification time, inode) of every file and folder it was read from. A
later run stats those and reuses the answer while none changed: a changed file makes an
entry stale, never wrong. The binary check keeps its verdicts this way
(:mod:`adapter_matrix.binary.store`); ``check`` keeps its whole answer with the same stamps,
those of what these entries were decided from included (:mod:`adapter_matrix.check.recall`,
in a format its warm path reads without ``json``).

Entries are JSON (nothing in them can run code), written atomically and 0600, and read only
when :func:`trusted_entry` trusts them, never through a symbolic
link. A damaged entry is a miss. Imports nothing heavy: it runs at the start of every ``check``.
"""

from __future__ import annotations

import os

from . import limits

try:  # built into CPython; hashlib would load OpenSSL first
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a warm `check` never does)
if TYPE_CHECKING:
    from typing import Dict, Iterable, Mapping, Optional, Tuple

    Stamp = Optional[Tuple[int, int, int]]  # (size, mtime_ns, inode); None: the path does not exist

__all__ = [
    "CacheWarning",
    "cache_root",
    "cache_folder",
    "trusted_entry",
    "blake2b",  # the one hash of every cache key (recall's too): the built-in BLAKE2, never OpenSSL's
    "Stamp",
    "stamp",
    "digest",
    "entry_path",
    "read_entry",
    "write_entry",
    "load_stamped",
    "store_stamped",
    "entry_deps",
]


class CacheWarning(UserWarning):
    """A cache entry was refused (it could have been planted); the tool worked without it."""


def cache_root() -> str:
    explicit = os.environ.get("ADAPTER_MATRIX_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "adapter-matrix")


def cache_folder(*kind: str) -> str:
    """The folder of one cache (``matrices``, ``binary``, ``builds``, ...) under the root."""
    return os.path.join(cache_root(), *kind)


def trusted_entry(path: str) -> bool:
    """Whether the cache entry ``path`` may be read; warns (once per entry) why not.
    A missing entry is simply not trusted, without a warning."""
    from .files import untrusted_reason

    if not os.path.lexists(path):
        return False
    reason = untrusted_reason(path, cache_root())
    if reason is None:
        return True
    import warnings

    warnings.warn(
        f"adapter-matrix ignores its cache entry {reason}: another user could have planted it "
        f"(make the cache folder yours alone: chmod -R go-w {cache_root()})",
        CacheWarning,
        stacklevel=3,
    )
    return False


def stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def digest(parts: Iterable[str]) -> str:
    """A key from ``parts``, each length-prefixed (no two lists of parts give one key)."""
    h = blake2b(digest_size=16)
    for part in parts:
        raw = part.encode("utf-8", "surrogateescape")
        h.update(len(raw).to_bytes(8, "little") + raw)
    return h.hexdigest()


def entry_path(kind: str, key: str, suffix: str = ".json") -> str:
    """Where the entry ``key`` of the cache ``kind`` (a folder name) lives."""
    return os.path.join(cache_folder(kind), key + suffix)


def read_entry(path: str) -> object:
    """The parsed JSON of a trusted entry (its shape is the reader's to check); None when there is none."""
    import json

    from .files import FileReadError, read_regular

    if not trusted_entry(path):
        return None
    try:
        return json.loads(read_regular(path, limits.CACHE_ENTRY_BYTES, follow=False))
    except (FileReadError, ValueError, RecursionError):
        return None


def write_entry(path: str, value: object) -> None:
    import json

    from .files import FileWriteError, atomic_write, private_folder

    try:
        private_folder(os.path.dirname(path))
        atomic_write(path, json.dumps(value, separators=(",", ":")), mode=0o600, follow=False)
    except (OSError, FileWriteError):  # a read-only home: the next run decides again
        pass


def _holding(path: str) -> Optional[Tuple[Dict[str, Stamp], Dict[str, object]]]:
    """The entry's deps and answer, if every file and folder it was decided from is unchanged."""
    raw = read_entry(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("deps"), list) or not isinstance(raw.get("report"), dict):
        return None
    deps: Dict[str, Stamp] = {}
    for item in raw["deps"]:
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
            return None
        path_, st = item
        held = tuple(st) if isinstance(st, list) else None if st is None else st
        if stamp(path_) != held:
            return None
        deps[path_] = held
    return deps, raw["report"]


def load_stamped(path: str) -> Optional[Dict[str, object]]:
    """The stored answer, if every file and folder it was decided from is unchanged."""
    held = _holding(path)
    return None if held is None else held[1]


def entry_deps(path: str) -> Optional[Dict[str, Stamp]]:
    """What the stored answer at ``path`` was decided from, with their stamps, while it holds:
    an answer built on it (``check``'s memo) is then stale exactly when it is."""
    held = _holding(path)
    return None if held is None else held[0]


def store_stamped(path: str, deps: Dict[str, Stamp], report: Mapping[str, object]) -> None:
    """Store an answer with ``deps``: each path's stamp as it was when the answer read it."""
    write_entry(path, {"deps": [[p, st] for p, st in deps.items()], "report": report})
