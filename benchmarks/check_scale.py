"""How `check`'s cost grows with the number of releases in a matrix.

torch_npu's published table (tests/fixtures/matrices/torch_npu.yaml, 36 packages) is
repeated 10x and 100x, each copy under its own PEP 440 epoch (``3!2.9.0.post6``) and
release-line name, so every copy is a distinct release with the same shape. For each size
it times, in this one process, a warm `check` (the file loaded and validated, then the
verdict with its fixes for a user whose torch-npu needs another CANN) and the verdict
alone, and prints the ratios 3,600 / 360. Target: at most 10x for 10x the releases.

    python benchmarks/check_scale.py [--runs 5]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import re
import statistics
import time
from pathlib import Path
from typing import Callable, Dict

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "matrices" / "torch_npu.yaml"
TODAY = _dt.date(2026, 12, 1)


def scaled_matrix_text(releases: int) -> str:
    """torch_npu's matrix with its 36 releases repeated to ``releases`` (a multiple of 36)."""
    text = FIXTURE.read_text()
    head, _, body = text.partition("\nreleases:\n")
    copies = []
    for k in range(releases // 36):
        copy = re.sub(r"(\{|- )version: ", lambda m, k=k: f"{m[1]}version: " + (f"{k}!" if k else ""), body)
        copy = re.sub(
            r"^  - line: (\S+)", lambda m, k=k: f"  - line: {m[1]}" + (f"-copy{k}" if k else ""), copy, flags=re.M
        )
        copies.append(copy.split("\nci:")[0] if "\nci:" in copy else copy)
    return head + "\nreleases:\n" + "\n".join(copies)


def _median(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm: caches filled, modules imported
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from packaging.version import Version

    from adapter_matrix.check.judgment import Environment
    from adapter_matrix.check.verdict import verdict
    from adapter_matrix.matrix.loader import load_text
    from adapter_matrix.matrix.model import PythonVersion

    results: Dict[int, Dict[str, float]] = {}
    for size in (36, 360, 3600):
        text = scaled_matrix_text(size)
        matrix = load_text(text, "scaled.yaml").matrix
        assert len(matrix.releases) == size, len(matrix.releases)
        env = Environment(
            PythonVersion.parse("3.11"),
            torch=Version("2.8.0"),
            adapter=Version("2.8.0.post2"),  # needs CANN 8.5.0; the user has 9.1.0
            dimensions=(("cann", matrix.dimension("cann").value("9.1.0")), ("soc", None)),
        )
        answer = verdict(matrix, env, TODAY)
        assert answer.fixes, "the benchmark must exercise the fix search"

        def whole() -> None:
            verdict(load_text(text, "scaled.yaml").matrix, env, TODAY)  # noqa: B023 (timed in this iteration)

        results[size] = {
            "check": _median(whole, args.runs),
            "verdict": _median(lambda: verdict(matrix, env, TODAY), args.runs),  # noqa: B023 (timed now)
        }
        print(
            f"{size:>5} releases: check {results[size]['check'] * 1000:8.1f} ms, verdict and fixes {results[size]['verdict'] * 1000:8.1f} ms"
        )
    for key in ("check", "verdict"):
        ratio = results[3600][key] / results[360][key]
        print(f"{key}: 3,600 / 360 releases = {ratio:.1f}x (target <= 10x)")


if __name__ == "__main__":
    main()
