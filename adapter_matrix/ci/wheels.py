"""Build this repository's distributions the way an index would serve them.

The nox cells and the packaging tests install wheels, not the source tree: a file
missing from the wheel (a C++ header, the packaged matrix) fails there, not at a user's.
Each project is built as a source distribution first and the wheel from that (``uv
build``), so a file the sdist leaves out is caught too, and nothing stale from an
earlier in-tree ``build/`` folder can slip into a wheel.

Without network access the build backend must already be installed in ``python``
(setuptools; the development environment has it): the build then runs without
isolation. Otherwise uv fetches setuptools into an isolated build environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from ..errors import AdapterMatrixError

__all__ = ["WheelBuildError", "find_uv", "build_wheels"]


class WheelBuildError(AdapterMatrixError, RuntimeError):
    """A project could not be built; the message holds the builder's last output."""


def find_uv(python: str = sys.executable) -> Optional[str]:
    """uv next to ``python`` (installed in its environment), else on ``PATH``."""
    return shutil.which("uv", path=os.path.dirname(python)) or shutil.which("uv")


def _has_setuptools(python: str) -> bool:
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('setuptools') is None)"
    return subprocess.run([python, "-c", code], capture_output=True).returncode == 0


def build_wheels(
    projects: Sequence[os.PathLike[str] | str],
    out_dir: os.PathLike[str] | str,
    python: str = sys.executable,
    timeout: float = 300,
) -> List[Path]:
    """Build each project folder (sdist, then wheel) into ``out_dir``; the wheels, in order.

    A wheel of the same name already in ``out_dir`` is replaced.
    """
    import tempfile

    uv = find_uv(python)
    if uv is None:
        raise WheelBuildError("uv is not installed (pip install uv)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    offline = ["--no-build-isolation", "--offline"] if _has_setuptools(python) else []
    wheels = []
    for project in projects:
        with tempfile.TemporaryDirectory(dir=out) as scratch:
            proc = subprocess.run(
                [uv, "build", "-q", "--python", python, *offline, "--out-dir", scratch, str(project)],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            made = sorted(Path(scratch).glob("*.whl"))
            if proc.returncode != 0 or len(made) != 1:
                raise WheelBuildError(f"cannot build {project}: {(proc.stderr or proc.stdout)[-800:]}")
            target = out / made[0].name
            os.replace(made[0], target)  # the scratch folder is inside out_dir: one file system
            wheels.append(target)
    return wheels
