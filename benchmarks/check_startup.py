"""How much faster `adapter-matrix check` answers than `import torch` takes.

Runs both alternately in this environment (so machine noise hits both alike) and
prints the median of each and their ratio. Target: check >= 10x faster.

    python benchmarks/check_startup.py [--runs 9] [--matrix tests/fixtures/matrices/torch_npu.yaml]

torch's own device-backend autoload is disabled for the `import torch` side, so the
adapter's activation does not inflate torch's time (the ratio is conservative).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _time(cmd, env) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--matrix", help="A matrix file, relative to the repository (default: ./compat.yaml).")
    args = parser.parse_args()
    script = Path(sys.executable).with_name("adapter-matrix")
    check = [str(script), "check"] if script.exists() else [sys.executable, "-m", "adapter_matrix", "check"]
    if args.matrix:
        check += ["--matrix", args.matrix]
    torch = [sys.executable, "-c", "import torch"]
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    repo = Path(__file__).resolve().parent.parent
    os.chdir(repo)
    _time(check, env)  # warm the compiled-matrix cache and the page cache once
    _time(torch, env)
    checks, torches = [], []
    for _ in range(args.runs):
        checks.append(_time(check, env))
        torches.append(_time(torch, env))
    c, t = statistics.median(checks), statistics.median(torches)
    print(f"adapter-matrix check: median {c * 1000:.0f} ms over {args.runs} runs")
    print(f"import torch:         median {t * 1000:.0f} ms over {args.runs} runs")
    print(f"ratio: check is {t / c:.1f}x faster than import torch (target >= 10x)")


if __name__ == "__main__":
    main()
