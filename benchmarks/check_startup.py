"""What `adapter-matrix check` costs against a bare interpreter start and against `import torch`.

Runs, alternately in this environment (so machine noise hits all alike): `python -c pass`,
the `adapter-matrix check` console script, the same check through typer (the path every
other command line takes), and `import torch`. Each round times the four back to back;
the ratio of a round is paired (check / bare Python of the same round), and the report
gives the median over the rounds, of wall and CPU time.

Targets (docs/performance.md): check at most 1.5x a bare interpreter start, and at least
40x faster than `import torch`.

    python benchmarks/check_startup.py [--runs 21] [--matrix tests/fixtures/matrices/torch_npu.yaml]

A warm check is measured, as users run it: bytecode is written and used
(PYTHONDONTWRITEBYTECODE is removed for the runs), the compiled-matrix cache and the
check's answer memo are filled by the first, uncounted round. torch's own device-backend
autoload is disabled for the `import torch` side, so the adapter's activation does not
inflate torch's time (the ratio is conservative).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TYPER_CHECK = "import sys; sys.argv[0] = 'adapter-matrix'; from adapter_matrix.cli import app; app()"


def _time(cmd, env) -> tuple:
    """(wall, CPU) seconds of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--matrix", help="A matrix file, relative to the repository (default: ./compat.yaml).")
    args = parser.parse_args()
    script = Path(sys.executable).with_name("adapter-matrix")
    check = ["check", "--matrix", args.matrix] if args.matrix else ["check"]
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "adapter-matrix check": [str(script), *check]
        if script.exists()
        else [sys.executable, "-m", "adapter_matrix", *check],
        "check through typer": [sys.executable, "-c", TYPER_CHECK, *check],
        "import torch": [sys.executable, "-c", "import torch"],
    }
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    os.chdir(Path(__file__).resolve().parent.parent)
    for cmd in commands.values():  # write bytecode, fill the caches and the page cache
        _time(cmd, env)
    rounds = []
    for _ in range(args.runs):
        rounds.append({name: _time(cmd, env) for name, cmd in commands.items()})
    for name in commands:
        wall = statistics.median(r[name][0] for r in rounds)
        cpu = statistics.median(r[name][1] for r in rounds)
        print(f"{name + ':':<22} median {wall * 1000:6.1f} ms wall, {cpu * 1000:6.1f} ms CPU over {args.runs} rounds")
    for i, label in ((0, "wall"), (1, "CPU")):
        bare = statistics.median(r["adapter-matrix check"][i] / r["python -c pass"][i] for r in rounds)
        torch = statistics.median(r["import torch"][i] / r["adapter-matrix check"][i] for r in rounds)
        typer = statistics.median(r["check through typer"][i] / r["python -c pass"][i] for r in rounds)
        print(
            f"ratio ({label}, median of paired rounds): check costs {bare:.2f}x a bare python (target <= 1.5x; "
            f"through typer {typer:.2f}x) and is {torch:.0f}x faster than import torch (target >= 40x)"
        )


if __name__ == "__main__":
    main()
