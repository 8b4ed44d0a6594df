"""A plan as GitHub Actions matrices: chunks of at most 256 jobs, one per cell job.

GitHub runs at most 256 jobs from one ``strategy.matrix`` (not raisable), so the reusable
workflow (``.github/workflows/adapter-matrix.yml``) declares :data:`CHUNK_JOBS` cell jobs,
``cell-1`` to ``cell-8``, each with the same steps and a matrix of its own from the plan
job's output ``chunkN``; a job whose output is empty is skipped. A plan is split into as few
chunks as fit, of sizes that differ by one at most, in plan order; every row is in exactly
one chunk. The limits, all refused before any job starts (:class:`ChunkError`, exit 2):

- at most ``CHUNK_JOBS * MATRIX_LIMIT`` (2,048) rows;
- a cap on concurrent jobs (``max-parallel``) is shared among the chunks (``strategy:
  max-parallel`` caps one matrix only), so it must be at least the number of chunks;
- the plan job's outputs hold every row, within GitHub's 1 MB per job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import List, Mapping, Sequence, Tuple

from ..errors import AdapterMatrixError

__all__ = ["MATRIX_LIMIT", "CHUNK_JOBS", "OUTPUT_LIMIT", "ChunkError", "Chunks", "split"]

MATRIX_LIMIT = 256  # jobs one strategy.matrix may generate in a workflow run
CHUNK_JOBS = 8  # the cell jobs of .github/workflows/adapter-matrix.yml (tests/unit/test_nox.py ties the two)
OUTPUT_LIMIT = 1024 * 1024  # bytes of one job's outputs

Row = Mapping[
    str, object
]  # one `include` entry as JSON (ci.runners.GithubRow.as_json): session, python, torch, id, runs-on


class ChunkError(AdapterMatrixError):
    """A plan the workflow cannot run: too many rows, a cap below its chunks, outputs too large."""


@dataclass(frozen=True)
class Chunks:
    """The matrices of a plan and each cell job's share of the concurrent jobs."""

    matrices: Tuple[Tuple[Row, ...], ...]
    parallel: Tuple[int, ...]  # one per cell job, CHUNK_JOBS long (1 for a job with no chunk)
    max_parallel: int = 0  # the cap asked for; 0: none

    @property
    def jobs(self) -> int:
        return sum(len(m) for m in self.matrices)

    def outputs(self) -> List[str]:
        """The plan job's ``$GITHUB_OUTPUT`` lines: ``chunks``, ``jobs``, ``parallel`` and one
        ``chunkN`` per cell job (empty: that job is skipped)."""
        lines = [f"chunks={len(self.matrices)}", f"jobs={self.jobs}", f"parallel={json.dumps(list(self.parallel))}"]
        for n in range(len(self.parallel)):
            rows = self.matrices[n] if n < len(self.matrices) else None
            text = json.dumps({"include": list(rows)}, separators=(",", ":")) if rows else ""
            lines.append(f"chunk{n + 1}={text}")
        return lines

    def summary(self) -> str:
        """What the plan needs, in one line: jobs, chunks and their sizes, the cap."""
        sizes = ", ".join(str(len(m)) for m in self.matrices)
        cap = (
            f"at most {self.max_parallel} at once ({', '.join(map(str, self.parallel[: len(self.matrices)]))} per chunk)"
            if self.max_parallel
            else "no cap on concurrent jobs"
        )
        return (
            f"{self.jobs} cell job(s) in {len(self.matrices)} chunk(s) of at most {MATRIX_LIMIT}"
            + (f" ({sizes})" if len(self.matrices) > 1 else "")
            + f", of the {len(self.parallel)} the workflow runs; {cap}"
        )


def split(rows: Sequence[Row], max_parallel: int = 0, limit: int = MATRIX_LIMIT, jobs: int = CHUNK_JOBS) -> Chunks:
    """``rows`` in as few chunks of at most ``limit`` as fit, balanced, in order;
    ``max_parallel`` (0: no cap) shared among them. :class:`ChunkError` if they cannot run."""
    if max_parallel < 0:
        raise ChunkError(f"max-parallel {max_parallel}: a number of jobs, 0 for no cap")
    count = -(-len(rows) // limit)
    if count > jobs:
        raise ChunkError(
            f"{len(rows)} rows need {count} matrices of at most {limit} jobs, and the workflow runs {jobs} "
            f"({jobs * limit:,} jobs): plan fewer rows (the pairwise strategy, or one release)"
        )
    if max_parallel and count > max_parallel:
        raise ChunkError(
            f"max-parallel {max_parallel} is below the {count} chunks of {len(rows)} rows (each chunk runs one job at "
            f"least): raise it to {count}, or plan fewer rows"
        )
    matrices: List[Tuple[Row, ...]] = []
    start = 0
    for n in range(count):
        size = len(rows) // count + (n < len(rows) % count)
        matrices.append(tuple(rows[start : start + size]))
        start += size
    if max_parallel:
        shares = [max_parallel // count + (n < max_parallel % count) for n in range(count)]
    else:
        shares = [len(m) for m in matrices]  # the matrix's own size: no cap
    chunks = Chunks(tuple(matrices), tuple(shares + [1] * (jobs - count)), max_parallel)
    size = sum(len(line.encode()) + 1 for line in chunks.outputs())
    if size > OUTPUT_LIMIT:
        raise ChunkError(
            f"the plan's rows take {size:,} bytes of job outputs, over GitHub's {OUTPUT_LIMIT:,}: plan fewer rows"
        )
    return chunks
