"""Build, cache and load an adapter's C++ core for the running torch.

An adapter keeps its C++ sources in ``<shims package>/csrc/`` (this module finds them
without importing the package). The core is compiled just in time with
``torch.utils.cpp_extension`` (ninja, -O2), never at ``pip install`` time: a
build-isolated install would compile against whatever torch the resolver picked, not
the user's. Each build lives in its own folder of the cache, keyed by everything that
makes a build unusable elsewhere::

    <cache>/builds/<extension>-torch-2.13.0+cpu-g<git>-cpython-311-src<hash>/
        <extension>.so
        manifest.json     # what it was built against, checked before every load

so an unchanged combination never recompiles, and a library is never loaded into a
torch it was not built for (the manifest check turns "undefined symbol" into a
message naming both versions). The manifest also records the library's size, SHA-256
and modification time: a truncated or rewritten library (a full disk, an interrupted
copy) is found before it is loaded, and a damaged cache build is compiled again instead
of ending in ``ImportError: ... file too short``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Callable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, TypedDict, cast

from ..errors import EXIT_UNSUPPORTED, AdapterMatrixError
from ..files import sha256_file

__all__ = [
    "build_requirements",
    "requirements_for",
    "Extension",
    "BuildError",
    "BuildMismatch",
    "DamagedBuild",
    "TorchBuild",
    "Build",
    "running_torch",
    "source_hash",
    "build_dir",
    "ensure_built",
    "load",
    "read_manifest",
    "check_manifest",
    "check_library",
    "library_facts",
    "LibraryFacts",
    "Manifest",
]

CFLAGS = ("-O2",)
# Folders under torch's include directory that go on the include path when this torch
# ships them: Kineto's headers (torch/include/kineto, 2.4+), which torch's own profiler
# headers include as <IActivityProfiler.h> (a device's Kineto plugin needs them).
TORCH_INCLUDE_SUBDIRS = ("kineto",)
# Bumped when the manifest or the build layout changes, so older cache folders are not reused.
BUILD_FORMAT = 2  # 2: the manifest records the library's size, SHA-256 and mtime
MANIFEST = "manifest.json"
LIBRARY_ENV = "ADAPTER_MATRIX_DEVICE_LIBRARY"  # a prebuilt build folder to use instead of the cache
NO_BUILD_ENV = "ADAPTER_MATRIX_NO_BUILD"  # never compile on import; fail with the command instead


# What building needs besides torch and a compiler, by torch release: cpp_extension
# drives ninja and imports setuptools; torch 2.1's also imports pkg_resources, which
# setuptools 81 removed.
_BUILD_REQUIREMENTS = (
    ("", ("ninja", "setuptools")),
    ("<2.2", ("setuptools<81",)),
)


def build_requirements(torch: str) -> List[str]:
    """The requirements to install next to ``torch`` (a version) before building."""
    return requirements_for(_BUILD_REQUIREMENTS, torch)


def requirements_for(table: Sequence[Tuple[str, Sequence[str]]], torch: str) -> List[str]:
    """The requirements of ``table`` ((torch specifier, requirements), ...) that apply to ``torch``."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    version = Version(torch)
    return [req for spec, reqs in table if SpecifierSet(spec).contains(version, prereleases=True) for req in reqs]


class BuildError(AdapterMatrixError, RuntimeError):
    """The C++ core could not be compiled; the message holds the compiler's whole output."""


class BuildMismatch(AdapterMatrixError, RuntimeError):
    """A build made for another torch (or Python) than the running one."""

    exit_code = EXIT_UNSUPPORTED


class DamagedBuild(BuildMismatch):
    """A build whose library is not the file its manifest describes (truncated, rewritten, missing)."""

    def __init__(self, problem: str, folder: Path) -> None:
        super().__init__(
            f"{problem}; delete {folder} and run `adapter-matrix build` (importing the adapter also rebuilds a damaged cache build)"
        )
        self.problem = problem
        self.folder = folder


# The records below are NamedTuples, not dataclasses: this module is imported on every
# activation (inside `import torch` under autoload), and a dataclass costs ~0.5 ms to create.


class Extension(NamedTuple):
    """An adapter's C++ core: its module name and its sources folder."""

    name: str
    csrc: Path

    @classmethod
    def of_package(cls, package: str, device: str) -> Extension:
        """The core of shims package ``package``: ``<package>/csrc``, named ``<package>_<device>_core``.

        The package is located with :func:`importlib.util.find_spec`, which does not
        import it (importing an adapter activates it).
        """
        import importlib.util

        top, _, rest = package.partition(".")
        spec = importlib.util.find_spec(top)
        if spec is None or not spec.submodule_search_locations:
            raise BuildError(f"the shims package {top!r} is not installed")
        base = Path(list(spec.submodule_search_locations)[0]).joinpath(*[p for p in rest.split(".") if p])
        return cls(f"{package.replace('.', '_')}_{device}_core", base / "csrc")

    def sources(self) -> List[str]:
        return sorted(str(p) for p in self.csrc.glob("*.cpp"))


class TorchBuild(NamedTuple):
    """The facts about a torch build that a compiled extension depends on."""

    version: str  # torch.__version__, local label included (2.13.0+cpu)
    git: str  # torch.version.git_version
    cxx11_abi: bool
    python: str  # sys.implementation.cache_tag, e.g. cpython-311

    def describe(self) -> str:
        return f"torch {self.version} (git {self.git[:10]}, {self.python})"


class LibraryFacts(TypedDict):
    """What a manifest records about its library: checked before every load (:func:`check_library`)."""

    library_bytes: int
    library_sha256: str
    library_mtime_ns: int


class Manifest(LibraryFacts, total=False):
    """``manifest.json`` of a build folder, as :func:`ensure_built` writes it. Read back from
    disk every key may be absent (an older or a prebuilt folder): readers use ``.get``."""

    extension: str
    library: str
    torch: str
    torch_git: str
    cxx11_abi: bool
    python: str
    source_hash: str
    cflags: List[str]
    compiler: str
    build_seconds: float
    built_at: str


class Build(NamedTuple):
    """A usable build folder and whether it was just compiled."""

    path: Path
    manifest: Manifest
    compiled: bool

    @property
    def library(self) -> Path:
        return self.path / self.manifest["library"]


def running_torch() -> TorchBuild:
    import torch

    return TorchBuild(
        version=torch.__version__,
        git=getattr(torch.version, "git_version", "unknown"),
        cxx11_abi=bool(torch._C._GLIBCXX_USE_CXX11_ABI),
        python=sys.implementation.cache_tag,
    )


def source_hash(ext: Extension) -> str:
    """Hash of the C++ sources and the flags they are built with."""
    digest = hashlib.sha256()
    digest.update(repr((ext.name, CFLAGS, TORCH_INCLUDE_SUBDIRS, BUILD_FORMAT)).encode())
    for path in sorted(ext.csrc.iterdir()):
        if path.suffix in (".cpp", ".h"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def builds_root() -> Path:
    """The cache of device builds (one folder per build)."""
    from ..memo import cache_folder

    return Path(cache_folder("builds"))


def build_dir(ext: Extension, torch_build: Optional[TorchBuild] = None) -> Path:
    """The cache folder of ``ext`` built for ``torch_build`` (default: the running torch)."""
    t = torch_build or running_torch()
    key = f"{ext.name}-torch-{t.version}-g{t.git[:10]}-{t.python}-src{source_hash(ext)[:12]}"
    return builds_root() / key


def first_build(ext: Extension) -> Optional[str]:
    """When the installed torch has no cached build of ``ext`` yet, the notice to show before
    the first use compiles it ("compiling npu's C++ core for torch 2.13.0+cpu, first use,
    about 2 min; `adapter-matrix build` does it ahead"); ``None`` when one is cached, a prebuilt
    folder is named, or torch is not installed. Reads torch's version from its metadata and
    the cache folder's names: no torch import, so it shows within a moment of the start."""
    import importlib.metadata as md

    if os.environ.get(LIBRARY_ENV) or not ext.csrc.is_dir():
        return None
    try:
        version = md.version("torch")
    except md.PackageNotFoundError:
        return None
    prefix = f"{ext.name}-torch-{version}-g"
    suffix = f"-{sys.implementation.cache_tag}-src{source_hash(ext)[:12]}"
    root = builds_root()
    cached = root.is_dir() and any(
        f.name.startswith(prefix) and f.name.endswith(suffix) and read_manifest(f) is not None for f in root.iterdir()
    )
    if cached:
        return None
    device = ext.name.rsplit("_", 2)[-2] if ext.name.count("_") >= 2 else ext.name
    return (
        f"compiling {device}'s C++ core for torch {version}, first use, about 2 min; "
        "`adapter-matrix build` does it ahead"
    )


def read_manifest(folder: Path) -> Optional[Manifest]:
    """The manifest of ``folder``; None when it has none or it is no JSON mapping (its keys are
    checked where they are read)."""
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return cast(Manifest, data) if isinstance(data, dict) else None


def check_manifest(manifest: Manifest, folder: Path, torch_build: Optional[TorchBuild] = None) -> None:
    """Refuse a build made for another torch/Python, naming both, before anything is loaded."""
    t = torch_build or running_torch()
    built = TorchBuild(
        manifest.get("torch", "?"),
        manifest.get("torch_git", "?"),
        bool(manifest.get("cxx11_abi")),
        manifest.get("python", "?"),
    )
    problems = []
    if built.version != t.version or built.git != t.git:
        problems.append(
            f"it was built against torch {built.version} (git {built.git[:10]}), but this process runs torch {t.version} (git {t.git[:10]})"
        )
    if built.python != t.python:
        problems.append(f"it was built for {built.python}, but this is {t.python}")
    if built.cxx11_abi != t.cxx11_abi:
        problems.append(
            f"it was built with _GLIBCXX_USE_CXX11_ABI={int(built.cxx11_abi)}, torch uses {int(t.cxx11_abi)}"
        )
    if problems:
        raise BuildMismatch(
            f"the device library in {folder} does not fit: "
            + "; ".join(problems)
            + f". Rebuild it for this torch with `adapter-matrix build`, or install torch=={built.version}."
        )
    check_library(manifest, folder)


def library_facts(library: Path) -> LibraryFacts:
    """What the manifest records about a freshly built library."""
    stat = library.stat()
    return {
        "library_bytes": stat.st_size,
        "library_sha256": sha256_file(str(library)),
        "library_mtime_ns": stat.st_mtime_ns,
    }


def check_library(manifest: Manifest, folder: Path) -> None:
    """Refuse a library that is not the file the manifest describes, before it is loaded.

    The size is compared every time (a stat); the SHA-256 only when the file's
    modification time is not the recorded one (a copied folder, a rewritten file), so the
    warm path stays cheap. Raises :class:`DamagedBuild` naming the folder to delete.
    """
    library = folder / manifest.get("library", "")
    try:
        stat = library.stat()
    except OSError:
        raise DamagedBuild(f"the device library {library} named by {folder / MANIFEST} is missing", folder) from None
    expected = manifest.get("library_bytes")
    if expected is None:  # an older prebuilt folder ($ADAPTER_MATRIX_DEVICE_LIBRARY): existence is all it tells
        return
    if stat.st_size != expected:
        raise DamagedBuild(
            f"the device library {library} is damaged: {stat.st_size} bytes, but {MANIFEST} records {expected}", folder
        )
    if stat.st_mtime_ns != manifest.get("library_mtime_ns") and sha256_file(str(library)) != manifest.get(
        "library_sha256"
    ):
        raise DamagedBuild(
            f"the device library {library} is damaged: its SHA-256 is not the one {MANIFEST} records", folder
        )


def _ensure_ninja_on_path() -> None:
    if shutil.which("ninja"):
        return
    candidates = [os.path.dirname(sys.executable)]
    with contextlib.suppress(ImportError):
        import ninja  # the PyPI package ships the binary

        candidates.insert(0, ninja.BIN_DIR)
    for folder in candidates:
        if os.path.exists(os.path.join(folder, "ninja")):
            os.environ["PATH"] = folder + os.pathsep + os.environ.get("PATH", "")
            return
    raise BuildError("ninja is not installed: `pip install ninja` (the `device` extra installs it)")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder per build folder at a time (parallel sessions wait, then reuse)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    # no truncation and no link followed: a link planted at the lock's name in a shared cache
    # must not let the build empty the file it points at
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        os.unlink(path)  # the lock is the cache's own file: a link in its place is dropped, not followed
        fd = os.open(path, flags | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _compiler() -> str:
    try:
        out = subprocess.run(["c++", "--version"], capture_output=True, text=True, timeout=20).stdout
    except OSError:
        return "unknown"
    return out.splitlines()[0] if out else "unknown"


def _compile(ext: Extension, target: Path, verbose: bool) -> float:
    """Compile into ``target`` (a fresh folder); returns seconds. Loads the module as a side effect."""
    _ensure_ninja_on_path()
    try:
        import torch.utils.cpp_extension as cpp_extension
    except ImportError as exc:
        import torch

        needed = " ".join(f"'{r}'" for r in build_requirements(torch.__version__))
        raise BuildError(f"torch.utils.cpp_extension cannot be imported ({exc}); `pip install {needed}`") from None

    torch_include = cpp_extension.include_paths()[0]  # <torch>/include
    extra = [os.path.join(torch_include, d) for d in TORCH_INCLUDE_SUBDIRS]
    start = time.perf_counter()
    try:
        module = cpp_extension.load(
            name=ext.name,
            sources=ext.sources(),
            extra_cflags=list(CFLAGS),
            extra_include_paths=[str(ext.csrc)] + [d for d in extra if os.path.isdir(d)],
            build_directory=str(target),
            verbose=verbose,
            with_cuda=False,
        )
    except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
        raise BuildError(f"compiling {ext.name} failed:\n{exc}") from None
    # load() imported it from the build folder: keep that module (a second dlopen of the
    # renamed file would register every kernel twice).
    sys.modules[ext.name] = module
    return time.perf_counter() - start


def ensure_built(ext: Extension, verbose: bool = False, on_compile: Optional[Callable[[Path], None]] = None) -> Build:
    """The build of ``ext`` for the running torch: from the cache, or compiled now (a minute or more on 2 cores).

    ``on_compile(folder)`` is called just before compiling, so callers can tell users why
    this takes a while. ``$ADAPTER_MATRIX_DEVICE_LIBRARY`` names a prebuilt folder to use.
    """
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        folder = Path(explicit)
        manifest = read_manifest(folder)
        if manifest is None:
            raise BuildMismatch(f"${LIBRARY_ENV}={folder} has no readable {MANIFEST}")
        check_manifest(manifest, folder)
        return Build(folder, manifest, compiled=False)
    torch_build = running_torch()
    folder = build_dir(ext, torch_build)
    manifest = read_manifest(folder)
    damaged = None
    if manifest is not None:
        try:
            check_manifest(manifest, folder, torch_build)
            return Build(folder, manifest, compiled=False)
        except DamagedBuild as exc:
            damaged = exc
    if os.environ.get(NO_BUILD_ENV):
        if damaged is not None:
            raise damaged
        raise BuildError(
            f"{ext.name} is not built for {torch_build.describe()} and ${NO_BUILD_ENV} is set; run `adapter-matrix build`"
        )
    with _locked(folder.with_name(folder.name + ".lock")):
        manifest = read_manifest(folder)  # another process may have finished (or repaired) it meanwhile
        if manifest is not None:
            try:
                check_manifest(manifest, folder, torch_build)
                return Build(folder, manifest, compiled=False)
            except DamagedBuild as exc:
                # Nothing was loaded from it: move it aside (processes that mapped the old
                # file keep their copy) and compile a new one in its place.
                import warnings

                warnings.warn(f"{exc.problem}: compiling it again", RuntimeWarning, stacklevel=2)
                aside = folder.with_name(folder.name + f".damaged-{os.getpid()}")
                os.replace(folder, aside)
                shutil.rmtree(aside, ignore_errors=True)
        partial = folder.with_name(folder.name + f".partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        if on_compile is not None:
            on_compile(folder)
        try:
            seconds = _compile(ext, partial, verbose)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        library = f"{ext.name}.so"
        manifest = {
            "extension": ext.name,
            "library": library,
            **library_facts(partial / library),
            "torch": torch_build.version,
            "torch_git": torch_build.git,
            "cxx11_abi": torch_build.cxx11_abi,
            "python": torch_build.python,
            "source_hash": source_hash(ext),
            "cflags": list(CFLAGS),
            "compiler": _compiler(),
            "build_seconds": round(seconds, 2),
            "built_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        os.replace(partial, folder)
    return Build(folder, manifest, compiled=True)


def load(build: Build) -> types.ModuleType:
    """Import the extension of ``build`` (already checked) into this process, once."""
    name = build.manifest["extension"]
    if name in sys.modules:
        return sys.modules[name]
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, str(build.library))
    if spec is None or spec.loader is None:
        raise BuildMismatch(f"cannot load {build.library}")
    try:
        module = importlib.util.module_from_spec(spec)  # dlopen() and the module's init
        spec.loader.exec_module(module)
    except ImportError as exc:  # what the manifest check cannot see, e.g. a library changed since
        raise DamagedBuild(f"cannot load {build.library}: {exc}", build.path) from None
    sys.modules[name] = module
    return module
