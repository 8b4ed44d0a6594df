"""What each torch line offers the device, as its shim declares it.

Shim modules declare absent features in ``Shim.capabilities`` (feature -> reason) and
list every feature in ``Shim.features``; they import torch only inside methods. This
module loads them under a private package name, so neither torch is imported nor the
adapter activated (its package ``__init__`` never runs): the capabilities table can be
generated, and checked for drift, anywhere.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Protocol, Tuple, cast

from ..matrix.model import Matrix, TorchLine
from ..matrix.queries import shim_for

__all__ = ["LineCapabilities", "load_shim_class", "capabilities"]

_VIEW = "_adapter_matrix_shims_view"


def _view_package(package: str) -> str:
    """A stand-in for the shims package: same folder, no ``__init__`` side effects."""
    from .build import Extension

    name = f"{_VIEW}_{package.replace('.', '_')}"
    if name not in sys.modules:
        folder = Extension.of_package(package, "").csrc.parent
        stand_in = types.ModuleType(name)
        stand_in.__path__ = [str(folder)]
        sys.modules[name] = stand_in
    return name


class ShimClass(Protocol):
    """What this module reads of a shim module's ``Shim`` class; ``features`` (feature ->
    description) and ``on_python`` (feature -> (Python specifier, why not there)) are optional."""

    capabilities: Mapping[str, str]  # feature -> why it is absent ("" when it is not)


def load_shim_class(matrix: Matrix, module: str) -> ShimClass:
    """The ``Shim`` class of ``module`` (e.g. ``shims.torch_2_4``), loaded without activation."""
    package = matrix.adapter.shims
    if package is None or not module.startswith(package + "."):
        raise ValueError(f"shim module {module} is outside the shims package {package}")
    view = _view_package(package)
    return cast(ShimClass, importlib.import_module(view + module[len(package) :]).Shim)


@dataclass(frozen=True)
class LineCapabilities:
    line: TorchLine
    shim: Optional[str]
    absent: Dict[str, str]  # feature -> why not
    absent_on: Dict[str, Tuple[str, str]]  # feature -> (Python specifier, why not there)


def capabilities(matrix: Matrix) -> Tuple[Dict[str, str], List[LineCapabilities]]:
    """(feature -> description, one entry per described torch line, newest first)."""
    features: Dict[str, str] = {}
    rows = []
    for line in reversed(matrix.torch):
        shim = shim_for(matrix, line.latest)
        if shim is None:
            rows.append(LineCapabilities(line, None, {}, {}))
            continue
        cls = load_shim_class(matrix, shim.module)
        features.update(getattr(cls, "features", {}))
        absent = {k: v for k, v in cls.capabilities.items() if v}
        rows.append(LineCapabilities(line, shim.module, absent, dict(getattr(cls, "on_python", {}))))
    return features, rows
