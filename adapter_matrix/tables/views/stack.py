"""The ``stack`` view of a layer's matrix: one row per layer release with the version of
every package below it, in the layer's own words (vllm-ascend's "Release compatibility
matrix" is the model): the layer, what it pins (vllm, triton-ascend), Python, the adapter's
dimensions (CANN), torch and the adapter.

The adapter is shown as the layer names it: a pip version (``2.10.0.post4``), or a release
line (MindSpeed's "TorchNPU 26.1.0"), which the adapter's matrix, when given, turns into
the package of that line for the row's torch (``26.1.0 (2.7.1.post8)``).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Optional

from ...check.stack_fixes import install_stack
from ...matrix.model import Layer, LayerRelease, Matrix, Status
from ...names import canonical_name
from ..table import Column, Table, TableCell, code, plain
from ..words import legend, word

__all__ = ["stack"]


def _line_package(adapter: Optional[Matrix], release: LayerRelease) -> Optional[str]:
    """The adapter's package of the row's release line for the row's torch, when the adapter's
    matrix says which (one package of the line admits the torch the row pins)."""
    torch = release.pin("torch")
    if adapter is None or release.adapter_line is None or torch is None:
        return None
    line = release.adapter_line
    found = [
        r.version for r in adapter.releases if r.release_line == line and any(r.torch.contains(v) for v in torch.exact)
    ]
    return str(found[0]) if len(found) == 1 else None


def stack(layer: Layer, lang: str = "en", adapter: Optional[Matrix] = None, today: Optional[_dt.date] = None) -> Table:
    """The layer's releases, newest first, each with what it needs below it; with the adapter's
    matrix, the one command that installs the whole stack into a fresh environment (``check``'s
    fix for it: the same search), or none where the adapter's matrix supports no such stack."""
    below = canonical_name(layer.adapter)
    others = list(dict.fromkeys(p.name for r in layer.releases for p in r.packages if p.name not in ("torch", below)))
    dims = list(dict.fromkeys(name for r in layer.releases for name, _c in r.dimensions))
    columns = (
        (Column("release", layer.distribution),)
        + tuple(Column(name, name) for name in others)
        + (Column("python", word("python", lang)),)
        + tuple(Column(name, name.upper() if name == "cann" else name) for name in dims)
        + (
            Column("torch", word("torch", lang)),
            Column("adapter", layer.adapter),
            Column("status", word("status", lang)),
        )
        + ((Column("install", word("install_stack", lang)),) if adapter is not None else ())
    )
    rows = []
    data: List[Dict[str, Any]] = []
    for release in sorted(layer.releases, key=lambda r: r.version, reverse=True):
        pins = {p.name: str(p.spec) for p in release.packages}
        if release.adapter_line is not None:
            package = _line_package(adapter, release)
            shown_adapter = f"{release.adapter_line}" + (f" ({package})" if package else "")
            line_word = word("line", lang)
            shown_adapter = f"{line_word} {shown_adapter}"
        else:
            shown_adapter = pins.get(below, "")
        row: List[TableCell] = [plain(str(release.version))]
        row += [plain(pins.get(name, "\u2014")) for name in others]
        row.append(plain(str(release.python) if release.python is not None else "\u2014"))
        constraints = dict(release.dimensions)
        row += [plain(str(constraints[name]) if name in constraints else "\u2014") for name in dims]
        row += [plain(pins.get("torch", "\u2014")), plain(shown_adapter or "\u2014")]
        row.append(plain(word(str(release.status), lang), str(release.status), release.reason))
        command = None
        if adapter is not None:
            fix = install_stack(adapter, layer, release, today or _dt.date.today())
            command = "; ".join(fix.manual + fix.commands) if fix is not None else None
            if command:
                row.append(code(command))
            elif release.status in (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED):
                row.append(plain(word("no_stack", lang), "unclaimed"))
            else:  # a release the layer no longer offers: nothing to install
                row.append(plain("\u2014"))
        rows.append(tuple(row))
        data.append(
            {
                "release": str(release.version),
                "status": str(release.status),
                "python": str(release.python) if release.python is not None else None,
                "packages": pins,
                "adapter_line": release.adapter_line,
                "dimensions": {name: str(c) for name, c in release.dimensions},
                "install": command,
            }
        )
    title = word("stack_title", lang).format(layer=layer.distribution, adapter=layer.adapter)
    facts = {"layer": layer.distribution, "adapter": layer.adapter, "releases": data}
    return Table("stack", lang, title, columns, tuple(rows), legend(rows, lang), facts, layer.path)
