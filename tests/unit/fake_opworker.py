"""A stand-in for the sweep's worker that speaks its protocol and misbehaves on purpose.

Tasks are the ``--ops`` given, one forward float32 task each; an op named ``segv``
kills the process with SIGSEGV, ``abort`` with SIGABRT, ``hang`` sleeps past any
timeout, ``fail`` fails, ``startup`` makes the worker die before writing its plan,
``absent`` plans nothing and says why (a capability the device declares absent). With
``--shard I/K`` it runs the tasks whose index is I modulo K, as the real workers do.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--device", "--activate", "--plan", "--log", "--ops", "--dtypes", "--kinds"):
        parser.add_argument(name, default="")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--shard", default="0/1")
    args = parser.parse_args()
    mine, count = (int(part) for part in args.shard.split("/"))
    ops = [o for o in args.ops.split(",") if o]
    if "startup" in ops:
        print("ImportError: no module named torch", file=sys.stderr)
        return 1
    tasks = [{"op": op, "family": "other", "dtype": "float32", "kind": "forward"} for op in ops]
    plan = {"torch": "2.13.0+cpu", "python": "3.11.0", "tasks": tasks}
    if "absent" in ops:  # a device that declares the capability absent: nothing planned, the reason
        plan.update(tasks=[], absent="capability inductor is absent: not on this torch")
    if args.start == 0:
        with open(args.plan, "w") as fh:
            json.dump(plan, fh)
    tasks = plan["tasks"]
    with open(args.log, "a") as log:
        for index in range(args.start, len(tasks)):
            if index % count != mine:
                continue
            log.write(json.dumps({"start": index}) + "\n")
            log.flush()
            op = tasks[index]["op"]
            if op == "segv":
                print("Fatal Python error: Segmentation fault", file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGSEGV)
            if op == "abort":
                print(
                    "terminate called after throwing an instance of 'c10::Error'\n  what():  boom",
                    file=sys.stderr,
                    flush=True,
                )
                os.kill(os.getpid(), signal.SIGABRT)
            if op == "hang":
                time.sleep(60)
            outcome = (
                {"outcome": "failed", "error": "sample 0: differs"}
                if op == "fail"
                else {"outcome": "passed", "samples": 2}
            )
            log.write(json.dumps(dict(outcome, task=index, seconds=0.0)) + "\n")
            log.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
