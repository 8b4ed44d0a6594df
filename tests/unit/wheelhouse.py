"""A folder of wheels for a distribution's dependencies, made from this environment.

Tools that build their own virtual environment (``pre-commit try-repo``) install the
adapter-matrix requirements with pip. To keep such tests offline, the distributions
already installed here are packed back into wheels (the files their RECORD lists, minus
scripts and bytecode), and pip is pointed at that folder with ``--no-index``.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import re
import shutil
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Set

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = ["requirements_closure", "repack", "wheelhouse"]


def requirements_closure(root: str) -> List[metadata.Distribution]:
    """``root``'s installed dependencies (no extras), recursively, without ``root`` itself."""
    seen: Dict[str, metadata.Distribution] = {}
    todo = [root]
    while todo:
        dist = metadata.distribution(todo.pop())
        for line in dist.requires or ():
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate(dict(default_environment(), extra="")):
                continue
            name = canonicalize_name(req.name)
            if name not in seen:
                seen[name] = metadata.distribution(req.name)
                todo.append(req.name)
    return list(seen.values())


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def repack(dist: metadata.Distribution, folder: Path) -> Path:
    """Write ``dist`` (installed) as a wheel into ``folder``; returns its path."""
    tags = [t.split("-") for t in re.findall(r"^Tag: (\S+)", dist.read_text("WHEEL") or "", re.M)] or [
        ["py3", "none", "any"]
    ]
    # the compressed tag set of the file name: each part's values joined by dots (py2.py3-none-any)
    tag = "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    target = folder / f"{name}-{dist.version}-{tag}.whl"
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
            data = Path(f.locate()).read_bytes()
            whl.writestr(arcname, data)
            records.append(_record_line(arcname, data))
        whl.writestr(record_name, "\n".join(records + [f"{record_name},,"]) + "\n")
    return target


def wheelhouse(root: str, folder: Path, extra_wheels: Iterable[Path] = ()) -> Set[str]:
    """Fill ``folder`` with wheels of ``root``'s dependencies (and ``extra_wheels``); their names."""
    folder.mkdir(parents=True, exist_ok=True)
    for wheel in extra_wheels:
        shutil.copy(wheel, folder)
    return {repack(dist, folder).name for dist in requirements_closure(root)} | {Path(w).name for w in extra_wheels}
