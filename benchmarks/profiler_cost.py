"""What the device's profiler hooks cost small npu ops, in one run, printed as ratios.

    python benchmarks/profiler_cost.py [--baseline BUILD_FOLDER]

Times 2,000 16-element adds on npu (the dispatch cost dominates, so a hook's cost shows)
not profiled, profiled with ProfilerActivity.CPU, and with CPU + PrivateUse1 (the core's
Kineto plugin records one device event per op; torch 2.12+), as ratios to "not profiled".
With ``--baseline`` (a build folder of the core from other sources, e.g. one without the
plugin, from ~/.cache/adapter-matrix/builds), the not-profiled case also runs in a
process that loads that build, alternating with this one: the ratio is what the hook in
the fallback costs when nobody profiles (target: within noise, ~1.0).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ADDS = 2_000


def _small_adds_seconds(repeat: int = 15) -> float:
    import torch

    a, b = torch.randn(16, device="npu"), torch.randn(16, device="npu")
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(ADDS):
            torch.add(a, b)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _in_profile(*activities) -> float:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, *activities]):
        return _small_adds_seconds(repeat=3)


def states() -> dict:
    """Seconds per ADDS adds in each profiler state, measured in this process."""
    import torch

    import shims  # activates npu; asked for the capability below

    _small_adds_seconds(repeat=2)  # warm up
    out = {"idle": _small_adds_seconds(), "cpu": _in_profile()}
    if shims.capability("profiler_activity") is None:
        out["cpu+privateuse1"] = _in_profile(torch.profiler.ProfilerActivity.PrivateUse1)
    return out


def _idle_in_subprocess(library: str | None) -> float:
    env = dict(os.environ)
    if library:
        env["ADAPTER_MATRIX_DEVICE_LIBRARY"] = library
    code = "import json, benchmarks.profiler_cost as b, shims; print(json.dumps(b._small_adds_seconds()))"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a build folder of the core to compare the not-profiled cost with")
    args = parser.parse_args()
    measured = states()
    report = {state: round(seconds / measured["idle"], 3) for state, seconds in measured.items()}
    report["idle_us_per_add"] = round(measured["idle"] / ADDS * 1e6, 2)
    if args.baseline:
        ours, theirs = [], []
        for _ in range(3):  # alternate, so drift in the machine's load hits both
            theirs.append(_idle_in_subprocess(args.baseline))
            ours.append(_idle_in_subprocess(None))
        report["idle_vs_baseline"] = round(statistics.median(ours) / statistics.median(theirs), 3)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
