"""The ``stack`` view of a layer's matrix: one row per layer release with the version of
every package below it, in the layer's own words (vllm-ascend's "Release compatibility
matrix" is the model): the layer, what it pins (vllm, triton-ascend), Python, the adapter's
dimensions (CANN), torch and the adapter.

The adapter is shown as the layer names it: a pip version (``2.10.0.post4``), or a release
line (MindSpeed's "TorchNPU 26.1.0"), which the adapter's matrix, when given, turns into
the package of that line for the row's torch (``26.1.0 (2.7.1.post8)``).

With the adapter's matrix, each row also says how to install the whole stack into a fresh
environment, once per platform the adapter's matrix tells apart (its ``os`` and ``arch``
dimensions: torch_npu pairs with PyPI's torch on aarch64 and with torch's ``+cpu`` build
from PyTorch's CPU index on x86_64). What pip cannot do (a CANN toolkit) is a prerequisite,
a field and a column of its own; a command is a shell command and nothing else.
"""

from __future__ import annotations

import datetime as _dt
import itertools
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ...check.stack.search import install_stack
from ...check.stack.space import Candidates
from ...errors import ChoiceError
from ...matrix.model import Constraint, Layer, LayerRelease, Matrix, Status, Value
from ...names import canonical_name
from ..table import Column, Span, Table, TableCell, code, plain
from ..words import legend, word

__all__ = ["StackInstall", "stack", "stack_installs", "platforms", "shown_releases"]

_PLATFORM = ("os", "arch")  # the dimensions that say which machine a command is typed on (as --resolve reads them)
_USABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)


class StackInstall(NamedTuple):
    """How a fresh environment gets one layer release and everything below it, on one platform:
    the steps before pip (each its own line: ``cann 9.1.0 first: not a pip package``), then the
    shell commands, and what they install (the torch with its variant label, the Python)."""

    platform: Dict[str, str]  # {"arch": "x86_64"}; empty when the adapter's matrix names no platform
    prerequisites: Tuple[str, ...]
    commands: Tuple[str, ...]
    torch: str
    python: str
    dimensions: Dict[str, str]  # every dimension value of the stack installed (cann, arch)

    def as_dict(self) -> Dict[str, Any]:
        return {
            "platform": dict(self.platform),
            "prerequisites": list(self.prerequisites),
            "commands": list(self.commands),
            "torch": self.torch,
            "python": self.python,
            "dimensions": dict(self.dimensions),
        }


def platforms(adapter: Matrix) -> List[Tuple[Tuple[str, Value], ...]]:
    """Every platform the adapter's matrix tells apart: each combination of its ``os`` and
    ``arch`` values; one empty platform when it declares neither."""
    axes = [[(d.name, v) for v in d.values] for name in _PLATFORM if (d := adapter.dimension(name)) is not None]
    return [tuple(combo) for combo in itertools.product(*axes)] if axes else [()]


def stack_installs(
    adapter: Matrix, layer: Layer, release: LayerRelease, today: _dt.date, candidates: Optional[Candidates] = None
) -> List[StackInstall]:
    """The install of ``release`` on each platform where the adapter's matrix supports its stack
    (``check``'s own fix for a fresh environment there: :func:`install_stack`). ``candidates``:
    the stack's candidates the table's other rows built (a layer of 5,000 releases is built once)."""
    out = []
    candidates = candidates if candidates is not None else Candidates()
    for platform in platforms(adapter):
        fix = install_stack(adapter, layer, release, today, platform, candidates)
        if fix is None or not fix.commands:
            continue
        dims = dict(fix.cell.dimensions)
        dims.update((name, value) for name, c in release.dimensions if name not in dims for value in c.values[:1])
        steps = []
        for name, value in dims.items():
            dim = adapter.dimension(name)
            if dim is not None and dim.changeable and not value.absent:
                steps.append(f"{name} {value} first: not a pip package")
        steps += [m for m in fix.manual if not any(m.startswith(f"make sure {n} ") for n, _v in platform)]
        out.append(
            StackInstall(
                {name: str(value) for name, value in platform},
                tuple(steps),
                tuple(fix.commands),
                str(fix.cell.torch),
                str(fix.cell.python),
                {name: str(value) for name, value in dims.items()},
            )
        )
    return out


def _line_package(adapter: Optional[Matrix], release: LayerRelease) -> Optional[str]:
    """The adapter's package of the row's release line for the row's torch, when the adapter's
    matrix says which (one package of the line admits each torch the row pins; written once per
    arch, it is still one package)."""
    torch = release.pin("torch")
    if adapter is None or release.adapter_line is None or torch is None:
        return None
    line = release.adapter_line
    shown = []
    for version in torch.exact:  # a list of torches: the line's package for each (2.1.0.post13 | 2.6.0)
        found = {r.version for r in adapter.releases if r.release_line == line and r.torch.contains(version)}
        if len(found) != 1:
            return None
        shown.append(str(found.pop()))
    return " | ".join(dict.fromkeys(shown)) or None


def shown_releases(layer: Layer, release: Optional[str] = None, where: Optional[str] = None) -> List[LayerRelease]:
    """The layer's releases a table shows, newest first: ``release`` (one version) alone, and
    with ``where`` (``cann=9.1.0``) those whose dimension constraint admits the value (a release
    that does not constrain it serves every value). ``ValueError`` names what is wrong."""
    shown = sorted(layer.releases, key=lambda r: r.version, reverse=True)
    if release is not None:
        try:
            wanted = Version(release)
        except InvalidVersion:
            wanted = None
        picked = [r for r in shown if wanted is not None and r.version == wanted]
        if not picked:
            known = ", ".join(str(r.version) for r in shown)
            raise ChoiceError("release", f"{release}: no such release ({known}) in {layer.path}")
        shown = picked
    if where is not None:
        name, sep, text = where.partition("=")
        name, text = name.strip(), text.strip()
        named = sorted({n for r in layer.releases for n, _c in r.dimensions})
        if not sep or not name or not text:
            example = f"{named[0] if named else 'cann'}=9.1.0"
            raise ChoiceError(
                "dimension", f"{where}: a layer's rows are kept by a dimension's value: write NAME=VALUE ({example})"
            )
        if name not in named:
            raise ChoiceError(
                "dimension",
                f"{where}: no release of {layer.path} constrains {name!r} (they name: {', '.join(named) or 'none'})",
            )
        kept = []
        for r in shown:
            constraint = dict(r.dimensions).get(name)
            if constraint is None or _admits(constraint, text):
                kept.append(r)
        if not kept:  # an empty table would read as "nothing to install": say which values rows have
            values = ", ".join(dict.fromkeys(str(c) for r in shown for n, c in r.dimensions if n == name))
            raise ChoiceError(
                "dimension", f"{where}: no release of {layer.path} admits {name} {text} (they name: {values})"
            )
        shown = kept
    return shown


def _admits(constraint: Constraint, text: str) -> bool:
    try:  # a version, compared as one (a list's ranges and a series too), else a name
        value = Value(text, Version(text))
    except InvalidVersion:
        value = Value(text)
    return constraint.contains(value)


def _prerequisite(text: str, lang: str) -> str:
    """A prerequisite as the table's language says it (the JSON keeps check's English)."""
    head, sep, _rest = text.partition(" first: ")
    if sep and " " in head:
        name, value = head.split(" ", 1)
        return word("prerequisite_first", lang).format(name=name.upper() if name == "cann" else name, value=value)
    return text


def _platform_label(platform: Dict[str, str]) -> str:
    return " ".join(platform.values())


def stack(
    layer: Layer,
    lang: str = "en",
    adapter: Optional[Matrix] = None,
    today: Optional[_dt.date] = None,
    release: Optional[str] = None,
    where: Optional[str] = None,
) -> Table:
    """The layer's releases, newest first (``release``, ``where``: :func:`shown_releases`), each
    with what it needs below it; with the adapter's matrix, the steps before pip and, per
    platform, the commands that install the whole stack into a fresh environment (``check``'s
    fix for it: the same search), or none where the adapter's matrix supports no such stack."""
    today = today or _dt.date.today()
    candidates = Candidates()  # the table's: every row's search shares the stack's candidates
    below = canonical_name(layer.adapter)
    shown = shown_releases(layer, release, where)
    others = list(dict.fromkeys(p.name for r in layer.releases for p in r.packages if p.name not in ("torch", below)))
    dims = list(dict.fromkeys(name for r in layer.releases for name, _c in r.dimensions))
    machines = [{name: str(value) for name, value in p} for p in platforms(adapter)] if adapter is not None else []
    install_columns: Tuple[Column, ...] = ()
    if adapter is not None:
        install_columns = (Column("prerequisites", word("prerequisites", lang)),) + tuple(
            Column(
                "install" + "".join(f":{v}" for v in m.values()),
                word("install_on", lang).format(platform=_platform_label(m)) if m else word("install_stack", lang),
            )
            for m in machines
        )
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
        + install_columns
    )
    rows = []
    data: List[Dict[str, Any]] = []
    for entry in shown:
        pins = {
            p.name: str(p.spec) + (f" ({word('if_installed', lang)})" if p.optional else "") for p in entry.packages
        }
        package = _line_package(adapter, entry)
        if entry.adapter_line is not None:
            shown_adapter = (
                f"{entry.adapter_line} ({package})" if package else f"{word('line', lang)} {entry.adapter_line}"
            )
            adapter_title = f"{word('line', lang)} {entry.adapter_line}"
        else:
            shown_adapter, adapter_title = pins.get(below, ""), ""
        source = layer.source.url if layer.source is not None and entry.ref is not None else None
        built_from = word("built_from", lang).format(ref=entry.ref, url=source) if source else None
        row: List[TableCell] = [plain(str(entry.version), "", built_from or "")]
        row += [plain(pins.get(name, "\u2014")) for name in others]
        row.append(plain(str(entry.python) if entry.python is not None else "\u2014"))
        constraints = dict(entry.dimensions)
        row += [plain(str(constraints[name]) if name in constraints else "\u2014") for name in dims]
        row += [plain(pins.get("torch", "\u2014")), plain(shown_adapter or "\u2014", "", adapter_title)]
        row.append(plain(word(str(entry.status), lang), str(entry.status), entry.reason))
        installs: List[StackInstall] = []
        if adapter is not None:
            installs = stack_installs(adapter, layer, entry, today, candidates) if entry.status in _USABLE else []
            row.append(_prerequisites_cell(installs, lang))
            by_platform = {tuple(i.platform.items()): i for i in installs}
            for machine in machines:
                found = by_platform.get(tuple(machine.items()))
                if found is not None:
                    row.append(code(" && ".join(found.commands)))
                elif installs:
                    row.append(
                        plain(word("no_stack_here", lang).format(platform=_platform_label(machine)), "unclaimed")
                    )
                elif entry.status in _USABLE:
                    row.append(plain(word("no_stack", lang), "unclaimed"))
                else:  # a release the layer no longer offers: nothing to install
                    row.append(plain("\u2014"))
        rows.append(tuple(row))
        data.append(
            {
                "release": str(entry.version),
                "status": str(entry.status),
                "ref": entry.ref,  # the tag or commit of ``source`` it is built from (no index serves it)
                "source": source,
                "python": str(entry.python) if entry.python is not None else None,
                "packages": pins,
                "adapter_line": entry.adapter_line,
                "adapter": package if entry.adapter_line is not None else pins.get(below),
                "dimensions": {name: str(c) for name, c in entry.dimensions},
                "install": [i.as_dict() for i in installs],
            }
        )
    title = word("stack_title", lang).format(layer=layer.distribution, adapter=layer.adapter)
    facts = {
        "layer": layer.distribution,
        "adapter": layer.adapter,
        "release": str(shown[0].version) if release is not None and shown else None,
        "platforms": machines,
        "releases": data,
    }
    return Table("stack", lang, title, columns, tuple(rows), legend(rows, lang), facts, layer.path)


def _prerequisites_cell(installs: Sequence[StackInstall], lang: str) -> TableCell:
    """The steps before pip, each once (they are the same on every platform, as a rule), one a line."""
    steps = list(dict.fromkeys(_prerequisite(s, lang) for i in installs for s in i.prerequisites))
    if not steps:
        return plain("\u2014" if not installs else "")
    spans: List[Span] = []
    for i, step in enumerate(steps):
        spans += ([Span("; ")] if i else []) + [Span(step)]
    return TableCell(tuple(spans))
