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
from typing import Any, Dict, List, Optional, Sequence

from packaging.version import InvalidVersion, Version

from ..files import atomic_write
from ..matrix.model import InstallSource
from .plan import PlanRow

__all__ = [
    "INDEX_ENV",
    "VARIANT_ENV",
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
RECORD_SCHEMA = 1


@dataclass(frozen=True)
class InstallAttempt:
    """One way to install the cell's torch: a requirement and the installer options."""

    source: str
    requirement: str
    options: Sequence[str]

    def describe(self) -> str:
        return f"{self.requirement} from {self.source}"


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


def install_attempts(row: PlanRow, environ: Optional[Dict[str, str]] = None) -> List[InstallAttempt]:
    """How to install the cell's torch, in order: the matrix's source and its fallbacks.

    ``$ADAPTER_MATRIX_TORCH_INDEX_URL`` (with ``$ADAPTER_MATRIX_TORCH_VARIANT``) replaces
    them all, for users whose CI installs from elsewhere (e.g. PyTorch's CPU index).
    """
    environ = os.environ if environ is None else environ
    index = environ.get(INDEX_ENV)
    if index:
        override = InstallSource("$" + INDEX_ENV, index, None, environ.get(VARIANT_ENV) or None, None, row.cell.line.mark)
        attempt = _attempt(override, row.cell.torch)
        return [InstallAttempt(attempt.source, attempt.requirement, tuple(attempt.options) + ("--extra-index-url", "https://pypi.org/simple"))]
    return [_attempt(source, row.cell.torch) for source in row.sources]


def verify_environment(row: PlanRow, check: Dict[str, Any]) -> None:
    """Fail unless ``adapter-matrix check --json`` saw the cell's Python and torch."""
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
    ops: Optional[Dict[str, Any]] = None,
) -> str:
    """Write the cell's result record (JSON); returns its path. ``ops`` is the op sweep's
    summary (:func:`adapter_matrix.device.opsweep.record.summary`), when it ran."""
    env = check["checks"][0]["environment"] if check else {}
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
        "source_hash": (build or {}).get("source_hash"),
        "build_seconds": (build or {}).get("build_seconds"),  # the compile, now or when it was cached
        "build_cached": not (build or {}).get("compiled", False),
        "tests": None
        if counts is None
        else {"passed": counts.passed, "failed": counts.failed, "skipped": counts.skipped, "errors": counts.errors},
        "skips": list(counts.skips) if counts else [],
        "ops": ops,  # the OpInfo sweep: mode, task counts by outcome, float32 match rate, its record's path
        "phases": {k: round(v, 2) for k, v in phases.items()},
        "duration": round(sum(phases.values()), 2),
        "outcome": outcome,
        "error": error,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "platform": f"{platform.system()}-{platform.machine()}",
    }
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{row.cell.id}.json")
    atomic_write(path, json.dumps(record, indent=2) + "\n")
    return path
