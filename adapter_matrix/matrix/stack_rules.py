"""A layer's rows against its adapter's matrix: what ``validate`` says of a stack's files.

A layer (vllm-ascend) pins the adapter (torch_npu), torch and the adapter's dimensions
(CANN) in each release. Every such row must be a combination the adapter's own matrix
supports, else users who follow the layer's table install a stack the adapter refuses:
torch_npu's table lists 2.10.0.post4 for CANN 9.1.0, and a layer row "2.10.0.post4 on
CANN 9.0.1" is a pair nobody tested. Each row is narrowed step by step (the adapter's
release, torch, Python, each dimension) over the adapter's usable cells, and the first
step that leaves none is what the finding names, with what the adapter does offer there.
"""

from __future__ import annotations

import datetime as _dt
from functools import partial
from typing import Callable, Dict, List, Optional, Tuple

from ..names import canonical_name
from .diagnostics import Diagnostic, Mark
from .model import Constraint, Layer, LayerRelease, Matrix, PackagePin, PinSet, Status
from .queries import Cell, cells

__all__ = ["check_layer", "layer_cycles", "unsupported_row"]

_USABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)


_Step = Tuple[str, Mark, Callable[[Cell], bool], Callable[[Cell], str]]


def _admits_torch(pin: PackagePin, cell: Cell) -> bool:
    return pin.admits(cell.torch)


def _admits_adapter(pin: PackagePin, cell: Cell) -> bool:
    return pin.admits(cell.release.version)


def _of_line(line: str, cell: Cell) -> bool:
    return cell.release.release_line == line


def _python_within(spec: PinSet, cell: Cell) -> bool:
    return spec.contains(cell.python.version)


def _dimension_within(name: str, constraint: Constraint, cell: Cell) -> bool:
    return all(constraint.contains(value) for dim, value in cell.dimensions if dim == name)


def _torch_of(cell: Cell) -> str:
    return f"torch {cell.torch}"


def _python_of(cell: Cell) -> str:
    return f"Python {cell.python}"


def _adapter_of(adapter: str, cell: Cell) -> str:
    return f"{adapter} {cell.release.version}"


def _line_of(cell: Cell) -> str:
    return f"line {cell.release.release_line}"


def _dimension_of(name: str, cell: Cell) -> str:
    return f"{name} " + (", ".join(str(v) for d, v in cell.dimensions if d == name) or "any")


def _steps(matrix: Matrix, release: LayerRelease) -> List[_Step]:
    """(what the row asks, where, which cells give it, how a cell shows the alternative)."""
    adapter = matrix.adapter.distribution
    out: List[_Step] = []
    for pin in release.packages:
        if pin.name == "torch":
            out.append((f"torch {pin.spec}", pin.mark, partial(_admits_torch, pin), _torch_of))
        elif pin.name == canonical_name(adapter):
            out.append(
                (f"{adapter} {pin.spec}", pin.mark, partial(_admits_adapter, pin), partial(_adapter_of, adapter))
            )
    if release.adapter_line is not None:
        line = release.adapter_line
        where = release.mark_of("adapter-line")
        out.append((f"{adapter} of release line {line}", where, partial(_of_line, line), _line_of))
    if release.python is not None:
        spec = release.python
        out.append((f"Python {spec}", release.mark_of("python"), partial(_python_within, spec), _python_of))
    for name, constraint in release.dimensions:
        if matrix.dimension(name) is None:
            continue  # the layer's own (a driver it needs): the adapter's cells say nothing of it
        keeps = partial(_dimension_within, name, constraint)
        out.append((f"{name} {constraint}", release.mark_of("dimensions"), keeps, partial(_dimension_of, name)))
    return out


_Narrowed = Optional[Tuple[int, str]]  # the step that leaves no cell and what the adapter offers there


def _row(
    matrix: Matrix,
    layer: Layer,
    release: LayerRelease,
    usable: List[Cell],
    memo: Optional[Dict[Tuple[str, ...], _Narrowed]] = None,
) -> Optional[Diagnostic]:
    who = f"{layer.distribution} {release.version}"
    steps = _steps(matrix, release)
    texts = tuple(text for text, _mark, _keeps, _shown in steps)
    # rows that ask the same (a table repeats its pins) are narrowed once: by what they ask
    found = memo.get(texts, False) if memo is not None else False
    if found is False:
        found = None
        left = usable
        for i, (_text, _mark, keeps, shown) in enumerate(steps):
            narrowed = [c for c in left if keeps(c)]
            if not narrowed:
                found = (i, ", ".join(dict.fromkeys(shown(c) for c in left)) or "nothing")
                break
            left = narrowed
        if memo is not None:
            memo[texts] = found
    if found is None:
        return None
    i, offered = found  # type: ignore[misc]  # a pair once it is not None
    where = f" with {', '.join(texts[:i])}" if i else ""
    return Diagnostic(
        steps[i][1],
        f"{who} needs {texts[i]}{where}, which {matrix.adapter.distribution}'s matrix does not support "
        f"(it offers {offered})",
        f"a row of the layer's table the adapter's does not list: correct the row, or ask {matrix.adapter.distribution} to support it",
        "warning",
    )


def check_layer(layer: Layer, matrix: Matrix, today: Optional[_dt.date] = None) -> List[Diagnostic]:
    """Every row of ``layer`` that ``matrix`` (its adapter's) does not support, and every
    dimension it names that the adapter's matrix does not define."""
    out: List[Diagnostic] = []
    usable = [c for c in cells(matrix, today=today) if c.status in _USABLE]
    for own in layer.dimensions:
        theirs = matrix.dimension(own.name)
        if theirs is not None:
            out.append(
                Diagnostic(
                    own.mark,
                    f"layer dimension {own.name} clashes with {matrix.adapter.distribution}'s dimension {own.name} ({theirs.mark})",
                    f"rename it, or constrain the adapter's {own.name} in the releases' dimensions:",
                )
            )
    memo: Dict[Tuple[str, ...], _Narrowed] = {}
    for release in layer.releases:
        for name, _constraint in release.dimensions:
            if matrix.dimension(name) is None and layer.dimension(name) is None:
                known = ", ".join(d.name for d in matrix.dimensions) or "none"
                out.append(
                    Diagnostic(
                        release.mark_of("dimensions"),
                        f"{layer.distribution} {release.version} constrains {name}, which neither {matrix.adapter.distribution}'s matrix nor the layer defines",
                        f"use a dimension of the adapter's matrix ({known}), or declare it under layer: dimensions:",
                    )
                )
        if release.status not in _USABLE:
            continue
        found = _row(matrix, layer, release, usable, memo)
        if found is not None:
            out.append(found)
    return out


def unsupported_row(
    matrix: Matrix, layer: Layer, release: LayerRelease, today: Optional[_dt.date] = None
) -> Optional[str]:
    """Why ``matrix`` supports no stack with ``release`` of ``layer`` (``check`` names it as the
    conflict of a stack that has no fix), or ``None`` when it supports one."""
    usable = [c for c in cells(matrix, today=today) if c.status in _USABLE]
    found = _row(matrix, layer, release, usable)
    return found.message if found is not None else None


def layer_cycles(layers: List[Layer]) -> List[Diagnostic]:
    """Each pin that closes a cycle of layers requiring one another (vllm-ascend requires a
    plugin that requires vllm-ascend; a layer that requires itself), at the pin's line: a stack
    cannot be installed layer by layer, and its fixes would go round."""
    by_name = {layer.name: layer for layer in layers}
    edges = {layer.name: [(p, r) for r in layer.releases for p in r.packages if p.name in by_name] for layer in layers}
    out: List[Diagnostic] = []
    reported = set()
    for start in sorted(edges):
        # depth-first from each layer: a pin leading back to the start closes a cycle
        stack: List[Tuple[str, Tuple[str, ...]]] = [(start, (start,))]
        visited = set()
        while stack:
            name, path = stack.pop()
            for pin, release in edges.get(name, ()):
                if pin.name == start:
                    cycle = frozenset(path)
                    if cycle in reported:
                        continue
                    reported.add(cycle)
                    names = " -> ".join(by_name[n].distribution for n in (*path, start))
                    who = f"{by_name[name].distribution} {release.version}"
                    out.append(
                        Diagnostic(
                            pin.mark,
                            f"{who} requires {pin}, and the layers require one another in a cycle ({names})"
                            if len(path) > 1
                            else f"{who} requires itself ({pin})",
                            "a layer requires the layers below it only: remove the pin that points back up",
                        )
                    )
                elif pin.name not in visited:
                    visited.add(pin.name)
                    stack.append((pin.name, (*path, pin.name)))
    return out
