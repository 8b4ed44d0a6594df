"""The records a cell writes when it ends: the result record in ``results/`` and, unless
posargs narrowed the run, the evidence record in the folder of its release."""

from __future__ import annotations

import dataclasses
from typing import Optional

import nox

from ..ci import evidence as _evidence
from ..ci.plan import PlanRow
from ..ci.record import ResultRecord, write_record
from ..matrix.model import Matrix
from .cellstate import CellState


def write_cell_records(
    state: CellState,
    row: PlanRow,
    session: nox.Session,
    outcome: str,
    message: Optional[str],
    *,
    results: str,
    matrix: Matrix,
    evidence: Optional[str],
) -> ResultRecord:
    """Write the result record of ``state`` into ``results`` and the evidence record into
    ``evidence`` (``None``: the matrix's evidence folder); return the result record written."""
    record = ResultRecord.planned(row).seen(state.check)
    record = record.built(state.build).compiled(state.builds).tested(state.suites).on_sources(state.tree)
    record = dataclasses.replace(
        record,
        ops=state.ops,
        companion_refusals=list(state.refusals),
        companions_unavailable=dict(state.companions_unavailable),
    )
    written = write_record(results, record.finished(outcome, message, state.phases, phase_cpu=state.phase_cpu))
    session.log(f"result record: {written.path}")
    if session.posargs:  # a narrowed suite is not evidence for the cell
        session.log("posargs narrow the suite: no evidence record written")
    else:  # into the folder of the record's release; refused (with why) when it is not evidence of it
        try:
            folder = evidence or _evidence.evidence_folder(matrix)
            session.log(f"evidence record: {_evidence.write_evidence(folder, written, matrix)}")
        except _evidence.EvidenceError as exc:
            session.warn(f"no evidence record written: {exc}")
    return written
