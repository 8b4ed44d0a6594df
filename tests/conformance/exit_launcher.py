"""Run a script many times to a normal interpreter exit, each run a fork of one interpreter
that has imported what the script imports.

    python exit_launcher.py SCRIPT --runs N --at-once K --timeout SECONDS [--until DEADLINE]

Why forks: a run of tests/conformance/exit_scripts/train_two_devices.py spends about 1 s of
CPU in its own work and its exit, and 4-13 s importing torch (and torch._dynamo, which the
optimizer's first step imports): 50 plain interpreters cost a cell 4-11 minutes of a 2-core
machine. Here the imports happen once, in this launcher, before any device exists: it
creates no tensor, starts no autograd or OpenMP thread. Each child then runs the script as
``__main__`` (runpy, as ``python SCRIPT`` does), trains on its own autograd device threads,
and ends the way a plain interpreter does: ``sys.exit`` -> atexit handlers -> Py_FinalizeEx,
with the threads the script started still there. That finalization is what the clean-exit
test is about (shims/src/shims/csrc/autograd_exit.cpp). The conformance isolation's forks
(isolation.py) never get there: they leave with ``os._exit``.

Prints one JSON document: per run its exit status (negative: the signal), its stdout and the
tail of its stderr; runs not started before ``--until`` (a ``time.monotonic()`` value) are
left out, so a busy machine reports a count instead of being killed without one.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from typing import Dict, List

from script_server import exit_code, run_as_main  # this script's neighbour (sys.path[0] at start)

STDERR_TAIL = 2000


def _child(script: str, out: str, err: str) -> None:
    """In the fork: the script as ``python SCRIPT`` runs it, then a normal interpreter exit."""
    code = 1
    try:
        for fd, path in ((1, out), (2, err)):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        code = run_as_main([script])
    except BaseException:
        import traceback

        traceback.print_exc()
    sys.stdout.flush()
    sys.exit(code)  # not os._exit: atexit handlers and Py_FinalizeEx run, as after `python SCRIPT`


def _read(path: str, tail: int = 0) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    return text[-tail:] if tail else text


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script")
    parser.add_argument("--runs", type=int, required=True)
    parser.add_argument("--at-once", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a run may take before it is killed")
    parser.add_argument("--until", type=float, default=float("inf"), help="time.monotonic() after which no run starts")
    parser.add_argument(
        "--preload",
        default="torch,shims,torch._dynamo",
        help="modules imported once, before the forks (what the script imports; the optimizer's step imports dynamo)",
    )
    args = parser.parse_args(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(args.script))  # as `python SCRIPT` has it, not this folder
    for name in filter(None, args.preload.split(",")):
        __import__(name)
    folder = tempfile.mkdtemp(prefix="exit-runs-")
    running: Dict[int, Dict[str, object]] = {}  # pid -> its run
    done: List[Dict[str, object]] = []
    started = 0
    while started < args.runs or running:
        while started < args.runs and len(running) < args.at_once and time.monotonic() < args.until:
            out, err = (os.path.join(folder, f"{started}.{s}") for s in ("out", "err"))
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(args.script, out, err)
            running[pid] = {"run": started, "out": out, "err": err, "began": time.monotonic()}
            started += 1
        if not running:
            break  # past --until: the rest are not run
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for pid_, run in running.items():  # kill a run that hangs at exit, then reap it below
                if time.monotonic() - float(run["began"]) > args.timeout and not run.get("killed"):  # type: ignore[arg-type]
                    os.kill(pid_, signal.SIGKILL)
                    run["killed"] = True
            time.sleep(0.05)
            continue
        run = running.pop(pid)
        stderr = _read(str(run["err"]), STDERR_TAIL)
        if run.get("killed"):
            stderr = f"still running after {args.timeout:.0f} s: {stderr}"
        done.append(
            {
                "run": run["run"],
                "status": -1 if run.get("killed") else exit_code(status),
                "stdout": _read(str(run["out"])),
                "stderr": stderr,
            }
        )
        for path in (run["out"], run["err"]):
            os.unlink(str(path))
    os.rmdir(folder)
    json.dump(sorted(done, key=lambda r: int(r["run"])), sys.stdout)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
