"""Warm activation: what `import shims` costs after `import torch`, with the build cached.

    python benchmarks/activation_cost.py [--runs 21]

Each run is a fresh interpreter that imports torch (its device autoload off), then times
`import shims` (wall and CPU time) and reports the activation's phases
(`shims._activation.Activation.timings`, measured here in CPU time):

    guard   the runtime guard's verdict for this torch (compat.yaml, through its memo)
    build   the build cache: the folder for this torch and source hash, the manifest check
    load    dlopen of the C++ core: relocations, its static registrations, the module init
    core    core.activate(): hooks, the CPU kernels mirrored and the autocast registrations
    shim    importing the era's shim and registering the Python side (torch.npu, methods)
    python  the rest: importing shims, adapter_matrix.device.build and the guard's modules

Prints the median and the minimum of each over the runs and `import torch` for scale.
Target: the median total <= 20 ms. On a busy machine (other jobs on the cores) the wall
time also waits for a core; the CPU time is what a quiet machine's wall time would be, and
the fastest runs (a free core) show it. Bytecode is used (PYTHONDONTWRITEBYTECODE removed),
as in an installed package.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

PROBE = """
import json, time
wall, cpu = time.perf_counter, time.process_time
t0 = wall()
import torch
t1, c1 = wall(), cpu()
time.perf_counter = cpu  # the activation's phases in CPU time: what a busy machine inflates least
import shims
t2, c2 = wall(), cpu()
time.perf_counter = wall
from shims._activation import current
phases = dict(current().timings)
phases["python"] = (c2 - c1) - sum(phases.values())
print(json.dumps({"import torch": t1 - t0, "total": t2 - t1, "total (CPU)": c2 - c1, **phases}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

    def run() -> dict:
        out = subprocess.run(
            [sys.executable, "-W", "ignore", "-c", PROBE], env=env, capture_output=True, text=True, check=True
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    run()  # build if needed, write bytecode, warm the guard's memo and the page cache
    samples = [run() for _ in range(args.runs)]
    print(f"{'phase':<13} {'median':>8} {'min':>8}   over {args.runs} runs")
    for key in samples[0]:
        values = [s[key] * 1000 for s in samples]
        print(f"{key:<13} {statistics.median(values):6.1f} ms {min(values):6.1f} ms")
    total = statistics.median(s["total"] for s in samples) * 1000
    cpu = statistics.median(s["total (CPU)"] for s in samples) * 1000
    torch = statistics.median(s["import torch"] for s in samples) * 1000
    print(
        f"warm activation: median {total:.1f} ms wall, {cpu:.1f} ms CPU (target <= 20 ms) = {total / torch * 100:.1f} % of import torch"
    )


if __name__ == "__main__":
    main()
