"""How one combination a release claims stands today, for the verdict and the fix search
alike: the cell's status, a pre-release torch the release does not pin counting as
experimental at best; and how messages name a torch.
"""

from __future__ import annotations

import datetime as _dt
from typing import Dict, Optional, Tuple

from packaging.version import Version

from ..matrix.diagnostics import Mark
from ..matrix.model import Matrix, PythonVersion, Release, Status, Value
from ..matrix.queries import cell_status

__all__ = ["assess", "torch_label"]


def torch_label(torch: Version) -> str:
    """``torch`` as messages name it: a pre-release says what it is."""
    if not torch.is_prerelease:
        return str(torch)
    base = torch.base_version
    if torch.is_devrelease and torch.pre is None:
        kind = f"a nightly build before {base}"
    elif torch.pre is not None and torch.pre[0] == "rc":
        kind = f"a release candidate of {base}"
    else:
        kind = f"a pre-release of {base}"
    return f"{torch} ({kind})"


def _prerelease_note(matrix: Matrix, release: Release, torch: Version) -> Optional[str]:
    """Why a pre-release torch is experimental: the release claims releases, and pins no
    pre-release (IPEX 2.10.10 pins a nightly: that one is its claim)."""
    public = Version(torch.public)
    if not public.is_prerelease or public in release.pins:
        return None
    return (
        f"torch {torch_label(torch)} is a pre-release: {matrix.adapter.distribution} {release.version} "
        f"claims torch {release.torch} releases, not pre-releases"
    )


def assess(
    matrix: Matrix,
    release: Release,
    torch: Version,
    python: PythonVersion,
    dims: Dict[str, Optional[Value]],
    today: _dt.date,
) -> Tuple[Status, Tuple[str, ...], Optional[str], Tuple[Mark, ...]]:
    """The status of a combination the release claims: the cell's status, a pre-release
    torch the release does not pin counting as experimental at best."""
    status, reason, link, marks = cell_status(release, Version(torch.public), python, dims, today)
    reasons: Tuple[str, ...] = (reason,) if reason else ()
    note = _prerelease_note(matrix, release, torch)
    if note is not None:
        reasons = (note,) + reasons
        if status is Status.SUPPORTED:
            status = Status.EXPERIMENTAL
    return status, reasons, link, marks
