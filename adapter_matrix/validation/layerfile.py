"""`validate` on a layer's matrix (it has ``layer:``): its own findings, its rows against the
adapter's matrix, and its pins against its wheels' ``Requires-Dist``."""

from __future__ import annotations

import datetime as _dt
from typing import List, NamedTuple, Optional, Sequence

from ..matrix.cache import load_any
from ..matrix.diagnostics import Diagnostic
from ..matrix.model import Layer, LayerResult, Matrix
from .index_answers import IndexAnswers


class LayerValidation(NamedTuple):
    """What `validate` found about a layer's matrix: its own errors and warnings, its rows the
    adapter's matrix does not support, and the pins its wheels contradict."""

    layer: Layer
    findings: List[Diagnostic]
    adapter: Optional[Matrix]  # the adapter's matrix it was checked against; None when none was found

    @property
    def errors(self) -> int:
        return sum(1 for d in self.findings if d.severity == "error")


def is_layer_file(path: str) -> bool:
    """Whether ``path`` holds a layer's matrix (it has ``layer:``), valid or not: its errors are
    then a layer's. An unreadable file is no layer (its reader says why)."""
    import re

    from ..matrix.diagnostics import MatrixError, display_path, read_matrix_file
    from ..matrix.loader import is_layer
    from ..matrix.source import parse

    try:
        raw = read_matrix_file(path)
    except MatrixError:
        return False
    if re.search(rb"^layer[ \t]*:", raw, re.MULTILINE):
        return True  # a top-level `layer:` key (block style): no need to parse a big file twice
    if not re.search(rb"\blayer\b", raw):
        return False
    try:
        tree, _problems = parse(raw.decode("utf-8"), display_path(path))
    except UnicodeDecodeError:
        return False
    return is_layer(tree)


def validate_layer(
    path: str, adapters: Sequence[Matrix], *, upstream: Optional[IndexAnswers] = None, today: Optional[_dt.date] = None
) -> LayerValidation:
    """Every finding about the layer's matrix at ``path``: its own, its rows against the
    adapter's matrix among ``adapters``, and (``upstream``) its pins against its wheels'
    ``Requires-Dist``. Raises :class:`~adapter_matrix.matrix.diagnostics.MatrixError` for a
    file that is no valid matrix."""
    from ..matrix.stack_rules import check_layer
    from ..names import canonical_name

    result = load_any(path)  # the compiled cache: keyed by the file's bytes, warnings included
    if not isinstance(result, LayerResult):
        raise TypeError(f"{path} is an adapter's matrix, not a layer's")
    layer = result.layer
    found: List[Diagnostic] = list(result.warnings)
    adapter = next((m for m in adapters if canonical_name(m.adapter.distribution) == layer.name_of_adapter), None)
    if adapter is not None:
        found += check_layer(layer, adapter, today)
    else:
        found.append(
            Diagnostic(
                layer.mark,
                f"no matrix of {layer.adapter} was given or is installed: the rows are not checked against the adapter's",
                f"pass {layer.adapter}'s compat.yaml too (validate LAYER.yaml ADAPTER.yaml), or install {layer.adapter}",
                "warning",
            )
        )
    if upstream is not None:
        from ..upstream.layer_index import verify_layer

        found += verify_layer(layer, upstream.source)
    return LayerValidation(layer, found, adapter)
