"""The binary check: will the loader accept an installed adapter's libraries beside the
installed torch? Decided from the files alone, without importing either.

For each ELF file of the adapter's distribution (its ``RECORD``; and the C++ core that
:mod:`adapter_matrix.device.build` compiled for this torch, when the adapter builds one):

- every ``DT_NEEDED`` library, and theirs in turn, is found as ld.so finds it
  (:mod:`.ldso`); torch's own libraries count as loaded (``import torch`` comes first);
- every version it needs from a system library (``GLIBCXX_3.4.30`` from libstdc++.so.6)
  must be one the library found defines;
- every unversioned, non-weak symbol it needs must be exported by torch's libraries, the
  adapter's own, or a library it loads; Python's C API (``Py*``) comes from the
  interpreter. A missing symbol in torch's namespaces (``torch::``, ``c10::``, ``at::``,
  ``caffe2::``) is torch's to export: the adapter was built for another torch;
- its C++ standard library ABI (``_GLIBCXX_USE_CXX11_ABI``: ``__cxx11`` in its names)
  is compared with torch's, which names a missing ``std::string`` symbol's real cause.

A plugin of a plugin (an op library that links its adapter's own library, as torchvision_npu
links torch_npu's) is judged the same way against the adapter installed beside it: a symbol the
adapter's library does not export is named with the adapter release installed and the one the
plugin was built against (its ``Requires-Dist`` on the adapter, ``tiny-openreg==0.0.2``).

Versioned symbols (libc's, libstdc++'s) are judged by their version alone: the version
names the library that must define them, and that library defines every symbol of it.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple, TypedDict, cast

from .. import limits
from ..check.binary import TIED_TO_A_MINOR, BuiltFor, built_for_torch, minor_of
from ..memo import load_stamped, stamp, store_stamped
from ..names import escaped_name
from .elf import ElfError, ElfFacts
from .ldso import Found, Search
from .site import Site
from .store import environment_key, facts_for

if TYPE_CHECKING:
    from ..memo import Stamp

__all__ = ["Site", "audit", "TORCH_NAMESPACES", "cxx11_abi"]

# Where torch's own symbols live: the first component of a nested name (N5torch..., N3c10...).
TORCH_NAMESPACES = re.compile(r"N[rVK]*(?:5torch|3c10|2at|6caffe2)\d|^_Z(?:5torch|3c10|2at)\d|^THP")
_NEW_ABI = ("St7__cxx11", "B5cxx11")  # std::__cxx11:: types, [abi:cxx11] tags
# The old ABI's std::string (Ss) and std::list in signatures; and libstdc++'s own members of them.
_OLD_ABI = re.compile(r"^_ZN[K]?Ss|^_ZNSs|[RPK]Ss|Ss[EI]|^_ZNSt5_List")
_PYTHON_API = ("Py", "_Py")  # provided by the interpreter, which no extension names in DT_NEEDED
SHOWN_SYMBOLS = 3  # missing symbols named in a reason; the JSON lists them all


def cxx11_abi(names: Iterable[str]) -> Optional[int]:
    """1 if the names use the C++11 std::string ABI, 0 if the old one, None when no name says."""
    old = False
    for name in names:
        if any(mark in name for mark in _NEW_ABI):
            return 1
        if not old and _OLD_ABI.search(name):
            old = True
    return 0 if old else None


class _Env:
    """One audit's state: the stamps it read things at, the ELF facts it read."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.deps: Dict[str, Stamp] = {}
        self.facts: Dict[str, Optional[ElfFacts]] = {}
        self.errors: Dict[str, str] = {}
        self.headers: Dict[str, Optional[Tuple[int, int]]] = {}

    def note(self, path: str) -> None:
        if path not in self.deps:
            self.deps[path] = stamp(path)

    def read(self, path: str) -> Optional[ElfFacts]:
        real = os.path.realpath(path)
        if real not in self.facts:
            self.note(path)
            self.note(real)
            try:
                self.facts[real] = facts_for(real)
            except (OSError, ElfError) as exc:
                self.facts[real] = None
                self.errors[real] = str(exc) if isinstance(exc, ElfError) else (exc.strerror or str(exc))
        return self.facts[real]

    def header(self, path: str) -> Optional[Tuple[int, int]]:
        """(ELF class, machine) of ``path``, or None when it is no ELF file: the loader's test of a candidate."""
        if path not in self.headers:
            self.note(path)
            value = None
            try:
                with open(path, "rb") as fh:
                    head = fh.read(20)
                if len(head) == 20 and head[:4] == b"\x7fELF" and head[4] in (1, 2):
                    value = (
                        64 if head[4] == 2 else 32,
                        int.from_bytes(head[18:20], "little" if head[5] == 1 else "big"),
                    )
            except OSError:
                pass
            self.headers[path] = value
        return self.headers[path]


def _record_files(site_dir: str, info: str) -> List[str]:
    """The installed files of a distribution that may be shared libraries (``*.so``, ``*.so.N``)."""
    try:
        with open(os.path.join(info, "RECORD"), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        path = line.rsplit(",", 2)[0].strip('"') if line.count(",") >= 2 else line
        base = os.path.basename(path)
        if base.endswith(".so") or ".so." in base:
            out.append(os.path.normpath(os.path.join(site_dir, path)))
    return out


def _metadata(info: str) -> Tuple[str, List[str]]:
    """(version, Requires-Dist lines) of a dist-info folder."""
    version, requires = "", []
    try:
        with open(os.path.join(info, "METADATA"), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    break
                if line.startswith("Version:"):
                    version = line.split(":", 1)[1].strip()
                elif line.startswith("Requires-Dist:"):
                    requires.append(line.split(":", 1)[1].strip())
    except OSError:
        pass
    return version, requires


class _Linked(NamedTuple):
    """A distribution the checked one requires whose libraries it may link (its adapter)."""

    name: str
    installed: str
    requirement: str  # as the checked distribution's metadata says it: tiny-openreg==0.0.2
    built_against: Optional[str]  # the exact version that requirement pins, if it pins one


def _linked(env: _Env, requires: Sequence[str]) -> Dict[str, _Linked]:
    """The shared libraries of the distributions ``requires`` names (torch's are torch's), by
    real path: a library of the closure found there is that distribution's, and the
    requirement says which release of it the checked one was built against."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..check.facts import distribution_folder
    from ..names import canonical_name

    out: Dict[str, _Linked] = {}
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonical_name(req.name)
        if name == "torch" or (req.marker is not None and "extra" in str(req.marker)):
            continue
        found = distribution_folder(name, env.site.paths)
        if found is None:
            continue
        site_dir, info = found
        env.note(os.path.join(info, "RECORD"))
        version, _ = _metadata(info)
        exact = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        linked = _Linked(name, version, str(req), exact[0] if len(exact) == 1 else None)
        for path in _record_files(site_dir, info):
            out[os.path.realpath(path)] = linked
    return out


def _torch_build(torch_dir: str, fallback: str) -> Tuple[str, str]:
    """torch's ``__version__`` and ``git_version`` as its ``version.py`` says (what a build of
    the device core is named by): PyPI's CUDA wheels carry ``2.1.2+cu121`` there and ``2.1.2``
    in their metadata. ``fallback`` (the metadata's) when the file says none."""
    try:
        with open(os.path.join(torch_dir, "version.py"), encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return fallback, ""
    version = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
    git = re.search(r"^git_version\s*=\s*['\"]([0-9a-fA-F]+)['\"]", text, re.M)
    return (version.group(1) if version else fallback), (git.group(1) if git else "")


def _package_dirs(dist: str, site_dir: str, info: str) -> List[str]:
    """The adapter's package folders, found without importing: its top-level names
    (top_level.txt, else the distribution's name) under the site folder, or where an
    editable install points (the folders its ``.pth`` file lists, its finder's ``MAPPING``)."""
    try:
        with open(os.path.join(info, "top_level.txt"), encoding="utf-8") as fh:
            names = [n.strip() for n in fh if n.strip()]
    except OSError:
        names = []
    names = names or [escaped_name(dist)]
    roots, mapping = [site_dir], {}
    try:
        with open(os.path.join(info, "RECORD"), encoding="utf-8", errors="replace") as fh:
            record = [line.split(",", 1)[0] for line in fh]
    except OSError:
        record = []
    for entry in record:
        path = os.path.join(site_dir, entry)
        try:
            if entry.endswith(".pth"):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    roots += [line.strip() for line in fh if line.strip() and not line.startswith(("import", "#"))]
            elif entry.endswith("_finder.py"):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    m = re.search(r"^MAPPING\b[^=]*=\s*(\{.*?\})\s*$", fh.read(), re.M)
                if m:
                    import ast

                    mapping.update(ast.literal_eval(m.group(1)))
        except (OSError, ValueError, SyntaxError):
            continue
    out = []
    for name in names:
        if isinstance(mapping.get(name), str) and os.path.isdir(mapping[name]):
            out.append(mapping[name])
            continue
        out += [os.path.join(r, name) for r in roots if os.path.isdir(os.path.join(r, name))][:1]
    return out


class _Builds(NamedTuple):
    """The C++ cores adapter-matrix compiled from an adapter's ``csrc/``, and what their
    manifest recorded: ``recorded`` is the torch a build named by ``$ADAPTER_MATRIX_DEVICE_LIBRARY``
    was compiled against (the cache's builds are found by this torch's name)."""

    libraries: List[str]
    notes: List[str]
    recorded: Optional[str] = None
    manifest: Optional[str] = None


_BUILDS_AT_IMPORT = re.compile(r"\bensure_built\s*\(")  # adapter_matrix.device.build's entry, as shims call it
_SOURCES = (".cpp", ".cc", ".cxx", ".cu")


def _compiled_at_import(env: _Env, package: str) -> bool:
    """Whether ``package`` has a just-in-time core: C++ sources in its ``csrc/`` that its own
    Python compiles at the first import with adapter-matrix's build (``ensure_built``, as the
    reference adapter's activation does). A ``csrc/`` a wheel ships beside its compiled
    libraries (a CppExtension's sources, an OpenReg-shaped project's stub) is not one."""
    csrc = os.path.join(package, "csrc")
    try:
        names = os.listdir(csrc)
    except OSError:
        return False
    env.note(csrc)
    if not any(n.endswith(_SOURCES) for n in names):
        return False
    read = 0
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d not in ("csrc", "__pycache__", "tests") and not d.startswith("."))
        for name in sorted(n for n in files if n.endswith(".py")):
            path = os.path.join(folder, name)
            env.note(path)
            read += 1
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            if "adapter_matrix" in text and _BUILDS_AT_IMPORT.search(text):
                return True
            if read >= limits.MAX_MODULES:
                return False
    return False


def _device_builds(env: _Env, packages: Sequence[str], torch_version: str, torch_git: str) -> _Builds:
    """The C++ cores adapter-matrix compiled for this torch from the packages' ``csrc/``
    (:mod:`adapter_matrix.device.build`). Not one yet is a note: the core is compiled at the
    first import."""
    libraries: List[str] = []
    notes: List[str] = []
    explicit = os.environ.get("ADAPTER_MATRIX_DEVICE_LIBRARY")
    sources = [p for p in packages if _compiled_at_import(env, p)]
    if not sources:
        return _Builds(libraries, notes)
    if explicit:
        import json

        manifest = os.path.join(explicit, "manifest.json")
        env.note(manifest)
        try:
            with open(manifest, encoding="utf-8") as fh:
                recorded = json.load(fh)
            libraries.append(os.path.join(explicit, recorded["library"]))
        except (OSError, ValueError, KeyError, TypeError):
            notes.append(f"$ADAPTER_MATRIX_DEVICE_LIBRARY={explicit} has no readable manifest.json")
            return _Builds(libraries, notes)
        torch = recorded.get("torch") if isinstance(recorded, dict) else None
        return _Builds(libraries, notes, torch if isinstance(torch, str) else None, manifest)
    from ..device.build import Extension, builds_root, source_hash

    root = str(builds_root())
    env.note(root)
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        entries = []
    prefix_tail = f"-torch-{torch_version}-g{torch_git[:10]}-{env.site.cache_tag}-src"
    for package in sources:
        top = os.path.basename(package.rstrip("/"))
        for entry in entries:
            name, sep, digest = entry.partition(prefix_tail)
            if not sep or not name.startswith(top + "_") or "." in digest:
                continue
            if source_hash(Extension(name, __import__("pathlib").Path(package, "csrc")))[:12] != digest:
                continue
            library = os.path.join(root, entry, f"{name}.so")
            env.note(os.path.join(root, entry))
            if os.path.isfile(library):
                libraries.append(library)
        if not libraries:
            notes.append(
                f"{top}'s C++ core is compiled at its first import; none is built for torch {torch_version} yet"
                " (`adapter-matrix build` builds it)"
            )
    return _Builds(libraries, notes)


class _Torch(NamedTuple):
    version: str
    libraries: Dict[str, str]  # soname and file name -> path
    exports: Set[str]
    abi: Optional[int]
    lib_dir: str


def _torch(env: _Env) -> Optional[_Torch]:
    from ..check.facts import distribution_folder

    found = distribution_folder("torch", env.site.paths)
    if found is None:
        return None
    site_dir, info = found
    env.note(os.path.join(info, "RECORD"))
    version, _ = _metadata(info)
    lib_dir = os.path.join(site_dir, "torch", "lib")
    env.note(lib_dir)
    libraries: Dict[str, str] = {}
    exports: Set[str] = set()
    c10: Sequence[str] = ()
    try:
        names = sorted(os.listdir(lib_dir))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(lib_dir, name)
        if not (name.endswith(".so") or ".so." in name) or env.header(path) is None:
            continue
        facts = env.read(path)
        if facts is None:
            continue
        libraries[name] = path
        if facts.soname:
            libraries.setdefault(facts.soname, path)
        exports.update(facts.exports)
        if name.startswith("libc10.so"):
            c10 = facts.exports
    return _Torch(version, libraries, exports, cxx11_abi(c10) if c10 else None, lib_dir)


class _Closure(NamedTuple):
    found: List[Tuple[str, Found, Tuple[str, ...]]]  # (needing object, where found, chain of names)
    objects: Dict[str, ElfFacts]  # every library in the closure, by path
    providers: Dict[Tuple[str, str], str]  # (object path, needed name) -> path


def _closure(env: _Env, path: str, facts: ElfFacts, search: Search) -> _Closure:
    """Every library ``path`` makes the loader load, found as it would find them."""
    found: List[Tuple[str, Found, Tuple[str, ...]]] = []
    objects: Dict[str, ElfFacts] = {path: facts}
    providers: Dict[Tuple[str, str], str] = {}
    by_name: Dict[str, str] = {}  # a library loaded once is reused under its name
    queue: List[Tuple[str, ElfFacts, Tuple[Tuple[str, ...], ...], Tuple[str, ...]]] = [(path, facts, (), ())]
    fits = lambda candidate: env.header(candidate) == (facts.elf_class, facts.machine)
    while queue:
        obj, obj_facts, loader_rpaths, chain = queue.pop(0)
        rpaths = () if obj_facts.runpath else ((obj_facts.rpath,) + loader_rpaths)
        for name in obj_facts.needed:
            if name in by_name:
                providers[(obj, name)] = by_name[name]
                continue
            where = search.find(
                name, os.path.dirname(obj), rpaths, obj_facts.runpath, facts.elf_class, facts.machine, fits
            )
            for folder in where.searched:
                env.note(folder)
            found.append((obj, where, chain))
            if where.path is None:
                continue
            providers[(obj, name)] = by_name[name] = where.path
            if where.how == "loaded" or where.path in objects or len(objects) >= limits.MAX_LIBRARIES:
                continue
            dep = env.read(where.path)
            if dep is not None:
                objects[where.path] = dep
                queue.append((where.path, dep, rpaths if not obj_facts.runpath else loader_rpaths, chain + (name,)))
    return _Closure(found, objects, providers)


class SymbolJson(TypedDict):
    name: str
    demangled: str


class LinkedJson(TypedDict):
    distribution: str
    installed: str
    built_against: Optional[str]


class _ProblemKeys(TypedDict):
    kind: str
    file: str
    subject: str
    message: str
    fix: str


class BinaryProblemJson(_ProblemKeys, total=False):
    """A problem as the audit writes it: the keys every kind has, then its kind's own
    (:class:`~adapter_matrix.answer.BinaryProblem` is the section read back)."""

    built_for: str
    symbols: List[SymbolJson]
    linked: LinkedJson
    searched: List[str]
    missing: List[str]


class FileJson(TypedDict):
    file: str
    cxx11_abi: Optional[int]
    needed: Dict[str, Optional[str]]


class AuditJson(TypedDict):
    """The ``binary`` section as the audit writes and stores it (read back as
    :class:`~adapter_matrix.answer.BinarySection` by :mod:`.section`)."""

    ok: bool
    distribution: str
    version: Optional[str]
    torch: Optional[str]
    torch_cxx11_abi: Optional[int]
    built_for: Optional[str]
    built_for_line: Optional[str]
    files: List[FileJson]
    problems: List[BinaryProblemJson]
    notes: List[str]


def _problem(
    kind: str,
    file: str,
    subject: str,
    message: str,
    fix: str,
    *,
    built_for: Optional[str] = None,
    symbols: Optional[List[SymbolJson]] = None,
    linked: Optional[LinkedJson] = None,
    searched: Optional[List[str]] = None,
    missing: Optional[List[str]] = None,
) -> BinaryProblemJson:
    """A problem with its kind's own key (at most one is given, written after the common ones)."""
    problem: BinaryProblemJson = {"kind": kind, "file": file, "subject": subject, "message": message, "fix": fix}
    if built_for is not None:
        problem["built_for"] = built_for
    if symbols is not None:
        problem["symbols"] = symbols
    if linked is not None:
        problem["linked"] = linked
    if searched is not None:
        problem["searched"] = searched
    if missing is not None:
        problem["missing"] = missing
    return problem


def _describe_search(where: Found, site: Site) -> str:
    shown = list(dict.fromkeys(where.searched))
    text = ", ".join(shown[:6]) + (f" and {len(shown) - 6} more" if len(shown) > 6 else "")
    ld = "LD_LIBRARY_PATH is unset" if not site.ld_library_path else f"LD_LIBRARY_PATH={site.ld_library_path}"
    return f"searched {text}; {ld}"


class _File(NamedTuple):
    """The library being checked, as its problems name it."""

    label: str  # "<distribution> <version>"
    display: str  # its path as the report shows it
    path: str
    facts: ElfFacts

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


class _Symbols:
    """Missing symbols as a message shows them (the first few, readable) and the JSON lists them."""

    def __init__(self, names: List[str]) -> None:
        from .demangle import demangle_all

        self.readable = demangle_all(names) if names else {}

    def shown(self, symbols: List[str]) -> str:
        text = ", ".join(f"`{self.readable[s]}`" for s in symbols[:SHOWN_SYMBOLS])
        more = len(symbols) - SHOWN_SYMBOLS
        return text + (f" and {more} more symbol{'s' if more > 1 else ''}" if more > 0 else "")

    def listed(self, symbols: List[str]) -> List[SymbolJson]:
        return [{"name": s, "demangled": self.readable[s]} for s in symbols]


def _missing_libraries(env: _Env, checked: _File, closure: _Closure) -> List[BinaryProblemJson]:
    """A library of the closure the loader cannot find."""
    problems: List[BinaryProblemJson] = []
    for _obj, where, chain in closure.found:
        if where.path is not None:
            continue
        through = f" (through {' → '.join(chain)})" if chain else ""
        problems.append(
            _problem(
                "missing-library",
                checked.display,
                where.name,
                f"{checked.label}'s {checked.name} needs {where.name}{through}, which the loader cannot find "
                f"({_describe_search(where, env.site)})",
                f"install what provides {where.name}, or add its folder to LD_LIBRARY_PATH (a vendor toolkit's set_env.sh does)",
                searched=list(where.searched),
            )
        )
    return problems


def _symbol_versions(env: _Env, checked: _File, closure: _Closure, torch: Optional[_Torch]) -> List[BinaryProblemJson]:
    """A symbol version (``GLIBCXX_3.4.30``) an object of the closure needs from a library
    that does not define it; torch's own libraries are torch's business."""
    problems: List[BinaryProblemJson] = []
    torch_paths = set(torch.libraries.values()) if torch else set()
    for obj, obj_facts in closure.objects.items():
        if obj in torch_paths:
            continue
        for library, versions in obj_facts.versions_needed:
            provider = closure.providers.get((obj, library))
            provider_facts = closure.objects.get(provider or "") or (env.read(provider) if provider else None)
            if provider_facts is None:
                continue
            missing = [v for v in versions if v not in provider_facts.versions_defined]
            if missing:
                family = re.sub(r"[_.\d]+$", "", missing[0])
                have = sorted(
                    (v for v in provider_facts.versions_defined if v.startswith(family + "_")), key=_version_key
                )
                newest = f"; it defines {family} up to {have[-1].split('_', 1)[1]}" if have else ""
                problems.append(
                    _problem(
                        "symbol-version",
                        checked.display,
                        library,
                        f"{checked.label}'s {os.path.basename(obj)} needs {', '.join(sorted(missing, key=_version_key))} "
                        f"from {library}, but the one the loader finds ({provider}) is older{newest}",
                        f"use a newer {library} (a newer system or compiler runtime) or a build of the adapter made on an older system",
                        missing=missing,
                    )
                )
    return problems


def _missing_symbols(
    checked: _File, closure: _Closure, torch: Optional[_Torch], own_exports: Set[str]
) -> Tuple[List[str], List[str]]:
    """The unversioned, non-weak symbols nothing loaded exports: (torch's, the others)."""
    available = set(own_exports)
    for obj, obj_facts in closure.objects.items():
        if obj != checked.path:
            available.update(obj_facts.exports)
    if torch is not None:
        available |= torch.exports
    missing_torch: List[str] = []
    missing_other: List[str] = []
    for symbol in checked.facts.undefined:
        if symbol.weak or symbol.version or symbol.name.startswith(_PYTHON_API) or symbol.name in available:
            continue
        (missing_torch if torch is not None and TORCH_NAMESPACES.search(symbol.name) else missing_other).append(
            symbol.name
        )
    return missing_torch, missing_other


def _torch_symbols(
    checked: _File,
    torch: _Torch,
    missing: List[str],
    symbols: _Symbols,
    abi: Optional[int],
    built_for: Optional[str],
    declared: Optional[BuiltFor],
) -> BinaryProblemJson:
    """The problem of symbols torch does not export: the other C++ ABI when the ABIs differ,
    else a build for another torch (the one it was built for, when known)."""
    torch_label = f"torch {torch.version}"
    if abi is not None and torch.abi is not None and abi != torch.abi:
        return _problem(
            "cxx11-abi",
            checked.display,
            f"_GLIBCXX_USE_CXX11_ABI={abi}",
            f"{checked.label}'s {checked.name} was built with _GLIBCXX_USE_CXX11_ABI={abi}, but {torch_label} "
            f"uses {torch.abi}: it needs {symbols.shown(missing)}, which {torch_label} exports only in the other ABI",
            f"install a build of the adapter made with _GLIBCXX_USE_CXX11_ABI={torch.abi}, as torch {torch.version} is"
            + (" (or torch's cxx11.abi variant)" if torch.abi == 0 else ""),
            symbols=symbols.listed(missing),
        )
    line = declared.line if declared is not None else None
    if built_for and built_for != torch.version:
        built = f"; it was built for torch {built_for}"
        fix = f"install the torch it was built for (pip install 'torch=={built_for}'), or a build of the adapter for torch {torch.version}"
    elif declared is not None and line is not None and line != minor_of(torch.version):
        built = f"; it was built for torch {line} ({declared.requirement} in its metadata)"
        fix = f"install the torch it was built for (pip install '{declared.requirement}'), or a build of the adapter for torch {torch.version}"
    else:
        built = "; it was built for another torch"
        fix = f"install a build of the adapter made for torch {torch.version}"
    return _problem(
        "missing-symbol",
        checked.display,
        missing[0],
        f"{checked.label}'s {checked.name} needs {symbols.shown(missing)}, which {torch_label} does not export{built}",
        fix,
        symbols=symbols.listed(missing),
    )


def _other_symbols(
    checked: _File, closure: _Closure, missing: List[str], symbols: _Symbols, linked: Dict[str, _Linked]
) -> BinaryProblemJson:
    """The problem of symbols neither torch nor a loaded library exports: a plugin of a plugin
    whose adapter is another release than it was built against, else a library of another build."""
    below = [
        (os.path.basename(p), linked[os.path.realpath(p)])
        for p in closure.objects
        if p != checked.path and os.path.realpath(p) in linked
    ]
    if below:
        # a plugin of a plugin: the library it links is its adapter's, of another release
        dist, plugin = below[0][1], checked.label.split(" ")[0]  # the label is "<distribution> <version>"
        libraries = ", ".join(sorted({lib for lib, owner in below if owner == dist}))
        if dist.built_against and dist.built_against != dist.installed:
            against = f"it was built against {dist.name} {dist.built_against} ({dist.requirement} in its metadata)"
            fix = (
                f"install {dist.name} {dist.built_against} (pip install '{dist.name}=={dist.built_against}'), "
                f"or a build of {plugin} made against {dist.name} {dist.installed}"
            )
        else:
            against = f"it was built against another release of {dist.name} ({dist.requirement} in its metadata)"
            fix = f"install a build of {plugin} made against {dist.name} {dist.installed}"
        return _problem(
            "missing-symbol",
            checked.display,
            missing[0],
            f"{checked.label}'s {checked.name} needs {symbols.shown(missing)}, which {dist.name} "
            f"{dist.installed}'s {libraries} does not export: {against}",
            fix,
            symbols=symbols.listed(missing),
            linked={"distribution": dist.name, "installed": dist.installed, "built_against": dist.built_against},
        )
    loads = sorted({os.path.basename(p) for p in closure.objects if p != checked.path})
    return _problem(
        "missing-symbol",
        checked.display,
        missing[0],
        f"{checked.label}'s {checked.name} needs {symbols.shown(missing)}, which neither torch nor any library "
        f"it loads exports ({', '.join(loads) or 'it loads none'})",
        "install the build of the library it was linked against",
        symbols=symbols.listed(missing),
    )


def _check_file(
    env: _Env,
    checked: _File,
    torch: Optional[_Torch],
    own_exports: Set[str],
    search: Search,
    built_for: Optional[str],
    declared: Optional[BuiltFor] = None,
    linked: Optional[Dict[str, _Linked]] = None,
) -> Tuple[FileJson, List[BinaryProblemJson]]:
    """One file's entry in the report and its problems (``built_for``: the exact torch it was
    built for, if known; ``declared``: its metadata's requirement on torch)."""
    closure = _closure(env, checked.path, checked.facts, search)
    problems = _missing_libraries(env, checked, closure) + _symbol_versions(env, checked, closure, torch)
    missing_torch, missing_other = _missing_symbols(checked, closure, torch, own_exports)
    facts = checked.facts
    abi = cxx11_abi(list(facts.exports) + [u.name for u in facts.undefined])
    symbols = _Symbols(missing_torch + missing_other)
    if missing_torch and torch is not None:
        problems.append(_torch_symbols(checked, torch, missing_torch, symbols, abi, built_for, declared))
    # (with a library missing, its symbols are missing too: that library is the problem)
    if missing_other and not any(where.path is None for _o, where, _c in closure.found):
        problems.append(_other_symbols(checked, closure, missing_other, symbols, linked or {}))
    entry: FileJson = {
        "file": checked.display,
        "cxx11_abi": abi,
        "needed": {where.name: where.path for obj, where, _ in closure.found if obj == checked.path},
    }
    return entry, problems


def _tied(
    distribution: str, label: str, torch_version: str, declared: BuiltFor, file: str, said: str
) -> List[BinaryProblemJson]:
    """The problem of a binary built for another torch minor than the installed one, which no
    symbol shows (torch 2.13 renumbered the dispatch keys: a build for 2.13 beside 2.12 imports,
    then its first op finds no kernel); none when the minors agree. ``file`` says which torch it
    was built for (its METADATA, a build's manifest.json), as ``said`` words it."""
    installed = minor_of(torch_version)
    if declared.line is None or declared.line == installed:
        return []
    return [
        _problem(
            "built-for",
            file,
            declared.requirement,
            f"{label} was built for torch {declared.line} ({said}), "
            f"but torch {torch_version} is installed: {TIED_TO_A_MINOR}",
            f"install the build of {distribution} for torch {installed}, or the torch it was built for "
            f"(pip install '{declared.requirement}')",
            built_for=declared.line,
        )
    ]


def _version_key(version: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


def _editable_files(env: _Env, packages: Sequence[str]) -> List[str]:
    """The shared libraries of an editable install: in its source tree, not its RECORD."""
    files: List[str] = []
    for package in packages:
        for folder, dirs, names in os.walk(package):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "build")]
            files += [
                os.path.join(folder, n)
                for n in names
                if (n.endswith(".so") or ".so." in n) and env.header(os.path.join(folder, n))
            ]
    return files


class _Libraries(NamedTuple):
    """The adapter's libraries to check, and what they were built for as far as a file says."""

    files: List[str]
    displays: Dict[str, str]  # path -> as the report shows it
    built_for: Optional[str]  # the exact torch
    tied: Optional[Tuple[BuiltFor, str, str]]  # (what it was built for, the file that says so, how it says so)
    notes: List[str]


def _libraries(
    env: _Env,
    distribution: str,
    located: Tuple[str, str],
    torch: Optional[_Torch],
    declared: Optional[BuiltFor],
    built_for: Optional[str],
) -> _Libraries:
    """The installed libraries (the RECORD's, else an editable install's tree) and the C++
    cores adapter-matrix compiled for this torch from the adapter's sources."""
    site_dir, info = located
    files = [p for p in _record_files(site_dir, info) if env.header(p) is not None]
    packages = _package_dirs(distribution, site_dir, info)
    notes: List[str] = []
    if not files:  # an editable install: its libraries are in the source tree
        files = _editable_files(env, packages)
    displays = {p: os.path.relpath(p, site_dir) if p.startswith(site_dir + os.sep) else p for p in files}
    tied: Optional[Tuple[BuiltFor, str, str]] = None
    if declared is not None and declared.line is not None and files:  # a binary: its own libraries
        said = f"its metadata requires {declared.requirement}"
        tied = declared, os.path.relpath(os.path.join(info, "METADATA"), site_dir), said
    if torch is None:
        notes.append("torch is not installed: the adapter's symbols were not checked")
        return _Libraries(files, displays, built_for, tied, notes)
    builds = _device_builds(env, packages, *_torch_build(os.path.dirname(torch.lib_dir), torch.version))
    notes += builds.notes
    for library in builds.libraries:
        files.append(library)
        displays[library] = library
        # compiled here for this very torch, unless the build's manifest records another
        built_for = built_for or builds.recorded or torch.version
    if builds.recorded and builds.manifest and tied is None:
        recorded = BuiltFor(f"torch=={builds.recorded}", minor_of(builds.recorded), builds.recorded)
        tied = recorded, builds.manifest, f"its build's manifest.json records torch {builds.recorded}"
    return _Libraries(files, displays, built_for, tied, notes)


def _read_all(
    env: _Env, distribution: str, label: str, libraries: _Libraries
) -> Tuple[Dict[str, ElfFacts], Set[str], List[BinaryProblemJson]]:
    """Each library's ELF facts, every symbol the adapter's own libraries export, and a
    problem for each library that cannot be read."""
    own: Set[str] = set()
    readable: Dict[str, ElfFacts] = {}
    problems: List[BinaryProblemJson] = []
    for path in libraries.files:
        facts = env.read(path)
        if facts is None:
            problems.append(
                _problem(
                    "unreadable",
                    libraries.displays[path],
                    path,
                    f"{label}'s {os.path.basename(path)} cannot be read as a shared library: {env.errors.get(os.path.realpath(path), 'unknown error')}",
                    f"reinstall {distribution}",
                )
            )
            continue
        readable[path] = facts
        own.update(facts.exports)
    return readable, own, problems


def audit(
    distribution: str,
    site: Optional[Site] = None,
    *,
    built_for: Optional[str] = None,
    use_cache: bool = True,
) -> Optional[AuditJson]:
    """The binary check of the installed ``distribution`` in ``site`` (default: this
    process), as the ``binary`` section of ``check --json``; None when it is not installed.

    ``built_for`` is the torch the adapter was built for when the matrix says so (its
    release pins one torch); the adapter's own metadata pin wins over it.
    """
    from ..check.facts import distribution_folder

    site = site or Site.running()
    located = distribution_folder(distribution, site.paths)
    if located is None:
        return None
    site_dir, info = located
    key = environment_key(distribution, site_dir, site, built_for)
    if use_cache:
        cached = load_stamped(key)
        if cached is not None:  # the JSON this audit stored; nothing it was decided from changed
            return cast(AuditJson, cached)
    env = _Env(site)
    env.note(site_dir)
    env.note(os.path.join(info, "RECORD"))
    env.note(os.path.join(info, "METADATA"))
    version, requires = _metadata(info)
    label = f"{distribution} {version}".strip()
    torch = _torch(env)
    declared = built_for_torch(requires)
    libraries = _libraries(
        env, distribution, located, torch, declared, (declared.exact if declared else None) or built_for
    )
    files, tied, notes = libraries.files, libraries.tied, libraries.notes
    linked = _linked(env, requires) if files else {}
    search = Search(site.root, site.ld_library_path, torch.libraries if torch else {})
    env.note(search.cache_file)
    readable, own, problems = _read_all(env, distribution, label, libraries)
    entries = []
    for path, facts in readable.items():
        checked = _File(label, libraries.displays[path], path, facts)
        entry, found = _check_file(env, checked, torch, own, search, libraries.built_for, declared, linked)
        entries.append(entry)
        problems += found
    named = any(p["kind"] == "missing-symbol" and TORCH_NAMESPACES.search(p["subject"]) for p in problems)
    if torch is not None and tied is not None and not named:  # a missing torch symbol names it already
        problems = _tied(distribution, label, torch.version, *tied) + problems
    if not files:
        notes.append(f"{distribution} installs no shared library: nothing for the loader to check")
    report: AuditJson = {
        "ok": not problems,
        "distribution": distribution,
        "version": version or None,
        "torch": torch.version if torch else None,
        "torch_cxx11_abi": torch.abi if torch else None,
        "built_for": libraries.built_for,
        "built_for_line": tied[0].line if tied is not None else declared.line if declared is not None else None,
        "files": entries,
        "problems": problems,
        "notes": notes,
    }
    if use_cache:
        store_stamped(key, env.deps, report)
    return report
