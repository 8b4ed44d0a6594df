"""Where an adapter keeps the sweep's expectations, per torch line, and ``--write-expected``.

Next to the adapter's ``compat.yaml``, one folder, one file per torch line and format::

    op-sweep/torch-2.13.yaml                      the tool's own format (:mod:`.expected`)
    op-sweep/pytorch-disabled-tests-2.13.json     PyTorch's disabled-tests JSON (:mod:`.disabled_tests`)

Both are read when both are there (the YAML's entries first). This repository's own
``tests/ops/expected.yaml`` (every torch line in one file, ``torch:`` per entry) is read
where it exists, as before.

``ops sweep --write-expected`` makes what a sweep saw the starting point: each task that
did not pass becomes an entry (YAML: one per op, kind and outcome, with its dtypes and its
error as the reason; JSON: one per task, by the PyTorch test it stands for), entries of the
file that list no task of this sweep stay as they were, and from then on every change, a
new failure or a new pass, disagrees. Writing YAML keeps the entries, not the comments.
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from typing import Dict, List, Optional, Sequence, Tuple, TypedDict

from packaging.version import InvalidVersion, Version

from ...files import atomic_write
from . import disabled_tests as dt
from . import expected as ex
from .causes import cause_of
from .runner import Task

__all__ = [
    "FOLDER",
    "REPOSITORY_FILE",
    "FORMATS",
    "torch_line_of",
    "installed_torch_line",
    "paths_for",
    "find",
    "load",
    "write",
]

FOLDER = "op-sweep"
REPOSITORY_FILE = os.path.join("tests", "ops", "expected.yaml")  # this repository's, every torch line in one
FORMATS = ("yaml", "json")
BROKEN = ("failed", "crashed", "timeout")
OUTCOME_OF = {"failed": "fails", "crashed": "crashes", "timeout": "hangs"}


def torch_line_of(version: str) -> str:
    """``2.13`` of ``2.13.0+cpu``."""
    try:
        v = Version(version)
    except InvalidVersion:
        return version
    return f"{v.major}.{v.minor}"


def installed_torch_line() -> Optional[str]:
    """``2.13`` for the installed torch, from its metadata (torch is not imported)."""
    try:
        return torch_line_of(metadata.version("torch"))
    except metadata.PackageNotFoundError:
        return None


def paths_for(matrix_dir: str, line: str) -> Dict[str, str]:
    """The per-line files of both formats next to the matrix (whether or not they exist)."""
    folder = os.path.join(matrix_dir, FOLDER)
    return {
        "yaml": os.path.join(folder, f"torch-{line}.yaml"),
        "json": os.path.join(folder, f"pytorch-disabled-tests-{line}.json"),
    }


def format_of(path: str) -> str:
    return "json" if path.endswith(".json") else "yaml"


def find(matrix_dir: str, line: Optional[str]) -> List[str]:
    """The expectations files a sweep next to this matrix reads: this repository's file,
    else the torch line's files that exist."""
    repository = os.path.join(matrix_dir, REPOSITORY_FILE)
    if os.path.exists(repository):
        return [repository]
    if line is None:
        return []
    return [p for p in paths_for(matrix_dir, line).values() if os.path.exists(p)]


def load(paths: Sequence[str], device: str) -> ex.Expectations:
    """The expectations of these files together (YAML entries first, then the disabled
    tests); no file: every task must pass. Without a ``sample`` the built-in one applies."""
    entries: List[ex.Expectation] = []
    lookups: List[ex.Lookup] = []
    sample: Tuple[str, ...] = ()
    names = []
    for path in sorted(paths, key=lambda p: format_of(p) == "json"):
        if format_of(path) == "json":
            tests = dt.read(path)
            lookups.append(dt.Index(tests, device))
            names.append(tests.path)
        else:
            loaded = ex.load(path)
            entries.extend(loaded.entries)
            sample = sample or loaded.sample
            names.append(loaded.path)
    name = ", ".join(names) if names else "(none: every task must pass)"
    return ex.Expectations(name, sample or ex.DEFAULT_SAMPLE, tuple(entries), tuple(lookups))


# -- writing ------------------------------------------------------------------------------


def _quoted(items: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


class _EntryKeys(TypedDict):
    ops: List[str]
    kinds: List[str]
    dtypes: List[str]
    outcome: str
    reason: str
    issue: Optional[str]
    exact: bool


class _Entry(_EntryKeys, total=False):
    """An expectation as the YAML file is written from it (:func:`_entry_yaml`); ``torch``
    (a specifier) only where a kept entry had one."""

    torch: Optional[str]


def _entry_yaml(entry: _Entry) -> str:
    lines = [f"  - ops: {_quoted(entry['ops'])}"]
    if entry.get("exact"):
        lines.append("    exact: true")
    for key, values in (("kinds", entry["kinds"]), ("dtypes", entry["dtypes"])):
        if values:
            lines.append(f"    {key}: {_quoted(values)}")
    if entry.get("torch"):
        lines.append(f"    torch: {json.dumps(entry['torch'])}")
    lines.append(f"    outcome: {entry['outcome']}")
    lines.append(f"    reason: {json.dumps(entry['reason'])}")
    if entry.get("issue"):
        lines.append(f"    issue: {json.dumps(entry['issue'])}")
    return "\n".join(lines)


def _old_entry(e: ex.Expectation) -> _Entry:
    return {
        "ops": list(e.ops),
        "kinds": list(e.kinds or ()),
        "dtypes": list(e.dtypes or ()),
        "torch": str(e.torch) if e.torch is not None else None,
        "outcome": e.outcome,
        "reason": e.reason,
        "issue": e.issue,
        "exact": e.exact,
    }


def yaml_text(
    tasks: Sequence[Task], torch: str, sample: Sequence[str], previous: Optional[ex.Expectations] = None
) -> str:
    """A YAML expectations file: ``previous``' entries that cover no task of this sweep,
    then one entry per op, kind and outcome of the tasks that did not pass (a reason and an
    issue that ``previous`` gave them are kept)."""
    try:
        version = Version(Version(torch).public)
    except InvalidVersion:
        version = Version("0")
    old = list(previous.entries) if previous is not None else []
    covering = {id(e) for t in tasks for e in old if e.covers(t, version)}
    kept = [_old_entry(e) for e in old if id(e) not in covering]
    groups: Dict[Tuple[str, str, str], _Entry] = {}  # (op, kind, outcome) -> its entry
    ops = {t.op for t in tasks}  # an op with variants among them gets an entry for its own id only
    for t in tasks:
        if t.outcome not in BROKEN:
            continue
        before = previous.expected(t, version) if previous is not None else None
        group = groups.setdefault(
            (t.op, t.kind, t.outcome),
            {
                "ops": [t.op],
                "kinds": [t.kind],
                "dtypes": [],
                "outcome": OUTCOME_OF[t.outcome],
                "reason": before.reason
                if before is not None and before.outcome != ex.DISABLED
                else f"seen on torch {torch} (ops sweep --write-expected): {cause_of(t.error)}",
                "issue": before.issue if before is not None else None,
                "exact": any(o.startswith(t.op + ".") for o in ops),
            },
        )
        group["dtypes"].append(t.dtype)
    header = (
        f"# What `adapter-matrix ops sweep` expects of the device on torch {torch.split('+')[0]}: written by\n"
        "# `ops sweep --write-expected` from what a sweep saw; keep it true (docs/op-coverage.md).\n"
        "schema: 1\n"
    )
    body = header + f"sample: {_quoted(sample)}\n"
    entries = kept + list(groups.values())
    if entries:
        body += "expected:\n" + "\n".join(_entry_yaml(e) for e in entries) + "\n"
    else:
        body += "expected: []\n"
    return body


def write(
    path: str,
    tasks: Sequence[Task],
    torch: str,
    device: str,
    sample: Sequence[str],
    previous_paths: Sequence[str] = (),
) -> None:
    """Write the expectations of a sweep's tasks to ``path`` (its format by its extension),
    over what the file held (``previous_paths``: the files the sweep read, the same format's
    ones are merged)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    same = [p for p in previous_paths if format_of(p) == format_of(path) and os.path.exists(p)]
    if os.path.exists(path) and path not in same:
        same.append(path)
    if format_of(path) == "json":
        before = dt.read(same[0]) if same else None
        atomic_write(path, dt.dumps(dt.entries_for(tasks, device, before)))
    else:
        previous = load(same, device) if same else None
        atomic_write(path, yaml_text(tasks, torch, sample, previous))
