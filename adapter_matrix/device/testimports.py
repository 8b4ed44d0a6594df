"""What an adapter's own tests import that its cells must install: PyTorch's test machinery.

Tests written like PyTorch's (OpenReg's, torch_npu's) import
``torch.testing._internal.common_utils``, which imports ``expecttest`` and ``numpy``; some use
``hypothesis`` too. None of them is a dependency of torch's wheel, so a cell that installs
pytest alone stops at collection (``ModuleNotFoundError: No module named 'expecttest'``).
``init`` reads the test files' imports and writes what they need into the generated noxfile
(``Adapter(requirements=[...])``: visible and editable); each cell reads them again, so a
test file added later still gets them. Files are parsed (:mod:`ast`), never imported.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Iterable, List, Optional, Set

__all__ = ["MACHINERY", "add_line", "missing_module", "requirements_of_tests"]

MACHINERY = "torch.testing._internal"  # PyTorch's test machinery (common_utils, common_device_type, ...)
MACHINERY_NEEDS = ("expecttest", "numpy")  # what common_utils imports that torch does not install
_NO_MODULE = re.compile(r"No module named '(?P<name>[A-Za-z0-9_.]+)'")


def _imported(path: str) -> Set[str]:
    """The modules a Python file imports (absolute imports; ``from torch.testing import _internal``
    counts as ``torch.testing._internal``); nothing for a file that does not parse."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return set()
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _python_files(folder: str) -> Iterable[str]:
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        yield from (os.path.join(top, name) for name in sorted(files) if name.endswith(".py"))


def requirements_of_tests(folder: str) -> List[str]:
    """What the tests under ``folder`` import that a cell must install besides pytest:
    ``expecttest`` and ``numpy`` when they import PyTorch's test machinery, ``hypothesis``
    when they import it. ``[]`` for a folder that does not exist."""
    imported: Set[str] = set()
    for path in _python_files(folder):
        imported |= _imported(path)
    needed: List[str] = []
    if any(name == MACHINERY or name.startswith(MACHINERY + ".") for name in imported):
        needed += MACHINERY_NEEDS
    if any(name.split(".")[0] == "hypothesis" for name in imported):
        needed.append("hypothesis")
    return needed


def missing_module(output: str) -> Optional[str]:
    """The top-level module a failed collection could not import (``expecttest`` from
    ``ModuleNotFoundError: No module named 'expecttest'``), or ``None``."""
    found = _NO_MODULE.search(output)
    return found["name"].split(".")[0] if found else None


def add_line(module: str) -> str:
    """The line to add to the noxfile's ``Adapter(...)`` for a module the tests import."""
    return f'requirements=["{module}"],  # in Adapter(...) of noxfile.py: the tests import {module}'
