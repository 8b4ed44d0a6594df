"""How much faster `adapter-matrix check` answers than `import torch` takes.

Runs, alternately in this environment (so machine noise hits all alike): the
`adapter-matrix check` console script, the same check through typer (the path every
other command line takes), and `import torch`; prints the median of each and the ratios.
Target: check >= 20x faster than import torch.

    python benchmarks/check_startup.py [--runs 15] [--matrix tests/fixtures/matrices/torch_npu.yaml]

Bytecode is written and used (PYTHONDONTWRITEBYTECODE is removed for the runs): users'
installs have .pyc files, and compiling every module on every start would add ~70 ms to
`check` alone. torch's own device-backend autoload is disabled for the `import torch` side,
so the adapter's activation does not inflate torch's time (the ratio is conservative).
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
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--matrix", help="A matrix file, relative to the repository (default: ./compat.yaml).")
    args = parser.parse_args()
    script = Path(sys.executable).with_name("adapter-matrix")
    check = ["check", "--matrix", args.matrix] if args.matrix else ["check"]
    commands = {
        "adapter-matrix check": [str(script), *check]
        if script.exists()
        else [sys.executable, "-m", "adapter_matrix", *check],
        "check through typer": [sys.executable, "-c", TYPER_CHECK, *check],
        "import torch": [sys.executable, "-c", "import torch"],
    }
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    os.chdir(Path(__file__).resolve().parent.parent)
    for cmd in commands.values():  # write bytecode, fill the compiled-matrix cache and the page cache
        _time(cmd, env)
    times = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(_time(cmd, env))
    med = {name: statistics.median(w for w, _ in values) for name, values in times.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    for name in commands:
        print(
            f"{name + ':':<22} median {med[name] * 1000:5.0f} ms wall, {cpu[name] * 1000:5.0f} ms CPU over {args.runs} runs"
        )
    for label, t in (("wall", med), ("CPU", cpu)):
        print(
            f"ratio ({label}): check is {t['import torch'] / t['adapter-matrix check']:.1f}x faster than import torch "
            f"(target >= 20x); through typer {t['import torch'] / t['check through typer']:.1f}x"
        )


if __name__ == "__main__":
    main()
