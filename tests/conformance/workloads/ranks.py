"""Run a worker script as a process group of ranks, and the CPU reference they are compared
with, and collect what each wrote.

The distributed workloads (DDP, FSDP, tensor parallel) start real processes, as a launcher
would: each rank runs ``worker ARGS... RANK WORLD INIT_FILE RESULT_FILE`` and writes its
result as JSON. A rank that fails shows the end of its output in the assertion.

The reference (:func:`start_reference`) runs in a process of its own too, beside the ranks,
and every process of a comparison runs one intra-op thread (:data:`ONE_THREAD`). Both are what
make the bitwise comparisons deterministic: a CPU kernel's reduction order depends on how many
threads split it (GPT-2's data-parallel reference differs in 18% of its parameters, by up to
1.3e-6, between 1 and 2 threads, torch 2.13), and the count a process gets depends on the
machine, its load (OpenMP's and MKL's dynamic threads) and, for a reference computed in the
test's own process, on everything that ran there before.

Ranks and references are forks of one interpreter per session lane that has imported torch
and what they import, and nothing else (``../script_server.py``): each runs as
``python SCRIPT ARGS`` would, without paying torch's import again (1.6-8 s of CPU per
process, a cell starts about 25). ``ADAPTER_MATRIX_FRESH_RANKS=1`` starts fresh interpreters
instead (conftest.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence, Union

from .. import script_server

ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}  # torch's intra-op threads, read at start


def environment(one_thread: bool = True) -> dict:
    # faulthandler: a process that dies on a signal prints every thread's Python stack
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), PYTHONFAULTHANDLER="1")
    return dict(env, **ONE_THREAD) if one_thread else env


Process = Union[subprocess.Popen, script_server.Forked]


def _start(argv: Sequence[str], env: Mapping[str, str], output: Path) -> Process:
    """``python ARGV...``: a fork of the lane's script server, else a fresh interpreter."""
    forked = script_server.spawn(argv, env, str(output))
    if forked is not None:
        return forked
    return subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)


class Reference:
    """The CPU computation a comparison expects, running in its own process (reference.py).

    Computed once per test session (in the session's temporary folder, beside each test's):
    four comparisons expect the same data-parallel training."""

    def __init__(self, module: str, function: str, tmp_path: Path, *args: str, one_thread: bool = True) -> None:
        threads = "" if one_thread else "-threads"
        self.out = tmp_path.parent / "references" / f"{module}.{function}({','.join(args)}){threads}.json"
        self.proc: Optional[Process] = None
        if self.out.exists():
            return
        self.out.parent.mkdir(exist_ok=True)
        script = Path(__file__).with_name("reference.py")
        argv = [str(script), module, function, str(self.out), *args]
        self.proc = _start(argv, environment(one_thread), tmp_path / f"reference-{function}.log")

    def result(self) -> Any:
        if self.proc is None:
            return json.loads(self.out.read_text())
        try:
            out, _ = self.proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the CPU reference {self.out.name} hangs") from None
        assert self.proc.returncode == 0, (
            f"the CPU reference exited with {self.proc.returncode}:\n{out.decode()[-4000:]}"
        )
        return json.loads(self.out.read_text())


def start_reference(module: str, function: str, tmp_path: Path, *args: str, one_thread: bool = True) -> Reference:
    """Start ``module.function(*args)`` (a data module of this folder) in a fresh interpreter,
    to run beside the ranks; ``.result()`` waits for it."""
    return Reference(module, function, tmp_path, *args, one_thread=one_thread)


def run_ranks(
    worker: Path, tmp_path: Path, world: int, *args: str, extra: tuple = (), one_thread: bool = True
) -> List[Any]:
    """The result of each of ``world`` ranks of ``worker``, after all exited with status 0."""
    env = environment(one_thread)
    procs = [
        _start(
            [
                str(worker),
                *args,
                str(rank),
                str(world),
                str(tmp_path / "init"),
                str(tmp_path / f"rank{rank}.json"),
                *extra,
            ],
            env,
            tmp_path / f"rank{rank}.log",
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


def _stacks(procs: List[Process]) -> str:
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
