"""A script that trains on the device exits with status 0.

The conformance suite runs each test in a forked child that never reaches a normal
interpreter exit, so an abort during interpreter finalization (shims/csrc/autograd_exit.cpp:
autograd's device threads freeing Python objects while Python finalizes, status 134) is
invisible to every other test. Here real scripts run as plain interpreters (subprocesses,
not forks) to their end, many times, since the abort was a race (8 of 12 runs before the fix).

Cost: each run is an interpreter start plus `import torch` (1-2 s of CPU); the runs go
RUNS_AT_ONCE at a time, so 50 runs take about 25-50 s on 2 cores.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.suite("exit")

SCRIPT = Path(__file__).parent / "exit_scripts" / "train_two_devices.py"
RUNS = int(os.environ.get("ADAPTER_MATRIX_EXIT_RUNS", "50"))  # the acceptance floor of issue 23
RUNS_AT_ONCE = 2 * (os.cpu_count() or 1)  # concurrency shifts the timing of each run: no harm here


def _run(_: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, ADAPTER_MATRIX_DEVICE_COUNT="2", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=600)


def test_training_scripts_exit_cleanly():
    with ThreadPoolExecutor(RUNS_AT_ONCE) as pool:
        runs = list(pool.map(_run, range(RUNS)))
    failed = [r for r in runs if r.returncode != 0]
    outputs = {r.stdout for r in runs if r.returncode == 0}
    detail = "\n".join(f"exit {r.returncode}: {r.stderr.strip()[-400:]}" for r in failed[:3])
    assert not failed, f"{len(failed)} of {RUNS} runs of {SCRIPT.name} ended with a non-zero status:\n{detail}"
    assert len(outputs) == 1, f"the runs trained to different results: {sorted(outputs)}"  # each run really trained
