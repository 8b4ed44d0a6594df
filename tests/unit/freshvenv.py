"""Fresh virtual environments holding exactly the distributions a test names.

Our wheels are installed for real (``uv pip install --offline --no-deps``). Their
third-party dependencies (torch included) are not downloaded again: each one, with its
own dependencies, is linked from the environment running the tests into a folder that
a ``.pth`` file puts on the fresh environment's ``sys.path``. Only the named
distributions are linked (their top-level packages and ``.dist-info``), so the fresh
environment sees nothing of ours that the test did not install, and no network is used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Iterable, List, Set

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
OURS = {"adapter-matrix", "adapter-matrix-npu"}


def _closure(names: Iterable[str]) -> List[metadata.Distribution]:
    """The installed distributions ``names`` and everything they require here."""
    todo = list(names)
    seen: Set[str] = set()
    found = []
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen or name in OURS:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # e.g. a requirement whose marker excludes this interpreter
        found.append(dist)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


def _top_levels(dist: metadata.Distribution) -> Set[str]:
    """The entries of site-packages that belong to ``dist`` (packages, modules, .dist-info)."""
    return {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}


class FreshVenv:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "bin" / "python"
        subprocess.run([UV, "venv", "-q", "--python", sys.executable, str(root)], check=True, timeout=60)
        self.purelib = Path(self.run("import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
        self.deps = root / "linked-deps"
        self.deps.mkdir()
        (self.purelib / "linked-deps.pth").write_text(str(self.deps) + "\n")

    def install(self, *wheels: Path) -> None:
        """Install our wheels, without their dependencies (link those with :meth:`link`)."""
        subprocess.run(
            [UV, "pip", "install", "-q", "--offline", "--no-deps", "--python", str(self.python), *map(str, wheels)],
            check=True,
            timeout=120,
        )

    def link(self, *requirements: str) -> None:
        """Make the installed distributions ``requirements`` (and theirs) importable here."""
        for dist in _closure(requirements):
            base = Path(str(dist.locate_file("")))
            for entry in _top_levels(dist):
                target = self.deps / entry
                if not target.exists() and (base / entry).exists():
                    target.symlink_to(base / entry)

    def bin(self, name: str) -> str:
        return str(self.root / "bin" / name)

    def run(
        self, code: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600
    ) -> subprocess.CompletedProcess:
        full = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TORCH_DEVICE_BACKEND_AUTOLOAD")}
        full.update(env or {})  # in-process CLI runs of other tests may have turned autoload off
        return subprocess.run(
            [str(self.python), "-c", code],
            cwd=str(cwd or self.root),
            env=full,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def requirements_of(wheel: Path) -> List[str]:
    """The ``Requires-Dist`` names of a wheel (markers for this interpreter applied)."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    out = []
    for line in text.splitlines():
        if line.startswith("Requires-Dist:"):
            req = Requirement(line.split(":", 1)[1].strip())
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                out.append(req.name)
    return out
