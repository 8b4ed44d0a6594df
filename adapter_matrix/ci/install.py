"""How a cell installs its torch: the matrix's sources in order, each with the cell's
companions in the source's variant, then without them.

``$ADAPTER_MATRIX_TORCH_INDEX_URL`` (with ``$ADAPTER_MATRIX_TORCH_VARIANT``) replaces the
sources; ``$ADAPTER_MATRIX_CELL_COMPANIONS`` replaces ``ci: companions:``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.model import InstallSource
from ..urls import PYPI_SIMPLE
from .plan import CompanionPick, PlanRow

__all__ = ["INDEX_ENV", "VARIANT_ENV", "COMPANIONS_ENV", "InstallAttempt", "cell_companions", "install_attempts"]


INDEX_ENV = "ADAPTER_MATRIX_TORCH_INDEX_URL"  # e.g. https://download.pytorch.org/whl/cpu


VARIANT_ENV = "ADAPTER_MATRIX_TORCH_VARIANT"  # the local label its wheels carry, e.g. cpu


COMPANIONS_ENV = "ADAPTER_MATRIX_CELL_COMPANIONS"  # companions to install instead of ci: companions: ("" for none)


@dataclass(frozen=True)
class InstallAttempt:
    """One way to install the cell's torch: a requirement and the installer options, and the
    companions installed with it in the same resolver call (so none of them can swap torch)."""

    source: str
    requirement: str
    options: Sequence[str]
    companions: Sequence[str] = ()  # their requirements, in the source's variant
    picks: Sequence[CompanionPick] = ()
    variant: Optional[str] = None
    local: bool = False  # from a folder of wheels: what it lacks says nothing about the index

    def describe(self) -> str:
        return " ".join([self.requirement, *self.companions]) + f" from {self.source}"


def _attempt(source: InstallSource, torch: Version) -> InstallAttempt:
    requirement = f"torch=={torch}" + (f"+{source.variant}" if source.variant else "")
    options: List[str] = []
    if source.find_links:
        options += ["--find-links", source.find_links]
    if source.index_url:
        options += ["--index-url", source.index_url]
    if source.find_links and not source.index_url:
        options += ["--index-url", PYPI_SIMPLE]  # torch's own dependencies
    return InstallAttempt(source.name, requirement, tuple(options), local=_is_local(source))


def cell_companions(row: PlanRow, environ: Optional[Mapping[str, str]] = None) -> Tuple[CompanionPick, ...]:
    """The companions the cell installs: ``ci: companions:`` of the matrix, or the names in
    ``$ADAPTER_MATRIX_CELL_COMPANIONS`` (comma or space separated; empty for none)."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    if COMPANIONS_ENV not in env:
        return tuple(row.companions)
    names = env[COMPANIONS_ENV].replace(",", " ").split()
    picks = tuple(p for name in names for p in row.pairable if p.name == name)
    missing = [name for name in names if all(p.name != name for p in picks)]
    if missing:
        known = ", ".join(p.name for p in row.pairable) or "none"
        raise ValueError(
            f"${COMPANIONS_ENV} names {', '.join(missing)}: no such companion has a release for torch {row.cell.torch} (known: {known})"
        )
    return picks


def install_attempts(row: PlanRow, environ: Optional[Mapping[str, str]] = None) -> List[InstallAttempt]:
    """How to install the cell's torch, in order: the matrix's source and its fallbacks,
    each with the cell's companions in the source's variant (``torchvision==0.28.0+cpu``
    beside ``torch==2.13.0+cpu``); then the same sources without the companions, for a
    cell whose companions have no wheel anywhere (torchvision 0.20 has no cp313 wheel).
    A local folder (``find-links: /opt/wheels``) is tried without the companions right
    after with them: its torch, without torchvision, beats a CUDA download from PyPI.

    ``$ADAPTER_MATRIX_TORCH_INDEX_URL`` (with ``$ADAPTER_MATRIX_TORCH_VARIANT``) replaces
    the sources, for users whose CI installs from elsewhere (e.g. PyTorch's CPU index).
    """
    env: Mapping[str, str] = os.environ if environ is None else environ
    picks = cell_companions(row, env)
    index = env.get(INDEX_ENV)
    if index:
        # PyPI as the index and the override as the extra one: pip takes the best match of both, and
        # uv, which asks an extra index first and keeps to the first index that has a package, takes
        # torch (2.13.0+cpu) from the override, not torch 2.13.0 from PyPI (which has no +cpu)
        override = InstallSource(
            "$" + INDEX_ENV, PYPI_SIMPLE, None, env.get(VARIANT_ENV) or None, None, row.cell.line.mark
        )
        sources: Sequence[InstallSource] = (override,)
        extra: Tuple[str, ...] = ("--extra-index-url", index)
    else:
        sources, extra = row.sources, ()
    bare = [_attempt(source, row.cell.torch) for source in sources]
    bare = [
        InstallAttempt(a.source, a.requirement, tuple(a.options) + extra, variant=s.variant, local=a.local)
        for a, s in zip(bare, sources)
    ]
    if not picks:
        return bare
    together = [
        InstallAttempt(
            a.source,
            a.requirement,
            a.options,
            tuple(p.requirement(a.variant) for p in picks),
            picks,
            a.variant,
            a.local,
        )
        for a in bare
    ]
    # A local wheel folder never leads to a download: when its companions are not in the
    # folder, the cell takes its torch without them (and says so) before trying the next source.
    ordered: List[InstallAttempt] = []
    for source, with_picks, alone in zip(sources, together, bare):
        ordered += [with_picks, alone] if _is_local(source) else [with_picks]
    return ordered + [alone for source, alone in zip(sources, bare) if not _is_local(source)]


def _is_local(source: InstallSource) -> bool:
    """A source that is a folder on this machine (``find-links: /opt/wheels``), not an index."""
    return bool(source.find_links and not source.index_url and "://" not in source.find_links)
