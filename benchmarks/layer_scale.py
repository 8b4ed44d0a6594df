"""What a layer of 5,000 releases costs `check` and `validate` (issue 66: each under 2 s warm).

Writes a layer's matrix of 5,000 releases on torch_npu's fixture matrix (eight distinct rows
of (torch, torch-npu, CANN) and thirty vllm pins, repeated: what a long-lived layer's table
looks like), then times, as whole processes and warm (the compiled-matrix cache filled by a
first run, the answer memo off):

- `validate LAYER ADAPTER` (each row narrowed against the adapter's cells);
- `check` of a stack holding a release that conflicts with the CANN held (`--set cann=9.1.0`,
  `--companion big-layer=49.99.0`): the conflict, and every way out, searched by the resolver.

Each is run `--runs` times after one warm-up; the report gives the median, min and max of the
wall time and of the CPU time (user + system: what the machine's load does not inflate), and
says whether the median wall time is within the target.

    python benchmarks/layer_scale.py [--runs 5] [--releases 5000]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

REPO = Path(__file__).resolve().parents[1]
ADAPTER = REPO / "tests" / "fixtures" / "matrices" / "torch_npu.yaml"
TARGET = 2.0  # seconds, warm, each command
ROWS = [  # (torch, torch-npu, CANN): rows torch_npu's matrix lists
    ("2.10.0", "2.10.0.post4", "9.1.0"),
    ("2.9.0", "2.9.0.post6", "9.1.0"),
    ("2.7.1", "2.7.1.post8", "9.1.0"),
    ("2.10.0", "2.10.0.post2", "9.0.0"),
    ("2.9.0", "2.9.0.post2", "9.0.0"),
    ("2.8.0", "2.8.0.post4", "9.0.0"),
    ("2.9.0", "2.9.0", "8.5.0"),
    ("2.7.1", "2.7.1.post2", "8.5.0"),
]

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["ADAPTER_MATRIX_NO_MEMO"] = "1"


def write_layer(path: Path, releases: int) -> None:
    lines = ["schema-version: 2", "layer:", "  distribution: big-layer", "  adapter: torch-npu", "releases:"]
    for i in range(releases):
        torch, adapter, cann = ROWS[i % len(ROWS)]
        lines += [
            f"  - version: {i // 100}.{i % 100}.0",
            "    status: supported",
            '    python: ">=3.10,<3.13"',
            f"    torch: {torch}",
            f"    adapter: {adapter}",
            f"    requires: {{vllm: 0.{i % 30}.0}}",
            f"    dimensions: {{cann: {cann}}}",
        ]
    path.write_text("\n".join(lines) + "\n")


def timed(cmd: List[str], cwd: Path) -> Tuple[float, float]:
    """Wall and CPU (user + system of the child) seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=ENV, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--releases", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        layer = Path(tmp) / "big.yaml"
        write_layer(layer, args.releases)
        tool = [sys.executable, "-m", "adapter_matrix"]
        commands = {
            "validate": [*tool, "validate", str(layer), str(ADAPTER)],
            "check": [
                *tool,
                "check",
                "--no-binary",
                "--matrix",
                str(ADAPTER),
                "--matrix",
                str(layer),
                "--python",
                "3.11",
                "--set",
                "arch=aarch64",
                "--set",
                "cann=9.1.0",
                "--torch",
                "2.9.0",
                "--adapter",
                "2.9.0.post6",
                "--companion",
                "big-layer=49.99.0",
                "--companion",
                "vllm=0.29.0",
            ],
        }
        print(f"a layer of {args.releases} releases on {ADAPTER.name}, warm, {args.runs} runs each (median, min-max):")
        for label, cmd in commands.items():
            timed(cmd, Path(tmp))  # warm: the compiled-matrix cache
            runs = [timed(cmd, Path(tmp)) for _ in range(args.runs)]
            walls = [w for w, _c in runs]
            cpus = [c for _w, c in runs]
            verdict = "within" if statistics.median(walls) <= TARGET else "OVER"
            print(
                f"  {label:<9} wall {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f}), "
                f"cpu {statistics.median(cpus):.2f} s ({min(cpus):.2f}-{max(cpus):.2f}): {verdict} the {TARGET:.0f} s target"
            )
        print(f"  load average when done: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
