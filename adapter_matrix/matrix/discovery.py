"""Find the matrix files to use: an explicit path, ./compat.yaml, or installed adapters.

An adapter registers its packaged matrix under the entry point group
``adapter_matrix.matrices``; the value names a package and a file inside it::

    [project.entry-points."adapter_matrix.matrices"]
    my-adapter = "my_adapter:compat.yaml"

The entry point is never *loaded*: the package is located with
:func:`importlib.util.find_spec`, which does not import it (importing an adapter
usually imports torch, which ``check`` must not do).
"""

from __future__ import annotations

import os
from typing import Any, List, NamedTuple, Optional, Sequence

__all__ = ["GROUP", "Located", "registered_matrices", "package_matrices", "find_matrices"]

GROUP = "adapter_matrix.matrices"
DEFAULT_NAME = "compat.yaml"


class Located(NamedTuple):  # not a dataclass: `check` would import dataclasses and inspect (~10 ms)
    """A matrix file and how it was found."""

    path: str
    origin: str  # "--matrix", "argument", "working directory", or "entry point NAME (DISTRIBUTION)"


def _where(dist: Any) -> str:
    return str(getattr(dist, "_path", None) or getattr(dist, "_normalized_name", None) or "a distribution")


def _entry_points(paths: Optional[Sequence[str]] = None, skipped: Optional[List[str]] = None) -> List[Any]:
    """The entry points of ``GROUP`` of every distribution on ``paths`` (default this process's
    import path), the first of each name only, as importlib does; a distribution whose files
    cannot be read is skipped, never a traceback, and said in ``skipped`` (one sentence each)."""
    skipped = skipped if skipped is not None else []
    import sys
    from importlib import metadata

    found = []
    names = set()
    for dist in metadata.distributions(path=list(paths) if paths is not None else sys.path):
        name = getattr(dist, "_normalized_name", None)
        if paths is None and name is not None:  # this process: importlib's rule, the first of a name
            if name in names:
                continue
            names.add(name)
        try:
            found += [ep for ep in dist.entry_points if ep.group == GROUP]
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            skipped.append(f"{_where(dist)}: skipped, its entry points cannot be read ({type(exc).__name__}: {exc})")
    return found


def _distribution_name(ep: Any, skipped: List[str]) -> Optional[str]:
    """The name of the distribution an entry point comes from, when its metadata can be read."""
    try:
        return getattr(getattr(ep, "dist", None), "name", None)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        skipped.append(f"{_where(ep.dist)}: its METADATA cannot be read ({type(exc).__name__}: {exc})")
        return None


def _package_file(value: str, paths: Optional[Sequence[str]] = None) -> Optional[str]:
    import importlib.util

    module, _, resource = value.partition(":")
    module = module.strip()
    top, _, rest = module.partition(".")
    if paths is not None:  # another environment: its folders, never this process's finders
        locations = [os.path.join(p, top) for p in paths if os.path.isdir(os.path.join(p, top))][:1]
    else:
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.submodule_search_locations:
            return None
        locations = list(spec.submodule_search_locations)
    # a namespace package has a portion per folder (one may be a project folder named like
    # the package, found on the working directory): the file is in one of them, or none
    for location in locations:
        path = os.path.join(location, *[p for p in rest.split(".") if p], resource.strip() or DEFAULT_NAME)
        if os.path.isfile(path):
            return path
    return None


def registered_matrices(paths: Optional[Sequence[str]] = None, skipped: Optional[List[str]] = None) -> List[Located]:
    """Matrices registered by installed distributions, one per entry point; ``paths``: the
    import path of another environment (``check --env``), not this process's."""
    out = []
    seen = set()
    skipped = skipped if skipped is not None else []
    for ep in _entry_points(paths, skipped):
        path = _package_file(ep.value, paths)
        if path is None:  # a matrix registered and not installed: its stack would go unjudged, unsaid
            dist = _distribution_name(ep, skipped) or ep.name
            skipped.append(
                f"{dist} registers its matrix as {ep.value.strip()} ({GROUP}), which is not found on the import "
                f"path: it is not judged; reinstall {dist}, or pass its compat.yaml with --matrix"
            )
            continue
        if os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        dist = _distribution_name(ep, skipped)
        out.append(Located(path, f"entry point {ep.name}" + (f" ({dist})" if dist else "")))
    return out


def package_matrices(package: str) -> List[str]:
    """The registered matrix files that live in ``package`` (an adapter asking for its own)."""
    top = package.partition(".")[0]
    out = []
    for ep in _entry_points():
        if ep.value.partition(":")[0].strip().partition(".")[0] == top:
            path = _package_file(ep.value)
            if path is not None and path not in out:
                out.append(path)
    return out


def find_matrices(
    explicit: Optional[str] = None,
    cwd: Optional[str] = None,
    paths: Optional[Sequence[str]] = None,
    skipped: Optional[List[str]] = None,
) -> List[Located]:
    """``--matrix`` if given; else ./compat.yaml; else every registered matrix (of the
    environment whose import path is ``paths``, default this process's)."""
    if explicit:
        return [Located(explicit, "--matrix")]
    here = os.path.join(cwd or os.getcwd(), DEFAULT_NAME)
    if os.path.isfile(here):
        return [Located(DEFAULT_NAME if cwd is None else here, "working directory")]
    return registered_matrices(paths, skipped)
