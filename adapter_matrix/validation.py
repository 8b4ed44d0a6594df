"""`validate`'s pipeline: every finding about one matrix file, and `--write`'s corrections.

The command line parses the options, calls :func:`validate_file` (or :func:`write_facts`) per
file and prints the :class:`Validation` it gets back; nothing here prints or exits. A finding
is a :class:`~adapter_matrix.matrix.diagnostics.Diagnostic` at its line, from the schema and
consistency rules, the project's ``pyproject.toml``, the index (torch's facts, the companions',
the adapter's own releases) and the evidence folder (the release gate).

It joins two spokes, ``upstream`` (the index) and ``ci`` (records and frozen releases), so it
sits outside them, as ``tables`` and ``binary`` do.
"""

from __future__ import annotations

import datetime as _dt
import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .ci.record import RecordSet
from .matrix.cache import load_any, load_matrix
from .matrix.diagnostics import Diagnostic
from .matrix.model import Layer, LayerResult, Matrix

__all__ = [
    "IndexAnswers",
    "LayerValidation",
    "Validation",
    "is_layer_file",
    "validate_file",
    "validate_layer",
    "write_facts",
]


class IndexAnswers:
    """The index answers `validate --upstream` judges against: read once, for every matrix file.

    ``source`` is ``pypi``, a recorded folder or torch's recorded Simple JSON file."""

    def __init__(self, source: str) -> None:
        from .upstream import index

        self.source = source
        self._index: Any = None  # torch's answer: read on first use (a layer's check does not need it)
        self._own: Dict[str, Any] = {}  # the adapter's own releases, read once per distribution
        if not os.path.isdir(source):  # pypi or torch's file: read now, so a bad source fails before any output
            self._index = index.read_upstream(source)

    @property
    def index(self) -> Any:
        from .upstream import index

        if self._index is None:
            self._index = index.read_upstream(self.source)
        return self._index

    @staticmethod
    def record(folder: str, matrices: Sequence[Matrix]) -> List[str]:
        """Save PyPI's answers for ``matrices`` into ``folder`` (then judge against it offline)."""
        from .upstream import companion_index, index

        raw, _origin = index.read_answer("pypi")
        written: List[str] = []
        for matrix in matrices:
            written += companion_index.record(folder, matrix, raw)
        return written

    def own(self, matrix: Matrix) -> Any:
        from .upstream import own

        name = matrix.adapter.distribution
        if name not in self._own:
            self._own[name] = own.read_own(self.source, matrix)
        return self._own[name]

    def findings(self, matrix: Matrix) -> Tuple[List[Diagnostic], Any]:
        """What the index says of ``matrix``'s torch, companion and own-release facts, and the
        companions' answers (``--write`` corrects from them)."""
        from .upstream import companion_index, own
        from .upstream import index as up

        found = list(up.verify(matrix, self.index))
        answers = companion_index.read_companions(self.source, matrix)
        found += companion_index.verify_companions(matrix, *answers, self.source)
        found += own.verify_own(matrix, self.own(matrix), self.source)
        return found, answers


class Validation(NamedTuple):
    """What `validate` found about one matrix file."""

    matrix: Matrix
    findings: List[Diagnostic]  # errors and warnings, each at its line
    evidence: Optional[Tuple[int, int]]  # with records: (cells with a fresh passing record, cells claimed supported)
    companion_answers: Any = None  # the index's companion documents (with an IndexAnswers), for write_facts

    @property
    def errors(self) -> int:
        return sum(1 for d in self.findings if d.severity == "error")


def validate_file(
    path: str,
    *,
    pyproject: Optional[str] = None,
    upstream: Optional[IndexAnswers] = None,
    records: Optional[RecordSet] = None,
    strict: bool = False,
    today: Optional[_dt.date] = None,
) -> Validation:
    """Every finding about the matrix file at ``path``, read afresh (never the compiled cache).

    Raises :class:`~adapter_matrix.matrix.diagnostics.MatrixError` for a file that is no valid
    matrix, and ``OSError`` when a recorded answer cannot be written."""
    from .ci.evidence import claimed_supported, evidence_folder, gate
    from .ci.release import adapter_version, read_frozen, version_findings

    result = load_matrix(path, use_cache=False)
    matrix = result.matrix
    found: List[Diagnostic] = list(result.warnings)
    if pyproject:
        from .upstream.pyproject import check_pyproject

        found += check_pyproject(matrix, pyproject)
    answers = None
    if upstream is not None:
        upstream_found, answers = upstream.findings(matrix)
        found += upstream_found
    # changed code needs a new version: judged against the releases frozen in the evidence folder
    frozen = records.frozen if records is not None else read_frozen(evidence_folder(matrix, environ={}))
    if frozen:
        found += version_findings(matrix, frozen, adapter_version(matrix, pyproject), strict)
    evidence = None
    if records is not None:
        gated = gate(matrix, records, today, strict)
        found += [g.diagnostic for g in gated]
        claimed = len(claimed_supported(matrix, today))
        evidence = (claimed - sum(1 for g in gated if g.cell is not None), claimed)
    return Validation(matrix, found, evidence, answers)


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
    from .matrix.diagnostics import MatrixError, display_path, read_matrix_file
    from .matrix.loader import is_layer
    from .matrix.source import parse

    try:
        raw = read_matrix_file(path)
    except MatrixError:
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
    from .matrix.stack_rules import check_layer
    from .names import canonical_name

    result = load_any(path, use_cache=False)
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
        from .upstream.layer_index import verify_layer

        found += verify_layer(layer, upstream.source)
    return LayerValidation(layer, found, adapter)


def write_facts(path: str, upstream: IndexAnswers, **options: Any) -> Tuple[Validation, Tuple[str, ...]]:
    """Correct the file's torch, companion and release facts from the index, in place (comments
    kept, atomically), then validate what it says now. Returns that and which facts changed
    (``torch``, ``companion``, ``release``); ``options`` are :func:`validate_file`'s."""
    from .upstream import companion_write, own, write

    done = validate_file(path, upstream=upstream, **options)
    changed: List[str] = []
    if write.write(path, done.matrix, upstream.index):
        changed.append("torch")
        done = validate_file(path, upstream=upstream, **options)
    if companion_write.write_companions(path, done.matrix, done.companion_answers[0]):
        changed.append("companion")
        done = validate_file(path, upstream=upstream, **options)
    if own.write_own(path, done.matrix, upstream.own(done.matrix)):
        changed.append("release")
        done = validate_file(path, upstream=upstream, **options)
    return done, tuple(changed)
