"""Find CPython interpreters for test sessions, wherever they are installed.

nox looks for ``python3.X`` on ``PATH``. pyenv puts *shims* there that fail unless the
version is active (``PYENV_VERSION``), and uv keeps its own store. :func:`expose`
collects one interpreter per feature release from pyenv's versions folder, uv's store
and ``PATH``, and links them into one folder that is put first on ``PATH``, so that
``python3.8`` simply works without anyone knowing about pyenv.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
from typing import Dict, Iterable, Optional, Tuple

__all__ = ["find_interpreters", "expose"]

_VERSION_DIR = re.compile(r"^(\d+)\.(\d+)\.(\d+)(t?)$")


def _pyenv_root() -> Optional[str]:
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    return root if os.path.isdir(os.path.join(root, "versions")) else None


def _from_pyenv() -> Dict[str, str]:
    root = _pyenv_root()
    found: Dict[str, Tuple[int, str]] = {}
    if root is None:
        return {}
    for path in glob.glob(os.path.join(root, "versions", "*")):
        match = _VERSION_DIR.match(os.path.basename(path))
        if not match:
            continue
        major, minor, micro, t = match.groups()
        name = f"{major}.{minor}{t}"
        exe = os.path.join(path, "bin", f"python{name}")
        if os.access(exe, os.X_OK) and (name not in found or int(micro) > found[name][0]):
            found[name] = (int(micro), exe)
    return {name: exe for name, (_, exe) in found.items()}


def _from_uv(wanted: Iterable[str]) -> Dict[str, str]:
    uv = shutil.which("uv")
    out: Dict[str, str] = {}
    if uv is None:
        return out
    for name in wanted:
        try:
            proc = subprocess.run(
                [uv, "python", "find", "--no-project", name], capture_output=True, text=True, timeout=20
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        path = proc.stdout.strip()
        if proc.returncode == 0 and path and "/shims/" not in path:
            out[name] = path
    return out


def _works(exe: str) -> bool:
    try:
        return subprocess.run([exe, "-c", "pass"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_interpreters(wanted: Iterable[str]) -> Dict[str, str]:
    """Map each wanted feature release (``"3.8"``, ``"3.13t"``) to a working interpreter."""
    wanted = list(dict.fromkeys(wanted))
    found = {k: v for k, v in _from_pyenv().items() if k in wanted}
    for name in wanted:
        if name in found:
            continue
        on_path = shutil.which(f"python{name}")
        if on_path and "/shims/" not in on_path and _works(on_path):
            found[name] = on_path
    missing = [n for n in wanted if n not in found]
    found.update(_from_uv(missing))
    return found


def expose(wanted: Iterable[str], folder: Optional[str] = None) -> Dict[str, str]:
    """Link the interpreters found into ``folder`` (default: a temporary one) and put it
    first on ``PATH``. Returns what was linked."""
    found = find_interpreters(wanted)
    if folder is None:
        import atexit

        folder = tempfile.mkdtemp(prefix="adapter-matrix-pythons-")
        # links only: nox and its sessions run in this process, which removes them at exit
        # (every `nox -l` used to leave one folder behind in /tmp)
        atexit.register(shutil.rmtree, folder, True)
    os.makedirs(folder, exist_ok=True)
    for name, exe in found.items():
        link = os.path.join(folder, f"python{name}")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(exe, link)
    os.environ["PATH"] = folder + os.pathsep + os.environ.get("PATH", "")
    return found
