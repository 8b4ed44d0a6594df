"""A first ``compat.yaml`` for a new adapter (``adapter-matrix init``).

The file is written from PyPI's facts about torch (:mod:`adapter_matrix.upstream.index`):
one entry per torch line the adapter covers, with the line's release date, patches and
the Pythons its Linux x86_64 wheels exist for, and one experimental release claiming
those lines. It is schema version 2 without shims (an adapter that has its own code
uses the matrix for checks, tables and plans), and it validates as written.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Dict, List, Optional, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import ChoiceError
from ..matrix.model import SCHEMA_VERSION
from .index import Upstream, UpstreamError, UpstreamLine

__all__ = ["choose_lines", "starter_text"]

_MINOR = re.compile(r"^\d+\.\d+$")


def choose_lines(upstream: Upstream, wanted: Sequence[str]) -> List[UpstreamLine]:
    """The torch lines from the oldest to the newest that ``wanted`` names (each a minor
    such as ``2.12`` or a specifier set such as ``>=2.9``), every line between included
    so that the release's range claims only described lines; the newest line when
    ``wanted`` is empty. :class:`UpstreamError` names what PyPI has for a bad choice."""
    lines: Dict[Version, UpstreamLine] = upstream.lines()
    if not lines:
        raise UpstreamError(f"{upstream.source}: no torch line with Linux x86_64 wheels")
    known = ", ".join(str(m) for m in lines)
    picked: List[Version] = []
    for text in wanted or [str(max(lines))]:
        if _MINOR.match(text.strip()):
            minor = Version(text.strip())
            if minor not in lines:
                raise ChoiceError("torch", f"{text}: {upstream.source} has no torch {minor} (it has {known})")
            picked.append(minor)
            continue
        try:
            spec = SpecifierSet(text)
        except InvalidSpecifier:
            raise ChoiceError(
                "torch", f"{text!r}: give a torch line such as 2.12 or a specifier set such as '>=2.9'"
            ) from None
        matched = [m for m, line in lines.items() if spec.contains(line.patches[0].version)]
        if not matched:
            raise ChoiceError("torch", f"{text}: matches no torch line of {upstream.source} ({known})")
        picked += matched
    low, high = min(picked), max(picked)
    chosen = [line for minor, line in lines.items() if low <= minor <= high]
    undated = [str(line.minor) for line in chosen if line.released is None]
    if undated:
        raise UpstreamError(f"{upstream.source}: no upload date for torch {', '.join(undated)}")
    return chosen


def _flow(values: Sequence[object], quote: str = "") -> str:
    return "[" + ", ".join(f"{quote}{v}{quote}" for v in values) + "]"


def starter_text(
    distribution: str,
    device: str,
    lines: Sequence[UpstreamLine],
    origin: str,
    version: str = "0.1.0",
    python: Optional[str] = None,
    today: Optional[_dt.date] = None,
    sources: Sequence[str] = (),
) -> str:
    """The text of a first ``compat.yaml``. ``python`` is the release's Python claim
    (default: from the oldest Python any of its torch lines has a wheel for).
    :class:`ChoiceError` for a version or Python range that is not PEP 440."""
    try:
        Version(version)
    except InvalidVersion:
        raise ChoiceError("version", f"{version!r} is not a PEP 440 version") from None
    if python is None:
        oldest = min(p for line in lines for p in line.python if not p.free_threaded)
        python = f">={oldest}"
    else:
        try:
            SpecifierSet(python if python[:1] in "<>=!~" else f"=={python}")
        except InvalidSpecifier:
            raise ChoiceError("python", f"{python!r} is not a PEP 440 specifier set such as '>=3.10'") from None
    newest = max(line.minor for line in lines)
    claim = f">={min(line.minor for line in lines)},<{newest.major}.{newest.minor + 1}"
    day = (today or _dt.date.today()).isoformat()
    out = [
        f"# The compatibility matrix of {distribution}, written by `adapter-matrix init` on {day}.",
        "# Check it with `adapter-matrix validate`; keep the torch facts current with",
        "# `adapter-matrix validate --upstream pypi --write`. Reference: `adapter-matrix schema`.",
        f"schema-version: {SCHEMA_VERSION}",
        "",
        "adapter:",
        f"  distribution: {distribution}",
        f"  device: {device}",
        "",
        f"# Upstream facts from {origin}: each torch line's Linux x86_64 CPython wheels;",
        "# `released` is the upload date of X.Y.0.",
        "torch:",
    ]
    for line in lines:
        out.append(
            f'  "{line.minor}": {{released: {line.released}, patches: {_flow([p.version for p in line.patches])}, '
            f"python: {_flow(line.python, chr(34))}}}"
        )
    out += [
        "",
        "releases:",
        f"  - version: {version}",
        f'    torch: "{claim}"',
        f'    python: "{python}"',
        "    status: experimental",
        "    reason: not tested yet; mark it supported once its cells pass (`adapter-matrix plan`)",
    ]
    if sources:
        out += [
            "",
            "# What a cell's record is judged on: the package, its native sources and build files, its",
            "# tests. A change to any of them makes the records stale (`adapter-matrix validate --results`).",
            "evidence:",
            f"  sources: {_flow(list(sources))}",
        ]
    return "\n".join(out) + "\n"


def layer_text(
    distribution: str,
    adapter: str,
    version: str = "0.1.0",
    torch: Optional[str] = None,
    adapter_version: Optional[str] = None,
    python: Optional[str] = None,
    today: Optional[_dt.date] = None,
) -> str:
    """The text of a first layer's ``compat.yaml``: the layer on ``adapter``, one experimental
    release pinning the torch and the adapter it was written against (the installed ones, when
    known). :class:`ChoiceError` for a value that is not PEP 440."""
    for subject, value in (("version", version), ("torch", torch), ("adapter-version", adapter_version)):
        if value is None:
            continue
        try:
            SpecifierSet(value if value[:1] in "<>=!~" else f"=={value}")
        except InvalidSpecifier:
            raise ChoiceError(subject, f"{value!r} is not a PEP 440 version or specifier set") from None
    if python is not None:
        try:
            SpecifierSet(python if python[:1] in "<>=!~" else f"=={python}")
        except InvalidSpecifier:
            raise ChoiceError("python", f"{python!r} is not a PEP 440 specifier set such as '>=3.10'") from None
    day = (today or _dt.date.today()).isoformat()
    out = [
        f"# The matrix of {distribution}, a layer on {adapter}, written by `adapter-matrix init` on {day}.",
        f"# Each release states what it needs below it; {adapter}'s own matrix gives the torch lines and",
        "# the dimensions (a driver toolkit) it names. Check it with `adapter-matrix validate` (with the",
        "# adapter's matrix installed or given) and `adapter-matrix check`. docs/stacks.md says how.",
        f"schema-version: {SCHEMA_VERSION}",
        "",
        "layer:",
        f"  distribution: {distribution}",
        f"  adapter: {adapter}",
        "",
        "releases:",
        f"  - version: {version}",
        "    status: experimental",
        "    reason: not tested yet; mark it supported once the stack it pins passes",
    ]
    if python is not None:
        out.append(f'    python: "{python}"')
    out.append(f'    torch: "{torch}"' if torch else "    # torch: 2.10.0  # the torch it needs")
    out.append(
        f'    adapter: "{adapter_version}"'
        if adapter_version
        else f"    # adapter: 2.10.0.post4  # {adapter}'s version (or adapter-line: its release line)"
    )
    out += [
        "    # requires: {vllm: 0.23.0}  # other packages it pins",
        "    # dimensions: {cann: 9.1.0}  # what it needs of the adapter's dimensions",
    ]
    return "\n".join(out) + "\n"
