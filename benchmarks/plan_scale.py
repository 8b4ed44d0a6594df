"""What `adapter-matrix plan` costs on a vendor-size matrix (issue 59: under 2 s for 1,500 cells).

tests/fixtures/matrices/scale_1500.yaml is 15 torch lines x 5 Pythons x 10 CANN toolkits x 2
architectures, one release: 1,500 rows in `full`, 6 chunks for the reusable workflow. Against
it, torch_npu's published table (tests/fixtures/matrices/torch_npu.yaml, 143 rows) as the
base. For each it times, median of the runs:

- the command the plan job runs, `adapter-matrix plan --strategy full --format github`, as a
  new process with the compiled-matrix cache cold (an empty cache folder, as on a fresh CI
  runner) and warm;
- in this process, with the file already read: the plan of `full` (which also picks the
  `pairwise` rows every plan tags) and its chunks.

It prints the times, the ratio 1,500-cell / 143-row of each (10.5x the rows), and whether
the cold command is under the target.

    python benchmarks/plan_scale.py [--runs 5]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict

REPO = Path(__file__).resolve().parents[1]
MATRICES = {
    "torch_npu (143 rows)": REPO / "tests" / "fixtures" / "matrices" / "torch_npu.yaml",
    "scale (1,500 rows)": REPO / "tests" / "fixtures" / "matrices" / "scale_1500.yaml",
}
TODAY = "2026-12-05"
TARGET = 2.0  # seconds for the plan job's command on 1,500 cells


def _median(fn: Callable[[], object], runs: int, warm: bool = True) -> float:
    if warm:
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _command(path: Path, cache: str) -> None:
    exe = [sys.executable, "-m", "adapter_matrix", "plan", "--matrix", str(path), "--format", "github"]
    env = dict(os.environ, ADAPTER_MATRIX_CACHE=cache)
    subprocess.run([*exe, "--strategy", "full", "--today", TODAY], env=env, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from adapter_matrix.ci.chunks import split
    from adapter_matrix.ci.plan import plan
    from adapter_matrix.matrix.loader import load

    today = _dt.date.fromisoformat(TODAY)
    results: Dict[str, Dict[str, float]] = {}
    for name, path in MATRICES.items():
        matrix = load(str(path)).matrix
        rows = plan(matrix, "full", today=today)

        def cold(path: Path = path) -> None:
            with tempfile.TemporaryDirectory() as cache:
                _command(path, cache)

        with tempfile.TemporaryDirectory() as cache:
            warm = _median(lambda: _command(path, cache), args.runs)  # noqa: B023 (timed in this iteration)
        results[name] = {
            "command, cold cache": _median(cold, args.runs, warm=False),
            "command, warm cache": warm,
            "plan": _median(lambda: plan(matrix, "full", today=today), args.runs),  # noqa: B023
            "chunks": _median(lambda: split([{"id": r.id} for r in rows]), args.runs),  # noqa: B023
        }
        print(
            f"{name:>20}: "
            + ", ".join(f"{key} {seconds * 1000:7.1f} ms" for key, seconds in results[name].items())
            + f"; {len(rows)} rows"
        )
    base, big = MATRICES
    for key in results[big]:
        print(f"{key}: 1,500 / 143 rows = {results[big][key] / results[base][key]:.1f}x")
    seconds = results[big]["command, cold cache"]
    print(
        f"plan on 1,500 cells, cold: {seconds:.2f} s (target < {TARGET:.0f} s): {'ok' if seconds < TARGET else 'OVER'}"
    )


if __name__ == "__main__":
    main()
