"""`validate` on an adapter's matrix: every finding about the file (:func:`validate_file`) and
`--write`'s corrections from the index (:func:`write_facts`)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Tuple

from ..ci.record import RecordSet
from ..matrix.cache import load_matrix
from ..matrix.diagnostics import Diagnostic
from ..matrix.model import Matrix
from .index_answers import IndexAnswers

if TYPE_CHECKING:
    from ..upstream.companion_index import CompanionIndex


class Validation(NamedTuple):
    """What `validate` found about one matrix file."""

    matrix: Matrix
    findings: List[Diagnostic]  # errors and warnings, each at its line
    evidence: Optional[Tuple[int, int]]  # with records: (cells with a fresh passing record, cells claimed supported)
    # the index's companion answers and why some have none (with an IndexAnswers), for write_facts
    companion_answers: Optional[Tuple[Dict[str, CompanionIndex], Dict[str, str]]] = None

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
    from ..ci.evidence import claimed_supported, evidence_folder, gate
    from ..ci.release import adapter_version, read_frozen, version_findings

    result = load_matrix(path, use_cache=False)
    matrix = result.matrix
    found: List[Diagnostic] = list(result.warnings)
    if pyproject:
        from ..upstream.pyproject import check_pyproject

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


def write_facts(
    path: str,
    upstream: IndexAnswers,
    *,
    pyproject: Optional[str] = None,
    records: Optional[RecordSet] = None,
    strict: bool = False,
    today: Optional[_dt.date] = None,
) -> Tuple[Validation, Tuple[str, ...]]:
    """Correct the file's torch, companion and release facts from the index, in place (comments
    kept, atomically), then validate what it says now. Returns that and which facts changed
    (``torch``, ``companion``, ``release``); the options are :func:`validate_file`'s."""
    from ..upstream import companion_write, own, write

    def validated() -> Validation:
        return validate_file(path, pyproject=pyproject, upstream=upstream, records=records, strict=strict, today=today)

    done = validated()
    changed: List[str] = []
    if write.write(path, done.matrix, upstream.index):
        changed.append("torch")
        done = validated()
    answers = done.companion_answers  # validated with an IndexAnswers: always read
    if answers is not None and companion_write.write_companions(path, done.matrix, answers[0]):
        changed.append("companion")
        done = validated()
    if own.write_own(path, done.matrix, upstream.own(done.matrix)):
        changed.append("release")
        done = validated()
    return done, tuple(changed)
