"""The binary check's two caches, under the per-user cache (:mod:`adapter_matrix.matrix.cache`).

- ``binary/elf/``: what :func:`~.elf.read_elf` found in one file, keyed by the file's path,
  size, modification time and inode. Reading libtorch_cpu.so's 75,000 symbols takes a
  quarter of a second; its entry is read in a few milliseconds.
- ``binary/verdicts/``: a whole environment's answer (:mod:`adapter_matrix.memo`), with the
  ``stat`` of every file and folder it was decided from (the adapter's and torch's libraries and records, each library
  the loader would find, each folder where one was not found, the ld.so cache). A warm
  ``check`` stats those and reuses the answer: a few milliseconds in all.

Entries are JSON (nothing in them can run code), written atomically and 0600, and read
only when :func:`~adapter_matrix.memo.trusted_entry` trusts them, never through
a symbolic link. A damaged entry is a miss.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional, Sequence, Tuple, TypedDict, cast

from ..memo import digest, read_entry, stamp, write_entry
from .site import Site

if TYPE_CHECKING:  # the warm path (a stored verdict) never reads ELF
    from .elf import ElfFacts

__all__ = ["FORMAT", "facts_for", "environment_key"]

FORMAT = 1  # bumped when an entry's shape or the reader's answers change


def _folder(kind: str) -> str:
    from ..memo import cache_folder

    return cache_folder("binary", kind)


class ElfJson(TypedDict):
    """An ``elf/`` entry: :class:`~.elf.ElfFacts` as JSON (tuples are lists there)."""

    elf_class: int
    machine: int
    soname: str
    needed: Sequence[str]
    rpath: Sequence[str]
    runpath: Sequence[str]
    exports: str  # one string: parsed 5x faster than a list
    undefined: Sequence[Tuple[str, bool, str, str]]  # Undefined's fields
    versions_needed: Sequence[Tuple[str, Sequence[str]]]
    versions_defined: Sequence[str]


def _to_json(facts: ElfFacts) -> ElfJson:
    return {
        "elf_class": facts.elf_class,
        "machine": facts.machine,
        "soname": facts.soname,
        "needed": facts.needed,
        "rpath": facts.rpath,
        "runpath": facts.runpath,
        "exports": "\n".join(facts.exports),
        "undefined": facts.undefined,
        "versions_needed": facts.versions_needed,
        "versions_defined": facts.versions_defined,
    }


def _from_json(raw: ElfJson) -> ElfFacts:
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
    entry = os.path.join(_folder("elf"), digest((str(FORMAT), real, *map(str, st))) + ".json")
    raw = read_entry(entry)
    if isinstance(raw, dict):
        try:
            return _from_json(cast(ElfJson, raw))  # another shape raises below: a miss
        except (KeyError, TypeError, ValueError):
            pass
    from .elf import read_elf

    facts = read_elf(real)
    write_entry(entry, _to_json(facts))
    return facts


def environment_key(distribution: str, site_dir: str, site: Site, built_for: Optional[str]) -> str:
    """The entry of one environment's answer: the tool's version, the adapter and the
    folder it is installed in, the environment's import path, root and loader settings."""
    from .._version import __version__

    parts = (distribution, site_dir, site.root, site.ld_library_path, site.cache_tag, built_for or "", *site.paths)
    return os.path.join(_folder("verdicts"), digest((__version__, str(FORMAT), *parts)) + ".json")
