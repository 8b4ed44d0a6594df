"""Cold build of the adapter's C++ core: wall time, and what it would take on 2 idle cores.

    python benchmarks/build_time.py [--runs 1] [--jobs 2]

Compiles the core of the installed shims package (shims/src/shims/csrc) for the running torch
into an empty cache folder, through a compiler wrapper that records each translation
unit's CPU time. Prints the wall time, every unit's CPU time, and the wall time of the
same build on `--jobs` idle cores: ninja's order replayed with each unit taking its CPU
time (a shared, busy machine stretches wall times, not CPU times), plus the wall time the
build spends outside the compiler. Target: <= 40 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WRAPPER = """#!{python}
import json, os, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.call(["{cxx}", *sys.argv[1:]])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
out = sys.argv[sys.argv.index("-o") + 1] if "-o" in sys.argv else "?"
with open({log!r}, "a") as fh:
    fh.write(json.dumps({{"out": os.path.basename(out), "start": start, "wall": time.perf_counter() - start,
                         "cpu": usage.ru_utime + usage.ru_stime}}) + "\\n")
sys.exit(code)
"""


def replay(units: list, link: float, jobs: int) -> float:
    """The wall time of ninja running ``units`` (in the order it started them) on ``jobs`` idle cores."""
    free = [0.0] * jobs
    for unit in units:
        slot = free.index(min(free))
        free[slot] += unit["cpu"]
    return max(free) + link


def one_build(jobs: int) -> dict:
    """One cold build in this process (a build loads the library: one per process)."""
    from adapter_matrix.device import build

    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "units.jsonl")
        wrapper = os.path.join(tmp, "c++")
        cxx = shutil.which(os.environ.get("CXX", "c++"))
        Path(wrapper).write_text(WRAPPER.format(python=sys.executable, cxx=cxx, log=log))
        os.chmod(wrapper, 0o755)
        os.environ.update(ADAPTER_MATRIX_CACHE=os.path.join(tmp, "cache"), CXX=wrapper, MAX_JOBS=str(jobs))
        os.environ.pop("ADAPTER_MATRIX_DEVICE_LIBRARY", None)
        ext = build.Extension.of_package("shims", "npu")
        sys.modules.pop(ext.name, None)
        start = time.perf_counter()
        build.ensure_built(ext)
        wall = time.perf_counter() - start
        records = [json.loads(line) for line in Path(log).read_text().splitlines()]
    units = sorted((r for r in records if r["out"].endswith(".o")), key=lambda r: r["start"])
    links = [r for r in records if r["out"].endswith(".so")]
    link = sum(r["cpu"] for r in links)
    # What the build does outside the compiler (importing cpp_extension, its compiler checks,
    # writing build.ninja, loading the library): the wall time before the first unit and
    # after the link (perf_counter is one monotonic clock across processes on Linux).
    ninja = max(r["start"] + r["wall"] for r in records) - min(r["start"] for r in units)
    outside = wall - ninja
    return {
        "wall": wall,
        "units": {u["out"]: u["cpu"] for u in units},
        "link": link,
        "outside": outside,
        "idle": replay(units, link, jobs) + outside,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a single build, as JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_build(args.jobs)))
        return
    import torch

    results = []
    for _ in range(args.runs):  # each in a fresh interpreter: a build loads its library
        out = subprocess.run(
            [sys.executable, "-W", "ignore", __file__, "--one", "--jobs", str(args.jobs)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
    print(f"torch {torch.__version__}, {args.jobs} jobs, {args.runs} cold build(s)")
    for name in results[0]["units"]:
        print(f"  {name:<24} {statistics.median(r['units'][name] for r in results):6.1f} s CPU")
    print(f"  {'link':<24} {statistics.median(r['link'] for r in results):6.1f} s CPU")
    print(f"  {'outside the compiler':<24} {statistics.median(r['outside'] for r in results):6.1f} s wall")
    print(f"all units: {statistics.median(sum(r['units'].values()) for r in results):.1f} s CPU")
    print(f"wall (this machine, now): {statistics.median(r['wall'] for r in results):.1f} s")
    print(f"on {args.jobs} idle cores: {statistics.median(r['idle'] for r in results):.1f} s (target <= 40 s)")


if __name__ == "__main__":
    main()
