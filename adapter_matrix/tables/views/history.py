"""The ``history`` view: an adapter's releases as a vendor publishes them, per torch line.

A vendor's table (torch_npu's, IPEX's) has a row per adapter release for a torch version,
not a row per build: torch-npu 2.9.0 and its post-releases 2.9.0.post2 ... 2.9.0.post9 are
one release for torch 2.9.0, rebuilt. So: rows grouped by torch line (newest first), one row
per release and its post-releases (the public version without ``.postN``), showing the
newest build (what pip installs, and what a fix names), the earlier builds, the torch each
platform's wheels require, the Pythons, the status and date of the newest build.
``init --from-index`` writes matrices this view reads as the index shows them; any matrix
works (a release without post-releases is a row of its own).
"""

from __future__ import annotations

import datetime as _dt
from typing import Dict, List, Optional, Sequence, Tuple

from packaging.version import Version

from ...matrix.model import Matrix, PythonVersion, Release, minor_line
from ...matrix.queries import Releases, claimed_lines, pythons_for, release_status
from ..table import Column, Table, plain
from ..words import legend, word
from .common import Records, shown_releases

__all__ = ["history"]


def _torch_of(release: Release) -> str:
    """The torch an entry requires as a table says it: ``2.9.0+cpu``, ``2.14.0.*``."""
    text = release.torch.text
    if text.startswith("==") and "," not in text:
        text = text[2:]
    return f"{text}+{release.variant}" if release.variant and "+" not in text else text


def _platform_of(release: Release) -> str:
    """The platform values an entry is for (``x86_64``), empty when it constrains none."""
    return ", ".join(str(c) for name, c in release.dimensions if name in ("arch", "os"))


def _platforms(matrix: Matrix, entries: Sequence[Release]) -> str:
    """Every platform value the entries serve: their own, else every declared one."""
    out: Dict[str, None] = {}
    for name in ("os", "arch"):
        dim = matrix.dimension(name)
        if dim is None:
            continue
        for rel in entries:
            rule = rel.constraint(name)
            out.update(dict.fromkeys(v.text for v in dim.values if not v.absent and (rule is None or rule.contains(v))))
    return ", ".join(out)


def _pythons(matrix: Matrix, release: Release) -> List[PythonVersion]:
    return sorted({p for line, _patches in claimed_lines(matrix, release) for p in pythons_for(release, line)})


def _runs(pythons: Sequence[PythonVersion]) -> str:
    """``3.10–3.14`` for consecutive minors, else a list; free-threaded builds after."""
    plain_ones = [p for p in pythons if not p.free_threaded]
    consecutive = all(
        (b.version.major, b.version.minor) == (a.version.major, a.version.minor + 1)
        for a, b in zip(plain_ones, plain_ones[1:])
    )
    text = (
        f"{plain_ones[0]}\u2013{plain_ones[-1]}"
        if len(plain_ones) > 1 and consecutive
        else ", ".join(map(str, plain_ones))
    )
    threaded = ", ".join(str(p) for p in pythons if p.free_threaded)
    return ", ".join(t for t in (text, threaded) if t)


def _torch_line(matrix: Matrix, entries: Sequence[Release]) -> Optional[Version]:
    lines = [line.minor for rel in entries for line, _p in claimed_lines(matrix, rel)]
    if lines:
        return max(lines)
    pins = [p for rel in entries for p in rel.pins]
    return minor_line(max(pins)) if pins else None


def history(
    matrix: Matrix,
    release: Releases = None,
    lang: str = "en",
    today: Optional[_dt.date] = None,
    records: Optional[Records] = None,
) -> Table:
    """Rows per torch line (newest first), one per release and its post-releases (see the
    module docstring); every maintained release unless ``release`` names some."""
    shown = shown_releases(matrix, release, today)
    groups: Dict[Version, List[Release]] = {}
    for rel in shown:
        groups.setdefault(Version(rel.version.base_version), []).append(rel)
    keyed: List[Tuple[Tuple[Version, Version], Version, List[Release]]] = []
    for base, entries in groups.items():
        line = _torch_line(matrix, entries) or minor_line(base)
        keyed.append(((line, base), line, entries))
    rows = []
    facts = []
    previous_line: Optional[Version] = None
    for _key, line, entries in sorted(keyed, key=lambda k: k[0], reverse=True):
        newest_version = max(r.version for r in entries)
        newest = [r for r in entries if r.version == newest_version]  # one entry per platform
        earlier = sorted({r.version for r in entries if r.version != newest_version}, reverse=True)
        torch_by_platform = list(dict.fromkeys((_torch_of(r), _platform_of(r)) for r in newest))
        torches = list(dict.fromkeys(t for t, _p in torch_by_platform))
        torch_text = (
            torches[0] if len(torches) == 1 else "; ".join(f"{t} ({p})" if p else t for t, p in torch_by_platform)
        )
        platforms = _platforms(matrix, newest)
        pythons = sorted({p for r in newest for p in _pythons(matrix, r)})
        status, reason = release_status(newest[0], today)
        date = newest[0].date
        rows.append(
            (
                plain(str(line) if line != previous_line else ""),
                plain(torch_text),
                plain(str(newest_version)),
                plain(", ".join(str(v) for v in earlier)),
                plain(_runs(pythons)),
                plain(platforms),
                plain(word(status.value, lang), status.value, reason),
                plain(str(date or "")),
            )
        )
        previous_line = line
        facts.append(
            {
                "torch_line": str(line),
                "release": str(Version(newest_version.base_version)),
                "newest": str(newest_version),
                "earlier": [str(v) for v in earlier],
                "torch": {p or "any": t for t, p in torch_by_platform},
                "pythons": [str(p) for p in pythons],
                "status": status.value,
                "reason": reason or None,
                "date": str(date) if date else None,
            }
        )
    keys = ("torch_line", "torch", "newest_build", "earlier_builds", "python", "platforms", "status", "released")
    columns = tuple(Column(k, word(k, lang)) for k in keys)
    title = word("history_title", lang).format(dist=matrix.adapter.distribution)
    data = {"adapter": matrix.adapter.distribution, "release": None, "history": facts}
    return Table("history", lang, title, columns, tuple(rows), legend(rows, lang), data, matrix.path)
