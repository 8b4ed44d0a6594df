"""Run a worker script as a process group of ranks and collect what each wrote.

The distributed workloads (DDP, FSDP, tensor parallel) start real processes, as a launcher
would: each rank runs ``worker ARGS... RANK WORLD INIT_FILE RESULT_FILE`` and writes its
result as JSON. A rank that fails shows the end of its output in the assertion.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, List


def run_ranks(worker: Path, tmp_path: Path, world: int, *args: str, extra: tuple = ()) -> List[Any]:
    """The result of each of ``world`` ranks of ``worker``, after all exited with status 0."""
    # faulthandler: a rank that dies on a signal prints every thread's Python stack
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), PYTHONFAULTHANDLER="1")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(worker),
                *args,
                str(rank),
                str(world),
                str(tmp_path / "init"),
                str(tmp_path / f"rank{rank}.json"),
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        for rank in range(world)
    ]
    logs = []
    for proc in procs:
        try:
            out, _ = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the ranks of {' '.join(args)} hang:\n{_stacks(procs)}") from None
        logs.append(out.decode(errors="replace"))
    for rank, proc in enumerate(procs):
        assert proc.returncode == 0, f"rank {rank} exited with {proc.returncode}:\n{logs[rank][-4000:]}"
    return [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(world)]


def _stacks(procs: List[subprocess.Popen]) -> str:
    """Every rank's Python stacks (faulthandler prints them on SIGABRT), then kills the ranks."""
    tails = []
    for rank, proc in enumerate(procs):
        if proc.poll() is None:
            proc.send_signal(signal.SIGABRT)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        tails.append(f"--- rank {rank} (exit {proc.returncode}):\n{(out or b'').decode(errors='replace')[-3000:]}")
    return "\n".join(tails)
