"""Facts about this process, found cheaply: which Python it is and which
distributions are installed. Imports nothing heavy (it runs inside ``import torch``
under autoload, and at the start of every ``check``).

Each fact is of the running process unless a ``target`` is passed (``check --env``: another
environment, read from its files). The target is an argument, never remembered here: whoever
judges another environment passes it down (issue 70: no hidden state).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence, Tuple

from ..names import canonical_name

if TYPE_CHECKING:
    from .elsewhere import Target

__all__ = [
    "python_identity",
    "distribution_version",
    "distribution_requires",
    "distribution_folder",
    "search_path",
    "unreadable_metadata",
]


def search_path(target: Optional[Target] = None) -> List[str]:
    """Where distributions are looked up: ``sys.path``, or ``target``'s import path."""
    return list(target.paths) if target is not None else sys.path


def python_identity(target: Optional[Target] = None) -> Tuple[str, str, str]:
    """(feature release such as ``3.11`` or ``3.13t``, full version, implementation name)."""
    if target is not None:
        return target.python, target.python_full, "cpython"
    info = sys.version_info
    feature = f"{info.major}.{info.minor}" + ("t" if _free_threaded() else "")
    full = f"{info.major}.{info.minor}.{info.micro}" + (
        "" if info.releaselevel == "final" else f"{info.releaselevel[0]}{info.serial}"
    )
    return feature, full, sys.implementation.name


def _free_threaded() -> bool:
    """A free-threaded build (3.13t): its ABI flags hold ``t``. sysconfig says so too, but
    reading its configuration costs ~1.5 ms of every ``check`` and activation."""
    flags = getattr(sys, "abiflags", None)
    if flags is not None:
        return "t" in flags
    import sysconfig  # pragma: no cover - Windows has no sys.abiflags

    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def _metadata_version(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():  # end of the headers
                    return None
    except OSError:
        return None
    return None


def distribution_version(name: str, target: Optional[Target] = None) -> Optional[str]:
    """The installed version string of a distribution, or ``None``.

    Looks for ``NAME-VERSION.dist-info`` (and a legacy ``.egg-info``) along ``sys.path``
    first (the first hit wins, as with :mod:`importlib.metadata`), reading only its
    ``Version:`` header; that avoids the ~20 ms import of :mod:`importlib.metadata` on
    ``check``'s start-up. Only when some ``sys.path`` entry is not a folder (a zip, an
    egg) does a miss fall back to :mod:`importlib.metadata`: a distribution that is not
    installed (most companions) is answered by the scan alone.
    """
    wanted = canonical_name(name)
    archives = False
    for entry in search_path(target):
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:
            archives = True
            continue
        except OSError:
            continue
        for item in names:
            if item.endswith((".dist-info", ".egg-info")) and canonical_name(item.split("-", 1)[0]) == wanted:
                folder = os.path.join(entry or ".", item)
                version = _metadata_version(
                    os.path.join(folder, "METADATA" if item.endswith(".dist-info") else "PKG-INFO")
                )
                if version:
                    return version
    if not archives or target is not None:
        return None
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _dist_infos(name: str, paths: Sequence[str]) -> Iterator[Tuple[str, str]]:
    """``(site folder, dist-info folder)`` of each dist-info of ``name`` along ``paths``, in order."""
    wanted = canonical_name(name)
    for entry in paths:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for item in names:
            if item.endswith(".dist-info") and canonical_name(item.split("-", 1)[0]) == wanted:
                yield entry or ".", os.path.join(entry or ".", item)


def unreadable_metadata(name: str, target: Optional[Target] = None) -> Optional[str]:
    """How an installed distribution whose metadata has no ``Version:`` is said on every surface
    (``installed, but its metadata is unreadable (FOLDER/METADATA has no Version)``), asked when
    :func:`distribution_version` found none (so no dist-info of it along the path is readable),
    else None: such a distribution is installed and broken, not absent."""
    for _site, folder in _dist_infos(name, search_path(target)):
        metadata = os.path.join(folder, "METADATA")
        if not _metadata_version(metadata):
            return f"installed, but its metadata is unreadable ({metadata} has no Version)"
    return None


def distribution_requires(name: str, target: Optional[Target] = None) -> Tuple[str, ...]:
    """The ``Requires-Dist`` lines of an installed distribution (``()`` when it is not
    installed): PyPI's CUDA torch is told from a CPU one by its ``nvidia-*`` requirements."""
    wanted = canonical_name(name)
    for entry in search_path(target):
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in names:
            if item.endswith(".dist-info") and canonical_name(item.split("-", 1)[0]) == wanted:
                try:
                    with open(os.path.join(entry or ".", item, "METADATA"), encoding="utf-8", errors="replace") as fh:
                        out = []
                        for line in fh:
                            if not line.strip():
                                break
                            if line.startswith("Requires-Dist:"):
                                out.append(line.split(":", 1)[1].strip())
                        return tuple(out)
                except OSError:
                    return ()
    return ()


def distribution_folder(name: str, paths: Optional[Sequence[str]] = None) -> Optional[Tuple[str, str]]:
    """``(site folder, dist-info folder)`` of the installed distribution ``name``, looked
    up along ``paths`` (default ``sys.path``) as :func:`distribution_version` looks; None
    when absent. The binary check reads its ``RECORD`` from there."""
    for entry, folder in _dist_infos(name, search_path() if paths is None else paths):
        if _metadata_version(os.path.join(folder, "METADATA")):
            return entry, folder
    return None
