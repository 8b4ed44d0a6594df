"""The three packaging shapes of issue 57, as their authors have them before `init`: a setuptools
`CppExtension`, a setup.py that drives CMake in OpenReg's shape (its requires-python, classifiers and
unpinned torch, no MANIFEST.in), and scikit-build-core with a `src/` layout
(tests/fixtures/adopt/skbuild-src). The first two are examples/ without what `init` writes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable, Dict, NamedTuple

from .helpers import FIXTURES, REPO

# what init writes, and what a run leaves: none of it is the author's
_NOT_THE_AUTHORS = {".nox", "evidence", "results", "build", "compat.yaml", "__pycache__", "MANIFEST.in"}
_WRITTEN_AT_TOP = {".github", "noxfile.py", ".pre-commit-config.yaml", "README.md"}

CPP_PYPROJECT = """[build-system]
requires = ["setuptools>=64", "torch"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-accel"
version = "0.1.0"
requires-python = ">=3.10,<3.14"
dependencies = ["torch>=2.13,<2.15"]
"""
# OpenReg's own metadata (test/cpp_extensions/open_registration_extension/torch_openreg): a Python
# floor no torch line of the matrix serves, a classifier per Python, torch unpinned
OPENREG_PYPROJECT = """[build-system]
requires = ["setuptools", "torch"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-openreg"
version = "0.0.1"
requires-python = ">=3.9,<3.14"
dependencies = [
    "torch",
]
classifiers = [
    "Programming Language :: C++",
    "Programming Language :: Python :: 3 :: Only",
    "Programming Language :: Python :: 3.9",
    "Programming Language :: Python :: 3.10",
    "Programming Language :: Python :: 3.11",
    "Programming Language :: Python :: 3.12",
    "Programming Language :: Python :: 3.13",
]
"""


class Shape(NamedTuple):
    distribution: str
    package: str
    device: str
    make: Callable[[Path], None]
    tests: int  # the tests its suite holds


def _example(name: str, pyproject: str) -> Callable[[Path], None]:
    def make(repo: Path) -> None:
        source = REPO / "examples" / name

        def skip(folder: str, names: list) -> list:
            top = Path(folder) == source
            return [n for n in names if n in _NOT_THE_AUTHORS or (top and n in _WRITTEN_AT_TOP)]

        shutil.copytree(source, repo, ignore=skip)
        (repo / "pyproject.toml").write_text(pyproject)

    return make


def _skbuild(repo: Path) -> None:
    shutil.copytree(FIXTURES / "adopt" / "skbuild-src", repo)


SHAPES: Dict[str, Shape] = {
    "cpp-extension": Shape("tiny-accel", "tiny_accel", "tiny", _example("cpp-adapter", CPP_PYPROJECT), 3),
    "openreg-cmake": Shape("tiny-openreg", "tiny_openreg", "tinyreg", _example("cmake-adapter", OPENREG_PYPROJECT), 4),
    "skbuild-src": Shape("tiny-sk", "tiny_sk", "tinysk", _skbuild, 2),
}
