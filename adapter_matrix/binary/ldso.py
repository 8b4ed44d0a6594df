"""Where the dynamic loader will find a library, found the way ld.so finds it (glibc).

For a ``DT_NEEDED`` name of an object, in order (ld.so(8)):

1. a name with a slash is a path (``$ORIGIN`` expanded);
2. a library already in the process under that name: torch's own (``import torch``
   loads them before any adapter), or one loaded earlier for the same object;
3. ``DT_RPATH`` of the object, then of each object that loaded it, unless the object
   has ``DT_RUNPATH``;
4. ``LD_LIBRARY_PATH``;
5. ``DT_RUNPATH`` of the object;
6. the ld.so cache (``/etc/ld.so.cache``, what ``ldconfig`` wrote);
7. the system folders.

A candidate of another ELF class or machine (a 32-bit library in a 64-bit process) is
skipped, as the loader skips it. ``$ORIGIN``, ``$LIB`` and ``$PLATFORM`` are expanded.
For an image's unpacked root (``check --env ROOT``), absolute paths are read under that
root; the ld.so cache is the image's.
"""

from __future__ import annotations

import os
import struct
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

__all__ = ["Search", "Found", "ld_cache", "system_dirs", "expand"]

Fits = Callable[[str], bool]  # whether a candidate path is a library the object can use

# The machine's multiarch triplet folders and the plain ones: glibc's compiled-in
# trusted folders (Debian/Ubuntu use the triplets, Fedora/RHEL lib64).
_TRIPLETS = {62: "x86_64-linux-gnu", 183: "aarch64-linux-gnu", 3: "i386-linux-gnu", 21: "powerpc64le-linux-gnu"}


def system_dirs(machine: int, elf_class: int) -> List[str]:
    triplet = _TRIPLETS.get(machine)
    lib = "lib64" if elf_class == 64 else "lib"
    dirs = [f"/{lib}", f"/usr/{lib}"]
    if triplet:
        dirs = [f"/lib/{triplet}", f"/usr/lib/{triplet}", *dirs]
    return list(dict.fromkeys(dirs + ["/lib", "/usr/lib"]))


_CACHE_MAGIC = b"glibc-ld.so.cache1.1"
_OLD_MAGIC = b"ld.so-1.7.0"


def ld_cache(path: str = "/etc/ld.so.cache") -> Dict[str, List[str]]:
    """Library name -> paths, in the cache's order (the new format, alone or after the
    old one). An unreadable or unknown cache is empty: the system folders still count."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(64 << 20)
    except OSError:
        return {}
    start = 0
    if data.startswith(_OLD_MAGIC):  # libc5-era entries first, then the new table, 8-aligned
        (count,) = struct.unpack_from("<I", data, 12)
        start = (16 + count * 12 + 7) & ~7
    if data[start : start + len(_CACHE_MAGIC)] != _CACHE_MAGIC:
        return {}
    try:
        (count,) = struct.unpack_from("<I", data, start + 20)
        out: Dict[str, List[str]] = {}
        for i in range(count):
            _flags, key, value, _os, _hw = struct.unpack_from("<iIIIQ", data, start + 48 + 24 * i)
            k_end, v_end = data.index(b"\0", start + key), data.index(b"\0", start + value)
            name = data[start + key : k_end].decode("utf-8", "replace")
            out.setdefault(name, []).append(data[start + value : v_end].decode("utf-8", "replace"))
        return out
    except (struct.error, ValueError):
        return {}


def expand(entry: str, origin: str, elf_class: int, machine: int) -> str:
    """A RPATH/RUNPATH entry with ``$ORIGIN`` (the object's folder), ``$LIB`` and ``$PLATFORM`` filled in."""
    platform = {62: "x86_64", 183: "aarch64"}.get(machine, "")
    for token, value in (("ORIGIN", origin), ("LIB", "lib64" if elf_class == 64 else "lib"), ("PLATFORM", platform)):
        entry = entry.replace("${" + token + "}", value).replace("$" + token, value)
    return entry


class Found(NamedTuple):
    """Where a needed library was found (``path`` None: nowhere), and where the loader looked."""

    name: str
    path: Optional[str]
    how: str  # "path", "loaded", "RPATH", "LD_LIBRARY_PATH", "RUNPATH", "ld.so cache", "system"
    searched: Tuple[str, ...]


class Search:
    """The loader's search for one process: its ``LD_LIBRARY_PATH``, its ld.so cache,
    the image root it lives under (``/`` for this machine), and what is already loaded."""

    def __init__(self, root: str = "/", ld_library_path: str = "", loaded: Optional[Dict[str, str]] = None) -> None:
        self.root = root
        self.library_path = [p for p in ld_library_path.split(":") if p]
        self.loaded: Dict[str, str] = dict(loaded or {})
        self.cache_file = self.rooted("/etc/ld.so.cache")
        self._cache: Optional[Dict[str, List[str]]] = None

    def rooted(self, path: str) -> str:
        """``path`` as seen inside the root (an absolute path of the image lives under it)."""
        if self.root in ("", "/") or not os.path.isabs(path) or path.startswith(self.root.rstrip("/") + "/"):
            return path
        return os.path.join(self.root, path.lstrip("/"))

    @property
    def cache(self) -> Dict[str, List[str]]:
        if self._cache is None:
            self._cache = ld_cache(self.cache_file)
        return self._cache

    def find(
        self,
        name: str,
        origin: str,
        rpaths: Sequence[Sequence[str]],
        runpath: Sequence[str],
        elf_class: int,
        machine: int,
        fits: Fits,
    ) -> Found:
        """Find ``name`` needed by an object in folder ``origin``. ``rpaths`` are the RPATHs of
        the object and of each object that loaded it (empty when the object has a RUNPATH);
        ``fits(path)`` says whether a candidate has the object's ELF class and machine."""
        if "/" in name:
            path = self.rooted(expand(name, origin, elf_class, machine))
            return Found(name, path if fits(path) else None, "path", (path,))
        if name in self.loaded:
            return Found(name, self.loaded[name], "loaded", ())
        searched: List[str] = []
        steps: List[Tuple[str, Iterable[str]]] = [
            ("RPATH", [e for rpath in rpaths for e in rpath]),
            ("LD_LIBRARY_PATH", self.library_path),
            ("RUNPATH", runpath),
        ]
        for how, entries in steps:
            for entry in entries:
                folder = self.rooted(expand(entry, origin, elf_class, machine))
                searched.append(folder)
                candidate = os.path.join(folder, name)
                if fits(candidate):
                    return Found(name, candidate, how, tuple(searched))
        searched.append(self.cache_file)
        for path in self.cache.get(name, ()):
            candidate = self.rooted(path)
            if fits(candidate):
                return Found(name, candidate, "ld.so cache", tuple(searched))
        for folder in system_dirs(machine, elf_class):
            folder = self.rooted(folder)
            searched.append(folder)
            candidate = os.path.join(folder, name)
            if fits(candidate):
                return Found(name, candidate, "system", tuple(searched))
        return Found(name, None, "", tuple(searched))
