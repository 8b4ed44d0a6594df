"""An offline wheel folder for nox cells: this environment's torch dependencies, pytest and the
tool's dependencies, packed back into wheels (torch itself comes from /opt/wheels)."""

from __future__ import annotations

import importlib.metadata as metadata
import os
from pathlib import Path

from .wheelhouse import repack, requirements_closure

LOCAL_TORCH = "/opt/wheels"  # the development machines' torch 2.13.0+cpu wheel


def cell_wheelhouse(folder: Path, more: tuple = ()) -> str:
    """Fill ``folder``; the value of $ADAPTER_MATRIX_WHEELS that installs a cell from it and /opt/wheels.
    ``more``: other roots a cell installs (expecttest, numpy: PyTorch-style tests)."""
    folder.mkdir(parents=True, exist_ok=True)
    seen = set()
    # setuptools, scikit-build-core: the build backends a compiled adapter's cell installs before
    # building it there
    for root in ("adapter-matrix", "pytest", "torch", "setuptools", "scikit-build-core", *more):
        for dist in [metadata.distribution(root), *requirements_closure(root)]:
            name = dist.metadata["Name"].lower()
            if name in seen or name in ("torch", "adapter-matrix", "adapter-matrix-npu"):
                continue
            seen.add(name)
            repack(dist, folder)
    return os.pathsep.join([LOCAL_TORCH, str(folder)])
