"""Which build backend a project uses, and which of its ``pyproject.toml`` tables configure the build.

A compiled adapter's binary depends on how it is built as much as on its C++: a
``[tool.scikit-build] cmake.build-type`` or a ``[build-system] requires`` change can change the
binary a cell tested. So a ``pyproject.toml`` among the evidence sources counts by its build
tables only (:func:`build_tables`): the project's metadata (its version, ``requires-python``
that ``validate --pyproject --write`` corrects) is not the code under test.

Each backend also decides on its own setting how ``compat.yaml`` reaches the wheel
(:mod:`adapter_matrix.upstream.adopt` writes it): setuptools' package data, scikit-build-core's
``wheel.packages``, meson-python's ``install_data`` in ``meson.build``. hatchling, flit-core and
pdm-backend (:data:`TREE_BACKENDS`) put every file of the package folder in the wheel by
default: the matrix there ships with no setting (:mod:`adapter_matrix.upstream.tree_backends`
reads what the project's own configuration leaves out).
"""

from __future__ import annotations

import json
from typing import Dict, Mapping

__all__ = [
    "SETUPTOOLS",
    "SCIKIT_BUILD",
    "MESON",
    "HATCHLING",
    "FLIT",
    "PDM",
    "TREE_BACKENDS",
    "OTHER",
    "backend_of",
    "build_tables",
    "build_tables_text",
]

SETUPTOOLS = "setuptools"
SCIKIT_BUILD = "scikit-build-core"
MESON = "meson-python"
HATCHLING = "hatchling"
FLIT = "flit-core"
PDM = "pdm-backend"
TREE_BACKENDS = (HATCHLING, FLIT, PDM)  # the wheel holds the whole package folder unless configured otherwise
OTHER = "other"

# build-backend module -> our name for it (PEP 517's ``build-backend``, ``:`` object part ignored)
_BACKENDS = {
    "setuptools.build_meta": SETUPTOOLS,
    "setuptools.build_meta:__legacy__": SETUPTOOLS,
    "scikit_build_core.build": SCIKIT_BUILD,
    "mesonpy": MESON,
    "hatchling.build": HATCHLING,
    "flit_core.buildapi": FLIT,
    "pdm.backend": PDM,
}
# the [tool] tables that configure a build, per backend (the others configure linters, tests...)
_TOOL_TABLES = ("setuptools", "scikit-build", "meson-python", "cibuildwheel")


def backend_of(pyproject: Mapping[str, object]) -> str:
    """The backend a parsed ``pyproject.toml`` names: setuptools when it names none (PEP 517's
    fallback, and a ``setup.py``-only project's), :data:`OTHER` for one we do not know."""
    build = pyproject.get("build-system")
    name = build.get("build-backend") if isinstance(build, dict) else None
    if not isinstance(name, str):
        return SETUPTOOLS
    return _BACKENDS.get(name.strip(), OTHER)


def build_tables(pyproject: Mapping[str, object]) -> Dict[str, object]:
    """The tables of a parsed ``pyproject.toml`` that configure its build: ``[build-system]``
    and the build backends' ``[tool.*]`` tables (only those present)."""
    out: Dict[str, object] = {}
    if "build-system" in pyproject:
        out["build-system"] = pyproject["build-system"]
    tool = pyproject.get("tool")
    for name in _TOOL_TABLES:
        if isinstance(tool, dict) and name in tool:
            out[f"tool.{name}"] = tool[name]
    return out


def build_tables_text(data: bytes) -> bytes:
    """What a ``pyproject.toml``'s bytes count for in the evidence sources hash: its build
    tables as canonical JSON (key order, comments and the metadata tables do not count). A file
    that is not TOML counts with its bytes: the build would fail on it, and a fix must count."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return data
    return json.dumps(build_tables(parsed), sort_keys=True, default=str).encode()
