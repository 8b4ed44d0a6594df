"""Run a whole tier of cells on one machine, one torch line after another, in parts.

    python scripts/run_tier.py edges [--min-free-gb 25]
    python scripts/run_tier.py full -t torch2.1 -t torch2.2 --commit   # one part of the full tier
    python scripts/run_tier.py full -t torch2.13 -p 3.11 --force       # one cell, even if fresh
    python scripts/run_tier.py full --dry-run                          # what would run, and why

Each cell's nox session writes its evidence record (evidence/<release>/<cell>.json). A
cell that already has a fresh passing record (the gate's rule: `adapter-matrix validate
--results evidence --strict`) is skipped unless --force, so a tier can be run in parts,
across sessions, and picks up where it stopped. -t/--tag selects a part: the cells with
any of the given nox tags (torch2.4, py3.8, edges, ...); -p/--python narrows it to some
Pythons, as with nox. With --commit, the records of each torch line are committed as soon
as the line is done, with the documents whose verified tables show them (--docs,
regenerated first; only those files). Each record is in the folder of the release its row
belongs to; the rows of a release frozen with other sources than the tree's are skipped
(this tree is a later release's code: docs/releasing.md).

A CUDA build of torch costs 5-7 GB per environment and 3-5 GB in uv's cache. The
sessions run with ADAPTER_MATRIX_DROP_ENVS=1 (each removes its environment when it is
done) and the cells of one torch line run back to back, so the Pythons of a line share
the cached wheels. Before each line, if the disk has less than --min-free-gb free, the
torch and nvidia-* wheels are dropped from the uv cache (the next line would download
its own versions anyway). A failing cell does not stop the tier. Exit 0 when every
selected cell ends with a fresh passing record, else 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))

from adapter_matrix.ci import evidence  # noqa: E402
from adapter_matrix.ci.plan import STRATEGIES, PlanRow, plan  # noqa: E402
from adapter_matrix.ci.release import past_releases  # noqa: E402
from adapter_matrix.ci.results import read_records  # noqa: E402
from adapter_matrix.matrix.cache import load_matrix  # noqa: E402
from adapter_matrix.matrix.model import Matrix  # noqa: E402

MATRIX_ENV = "ADAPTER_MATRIX_NOX_MATRIX"  # the noxfile reads the same variable


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


def judged(matrix: Matrix, rows: Sequence[PlanRow]) -> List[Tuple[PlanRow, evidence.Verification]]:
    """Each row with what its evidence record says today (the release gate's rule)."""
    folder = evidence.evidence_folder(matrix)
    records = read_records(folder, allow_empty=True) if os.path.isdir(folder) else []
    index = evidence.index_records(records, matrix)
    rules = evidence.freshness_of(matrix, frozen=index.frozen)
    return [(row, evidence.judge(row.cell, index, rules, matrix)) for row in rows]


def later_code(matrix: Matrix) -> Callable[[PlanRow], bool]:
    """Whether a row's release is frozen with other sources than the tree's: this tree cannot
    produce its evidence (the code under test is a later release's)."""
    folder = evidence.evidence_folder(matrix)
    frozen = read_records(folder, allow_empty=True).frozen if os.path.isdir(folder) else {}
    now = evidence.sources_hash(matrix) if frozen else ""
    return lambda row: (
        str(row.cell.release.version) in frozen and frozen[str(row.cell.release.version)].sources_hash != now
    )


def commit_records(matrix: Matrix, minor: str, rows: Sequence[PlanRow], docs: Sequence[str]) -> None:
    """Commit the evidence records of ``rows`` and the ``docs`` that show them (regenerated
    first; only those files), with a message that counts them."""
    folder = evidence.evidence_folder(matrix)
    paths = [
        p
        for p in (os.path.join(folder, str(r.cell.release.version), f"{r.id}.json") for r in rows)
        if os.path.exists(p)
    ]
    if not paths:
        return
    if docs:
        subprocess.run([_tool("adapter-matrix"), "table", "--update", *docs], cwd=ROOT, check=False)
        paths += list(docs)
    states = [v.state for _row, v in judged(matrix, rows)]
    message = (
        f"evidence: torch {minor}, {states.count('verified')} of {len(rows)} cells passed"
        + (f", {states.count('failed')} failed" if "failed" in states else "")
        + "\n\n"
        + "\n".join(f"{r.cell.id}: {s}" for r, s in zip(rows, states))
    )
    subprocess.run(["git", "add", "--", *paths], cwd=ROOT, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message, "--", *paths], cwd=ROOT, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tier", choices=STRATEGIES, help="a plan strategy")
    parser.add_argument(
        "-t", "--tag", action="append", default=[], help="only cells with this nox tag (repeat for several)"
    )
    parser.add_argument(
        "-p", "--python", action="append", default=[], help="only cells of this Python (repeat for several)"
    )
    parser.add_argument("--force", action="store_true", help="also run cells that have a fresh passing record")
    parser.add_argument(
        "--commit", action="store_true", help="commit each torch line's evidence records when it is done"
    )
    parser.add_argument(
        "--docs",
        action="append",
        default=None,
        metavar="FILE",
        help="with --commit: regenerate and commit these documents too (default: docs/compatibility.md)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would run and why, run nothing")
    parser.add_argument("--min-free-gb", type=float, default=25.0)
    args = parser.parse_args()

    matrix = load_matrix(os.environ.get(MATRIX_ENV) or ROOT / "compat.yaml").matrix
    rows = [
        r
        for r in plan(
            matrix, args.tier, skip=past_releases(matrix)
        )  # a release frozen on other code is not this tree's
        if (not args.tag or set(args.tag) & set(r.tags)) and (not args.python or str(r.cell.python) in args.python)
    ]
    lines: OrderedDict[str, List[PlanRow]] = OrderedDict()
    frozen_elsewhere = later_code(matrix)
    for row, found in judged(matrix, rows):
        if frozen_elsewhere(row):  # its evidence is frozen; the tree is a later release's code
            print(
                f"skip {row.session}: release {row.cell.release.version} is frozen, and this tree holds later code",
                flush=True,
            )
            continue
        if found.counts and not args.force:
            print(f"skip {row.session}: verified {found.date}, torch {found.torch}", flush=True)
            continue
        why = f"{found.state}" + (f" ({found.reason})" if found.reason else "")
        print(f"run  {row.session}: {why}" if found.state != "verified" else f"run  {row.session}: --force", flush=True)
        lines.setdefault(str(row.cell.line.minor), []).append(row)
    if args.dry_run:
        return 0

    docs = args.docs if args.docs is not None else [d for d in ("docs/compatibility.md",) if (ROOT / d).exists()]
    env = dict(os.environ, ADAPTER_MATRIX_DROP_ENVS="1")
    started, free_at_start = time.monotonic(), free_gb(ROOT)
    lowest = free_at_start
    for minor, todo in lines.items():
        if free_gb(ROOT) < args.min_free_gb:
            print(f"== {free_gb(ROOT):.0f} GB free: dropping torch and nvidia wheels from the uv cache", flush=True)
            prune_uv_cache()
        print(f"== torch {minor}: {', '.join(r.session for r in todo)} ({free_gb(ROOT):.0f} GB free)", flush=True)
        subprocess.run([_tool("nox"), "-s", *(r.session for r in todo)], cwd=ROOT, env=env, check=False)
        lowest = min(lowest, free_gb(ROOT))
        if args.commit:
            commit_records(matrix, minor, todo, docs)

    final: Dict[str, int] = {}
    for _row, found in judged(matrix, rows):
        final[found.state] = final.get(found.state, 0) + 1
    folder = evidence.evidence_folder(matrix)
    if os.path.isdir(folder):
        subprocess.run([_tool("adapter-matrix"), "results", folder], cwd=ROOT, check=False)
    print(
        f"{final.get('verified', 0)} of {len(rows)} selected cells have a fresh passing record"
        + "".join(f", {n} {state}" for state, n in sorted(final.items()) if state != "verified")
    )
    minutes = (time.monotonic() - started) / 60
    print(
        f"wall time {minutes:.0f} min for {sum(len(t) for t in lines.values())} cells; "
        f"disk free {free_at_start:.0f} GB at the start, {lowest:.0f} GB at the lowest (after a line), {free_gb(ROOT):.0f} GB now"
    )
    return 0 if final.get("verified", 0) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
