"""``migrate pending``: the torch releases an index has that a matrix does not describe yet.

What the scheduled workflow migrates, one pull request per torch line: for each line on the
index newer than the matrix's newest line (older gaps are a maintainer's choice, which
``validate --upstream`` reports), the newest release of the line, the one ``pip install``
picks and the one to migrate to. Final releases come from PyPI (or a recorded answer);
release candidates are opt-in (``pre``): PyTorch's test channel names them with final
version numbers, so a release on it that PyPI does not have yet is a candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional, Tuple

from packaging.version import Version

from ..matrix.loader import load
from ..matrix.model import minor_line
from ..upstream.index import Upstream, UpstreamError
from ..upstream.test_channel import read_releases
from .torch_release import MigrateRefused

__all__ = ["PendingRequest", "Pending", "run", "render"]


class PendingRequest(NamedTuple):
    matrix: str = "compat.yaml"
    upstream: str = "pypi"
    pre: Optional[str] = None  # the test channel: its URL, or a recorded page or answer


@dataclass(frozen=True)
class Pending:
    """One torch release to migrate to; ``candidate``: from the test channel only."""

    version: Version
    candidate: bool = False

    @property
    def line(self) -> Version:
        return minor_line(self.version)


def _read(source: str) -> Upstream:
    try:
        return read_releases(source)
    except UpstreamError as exc:
        raise MigrateRefused(str(exc)) from None


def run(request: PendingRequest) -> Tuple[Pending, ...]:
    """Newest release of every line newer than the matrix's newest, oldest line first."""
    matrix = load(request.matrix).matrix
    newest = max((line.minor for line in matrix.torch), default=None)

    def new_lines(index: Upstream) -> dict:
        return {m: line.newest.version for m, line in index.lines().items() if newest is None or m > newest}

    finals = new_lines(_read(request.upstream))
    out = {m: Pending(v) for m, v in finals.items()}
    if request.pre is not None:
        for m, v in new_lines(_read(request.pre)).items():
            out.setdefault(m, Pending(v, candidate=True))
    return tuple(out[m] for m in sorted(out))


def render(pending: Tuple[Pending, ...]) -> str:
    """One release a line, a candidate followed by `` rc`` (what the workflow's script reads)."""
    return "".join(f"{p.version}{' rc' if p.candidate else ''}\n" for p in pending)
