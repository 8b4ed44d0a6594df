"""Importing an adapter's release history: live from PyPI, and from a recorded folder.

    python benchmarks/index_import.py [--name torch-npu] [--recorded DIR] [--runs 5]
    python benchmarks/index_import.py --record DIR [--name torch-npu]

Without ``--record``: imports ``--name`` from the recorded folder ``--recorded`` (default
tests/fixtures/pypi/2026-12-05) ``--runs`` times (`init --from-index` in-process: read the
answers, write the matrix, load it), then once live from PyPI unless ``--offline``: the
PEP 691 file lists of the adapter and of torch, and the METADATA of every wheel of a final
release, read out of the wheel with HTTP range requests where the index offers no PEP 658
file (torch-npu: 512 files, none). Prints each time and their ratio. Targets: the live
import < 120 s, the recorded one < 2 s.

``--record DIR`` records what the import reads into DIR (one JSON file per project, each
file entry on one line, facts only: no wheel is kept): ``torch.json`` (torch's answer) and
``<name>.json`` (the adapter's, every wheel of a final release with its Name, Version,
Requires-Python and torch Requires-Dist). tests/fixtures/pypi/README.md says how the
fixture was recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "tests", "fixtures", "pypi", "2026-12-05")


def record(folder: str, name: str) -> None:
    from adapter_matrix.upstream import companion_index, history, index

    start = time.perf_counter()
    raw, _origin = index.read_answer("pypi")
    document = history.fetch_history(name)
    seconds = time.perf_counter() - start
    os.makedirs(folder, exist_ok=True)
    companion_index.write_answer(os.path.join(folder, "torch.json"), companion_index.trim(json.loads(raw)))
    path = history.record_history(folder, name, document)
    wheels = sum(1 for f in document["files"] if "metadata" in f)
    print(
        f"recorded {path} ({len(document['files'])} files, {wheels} wheels' metadata) and torch.json in {seconds:.1f} s"
    )


def import_once(source: str, name: str) -> float:
    from adapter_matrix.cli.from_index import import_matrix

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        import_matrix(name, None, source, os.path.join(tmp, "compat.yaml"))
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", default="torch-npu")
    parser.add_argument("--recorded", default=DEFAULT)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--offline", action="store_true", help="skip the live import")
    parser.add_argument("--record", metavar="DIR", help="record the answers into DIR and stop")
    args = parser.parse_args()
    if args.record:
        record(args.record, args.name)
        return 0
    recorded = [import_once(args.recorded, args.name) for _ in range(args.runs)]
    median = statistics.median(recorded)
    print(f"recorded import ({args.recorded}): median {median:.2f} s, min {min(recorded):.2f} s over {args.runs} runs")
    if not args.offline:
        live = import_once("pypi", args.name)
        print(f"live import (PyPI): {live:.1f} s, {live / median:.0f}x the recorded one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
