"""How ``compat.yaml`` reaches the wheel of a project built by hatchling, flit-core or pdm-backend.

These backends put every file of the package folder in the wheel by default, so the link
``init`` makes there (``PKG/compat.yaml``, to the matrix at the root) ships with no setting.
What can still keep it out is the project's own configuration, read here as the backends
read it:

hatchling
    ``[tool.hatch.build.targets.wheel]`` (else ``[tool.hatch.build]``) ``only-include``,
    ``packages`` (paths: the file must be under one), ``include`` (patterns: it must match
    one) and ``exclude`` (it must match none); the same keys of the ``sdist`` target. Its sdist
    holds the whole tree by default, the matrix at the root too.
flit-core
    the wheel is the package folder, always; ``[tool.flit.sdist] exclude`` can drop the link
    from the sdist, and its sdist holds only the package and ``pyproject.toml``: the link's
    target, the matrix at the root, needs ``[tool.flit.sdist] include`` (``init`` writes it).
pdm-backend
    ``[tool.pdm.build] includes`` (when set, it replaces the package found) and ``excludes``;
    its sdist adds ``source-includes`` (default ``["tests"]``) to the wheel's files, so the
    matrix at the root needs ``source-includes`` (``init`` writes it, keeping ``tests``).

The cells build the wheel from the sdist (:mod:`adapter_matrix.ci.adapterbuild`), so the link
must find its target there. Patterns are matched as each backend documents them (hatch's are
gitignore-style, flit's and pdm's globs over paths and the folders above them), without
running the backend.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, List, Mapping, Optional, Sequence, Tuple

from ..backend import FLIT, HATCHLING, PDM

__all__ = ["gaps", "ROOT_INCLUDE"]

# the setting init writes so the sdist holds the matrix at the root (the link's target), per backend:
# (table, header, line); the sdist of hatchling holds the whole tree already
ROOT_INCLUDE = {
    FLIT: ("tool.flit.sdist", "[tool.flit.sdist]", 'include = ["compat.yaml"]'),
    PDM: ("tool.pdm.build", "[tool.pdm.build]", 'source-includes = ["tests", "compat.yaml"]'),
}


def _table(tool: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    node: Any = tool
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _strings(value: object) -> List[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _under(path: str, folder: str) -> bool:
    folder = folder.strip("/").rstrip("/")
    return path == folder or path.startswith(folder + "/")


def _glob(path: str, pattern: str) -> bool:
    """flit's and pdm's patterns: the path, or a folder above it, matches the glob."""
    pattern = pattern.strip("/")
    parts = path.split("/")
    return any(fnmatchcase("/".join(parts[:n]), pattern) for n in range(1, len(parts) + 1))


def _gitignore(path: str, pattern: str) -> bool:
    """hatch's patterns (gitignore-style): without a ``/`` inside, a name anywhere in the path;
    with one (or a leading one), from the root; a folder's pattern holds everything below it."""
    pattern = pattern.rstrip("/")
    if pattern.startswith("**/"):
        pattern = pattern[3:]
    elif "/" in pattern:
        return _glob(path, pattern.lstrip("/"))
    return any(fnmatchcase(part, pattern) for part in path.split("/"))


def _hatch(tool: Mapping[str, Any], target: str, path: str, what: str) -> List[str]:
    build = _table(tool, "hatch", "build")
    own = _table(build, "targets", target)
    where = f"[tool.hatch.build.targets.{target}]"

    def option(key: str) -> Optional[List[str]]:
        if key in own:
            return _strings(own[key])
        if key in build and key != "packages":
            return _strings(build[key])
        return None

    out = []
    for key in ("only-include", "packages"):
        paths = option(key)
        if paths is not None and not any(_under(path, p) for p in paths):
            place = where if key in own else "[tool.hatch.build]"
            out.append(f'{place} {key} leaves {path} out of the {what}: add "{path}" to it')
    include = option("include")
    if include and not any(_gitignore(path, p) for p in include):
        place = where if "include" in own else "[tool.hatch.build]"
        out.append(f'{place} include leaves {path} out of the {what}: add "{path}" to it')
    for pattern in option("exclude") or []:
        if _gitignore(path, pattern):
            place = where if "exclude" in own else "[tool.hatch.build]"
            out.append(f'{place} exclude "{pattern}" leaves {path} out of the {what}: narrow or remove it')
    return out


def _flit(tool: Mapping[str, Any], path: str, what: str) -> List[str]:
    sdist = _table(tool, "flit", "sdist")
    return [
        f'[tool.flit.sdist] exclude "{p}" leaves {path} out of the {what}: narrow or remove it'
        for p in _strings(sdist.get("exclude"))
        if _glob(path, p)
    ]


def _pdm(tool: Mapping[str, Any], path: str, what: str, wheel: bool) -> List[str]:
    build = _table(tool, "pdm", "build")
    out = []
    includes = _strings(build.get("includes"))
    if wheel and includes and not any(_under(path, p) or _glob(path, p) for p in includes):
        out.append(f'[tool.pdm.build] includes leaves {path} out of the {what}: add "{path}" to it')
    out += [
        f'[tool.pdm.build] excludes "{p}" leaves {path} out of the {what}: narrow or remove it'
        for p in _strings(build.get("excludes"))
        if _under(path, p) or _glob(path, p)
    ]
    return out


def gaps(backend: str, tool: Mapping[str, Any], link: str, matrix: Optional[str]) -> List[str]:
    """What the project's configuration leaves out, each with what to change: ``link`` (the
    matrix in the package folder, a path from the root with ``/``) from the wheel and the sdist,
    and ``matrix`` (the link's target at the root; ``None`` when the matrix is in the package
    folder itself) from the sdist. Empty: the backend's defaults ship it."""
    checks: Sequence[Tuple[str, str, bool]] = [(link, "wheel", True), (link, "sdist", False)]
    if matrix is not None:
        checks = [*checks, (matrix, "sdist (the link's target)", False)]
    out: List[str] = []
    for path, what, wheel in checks:
        if backend == HATCHLING:
            out += _hatch(tool, "wheel" if wheel else "sdist", path, what)
        elif backend == FLIT and not wheel:
            out += _flit(tool, path, what)
        elif backend == PDM:
            out += _pdm(tool, path, what, wheel)
    return out
