"""What the binary check adds to `adapter-matrix check`, warm and cold.

Runs, alternately in this environment (so machine noise hits all alike): `check` and
`check --no-binary`, warm (the caches filled) and cold (a fresh $ADAPTER_MATRIX_CACHE
each run: the matrix compiled, every library's symbols read, libtorch_cpu.so's 75,000
among them), and re-decided (the stored verdict gone, as after an install into the same
site-packages, the libraries' symbol tables still stored); prints the medians and the
differences. Target: warm, the binary check adds
at most 30 ms (issue 48).

    python benchmarks/binary_check.py [--runs 15] [--cold-runs 5]

The adapter checked is the one ./compat.yaml describes (the reference device: its C++
core from the build cache, when built), with its torch.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time(cmd, env) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cold-runs", type=int, default=5)
    args = parser.parse_args()
    os.chdir(Path(__file__).resolve().parent.parent)
    script = Path(sys.executable).with_name("adapter-matrix")
    base = [str(script)] if script.exists() else [sys.executable, "-m", "adapter_matrix"]
    commands = {"check": [*base, "check"], "check --no-binary": [*base, "check", "--no-binary"]}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as warm_cache:
        warm_env = {**env, "ADAPTER_MATRIX_CACHE": warm_cache}
        # The device build (if any) stays where `adapter-matrix build` put it.
        builds = Path(os.environ.get("ADAPTER_MATRIX_CACHE") or Path.home() / ".cache" / "adapter-matrix", "builds")
        if builds.is_dir():
            os.symlink(builds, Path(warm_cache, "builds"))
        for cmd in commands.values():  # bytecode, the compiled matrix, the binary caches
            _time(cmd, warm_env)
        warm = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                warm[name].append(_time(cmd, warm_env))
        # after a pip install elsewhere in site-packages: the verdict is decided again from
        # the libraries' stored symbol tables (none is read again), and so is check's answer
        # (the install changed the folder its memo stamps)
        relearn = {name: [] for name in commands}
        for _ in range(args.cold_runs):
            for name, cmd in commands.items():
                for kind in (("binary", "verdicts"), ("check-answers",)):
                    shutil.rmtree(Path(warm_cache, *kind), ignore_errors=True)
                relearn[name].append(_time(cmd, warm_env))
        cold = {name: [] for name in commands}
        for _ in range(args.cold_runs):
            for name, cmd in commands.items():
                with tempfile.TemporaryDirectory() as fresh:
                    if builds.is_dir():
                        os.symlink(builds, Path(fresh, "builds"))
                    cold[name].append(_time(cmd, {**env, "ADAPTER_MATRIX_CACHE": fresh}))
    for label, times in (("warm", warm), ("re-decided", relearn), ("cold", cold)):
        med = {name: statistics.median(values) for name, values in times.items()}
        for name in commands:
            print(f"{label} {name + ':':<20} median {med[name] * 1000:6.1f} ms over {len(times[name])} runs")
        added = med["check"] - med["check --no-binary"]
        print(f"{label}: the binary check adds {added * 1000:+.1f} ms ({med['check'] / med['check --no-binary']:.2f}x)")
    print("target: warm <= +30 ms")


if __name__ == "__main__":
    main()
