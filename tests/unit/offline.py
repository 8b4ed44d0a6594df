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


def op_cell_env(cell: Path, scratch: Path, **extra: str) -> dict:
    """The environment of an offline nox cell of the adapter at ``cell`` that runs PyTorch's test
    machinery (the op sweep, ``ops tests``): ``cell`` committed as a git repository (its record
    names a commit), a wheelhouse in ``scratch`` with expecttest and numpy beside the cell's
    wheels, and the cell's results and evidence in ``scratch``."""
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "."], cwd=cell, check=True)
    subprocess.run([*git, "add", "-A"], cwd=cell, check=True)
    subprocess.run([*git, "commit", "-qm", cell.name], cwd=cell, check=True)
    wheels = cell_wheelhouse(scratch / "wheelhouse")
    for name in ("expecttest", "numpy"):  # what PyTorch's test machinery imports in the cell
        for dist in [metadata.distribution(name), *requirements_closure(name)]:
            repack(dist, scratch / "wheelhouse")
    env = dict(
        os.environ,
        ADAPTER_MATRIX_WHEELS=wheels,
        ADAPTER_MATRIX_RESULTS=str(scratch / "results"),
        ADAPTER_MATRIX_EVIDENCE=str(scratch / "evidence"),
        UV_OFFLINE="1",
        MAX_JOBS="1",
        **extra,
    )
    env.pop("ADAPTER_MATRIX_OPS", None)
    return env
