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


def _entry_points(paths: Optional[Sequence[str]] = None) -> List[Any]:
    from importlib import metadata

    if paths is not None:  # `check --env`: the entry points installed there
        found = []
        for dist in metadata.distributions(path=list(paths)):
            found += [ep for ep in dist.entry_points if ep.group == GROUP]
        return found
    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group=GROUP))
    return list(eps.get(GROUP, []))  # Python 3.8/3.9: a dict of groups


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


def registered_matrices(paths: Optional[Sequence[str]] = None) -> List[Located]:
    """Matrices registered by installed distributions, one per entry point; ``paths``: the
    import path of another environment (``check --env``), not this process's."""
    out = []
    seen = set()
    for ep in _entry_points(paths):
        path = _package_file(ep.value, paths)
        if path is None or os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        dist = getattr(getattr(ep, "dist", None), "name", None)
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
    explicit: Optional[str] = None, cwd: Optional[str] = None, paths: Optional[Sequence[str]] = None
) -> List[Located]:
    """``--matrix`` if given; else ./compat.yaml; else every registered matrix (of the
    environment whose import path is ``paths``, default this process's)."""
    if explicit:
        return [Located(explicit, "--matrix")]
    here = os.path.join(cwd or os.getcwd(), DEFAULT_NAME)
    if os.path.isfile(here):
        return [Located(DEFAULT_NAME if cwd is None else here, "working directory")]
    return registered_matrices(paths)
