"""The ``lag`` view: how long after each torch release the adapter followed, in days.

Per torch line (newest first): the day torch released it (the matrix's ``released``, the
upload day of X.Y.0 on the index), the adapter's first release that claims the line at all
(``experimental`` or better: what a user can try) and its first release that claims a cell
of the line ``supported``, each with its date and the days between. Dates are the releases'
``date:`` fields (``init --from-index`` writes each release's first upload); an experimental
release without one (the row ``migrate`` adds, unreleased yet) is dated by git: the day the
commit that added it to the matrix was made, when the matrix is in a git work tree (another
undated release is left out: its day is unknown). A
line no release serves yet shows the days since torch released it, as of ``today``.

The lag, measured on torch_npu's tags, is the problem this view makes visible
(docs/releasing.md, "From a torch release to a supported adapter release").
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
from typing import Dict, List, Optional, Tuple

from packaging.version import Version

from ...matrix.model import Matrix, Release, TorchLine
from ...matrix.queries import claimed_lines
from ...matrix.status import Status
from ..table import Column, Table, plain
from ..words import word
from .common import Records

__all__ = ["lag", "LagLine"]

LagLine = Dict[str, object]  # one entry of the view's data, as docs/compatibility-table.schema.json says

_TRYABLE = (Status.EXPERIMENTAL, Status.SUPPORTED, Status.DEPRECATED, Status.EOL)


def _statuses(release: Release) -> Tuple[Status, ...]:
    """Every status the release gives some cell: its own and its exceptions'."""
    return (release.status, *(rule.status for rule in release.rules))


def _supports(release: Release, patches: Tuple[Version, ...]) -> bool:
    """Whether the release claims some cell of a line (its ``patches``) supported: as its own
    status, or by an exception whose torch matches one of them (0.3.0: experimental, with
    supported exceptions for the cells that passed on its frozen sources)."""
    if release.status is Status.SUPPORTED:
        return True
    return any(
        rule.status is Status.SUPPORTED and (rule.torch is None or any(rule.torch.contains(p) for p in patches))
        for rule in release.rules
    )


def _git_date(matrix: Matrix, release: Release) -> Optional[_dt.date]:
    """The day the commit that first wrote ``version: X`` of this release into the matrix was made."""
    path = os.path.realpath(matrix.path)
    folder = os.path.dirname(path)
    try:
        proc = subprocess.run(
            [
                "git",
                "-C",
                folder,
                "log",
                "--reverse",
                "--format=%as",
                f"-Sversion: {release.version}",
                "--",
                os.path.basename(path),
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    first = proc.stdout.split()[:1] if proc.returncode == 0 else []
    try:
        return _dt.date.fromisoformat(first[0]) if first else None
    except ValueError:
        return None


def _first(dated: List[Tuple[_dt.date, Release, bool]]) -> Optional[Tuple[_dt.date, Release, bool]]:
    return min(dated, key=lambda d: (d[0], d[1].version)) if dated else None


def _line_facts(
    line: TorchLine, claims: Dict[object, List[Tuple[_dt.date, Release, bool]]], today: _dt.date
) -> LagLine:
    tried = _first(claims.get(("any", line.minor), []))
    supported = _first(claims.get(("supported", line.minor), []))

    def side(found: Optional[Tuple[_dt.date, Release, bool]]) -> Dict[str, object]:
        if found is None:
            return {"release": None, "date": None, "days": None, "dated_by": None}
        day, release, from_git = found
        return {
            "release": str(release.version),
            "date": str(day),
            "days": (day - line.released).days,
            "dated_by": "git" if from_git else "date",
        }

    return {
        "torch_line": str(line.minor),
        "torch_released": str(line.released),
        "first_release": side(tried),
        "first_supported": side(supported),
        "days_since_torch": (today - line.released).days,
    }


def lag(
    matrix: Matrix,
    release: object = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
) -> Table:
    """One row per torch line; see the module docstring (``release`` is not a choice here:
    the lag is about every release)."""
    today = today or _dt.date.today()
    claims: Dict[object, List[Tuple[_dt.date, Release, bool]]] = {}
    for rel in matrix.releases:
        statuses = _statuses(rel)
        if not any(s in _TRYABLE for s in statuses):
            continue
        day, from_git = rel.date, False
        if day is None and rel.status is Status.EXPERIMENTAL:  # an unreleased row (migrate's): when it was added
            day, from_git = _git_date(matrix, rel), True
        if day is None:
            continue
        for line, patches in claimed_lines(matrix, rel):
            claims.setdefault(("any", line.minor), []).append((day, rel, from_git))
            if _supports(rel, patches):
                claims.setdefault(("supported", line.minor), []).append((day, rel, from_git))
    facts = [_line_facts(line, claims, today) for line in reversed(matrix.torch)]
    rows = []
    for fact in facts:
        cells = [plain(str(fact["torch_line"])), plain(str(fact["torch_released"]))]
        for key, state in (("first_release", "experimental"), ("first_supported", "supported")):
            side = fact[key]
            assert isinstance(side, dict)
            if side["release"] is None:
                text = word("lag_none_yet", lang).format(days=fact["days_since_torch"])
                cells += [plain(text), plain("")]
            else:
                by = word("lag_by_git", lang) if side["dated_by"] == "git" else ""
                cells += [plain(f"{side['release']} ({side['date']}{by})", state), plain(str(side["days"]))]
        rows.append(tuple(cells))
    keys = (
        ("torch_line", "torch_line"),
        ("torch_released", "torch_released"),
        ("first_release", "lag_first_release"),
        ("days_to_release", "lag_days"),
        ("first_supported", "lag_first_supported"),
        ("days_to_supported", "lag_days"),
    )
    columns = tuple(Column(key, word(label, lang)) for key, label in keys)
    title = word("lag_title", lang).format(dist=matrix.adapter.distribution)
    data = {"adapter": matrix.adapter.distribution, "release": None, "lag": facts}
    return Table("lag", lang, title, columns, tuple(rows), (), data, matrix.path, word("lag_note", lang))
