"""Run a whole tier of cells on one machine, one torch line after another.

    python scripts/run_tier.py edges [--min-free-gb 25]

A CUDA build of torch costs 5-7 GB per environment and 3-5 GB in uv's cache. The
sessions run with ADAPTER_MATRIX_DROP_ENVS=1 (each removes its environment when it is
done) and the cells of one torch line run back to back, so both Pythons of a line share
the cached wheels. Before each line, if the disk has less than --min-free-gb free, the
torch and nvidia-* wheels are dropped from the uv cache (the next line would download
its own versions anyway). Result records land in results/ as usual; a failing cell does
not stop the tier. Prints `adapter-matrix results` at the end and exits with its code.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def free_gb(path: Path) -> float:
    return shutil.disk_usage(path).free / 2**30


def prune_uv_cache() -> None:
    """Drop torch and nvidia-* from uv's cache (the rest of the cache stays)."""
    uv = _tool("uv")
    cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True).stdout.strip()
    names = {"torch", "triton"}
    for folder in Path(cache).glob("wheels-*/*") if cache else []:
        if folder.name.startswith("nvidia") or folder.name in names:
            names.add(folder.name)
    names |= {p.name for p in Path(cache).glob("wheels-*/pypi/*") if p.name.startswith("nvidia")} if cache else set()
    subprocess.run([uv, "cache", "clean", *sorted(names)], check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tier", help="a plan strategy: smoke, edges, latest or full")
    parser.add_argument("--min-free-gb", type=float, default=25.0)
    args = parser.parse_args()
    rows = json.loads(subprocess.run([_tool("adapter-matrix"), "plan", "-s", args.tier, "-f", "json"], cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    lines: "OrderedDict[str, list]" = OrderedDict()
    for row in rows:
        lines.setdefault(row["torch_minor"], []).append(row["session"])
    env = dict(os.environ, ADAPTER_MATRIX_DROP_ENVS="1")
    for minor, sessions in lines.items():
        if free_gb(ROOT) < args.min_free_gb:
            print(f"== {free_gb(ROOT):.0f} GB free: dropping torch and nvidia wheels from the uv cache", flush=True)
            prune_uv_cache()
        print(f"== torch {minor}: {', '.join(sessions)} ({free_gb(ROOT):.0f} GB free)", flush=True)
        subprocess.run([_tool("nox"), "-s", *sessions], cwd=ROOT, env=env, check=False)
    return subprocess.run([_tool("adapter-matrix"), "results", "results", "--expect", args.tier], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
