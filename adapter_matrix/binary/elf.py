"""What the dynamic loader reads from a shared library, read without running or importing it.

A small reader of ELF files (the format of Linux shared libraries): the dynamic section
(``DT_NEEDED``, ``DT_SONAME``, ``DT_RPATH``, ``DT_RUNPATH``), the dynamic symbol table
with its versions (``.gnu.version``, ``.gnu.version_r``, ``.gnu.version_d``), and
nothing else. It reads only the sections it needs, with ``pread``: libtorch_cpu.so is
400 MiB, its dynamic symbols 7 MiB. pyelftools would do the same and more, but it is a
dependency of 1.5 MB for the ~200 lines below, and ``check`` imports nothing it can avoid.

Big- and little-endian, 32- and 64-bit files are read alike. A file that is not ELF, or
is cut short, is an :class:`ElfError` with one line saying why.
"""

from __future__ import annotations

import os
import struct
from typing import Dict, List, NamedTuple, Optional, Tuple

__all__ = ["ElfError", "Undefined", "ElfFacts", "is_elf", "read_elf"]

_MAGIC = b"\x7fELF"
# dynamic-section tags, section types, symbol bindings (ELF gABI)
DT_NULL, DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 14, 15, 29
SHT_DYNAMIC, SHT_DYNSYM, SHT_GNU_VERDEF, SHT_GNU_VERNEED, SHT_GNU_VERSYM = 6, 11, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 1, 2, 10
STT_SECTION, STT_FILE = 3, 4
STV_DEFAULT, STV_PROTECTED = 0, 3
VERSYM_HIDDEN = 0x8000  # a non-default version (``name@VER``): bound only by a reference asking for it


class ElfError(ValueError):
    """The file is not an ELF file the loader could use, or is damaged: one line."""


class Undefined(NamedTuple):
    """A symbol the file needs from elsewhere. ``version`` and ``library`` are the
    version it asks for and the library that must define it (``GLIBCXX_3.4.30``,
    ``libstdc++.so.6``), both empty for an unversioned symbol (torch's, a vendor's)."""

    name: str
    weak: bool
    version: str = ""
    library: str = ""


class ElfFacts(NamedTuple):
    """What one file gives and asks the loader for. ``machine`` and ``elf_class`` decide
    which libraries the loader accepts for it (a 32-bit ``libc10.so`` is skipped)."""

    elf_class: int  # 32 or 64
    machine: int  # e_machine: 62 x86_64, 183 aarch64
    soname: str
    needed: Tuple[str, ...]
    rpath: Tuple[str, ...]
    runpath: Tuple[str, ...]
    exports: Tuple[str, ...]  # defined, visible symbols (any version)
    undefined: Tuple[Undefined, ...]
    versions_needed: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (library, versions it must define)
    versions_defined: Tuple[str, ...]  # GLIBCXX_3.4.30, ... (and the file's base name)


def is_elf(path: str) -> bool:
    """Whether ``path`` is a regular file starting with the ELF magic (never follows a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        import stat

        return stat.S_ISREG(os.fstat(fd).st_mode) and os.pread(fd, 4, 0) == _MAGIC
    except OSError:
        return False
    finally:
        os.close(fd)


class _Section(NamedTuple):
    kind: int
    offset: int
    size: int
    link: int
    entsize: int
    info: int


def _cstr(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    if offset >= len(table) or end < 0:
        raise ElfError(f"a name points outside its string table (offset {offset})")
    return table[offset:end].decode("utf-8", "replace")


class _Reader:
    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size
        head = os.pread(fd, 64, 0)
        if len(head) < 52 or head[:4] != _MAGIC:
            raise ElfError("it is not an ELF file")
        if head[4] not in (1, 2) or head[5] not in (1, 2):
            raise ElfError(f"unknown ELF class {head[4]} or data encoding {head[5]}")
        self.wide = head[4] == 2
        self.end = "<" if head[5] == 1 else ">"
        self.machine = struct.unpack_from(self.end + "H", head, 18)[0]
        if self.wide:
            shoff, shentsize, shnum = (
                struct.unpack_from(self.end + f, head, o)[0] for f, o in (("Q", 40), ("H", 58), ("H", 60))
            )
        else:
            shoff, shentsize, shnum = (
                struct.unpack_from(self.end + f, head, o)[0] for f, o in (("I", 32), ("H", 46), ("H", 48))
            )
        if shnum == 0 and shoff:  # more than 0xff00 sections: the count is in section 0's size
            shnum = self._section_at(shoff, shentsize).size
        self.sections = [self._section_at(shoff + i * shentsize, shentsize) for i in range(shnum)] if shoff else []

    def read(self, offset: int, size: int) -> bytes:
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ElfError(f"a section ({size} bytes at {offset}) lies outside the file: it is cut short")
        data = os.pread(self.fd, size, offset)
        if len(data) != size:
            raise ElfError("the file is shorter than its headers say")
        return data

    def _section_at(self, offset: int, entsize: int) -> _Section:
        raw = self.read(offset, entsize)
        if self.wide:
            _n, kind, _f, _a, off, size, link, info, _al, ent = struct.unpack_from(self.end + "IIQQQQIIQQ", raw)
        else:
            _n, kind, _f, _a, off, size, link, info, _al, ent = struct.unpack_from(self.end + "IIIIIIIIII", raw)
        return _Section(kind, off, size, link, ent, info)

    def first(self, kind: int) -> Optional[_Section]:
        return next((s for s in self.sections if s.kind == kind), None)

    def data(self, section: _Section) -> bytes:
        return self.read(section.offset, section.size)

    def strings(self, section: _Section) -> bytes:
        if section.link >= len(self.sections):
            raise ElfError("a section links to a string table that does not exist")
        return self.data(self.sections[section.link])


def _dynamic(r: _Reader) -> Tuple[str, List[str], List[str], List[str]]:
    section = r.first(SHT_DYNAMIC)
    if section is None:
        return "", [], [], []
    raw, names = r.data(section), r.strings(section)
    fmt = r.end + ("qQ" if r.wide else "iI")
    step = struct.calcsize(fmt)
    soname, needed, rpath, runpath = "", [], [], []
    for tag, value in struct.iter_unpack(fmt, raw[: len(raw) - len(raw) % step]):
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            needed.append(_cstr(names, value))
        elif tag == DT_SONAME:
            soname = _cstr(names, value)
        elif tag == DT_RPATH:
            rpath += [p for p in _cstr(names, value).split(":") if p]
        elif tag == DT_RUNPATH:
            runpath += [p for p in _cstr(names, value).split(":") if p]
    return soname, needed, rpath, runpath


def _versions_needed(r: _Reader) -> Tuple[Dict[int, Tuple[str, str]], List[Tuple[str, Tuple[str, ...]]]]:
    """The version index -> (version, library) map, and each library's versions."""
    section = r.first(SHT_GNU_VERNEED)
    if section is None:
        return {}, []
    raw, names = r.data(section), r.strings(section)
    by_index: Dict[int, Tuple[str, str]] = {}
    out = []
    offset = 0
    for _ in range(section.info or 1 << 16):
        if offset + 16 > len(raw):
            raise ElfError("its version needs (.gnu.version_r) are cut short")
        _v, count, file_off, aux, nxt = struct.unpack_from(r.end + "HHIII", raw, offset)
        library = _cstr(names, file_off)
        versions = []
        at = offset + aux
        for _ in range(count):
            if at + 16 > len(raw):
                raise ElfError("its version needs (.gnu.version_r) are cut short")
            _h, _fl, other, name_off, aux_next = struct.unpack_from(r.end + "IHHII", raw, at)
            version = _cstr(names, name_off)
            versions.append(version)
            by_index[other & 0x7FFF] = (version, library)
            if not aux_next:
                break
            at += aux_next
        out.append((library, tuple(versions)))
        if not nxt:
            break
        offset += nxt
    return by_index, out


def _versions_defined(r: _Reader) -> List[str]:
    section = r.first(SHT_GNU_VERDEF)
    if section is None:
        return []
    raw, names = r.data(section), r.strings(section)
    out = []
    offset = 0
    for _ in range(section.info or 1 << 16):
        if offset + 20 > len(raw):
            raise ElfError("its version definitions (.gnu.version_d) are cut short")
        _v, _fl, _ndx, count, _h, aux, nxt = struct.unpack_from(r.end + "HHHHIII", raw, offset)
        if count and offset + aux + 8 <= len(raw):
            out.append(_cstr(names, struct.unpack_from(r.end + "I", raw, offset + aux)[0]))
        if not nxt:
            break
        offset += nxt
    return out


def _symbols(r: _Reader, needs: Dict[int, Tuple[str, str]]) -> Tuple[List[str], List[Undefined]]:
    section = r.first(SHT_DYNSYM)
    if section is None:
        return [], []
    raw, names = r.data(section), r.strings(section)
    fmt = r.end + ("IBBHQQ" if r.wide else "IIIBBH")
    step = struct.calcsize(fmt)
    versym_section = r.first(SHT_GNU_VERSYM)
    versym = r.data(versym_section) if versym_section is not None else b""
    count = len(raw) // step
    indices = struct.unpack(r.end + f"{len(versym) // 2}H", versym[: len(versym) // 2 * 2]) if versym else ()
    exports: List[str] = []
    undefined: List[Undefined] = []
    find = names.find
    for i, fields in enumerate(struct.iter_unpack(fmt, raw[: count * step])):
        if r.wide:
            name_off, info, other, shndx = fields[0], fields[1], fields[2], fields[3]
        else:
            name_off, info, other, shndx = fields[0], fields[3], fields[4], fields[5]
        bind, kind = info >> 4, info & 0xF
        if not name_off or bind not in (STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE) or kind in (STT_SECTION, STT_FILE):
            continue
        end = find(b"\0", name_off)
        if end < 0:
            raise ElfError(f"symbol {i} names a string outside .dynstr")
        name = names[name_off:end].decode("utf-8", "replace")
        ver = indices[i] if i < len(indices) else 1
        if shndx == 0:
            version, library = needs.get(ver & 0x7FFF, ("", ""))
            undefined.append(Undefined(name, bind == STB_WEAK, version, library))
        elif other & 3 in (STV_DEFAULT, STV_PROTECTED):
            exports.append(name)
    return exports, undefined


def read_elf(path: str) -> ElfFacts:
    """The loader's view of the ELF file ``path``; raises :class:`ElfError` or :class:`OSError`."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        import stat

        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ElfError("it is not a regular file")
        r = _Reader(fd, info.st_size)
        soname, needed, rpath, runpath = _dynamic(r)
        by_index, needs = _versions_needed(r)
        exports, undefined = _symbols(r, by_index)
        defined = _versions_defined(r)
    except struct.error as exc:
        raise ElfError(f"its headers are damaged ({exc})") from None
    finally:
        os.close(fd)
    return ElfFacts(
        64 if r.wide else 32,
        r.machine,
        soname,
        tuple(needed),
        tuple(rpath),
        tuple(runpath),
        tuple(exports),
        tuple(undefined),
        tuple(needs),
        tuple(defined),
    )
