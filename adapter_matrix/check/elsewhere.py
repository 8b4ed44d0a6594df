"""Another environment, judged from its files: ``check --env PATH``.

``PATH`` may be a virtual environment, a prefix (``/usr/local``, a conda environment), a
site-packages folder, or an image's unpacked root (``docker export`` | ``tar x``). Its import
path is found as ``site`` would build it (the site-packages folders and the folders their
``.pth`` files add, an editable install's among them), its Python from ``pyvenv.cfg`` or the
``pythonX.Y`` folder name. Nothing of it is run: ``check`` reads distribution metadata,
entry points and libraries there instead of along ``sys.path``: the :class:`Target` is
located once (``check.pipeline.run``) and passed to every fact read of it (``check.facts``). What cannot be read from files stays this
machine's: environment variables, and the commands a matrix's detectors run.
"""

from __future__ import annotations

import glob
import os
import re
from typing import List, NamedTuple, Optional, Sequence, Tuple

from ..errors import ChoiceError

__all__ = ["Target", "locate", "with_front"]


class Target(NamedTuple):
    """An environment other than the running one."""

    paths: Tuple[str, ...]  # its import path (site-packages folders and what their .pth files add)
    root: str  # "/" for this machine; an image's root: absolute paths live under it
    python: str  # feature release: 3.11, 3.13t
    python_full: str
    description: str  # "virtual environment /x", for the report
    # the running interpreter itself, searched with --pythonpath's folders first: its own
    # libraries, its working folder and --deep still apply (see with_front)
    here: bool = False


def with_front(target: Optional[Target], front: Sequence[str]) -> Optional[Target]:
    """``target`` (None: the running interpreter) with the folders of ``front`` searched first,
    as ``PYTHONPATH``'s are (``check --pythonpath``)."""
    folders = tuple(os.path.abspath(p) for p in front if p)
    if not folders:
        return target
    if target is not None:
        return target._replace(paths=tuple(dict.fromkeys((*folders, *target.paths))))
    import sys

    info = sys.version_info
    feature, full = f"{info.major}.{info.minor}", f"{info.major}.{info.minor}.{info.micro}"
    paths = tuple(dict.fromkeys((*folders, *sys.path)))
    return Target(paths, "/", feature, full, "this interpreter with --pythonpath", here=True)


_SITE_GLOBS = (
    "lib/python3*/site-packages",
    "lib64/python3*/site-packages",
    "lib/python3*/dist-packages",
    "local/lib/python3*/dist-packages",
    "lib/python3/dist-packages",
)
_IMAGE_PREFIXES = ("usr/local", "usr", "opt/conda", "opt/venv", "venv", "opt/python")


def _has_distributions(folder: str) -> bool:
    try:
        return any(n.endswith(".dist-info") for n in os.listdir(folder))
    except OSError:
        return False


def _with_pth(sites: List[str], root: str) -> Tuple[str, ...]:
    """The folders ``site.addsitedir`` would add: each site folder, then the existing
    folders its ``.pth`` files name (``import`` lines are code, not read)."""
    out: List[str] = []
    for site in sites:
        out.append(site)
        try:
            names = sorted(n for n in os.listdir(site) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(site, name), encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                folder = line if os.path.isabs(line) else os.path.join(site, line)
                if os.path.isabs(line) and root not in ("", "/"):
                    folder = os.path.join(root, line.lstrip("/"))
                if os.path.isdir(folder) and folder not in out:
                    out.append(folder)
    return tuple(dict.fromkeys(out))


def _python_of(site: str, config: Optional[str] = None) -> Tuple[str, str]:
    """(feature release, full version) from ``pyvenv.cfg`` or the ``pythonX.Y`` folder name."""
    feature = ""
    m = re.search(r"python(3\.\d+t?)", site)
    if m:
        feature = m.group(1)
    full = feature
    if config:
        try:
            with open(config, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            v = re.search(r"^\s*version(?:_info)?\s*=\s*(3\.\d+\.\d+)", text, re.M)
            if v:
                full = v.group(1)
                feature = feature or ".".join(full.split(".")[:2])
        except OSError:
            pass
    return feature, full


def _sites(prefix: str) -> List[str]:
    found: List[str] = []
    for pattern in _SITE_GLOBS:
        found += sorted(glob.glob(os.path.join(glob.escape(prefix), pattern)))
    # a venv's lib64 is a link to lib: one folder, read (and warned about) once, as site does
    real = {os.path.realpath(s): s for s in reversed(found) if os.path.isdir(s)}
    return [s for s in found if real.get(os.path.realpath(s)) == s]


def locate(path: str) -> Target:
    """The environment at ``path``; raises :class:`~adapter_matrix.errors.ChoiceError` saying what was looked for."""
    here = os.path.abspath(path)
    shown = path if os.path.isabs(path) else os.path.normpath(path)  # as the user named it (a report's line)
    if not os.path.isdir(here):
        raise ChoiceError(
            "env",
            f"{path}: not a folder (give a virtual environment, a prefix, a site-packages folder or an image's root)",
        )
    config = os.path.join(here, "pyvenv.cfg")
    if _has_distributions(here) and not os.path.isfile(config):
        feature, full = _python_of(here)
        return Target(_with_pth([here], "/"), "/", feature, full, f"site folder {shown}")
    sites = _sites(here)
    if sites:
        kind = "virtual environment" if os.path.isfile(config) else "prefix"
        feature, full = _python_of(sites[0], config if os.path.isfile(config) else None)
        extra: List[str] = []
        if os.path.isfile(config):  # a venv that sees its base interpreter's packages sees them here too
            with open(config, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            home = re.search(r"^\s*home\s*=\s*(.+)$", text, re.M)
            if home and re.search(r"include-system-site-packages\s*=\s*true", text, re.I):
                extra = _sites(os.path.dirname(home.group(1).strip()))
        return Target(_with_pth(sites + extra, "/"), "/", feature, full, f"{kind} {shown}")
    for prefix in _IMAGE_PREFIXES:
        sites = _sites(os.path.join(here, prefix))
        if sites:
            feature, full = _python_of(sites[0])
            return Target(_with_pth(sites, here), here, feature, full, f"image root {here}")
    raise ChoiceError(
        "env",
        f"{path}: no site-packages found (looked for {', '.join(_SITE_GLOBS[:2])}, and under "
        f"{', '.join('/' + p for p in _IMAGE_PREFIXES[:3])} of an image's root)",
    )
