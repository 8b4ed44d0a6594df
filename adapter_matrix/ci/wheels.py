"""Build this repository's distributions the way an index would serve them.

The nox cells and the packaging tests install wheels, not the source tree: a file
missing from the wheel (a C++ header, the packaged matrix) fails there, not at a user's.
Each project is built as a source distribution first and the wheel from that (``uv
build``), so a file the sdist leaves out is caught too, and nothing stale from an
earlier in-tree ``build/`` folder can slip into a wheel.

Without network access the build backend must already be installed in ``python``
(setuptools; the development environment has it): the build then runs without
isolation. Otherwise uv fetches setuptools into an isolated build environment.

:func:`tool_wheel` is adapter-matrix itself as a wheel, for a cell's environment: the copy
that runs nox (and imports the noxfile) is the copy that judges the cell, wherever it came
from (an index, a git URL, a checkout), offline too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import List, Optional, Sequence
from urllib.parse import unquote, urlparse

from ..errors import AdapterMatrixError
from ..names import escaped_name

__all__ = ["WheelBuildError", "find_uv", "build_wheels", "repack", "installed_tool", "tool_wheel", "TOOL"]

TOOL = "adapter-matrix"


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


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def repack(dist: metadata.Distribution, folder: Path) -> Path:
    """Write ``dist`` (installed, not editable) as a wheel into ``folder``: the files its RECORD
    lists, minus scripts (the installer makes them again from ``entry_points.txt``) and bytecode."""
    tags = [t.split("-") for t in re.findall(r"^Tag: (\S+)", dist.read_text("WHEEL") or "", re.M)] or [
        ["py3", "none", "any"]
    ]
    # the compressed tag set of the file name: each part's values joined by dots (py2.py3-none-any)
    tag = "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))
    name = escaped_name(dist.metadata["Name"])
    target = Path(folder) / f"{name}-{dist.version}-{tag}.whl"
    files = [f for f in dist.files or () if not str(f).startswith("..") and "__pycache__" not in f.parts]
    records: List[str] = []
    record_name = ""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as whl:
        for f in files:
            arcname = f.as_posix()
            top = arcname.count("/") == 1  # the distribution's own .dist-info, not one vendored inside it (setuptools)
            if top and arcname.endswith(".dist-info/RECORD"):
                record_name = arcname
                continue
            if top and arcname.endswith((".dist-info/INSTALLER", ".dist-info/REQUESTED", ".dist-info/direct_url.json")):
                continue
            data = Path(str(f.locate())).read_bytes()
            whl.writestr(arcname, data)
            records.append(_record_line(arcname, data))
        whl.writestr(record_name, "\n".join(records + [f"{record_name},,"]) + "\n")
    return target


def _checkout(dist: metadata.Distribution) -> Optional[Path]:
    """The source folder of an editable install of ``dist``, else ``None``.

    PEP 610's ``direct_url.json`` tells how the installer got it: ``dir_info`` with
    ``editable: true`` is a checkout whose files the environment only links to; ``dir_info``
    without it (``pip install ./adapter-matrix``) was built into a wheel and installed like any
    other, as were ``vcs_info`` (a git URL) and ``archive_info`` (a wheel or an sdist)."""
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        return None
    if not isinstance(direct, dict) or not isinstance(direct.get("dir_info"), dict):
        return None
    if direct["dir_info"].get("editable") is not True:
        return None
    url = urlparse(str(direct.get("url", "")))
    return Path(unquote(url.path)) if url.scheme == "file" else None


def installed_tool() -> metadata.Distribution:
    """The adapter-matrix installed in this environment: the one an installer recorded (its
    RECORD), not the ``adapter_matrix.egg-info`` that setuptools leaves in a checkout, which
    shadows it whenever the checkout is the working directory (``python -m pytest`` there)."""
    for dist in metadata.distributions(name=TOOL):
        if dist.read_text("RECORD") is not None:
            return dist
    raise WheelBuildError(f"{TOOL} is not installed in this environment: pip install {TOOL}")


def tool_wheel(out_dir: os.PathLike[str] | str, python: str = sys.executable) -> Path:
    """This adapter-matrix as a wheel in ``out_dir``, to install into a cell.

    An editable install (a checkout) is built from its folder, as the cells build any project;
    any other install (from an index, a git URL, a wheel, a local folder) is packed back from
    its installed files, so the cell gets the very copy running nox without asking an index
    again, and without a build backend the runner may lack (Python 3.11's venv has setuptools
    65 without ``wheel``)."""
    dist = installed_tool()
    folder = _checkout(dist)
    if folder is not None and (folder / "pyproject.toml").is_file():
        (wheel,) = build_wheels([folder], out_dir, python)
        return wheel
    if folder is not None:
        raise WheelBuildError(f"{TOOL} is installed from {folder}, which is gone: install it again")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return repack(dist, out)
