"""Running one matrix cell: installing its torch, verifying it, and recording the result.

The noxfile's ``device(...)`` sessions are thin: they call these functions, which know
nothing about nox beyond a ``run``-like callable, so they are tested without it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ..files import atomic_write
from ..matrix.model import InstallSource
from .plan import CompanionPick, PlanRow

__all__ = [
    "INDEX_ENV",
    "VARIANT_ENV",
    "COMPANIONS_ENV",
    "cell_companions",
    "verify_refusal",
    "RESULTS_ENV",
    "RECORD_SCHEMA",
    "InstallAttempt",
    "CellMismatch",
    "install_attempts",
    "verify_environment",
    "TestCounts",
    "read_junit",
    "results_dir",
    "write_record",
]

INDEX_ENV = "ADAPTER_MATRIX_TORCH_INDEX_URL"  # e.g. https://download.pytorch.org/whl/cpu
VARIANT_ENV = "ADAPTER_MATRIX_TORCH_VARIANT"  # the local label its wheels carry, e.g. cpu
RESULTS_ENV = "ADAPTER_MATRIX_RESULTS"
COMPANIONS_ENV = "ADAPTER_MATRIX_CELL_COMPANIONS"  # companions to install instead of ci: companions: ("" for none)
RECORD_SCHEMA = 1


@dataclass(frozen=True)
class InstallAttempt:
    """One way to install the cell's torch: a requirement and the installer options, and the
    companions installed with it in the same resolver call (so none of them can swap torch)."""

    source: str
    requirement: str
    options: Sequence[str]
    companions: Sequence[str] = ()  # their requirements, in the source's variant
    picks: Sequence[CompanionPick] = ()
    variant: Optional[str] = None

    def describe(self) -> str:
        return " ".join([self.requirement, *self.companions]) + f" from {self.source}"


class CellMismatch(RuntimeError):
    """The environment is not the cell it claims to be (a resolver swapped torch)."""


def _attempt(source: InstallSource, torch: Version) -> InstallAttempt:
    requirement = f"torch=={torch}" + (f"+{source.variant}" if source.variant else "")
    options: List[str] = []
    if source.find_links:
        options += ["--find-links", source.find_links]
    if source.index_url:
        options += ["--index-url", source.index_url]
    if source.find_links and not source.index_url:
        options += ["--index-url", "https://pypi.org/simple"]  # torch's own dependencies
    return InstallAttempt(source.name, requirement, tuple(options))


def cell_companions(row: PlanRow, environ: Optional[Dict[str, str]] = None) -> Tuple[CompanionPick, ...]:
    """The companions the cell installs: ``ci: companions:`` of the matrix, or the names in
    ``$ADAPTER_MATRIX_CELL_COMPANIONS`` (comma or space separated; empty for none)."""
    environ = os.environ if environ is None else environ
    if COMPANIONS_ENV not in environ:
        return tuple(row.companions)
    names = environ[COMPANIONS_ENV].replace(",", " ").split()
    picks = tuple(p for name in names for p in row.pairable if p.name == name)
    missing = [name for name in names if all(p.name != name for p in picks)]
    if missing:
        known = ", ".join(p.name for p in row.pairable) or "none"
        raise ValueError(f"${COMPANIONS_ENV} names {', '.join(missing)}: no such companion has a release for torch {row.cell.torch} (known: {known})")
    return picks


def install_attempts(row: PlanRow, environ: Optional[Dict[str, str]] = None) -> List[InstallAttempt]:
    """How to install the cell's torch, in order: the matrix's source and its fallbacks,
    each with the cell's companions in the source's variant (``torchvision==0.28.0+cpu``
    beside ``torch==2.13.0+cpu``); then the same sources without the companions, for a
    cell whose companions have no wheel anywhere (torchvision 0.20 has no cp313 wheel).

    ``$ADAPTER_MATRIX_TORCH_INDEX_URL`` (with ``$ADAPTER_MATRIX_TORCH_VARIANT``) replaces
    the sources, for users whose CI installs from elsewhere (e.g. PyTorch's CPU index).
    """
    environ = os.environ if environ is None else environ
    picks = cell_companions(row, environ)
    index = environ.get(INDEX_ENV)
    if index:
        override = InstallSource("$" + INDEX_ENV, index, None, environ.get(VARIANT_ENV) or None, None, row.cell.line.mark)
        sources: Sequence[InstallSource] = (override,)
        extra: Tuple[str, ...] = ("--extra-index-url", "https://pypi.org/simple")
    else:
        sources, extra = row.sources, ()
    bare = [_attempt(source, row.cell.torch) for source in sources]
    bare = [InstallAttempt(a.source, a.requirement, tuple(a.options) + extra, variant=s.variant) for a, s in zip(bare, sources)]
    if not picks:
        return bare
    together = [
        InstallAttempt(a.source, a.requirement, a.options, tuple(p.requirement(a.variant) for p in picks), picks, a.variant)
        for a in bare
    ]
    return together + bare


def verify_environment(row: PlanRow, check: Dict[str, Any], picks: Sequence[CompanionPick] = ()) -> None:
    """Fail unless ``adapter-matrix check --json`` saw the cell's Python and torch, and each
    companion installed with them (``picks``) at its release, paired."""
    (doc,) = [d for d in check["checks"]]
    env = doc["environment"]
    installed = env.get("torch")
    try:
        public = Version(installed).public if installed else None
    except InvalidVersion:
        public = None
    if public is None or Version(public) != row.cell.torch:
        raise CellMismatch(
            f"cell {row.cell.id} claims torch {row.cell.torch}, but the environment has torch {installed or 'none'}: "
            "the installer resolved another torch"
        )
    if env.get("python_minor") != str(row.cell.python):
        raise CellMismatch(f"cell {row.cell.id} claims Python {row.cell.python}, but the session runs {env.get('python')}")
    if doc["verdict"] in ("unsupported", "broken"):
        raise CellMismatch(f"adapter-matrix check says {doc['verdict']}: " + "; ".join(doc["reasons"]))
    seen = {c["name"]: c for c in doc.get("companions", ())}
    for pick in picks:
        entry = seen.get(pick.name, {})
        found = entry.get("installed")
        if found is None or Version(Version(found).public) != pick.version or entry.get("state") != "paired":
            raise CellMismatch(
                f"cell {row.cell.id} installs {pick.name} {pick.version}, but check sees {found or 'none'} ({entry.get('state', 'absent')})"
            )


def verify_refusal(check: Dict[str, Any], pick: CompanionPick, probe: str, torch: str) -> Dict[str, Any]:
    """``check --json`` after installing ``probe``, a release of ``pick`` built for another
    torch, with --no-deps: it must exit 1 naming both versions, and fix it with a command
    that installs the paired release. Returns what the result record keeps."""
    (doc,) = check["checks"]
    entry = next((c for c in doc.get("companions", ()) if c["name"] == pick.name), {})
    reason = entry.get("reason") or ""
    commands = (entry.get("fix") or {}).get("commands") or []
    if check.get("exit_code") != 1 or entry.get("state") != "unpaired":
        raise CellMismatch(f"check did not refuse {pick.name} {probe} beside torch {torch}: exit {check.get('exit_code')}, {entry.get('state')}")
    if Version(probe).public not in reason or torch not in reason:
        raise CellMismatch(f"check refused {pick.name} {probe} without naming both versions: {reason}")
    if not any(f"{pick.name}=={pick.version}" in command for command in commands):
        raise CellMismatch(f"check's fix for {pick.name} {probe} does not install {pick.version}: {commands}")
    return {"installed": probe, "exit_code": 1, "reason": reason, "fix": commands[0]}


@dataclass(frozen=True)
class TestCounts:
    passed: int
    failed: int
    skipped: int
    errors: int
    skips: Sequence[str]

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped + self.errors


def read_junit(path: str) -> TestCounts:
    """Counts and skip reasons from a pytest JUnit XML report."""
    root = ET.parse(path).getroot()
    passed = failed = skipped = errors = 0
    skips: List[str] = []
    for case in root.iter("testcase"):
        if case.find("failure") is not None:
            failed += 1
        elif case.find("error") is not None:
            errors += 1
        elif case.find("skipped") is not None:
            skipped += 1
            node = case.find("skipped")
            skips.append(f"{case.get('classname', '')}.{case.get('name', '')}: {node.get('message', '') if node is not None else ''}")
        else:
            passed += 1
    return TestCounts(passed, failed, skipped, errors, tuple(skips))


def results_dir(root: str) -> str:
    return os.environ.get(RESULTS_ENV) or os.path.join(root, "results")


def write_record(
    folder: str,
    row: PlanRow,
    check: Optional[Dict[str, Any]],
    counts: Optional[TestCounts],
    build: Optional[Dict[str, Any]],
    phases: Dict[str, float],
    outcome: str,
    error: Optional[str] = None,
    refusals: Sequence[Dict[str, Any]] = (),
) -> str:
    """Write the cell's result record (JSON); returns its path. ``refusals`` are what
    :func:`verify_refusal` kept for each companion."""
    env = check["checks"][0]["environment"] if check else {}
    companions = {c["name"]: c["installed"] for c in (check["checks"][0].get("companions", ()) if check else ()) if c["installed"]}
    record = {
        "schema": RECORD_SCHEMA,
        "cell": row.cell.id,
        "session": row.session,
        "release": str(row.cell.release.version),
        "python": env.get("python") or str(row.cell.python),
        "python_minor": str(row.cell.python),
        "torch_claimed": str(row.cell.torch),
        "torch": env.get("torch"),
        "torch_variant": env.get("torch_variant"),
        "adapter": env.get("adapter"),
        "companions": companions,
        "companion_refusals": list(refusals),
        "source_hash": (build or {}).get("source_hash"),
        "build_seconds": (build or {}).get("build_seconds"),  # the compile, now or when it was cached
        "build_cached": not (build or {}).get("compiled", False),
        "tests": None
        if counts is None
        else {"passed": counts.passed, "failed": counts.failed, "skipped": counts.skipped, "errors": counts.errors},
        "skips": list(counts.skips) if counts else [],
        "phases": {k: round(v, 2) for k, v in phases.items()},
        "duration": round(sum(phases.values()), 2),
        "outcome": outcome,
        "error": error,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": f"{platform.system()}-{platform.machine()}",
    }
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{row.id}.json")
    atomic_write(path, json.dumps(record, indent=2) + "\n")
    return path
