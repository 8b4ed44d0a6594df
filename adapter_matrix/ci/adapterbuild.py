"""Build a compiled adapter inside its cell, against the cell's own torch and Python.

A compiled adapter (a setuptools ``CppExtension``, a ``setup.py`` driving CMake,
scikit-build-core) is tied to the torch it was compiled against: a build for torch 2.9 breaks
on 2.10. So a project whose ``[build-system] requires`` names ``torch`` is built in each cell,
after the cell's torch is installed, and never once per nox run by nox's own interpreter.

The build runs **without isolation, in the cell's environment**: the cell has installed
exactly the torch build it tests (its variant, its local label), and an isolated build
would have to pin that build and fetch it a second time, or resolve ``torch`` to whatever
the index serves newest. The backend's other requirements (``requires`` minus torch) are
installed into the cell first, from the cell's own sources, so the same works offline
(``ADAPTER_MATRIX_WHEELS``) and online.

The wheel is cached per (sources, torch build, Python, platform): a rerun of the cell, or
another cell of the same torch and Python, installs it without compiling. CMake builds use
ccache when it is on ``PATH`` (``CMAKE_<LANG>_COMPILER_LAUNCHER``).

The build never runs in the source tree: the project is built from its sdist (which is first
checked for what the build needs: ``CMakeLists.txt is not in the sdist: add it to
MANIFEST.in``), or, with the sdist step turned off, from a copy of the tree.

An adapter with a build of its own (``python setup.py bdist_wheel``, a script around ``cmake
--build``) declares it as ``command``: it runs there instead of ``uv build --wheel``, with the
cell's ``bin`` first on ``PATH`` (``python`` is the cell's), ``{out}`` standing for the folder
where it must leave one wheel and ``{python}`` for the cell's interpreter.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import AdapterMatrixError

__all__ = [
    "BuildFailed",
    "build_requires",
    "builds_against_torch",
    "project_name",
    "source_digest",
    "cache_key",
    "first_error",
    "sdist_missing",
    "build_in_cell",
    "DEFAULT_TIMEOUT",
]

DEFAULT_TIMEOUT = 1800.0  # seconds; a CMake build of a real adapter on 2 cores takes minutes
# what never belongs to the sources of a build: VCS data, build outputs, environments, our records
_SKIP = {".git", ".hg", ".nox", ".tox", ".venv", "venv", "build", "dist", "__pycache__", "results", "evidence"}
_NATIVE = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp", ".cuh")
_NOT_BUILT = {"tests", "test", "docs", "examples", "benchmarks"}  # top-level folders a build does not compile
_CCACHE_DIRS = ("/usr/lib/ccache", "/usr/lib64/ccache", "/usr/local/opt/ccache/libexec")
_BUILD_FILES = ("CMakeLists.txt", "setup.py", "setup.cfg", "pyproject.toml")
# the first line a person must read in a failed build: a compiler, linker or CMake error
_ERROR = re.compile(
    r"(\berror\b\s*:|\bfatal error\b|undefined reference to|CMake Error|collect2: error|ld: cannot find|"
    r"ninja: build stopped|^\s*(?:ModuleNotFoundError|ImportError):)",
    re.I,
)


_FRONTEND = re.compile(r"Failed to build|command '.*' failed with exit code|subprocess-exited-with-error", re.I)


class BuildFailed(AdapterMatrixError):
    """The adapter did not build; ``log`` holds the builder's whole output, ``first`` its first error."""

    def __init__(self, message: str, log: str = "", first: Optional[str] = None) -> None:
        super().__init__(message)
        self.log = log
        self.first = first


def _load_toml(path: Path) -> Dict[str, Any]:
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef,import-not-found,unused-ignore]
    try:
        with open(path, "rb") as fh:
            table: Dict[str, Any] = tomllib.load(fh)
            return table
    except (OSError, ValueError):
        return {}


def build_requires(project: os.PathLike[str] | str) -> List[str]:
    """``[build-system] requires`` of ``project`` (PEP 518's default when absent)."""
    data = _load_toml(Path(project) / "pyproject.toml")
    requires = (data.get("build-system") or {}).get("requires")
    if not isinstance(requires, list):
        return ["setuptools>=40.8.0", "wheel"]
    return [r for r in requires if isinstance(r, str)]


def project_name(project: os.PathLike[str] | str) -> str:
    """``[project] name`` of ``project``, normalized (``""`` when it declares none)."""
    from ..names import canonical_name

    name = (_load_toml(Path(project) / "pyproject.toml").get("project") or {}).get("name")
    return canonical_name(name) if isinstance(name, str) else ""


def _name(requirement: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement

    from ..names import canonical_name

    try:
        return canonical_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""


def builds_against_torch(project: os.PathLike[str] | str) -> bool:
    """Whether ``project`` compiles against torch: ``torch`` is one of its build requirements."""
    return any(_name(r) == "torch" for r in build_requires(project))


def _files(project: Path) -> List[Path]:
    out = []
    for folder, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and not d.endswith(".egg-info"))
        out += [Path(folder) / f for f in sorted(files) if not f.endswith((".pyc", ".so", ".o"))]
    return out


def source_digest(project: os.PathLike[str] | str) -> str:
    """A digest of the project's files (names and bytes), build outputs left out."""
    root = Path(project)
    digest = hashlib.sha256()
    for path in _files(root):
        rel = path.relative_to(root).as_posix().encode()
        digest.update(len(rel).to_bytes(8, "little") + rel)
        data = path.read_bytes() if not path.is_symlink() else os.readlink(path).encode()
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:16]


def cache_key(sources: str, torch: str, python_tag: str, platform: str) -> str:
    """The folder name of one cached build: another torch build (``2.13.0+cpu`` against
    ``2.13.0``), Python or platform is another key."""
    safe = re.sub(r"[^0-9A-Za-z.+_-]", "_", f"{python_tag}-{platform}-torch{torch}")
    return f"{safe}-src{sources}"


def first_error(log: str) -> Optional[str]:
    """The first compiler, linker or CMake error line of a build log, stripped."""
    found = [line.strip() for line in log.splitlines() if _ERROR.search(line)]
    # the frontend's own summary ("Failed to build ...") only repeats that the backend failed
    own = [line for line in found if not _FRONTEND.search(line)]
    chosen = own or found
    return chosen[0][:300] if chosen else None


def sdist_missing(sdist: Path, project: Path) -> List[str]:
    """Files the build needs that the sdist lacks: the build files at the project's top, and
    every native source and CMakeLists.txt the tree holds outside its tests, docs and examples."""
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    wanted = [f for f in _BUILD_FILES if (project / f).is_file()]
    for path in _files(project):
        rel = path.relative_to(project)
        if rel.parts[0] in _NOT_BUILT or not (path.suffix in _NATIVE or path.name == "CMakeLists.txt"):
            continue
        wanted.append(rel.as_posix())
    return [w for w in dict.fromkeys(wanted) if w not in names]


def _uv() -> str:
    from .wheels import find_uv

    uv = find_uv()
    if uv is None:
        raise BuildFailed("uv is not installed (pip install uv): it builds the adapter in the cell")
    return uv


def _run(cmd: Sequence[str], timeout: float, env: Mapping[str, str], cwd: Optional[Path] = None) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except FileNotFoundError:
        raise BuildFailed(f"{cmd[0]}: no such command") from None
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or "") if isinstance(exc.stdout, str) else ""
        raise BuildFailed(f"the build took longer than {timeout:g} s (Adapter(build_timeout=...))", out) from None
    log = (proc.stdout or "") + (proc.stderr or "")
    if proc.returncode != 0:
        first = first_error(log)
        raise BuildFailed(first or f"{cmd[0]} exited {proc.returncode}", log, first)
    return log


@dataclass(frozen=True)
class Built:
    """A wheel built (or found in the cache) for one cell, and whether it was compiled now."""

    wheel: Path
    compiled: bool
    key: str
    log: str = ""


def _cell_env(python: str) -> Dict[str, str]:
    """The build's environment: the cell's bin first (``python``, ``cmake``, ``ninja`` of a
    build are the cell's), and ccache when there is one."""
    bindir = os.path.dirname(python)
    env = dict(os.environ, PIP_CONSTRAINT="", PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    env["VIRTUAL_ENV"] = os.path.dirname(bindir)
    if shutil.which("ccache"):  # compiler objects survive a changed source hash: a rerun recompiles only what changed
        env.setdefault("CMAKE_C_COMPILER_LAUNCHER", "ccache")
        env.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
        # setuptools (CppExtension) calls gcc/g++ by name: ccache's masquerade folder goes first
        masquerade = next((d for d in _CCACHE_DIRS if os.path.isdir(d)), None)
        if masquerade:
            env["PATH"] = os.pathsep.join([bindir, masquerade, os.environ.get("PATH", "")])
    return env


def _from_sdist(
    root: Path, tree: Path, scratch: Path, out: Path, uv: str, common: List[str], timeout: float, env: Dict[str, str]
) -> Tuple[Path, str]:
    """Build the sdist of ``tree``, refuse one that lacks a file of ``root`` (a wheel built
    from it would too), and unpack it: (its source folder, the log). ``common``: the options
    each `uv build` takes."""
    log = _run([uv, "build", "--sdist", *common, "--out-dir", str(out), str(tree)], timeout, env)
    (archive,) = out.glob("*.tar.gz")
    missing = sdist_missing(archive, root)
    if missing:
        raise BuildFailed(
            f"{missing[0]} is not in the sdist: add it to MANIFEST.in"
            + (f" (and {len(missing) - 1} more file(s))" if len(missing) > 1 else "")
            + " (or Adapter(sdist=False) to build from the tree)",
            log,
        )
    with tarfile.open(archive) as tar:
        if sys.version_info >= (3, 12):
            tar.extractall(scratch / "src", filter="data")
        else:
            tar.extractall(scratch / "src")  # our own sdist, just built
    (source,) = (scratch / "src").iterdir()
    return source, log


def _store(out: Path, scratch: Path, folder: Path, log: str) -> Path:
    """Move the one wheel the build left in ``out`` into the cache entry ``folder`` (one
    rename: a reader sees no entry or a whole one); the wheel's path there."""
    wheels = sorted(out.glob("*.whl"))
    if len(wheels) != 1:
        raise BuildFailed(f"the build left {len(wheels)} wheels in {{out}}, not one: {[w.name for w in wheels]}", log)
    (wheel,) = wheels
    staged = scratch / "staged"
    staged.mkdir()
    os.replace(wheel, staged / wheel.name)
    if folder.exists():  # a half-written entry of an earlier, interrupted run
        shutil.rmtree(folder)
    os.replace(staged, folder)
    return folder / wheel.name


def build_in_cell(
    project: os.PathLike[str] | str,
    python: str,
    torch: str,
    python_tag: str,
    platform: str,
    cache: os.PathLike[str] | str,
    *,
    sdist: bool = True,
    offline: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    command: Optional[Sequence[str]] = None,
) -> Built:
    """The wheel of ``project`` for the cell whose interpreter is ``python`` (torch ``torch``
    installed there): from the cache, else built there without isolation (or by ``command``)."""
    root = Path(project).resolve()
    sources = source_digest(root)
    if command:  # another build command is another build of the same sources
        sources = hashlib.sha256(json.dumps([sources, list(command)]).encode()).hexdigest()[:16]
    key = cache_key(sources, torch, python_tag, platform)
    folder = Path(cache) / key
    found = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    if len(found) == 1:
        return Built(found[0], False, key)
    env = _cell_env(python)
    uv = _uv()
    common = ["--python", python, "--no-build-isolation", *(["--offline"] if offline else [])]
    Path(cache).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as temporary:
        scratch = Path(temporary)
        out = scratch / "out"
        log = ""
        # a copy of the tree, without build outputs: even the sdist step writes there (egg-info)
        tree = scratch / "tree" / root.name
        shutil.copytree(root, tree, ignore=lambda d, names: [n for n in names if n in _SKIP], symlinks=True)
        source = tree
        if sdist:
            source, log = _from_sdist(root, tree, scratch, out, uv, common, timeout, env)
        if command:
            out.mkdir(parents=True, exist_ok=True)
            own = [a.replace("{out}", str(out)).replace("{python}", python) for a in command]
            log += _run(own, timeout, env, cwd=source)
        else:
            log += _run([uv, "build", "--wheel", *common, "--out-dir", str(out), str(source)], timeout, env)
        wheel = _store(out, scratch, folder, log)
    return Built(wheel, True, key, log)
