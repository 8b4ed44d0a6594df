"""What nox itself costs per cell, with the uv and the virtualenv backend, and what an
unchanged cell costs the second time.

    python benchmarks/nox_overhead.py [--cell py3.11-torch2.13]

For each backend the cell's session runs once in a fresh environment; its result
record splits the wall time into install, check, build, probe and tests, and the rest is nox's
own overhead (loading the noxfile, interpreter discovery, environment creation,
session bookkeeping).
Then the uv session runs again reusing its environment: it must download nothing and
compile nothing (the log lines are checked). Ratios and shares come from one run on a
noisy machine; read them as such.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOX = shutil.which("nox", path=os.path.dirname(sys.executable)) or "nox"


def _env_dir(cell: str) -> Path:
    return ROOT / ".nox" / re.sub(r"[^\w]+", "-", f"device({cell})").strip("-")


def run(cell: str, backend: str, reuse: bool, results: str) -> dict:
    if not reuse:  # a fresh environment, as on a new machine: deleting the old one is not nox's cost
        shutil.rmtree(_env_dir(cell), ignore_errors=True)
    args = [NOX, "-s", f"device({cell})", "--force-venv-backend", backend]
    args += ["--reuse-venv=yes"] if reuse else ["--reuse-venv=no"]
    env = dict(os.environ, ADAPTER_MATRIX_RESULTS=results)
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        sys.exit(f"session failed ({backend}):\n{log[-3000:]}")
    record = json.loads((Path(results) / f"{cell}.json").read_text())
    phases = record["phases"]
    return {
        "wall": wall,
        "phases": phases,
        "overhead": wall - sum(phases.values()),
        "downloaded": bool(re.search(r"Downloaded|Downloading|Prepared \d+ package", log)),
        "compiled": not record["build_cached"],
        "log": log,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", default="py3.11-torch2.13")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "uv": run(args.cell, "uv", reuse=False, results=os.path.join(tmp, "uv")),
            "virtualenv": run(args.cell, "virtualenv", reuse=False, results=os.path.join(tmp, "venv")),
            "uv, second run": run(args.cell, "uv", reuse=True, results=os.path.join(tmp, "again")),
        }
    print(f"cell {args.cell}: session wall time split (seconds)")
    print(
        f"{'backend':<16} {'wall':>6} {'install':>8} {'check':>6} {'build':>6} {'probe':>6} {'tests':>6} {'nox overhead':>13}"
    )
    for name, r in runs.items():
        p = r["phases"]
        print(
            f"{name:<16} {r['wall']:6.1f} {p['install']:8.1f} {p['check']:6.1f} {p['build']:6.1f} "
            f"{p.get('probe', 0.0):6.1f} {p['tests']:6.1f} {r['overhead']:13.2f}"
        )
    uv, venv, again = runs["uv"], runs["virtualenv"], runs["uv, second run"]
    print(
        f"nox overhead with uv: {uv['overhead']:.2f} s (target <= 1 s); virtualenv/uv overhead ratio {venv['overhead'] / max(uv['overhead'], 1e-3):.1f}x"
    )
    print(
        f"second run: {again['wall']:.1f} s = {again['wall'] / uv['wall']:.2f}x the first; "
        f"downloaded anything: {again['downloaded']}; compiled: {again['compiled']}"
    )


if __name__ == "__main__":
    main()
