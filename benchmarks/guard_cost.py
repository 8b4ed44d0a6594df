"""What the runtime guard adds to `import torch`, measured in one run.

    python benchmarks/guard_cost.py [--runs 11]

Alternates `import torch` and `import torch` + `adapter_matrix.check.guard.guard(...)` in
fresh interpreters (torch's autoload off on both sides, so only the guard differs) and
prints the medians and the added share. Target: <= 1 %. The guard answers from its
memo after the first call; the first (memo-less) call is timed separately in-process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "npu" / "shims" / "compat.yaml"
GUARD = f"from adapter_matrix.check.guard import guard; guard({str(MATRIX)!r}, torch.__version__, '0.1.0')"


def _run(code: str, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    bare, guarded = [], []
    _run(f"import torch; {GUARD}", env)  # fill the memo and the page cache
    for _ in range(args.runs):
        bare.append(_run("import torch", env))
        guarded.append(_run(f"import torch; {GUARD}", env))
    b, g = statistics.median(bare), statistics.median(guarded)
    proc = subprocess.run(
        [sys.executable, "-c", f"import time, torch; t = time.perf_counter(); {GUARD}; print(time.perf_counter() - t)"],
        env=env, capture_output=True, text=True, check=True,
    )
    in_process = float(proc.stdout.strip().splitlines()[-1])
    print(f"import torch:          median {b * 1000:.0f} ms over {args.runs} runs")
    print(f"import torch + guard:  median {g * 1000:.0f} ms")
    print(f"guard inside the process (memo hit): {in_process * 1000:.1f} ms = {in_process / b * 100:.2f} % of import torch (target <= 1 %)")
    print(f"difference of the medians: {(g - b) * 1000:+.0f} ms = {(g - b) / b * 100:+.2f} % (noise of one run included)")


if __name__ == "__main__":
    main()
