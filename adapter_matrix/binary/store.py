"""The binary check's two caches, under the per-user cache (:mod:`adapter_matrix.matrix.cache`).

- ``binary/elf/``: what :func:`~.elf.read_elf` found in one file, keyed by the file's path,
  size, modification time and inode. Reading libtorch_cpu.so's 75,000 symbols takes a
  quarter of a second; its entry is read in a few milliseconds.
- ``binary/verdicts/``: a whole environment's answer, with the ``stat`` of every file and
  folder it was decided from (the adapter's and torch's libraries and records, each library
  the loader would find, each folder where one was not found, the ld.so cache). A warm
  ``check`` stats those and reuses the answer: a few milliseconds in all.

Entries are JSON (nothing in them can run code), written atomically and 0600, and read
only when :func:`~adapter_matrix.matrix.cache.trusted_entry` trusts them, never through
a symbolic link. A damaged entry is a miss.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

try:  # built into CPython; hashlib would load OpenSSL first
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

from .site import Site

if TYPE_CHECKING:  # the warm path (a stored verdict) never reads ELF
    from .elf import ElfFacts

__all__ = ["FORMAT", "Stamp", "stamp", "facts_for", "load_verdict", "store_verdict", "environment_key"]

FORMAT = 1  # bumped when an entry's shape or the reader's answers change
Stamp = Optional[Tuple[int, int, int]]  # (size, mtime_ns, inode); None: the path does not exist


def stamp(path: str) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _digest(*parts: str) -> str:
    h = blake2b(digest_size=16)
    for part in parts:
        raw = part.encode("utf-8", "surrogateescape")
        h.update(len(raw).to_bytes(8, "little") + raw)
    return h.hexdigest()


def _folder(kind: str) -> str:
    from ..matrix.cache import cache_root

    return os.path.join(cache_root(), "binary", kind)


def _read(path: str) -> Optional[Any]:
    from ..files import FileReadError, read_regular
    from ..matrix.cache import trusted_entry

    if not trusted_entry(path):
        return None
    try:
        return json.loads(read_regular(path, 256 << 20, follow=False))
    except (FileReadError, ValueError):
        return None


def _write(path: str, value: Any) -> None:
    from ..files import FileWriteError, atomic_write, private_folder

    try:
        private_folder(os.path.dirname(path))
        atomic_write(path, json.dumps(value, separators=(",", ":")), mode=0o600, follow=False)
    except (OSError, FileWriteError):  # a read-only home: the next run reads the file again
        pass


def _to_json(facts: ElfFacts) -> Dict[str, Any]:
    out = facts._asdict()
    out["exports"] = "\n".join(facts.exports)  # one string: parsed 5x faster than a list
    out["undefined"] = [list(u) for u in facts.undefined]
    return out


def _from_json(raw: Dict[str, Any]) -> ElfFacts:
    from .elf import ElfFacts, Undefined

    exports = raw["exports"]
    return ElfFacts(
        elf_class=raw["elf_class"],
        machine=raw["machine"],
        soname=raw["soname"],
        needed=tuple(raw["needed"]),
        rpath=tuple(raw["rpath"]),
        runpath=tuple(raw["runpath"]),
        exports=tuple(exports.split("\n")) if exports else (),
        undefined=tuple(Undefined(*u) for u in raw["undefined"]),
        versions_needed=tuple((lib, tuple(v)) for lib, v in raw["versions_needed"]),
        versions_defined=tuple(raw["versions_defined"]),
    )


def facts_for(path: str) -> ElfFacts:
    """:func:`read_elf` of ``path``, from the cache when the file is unchanged.
    Raises :class:`~.elf.ElfError` or :class:`OSError` as :func:`read_elf` does."""
    real = os.path.realpath(path)
    st = stamp(real)
    if st is None:
        raise FileNotFoundError(path)
    entry = os.path.join(_folder("elf"), _digest(str(FORMAT), real, *map(str, st)) + ".json")
    raw = _read(entry)
    if isinstance(raw, dict):
        try:
            return _from_json(raw)
        except (KeyError, TypeError, ValueError):
            pass
    from .elf import read_elf

    facts = read_elf(real)
    _write(entry, _to_json(facts))
    return facts


def environment_key(distribution: str, site_dir: str, site: Site, built_for: Optional[str]) -> str:
    """The entry of one environment's answer: the tool's version, the adapter and the
    folder it is installed in, the environment's import path, root and loader settings."""
    from .._version import __version__

    parts = (distribution, site_dir, site.root, site.ld_library_path, site.cache_tag, built_for or "", *site.paths)
    return os.path.join(_folder("verdicts"), _digest(__version__, str(FORMAT), *parts) + ".json")


def load_verdict(key: str) -> Optional[Dict[str, Any]]:
    """The stored answer, if every file and folder it was decided from is unchanged."""
    raw = _read(key)
    if not isinstance(raw, dict) or not isinstance(raw.get("deps"), list):
        return None
    for item in raw["deps"]:
        if not isinstance(item, list) or len(item) != 2:
            return None
        path, st = item
        if stamp(path) != (tuple(st) if st is not None else None):
            return None
    report = raw.get("report")
    return report if isinstance(report, dict) else None


def store_verdict(key: str, deps: Dict[str, Stamp], report: Dict[str, Any]) -> None:
    """Store an answer with ``deps``: each path's stamp as it was when the answer read it
    (a file changed since makes the entry stale, never wrong)."""
    _write(key, {"deps": [[p, st] for p, st in deps.items()], "report": report})
