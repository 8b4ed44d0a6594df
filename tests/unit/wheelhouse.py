"""A folder of wheels for a distribution's dependencies, made from this environment.

Tools that build their own virtual environment (``pre-commit try-repo``) install the
adapter-matrix requirements with pip. To keep such tests offline, the distributions
already installed here are packed back into wheels (the files their RECORD lists, minus
scripts and bytecode), and pip is pointed at that folder with ``--no-index``.
"""

from __future__ import annotations

import importlib.metadata as metadata
import shutil
from pathlib import Path
from typing import Dict, Iterable, List, Set

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from adapter_matrix.ci.wheels import repack

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


def wheelhouse(root: str, folder: Path, extra_wheels: Iterable[Path] = ()) -> Set[str]:
    """Fill ``folder`` with wheels of ``root``'s dependencies (and ``extra_wheels``); their names."""
    folder.mkdir(parents=True, exist_ok=True)
    for wheel in extra_wheels:
        shutil.copy(wheel, folder)
    return {repack(dist, folder).name for dist in requirements_closure(root)} | {Path(w).name for w in extra_wheels}
