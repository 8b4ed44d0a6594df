"""Companion packages: torch extensions with kernels of their own, and which of their
releases pair with which torch.

torchvision, torchaudio and an adapter's own add-ons (a device build of torchvision, an op
library) each ship compiled code built against one torch. Installing a release built for
another torch either makes pip swap the user's torch or leaves a pair that fails when an
operator is first called. ``compat.yaml`` states the pairings under ``companions:``::

    companions:
      torchvision:
        torch:                      # upstream facts, per torch line
          "2.1": {0.16.0: 2.1.0, 0.16.1: 2.1.1, 0.16.2: 2.1.2}
          "2.14": {0.29.0: 2.14.0, 0.29.1: ">=2.14.0"}
          "2.15": none
      torchvision-npu:
        adapter:                    # the adapter's own pins, per adapter release
          1.0.0: ">=1.0,<1.1"
          0.9.0: none

Under ``torch:`` each torch line maps the releases **built for it** to the torch
requirement their wheels declare (a bare version means ``==`` it), or says ``none``: no
release was built for that line. A release is built for the line of the oldest torch its
requirement admits; an open requirement (``>=2.14.0``, a build against torch's stable ABI)
also pairs with the later lines. Under ``adapter:`` each adapter release names the
companion versions that pair with it, or ``none``.

The model's types (:class:`~adapter_matrix.matrix.model.Companion` and its parts, with the
questions asked of them: which releases pair with a torch, which one to install) are in
:mod:`adapter_matrix.matrix.model`; this module holds the loader's part for the section and
the consistency checks.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from packaging.version import Version

from ..names import canonical_name
from .diagnostics import Diagnostic, Diagnostics, Mark
from .model import (
    AdapterPin,
    CellCompanion,
    Companion,
    CompanionLine,
    CompanionRelease,
    Matrix,
    minor_line,
    requirement,
)
from .reader import Reader
from .source import Mapping, Node, Scalar

__all__ = ["NONE", "requirement", "parse_companions", "parse_cell_companions", "check"]

NONE = "none"  # the word that says "no release" for a torch line or an adapter release

# PEP 508 names (https://packaging.python.org/en/latest/specifications/name-normalization/)
_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])\Z", re.IGNORECASE)


# -- loading -----------------------------------------------------------------------------


def _is_none(node: Node) -> bool:
    return isinstance(node, Scalar) and not node.is_null and node.text == NONE


def parse_companions(b: Reader, node: Optional[Node]) -> Tuple[Companion, ...]:
    """The ``companions:`` section, reporting problems through the loader's reader."""
    out = []
    for key, value in b.entries(node, "companions"):
        name = key.text
        if not _NAME.match(name):
            b.diags.error(
                key.mark,
                f"companion {name!r} is not a distribution name",
                "write its name as on PyPI, e.g. torchvision",
            )
            continue
        f = b.fields(value, "companion", f"companion {name}")
        lines = tuple(sorted(_lines(b, name, f.get("torch")), key=lambda entry: entry.minor))
        out.append(
            Companion(
                name=name,
                description=b.string(f.get("description"), "description") or "",
                lines=lines,
                adapter=_pins(b, name, f.get("adapter")),
                mark=key.mark,
                torch_facts="torch" in f,
            )
        )
    return tuple(out)


def _lines(b: Reader, name: str, node: Optional[Node]) -> List[CompanionLine]:
    out: List[CompanionLine] = []
    for key, value in b.entries(node, f"torch facts of {name}"):
        minor = b.torch_line_key(key, f"the torch facts of {name}")
        if minor is None:
            continue
        if _is_none(value):
            out.append(CompanionLine(minor, (), key.mark))
            continue
        if not isinstance(value, Mapping) or not value.entries:
            b.diags.error(
                value.mark if not _is_null(value) else key.mark,
                f"{name} for torch {minor} must map its releases to the torch they require, or say {NONE}",
                f"e.g. {{1.2.0: {minor}.0}}, or `{NONE}` when no release was built for torch {minor}",
            )
            continue
        releases = []
        for version_key, spec_node in value:
            version = b.convert(version_key, f"{name} version", Version, f"write a {name} release such as 1.2.0")
            spec = b.spec(spec_node, f"torch requirement of {name} {version_key.text}")
            if version is not None and spec is not None:
                releases.append(CompanionRelease(version, spec, minor, spec_node.mark))
        out.append(CompanionLine(minor, tuple(releases), key.mark))
    return out


def _is_null(node: Node) -> bool:
    return isinstance(node, Scalar) and (node.is_null or node.text == "")


def _pins(b: Reader, name: str, node: Optional[Node]) -> Tuple[AdapterPin, ...]:
    out = []
    for key, value in b.entries(node, f"adapter pins of {name}"):
        release = b.version(key, "adapter release")
        if release is None:
            continue
        spec = None if _is_none(value) else b.spec(value, f"{name} versions for adapter {key.text}")
        if spec is None and not _is_none(value):
            continue
        out.append(AdapterPin(release, spec, value.mark))
    return tuple(out)


def parse_cell_companions(b: Reader, node: Optional[Node]) -> Tuple[CellCompanion, ...]:
    """``ci: companions: [torchvision]``: the companions every test cell installs."""
    return tuple(
        CellCompanion(s.text, s.mark) for s in (b.scalar(n, "companion name") for n in b.items(node, "companions")) if s
    )


# -- consistency -------------------------------------------------------------------------


def check(matrix: Matrix) -> List[Diagnostic]:
    """How the companions fit the rest of the file; each finding points at the row to change."""
    diags = Diagnostics()
    patches = sorted(p for line in matrix.torch for p in line.patches)
    seen: Dict[str, Mark] = {}
    for comp in matrix.companions:
        canonical = canonical_name(comp.name)
        if canonical in seen:
            diags.error(
                comp.mark,
                f"companion {comp.name} is listed twice",
                f"it is already listed at line {seen[canonical].line}",
            )
        seen.setdefault(canonical, comp.mark)
        if canonical in (canonical_name("torch"), canonical_name(matrix.adapter.distribution)):
            diags.error(
                comp.mark,
                f"{comp.name} is not a companion: the matrix describes it already",
                "list torch extensions only",
            )
        if not comp.torch_facts and not comp.adapter:
            diags.error(
                comp.mark,
                f"companion {comp.name} states nothing",
                "give `torch:` facts per torch line or `adapter:` pins per release",
            )
        _check_lines(matrix, comp, patches, diags)
        for pin in comp.adapter:
            if matrix.release(pin.release) is None:
                known = ", ".join(str(r.version) for r in matrix.releases) or "none"
                diags.error(
                    pin.mark,
                    f"{comp.name} is pinned for adapter release {pin.release}, which this file does not list",
                    f"releases: {known}",
                )
    for ref in matrix.ci_companions:
        declared = next((c for c in matrix.companions if canonical_name(c.name) == canonical_name(ref.name)), None)
        if declared is None:
            diags.error(
                ref.mark,
                f"ci installs companion {ref.name}, which companions: does not declare",
                "declare it with its torch facts",
            )
        elif not declared.torch_facts:
            diags.error(
                ref.mark,
                f"ci installs companion {ref.name}, but it has no torch facts to pick a release with",
                "add `torch:` facts",
            )
    return diags.items


def _check_lines(matrix: Matrix, comp: Companion, patches: List[Version], diags: Diagnostics) -> None:
    listed: Dict[Version, Mark] = {}
    first: Dict[Version, Mark] = {}
    for entry in sorted(comp.lines, key=lambda e: e.mark):
        if entry.minor in first:
            diags.error(
                entry.mark,
                f"{comp.name}: torch {entry.minor} is listed twice",
                f"it is already listed at line {first[entry.minor].line}",
            )
            continue
        first[entry.minor] = entry.mark
        if matrix.torch_line(entry.minor) is None:  # a warning: the torch facts may be what lags
            diags.warning(
                entry.mark,
                f"{comp.name} names torch {entry.minor}, which this file does not describe",
                "describe it under torch: or remove the entry",
            )
            continue
        for rel in entry.releases:
            if rel.version in listed:
                diags.error(
                    rel.mark,
                    f"{comp.name} {rel.version} is listed twice",
                    f"it is already listed at line {listed[rel.version].line}",
                )
                continue
            listed[rel.version] = rel.mark
            admitted = [p for p in patches if rel.torch.contains(p)]
            if not admitted:  # a warning: a patch missing from the torch facts is enough for this
                diags.warning(
                    rel.mark,
                    f"{comp.name} {rel.version} requires torch{requirement(rel.torch)}, which admits no torch release this file describes",
                    "write the torch its wheels require, or add the patch to the torch facts",
                )
            elif minor_line(admitted[0]) != entry.minor:
                diags.error(
                    rel.mark,
                    f"{comp.name} {rel.version} requires torch{requirement(rel.torch)}: built for torch {minor_line(admitted[0])}, not {entry.minor}",
                    f'list it under "{minor_line(admitted[0])}" (a release belongs to the line of the oldest torch it admits)',
                )
    unstated = [str(line.minor) for line in matrix.torch if line.minor not in first]
    if comp.torch_facts and unstated:
        diags.warning(
            comp.mark,
            f"{comp.name} says nothing about torch {', '.join(unstated)}",
            f'list the releases built for each under its line, or write "{unstated[0]}": {NONE} where there are none',
        )
