"""Running one matrix cell: installing its torch, verifying it, and recording the result.

The noxfile's ``device(...)`` sessions are thin: they call these functions, which know
nothing about nox beyond a ``run``-like callable, so they are tested without it.

Test counts are kept per *suite group*: the conformance suite's own tests are
``conformance``, each sub-folder of ``tests/conformance`` (say ``workloads``) is a group,
a test marked ``@pytest.mark.suite("NAME")`` belongs to NAME, and a suite that is not a
pytest run reports its counts with :func:`write_summary`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ..files import atomic_write
from ..matrix.model import InstallSource, Matrix
from .evidence import git_state, sources_hash
from .plan import CompanionPick, PlanRow

__all__ = [
    "INDEX_ENV",
    "VARIANT_ENV",
    "COMPANIONS_ENV",
    "cell_companions",
    "verify_refusal",
    "RESULTS_ENV",
    "SUMMARIES_ENV",
    "SUITE_ROOT",
    "RECORD_SCHEMA",
    "InstallAttempt",
    "CellMismatch",
    "install_attempts",
    "verify_environment",
    "TestCounts",
    "Suites",
    "suite_group",
    "read_junit",
    "write_summary",
    "read_summaries",
    "merge_suites",
    "total",
    "results_dir",
    "write_record",
    "tree_state",
]

INDEX_ENV = "ADAPTER_MATRIX_TORCH_INDEX_URL"  # e.g. https://download.pytorch.org/whl/cpu
VARIANT_ENV = "ADAPTER_MATRIX_TORCH_VARIANT"  # the local label its wheels carry, e.g. cpu
RESULTS_ENV = "ADAPTER_MATRIX_RESULTS"
SUMMARIES_ENV = "ADAPTER_MATRIX_SUITE_SUMMARIES"  # where a non-pytest suite leaves its counts (write_summary)
SUITE_ROOT = "tests/conformance"  # the suite every cell runs; its sub-folders are groups of their own
RECORD_SCHEMA = 2  # 2: suites per group, the commit and the hash of the evidence sources
COMPANIONS_ENV = "ADAPTER_MATRIX_CELL_COMPANIONS"  # companions to install instead of ci: companions: ("" for none)


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


def cell_companions(row: PlanRow, environ: Optional[Mapping[str, str]] = None) -> Tuple[CompanionPick, ...]:
    """The companions the cell installs: ``ci: companions:`` of the matrix, or the names in
    ``$ADAPTER_MATRIX_CELL_COMPANIONS`` (comma or space separated; empty for none)."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    if COMPANIONS_ENV not in env:
        return tuple(row.companions)
    names = env[COMPANIONS_ENV].replace(",", " ").split()
    picks = tuple(p for name in names for p in row.pairable if p.name == name)
    missing = [name for name in names if all(p.name != name for p in picks)]
    if missing:
        known = ", ".join(p.name for p in row.pairable) or "none"
        raise ValueError(f"${COMPANIONS_ENV} names {', '.join(missing)}: no such companion has a release for torch {row.cell.torch} (known: {known})")
    return picks


def install_attempts(row: PlanRow, environ: Optional[Mapping[str, str]] = None) -> List[InstallAttempt]:
    """How to install the cell's torch, in order: the matrix's source and its fallbacks,
    each with the cell's companions in the source's variant (``torchvision==0.28.0+cpu``
    beside ``torch==2.13.0+cpu``); then the same sources without the companions, for a
    cell whose companions have no wheel anywhere (torchvision 0.20 has no cp313 wheel).
    A local folder (``find-links: /opt/wheels``) is tried without the companions right
    after with them: its torch, without torchvision, beats a CUDA download from PyPI.

    ``$ADAPTER_MATRIX_TORCH_INDEX_URL`` (with ``$ADAPTER_MATRIX_TORCH_VARIANT``) replaces
    the sources, for users whose CI installs from elsewhere (e.g. PyTorch's CPU index).
    """
    env: Mapping[str, str] = os.environ if environ is None else environ
    picks = cell_companions(row, env)
    index = env.get(INDEX_ENV)
    if index:
        override = InstallSource("$" + INDEX_ENV, index, None, env.get(VARIANT_ENV) or None, None, row.cell.line.mark)
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
    # A local wheel folder never leads to a download: when its companions are not in the
    # folder, the cell takes its torch without them (and says so) before trying the next source.
    ordered: List[InstallAttempt] = []
    for source, with_picks, alone in zip(sources, together, bare):
        ordered += [with_picks, alone] if _is_local(source) else [with_picks]
    return ordered + [alone for source, alone in zip(sources, bare) if not _is_local(source)]


def _is_local(source: InstallSource) -> bool:
    """A source that is a folder on this machine (``find-links: /opt/wheels``), not an index."""
    return bool(source.find_links) and not source.index_url and "://" not in source.find_links


def verify_environment(row: PlanRow, check: Dict[str, Any], picks: Sequence[CompanionPick] = ()) -> None:
    """Fail unless ``adapter-matrix check --json`` saw the cell's Python and torch, and each
    companion installed with them (``picks``) at its release, paired."""
    (doc,) = list(check["checks"])
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
    variant = row.cell.release.variant
    if variant and (Version(installed).local if installed else None) != variant:
        raise CellMismatch(f"cell {row.cell.id} needs torch's {variant} build, but the environment has torch {installed}")
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
    entry: Dict[str, Any] = next((c for c in doc.get("companions", ()) if c["name"] == pick.name), {})
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
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0
    skips: Sequence[str] = ()

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped + self.errors

    @property
    def ok(self) -> bool:
        return not self.failed and not self.errors

    def __add__(self, other: "TestCounts") -> "TestCounts":
        return TestCounts(
            self.passed + other.passed,
            self.failed + other.failed,
            self.skipped + other.skipped,
            self.errors + other.errors,
            tuple(self.skips) + tuple(other.skips),
        )

    def as_dict(self) -> Dict[str, int]:
        return {"passed": self.passed, "failed": self.failed, "skipped": self.skipped, "errors": self.errors}


Suites = Dict[str, TestCounts]  # suite group -> its counts


def suite_group(path: str, root: str = SUITE_ROOT) -> str:
    """The group of a test file: its folder below ``root`` (``tests/conformance/workloads/...``
    is ``workloads``), the name of ``root`` for a file directly in it, else its own folder."""
    parts = path.replace("\\", "/").split("/")
    base = root.strip("/").split("/")
    if parts[: len(base)] == base:
        rest = parts[len(base) :]
        return rest[0] if len(rest) > 1 else base[-1]
    return parts[-2] if len(parts) > 1 else base[-1]


def read_junit(path: str, root: str = SUITE_ROOT) -> Suites:
    """Counts and skip reasons per suite group from a pytest JUnit XML report.

    A test's group is its ``suite`` property (``@pytest.mark.suite("ops")``), else the
    group of its file (``-o junit_family=xunit1`` writes the file), else ``root``'s name.
    """
    groups: Dict[str, TestCounts] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        prop = case.find("properties/property[@name='suite']")
        if prop is not None and prop.get("value"):
            group = str(prop.get("value"))
        else:
            group = suite_group(case.get("file") or root + "/-")
        skipped = case.find("skipped")
        if case.find("failure") is not None:
            one = TestCounts(failed=1)
        elif case.find("error") is not None:
            one = TestCounts(errors=1)
        elif skipped is not None:
            one = TestCounts(skipped=1, skips=(f"{case.get('classname', '')}.{case.get('name', '')}: {skipped.get('message', '')}",))
        else:
            one = TestCounts(passed=1)
        groups[group] = groups.get(group, TestCounts()) + one
    return groups


def write_summary(suite: str, counts: TestCounts, folder: Optional[str] = None) -> Optional[str]:
    """For a suite that is not a pytest run (say an op sweep): leave its counts where the
    cell collects them (``$ADAPTER_MATRIX_SUITE_SUMMARIES``). Returns the path, or ``None``
    outside a cell."""
    folder = folder or os.environ.get(SUMMARIES_ENV)
    if not folder:
        return None
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{suite}.json")
    atomic_write(path, json.dumps(dict(suite=suite, **counts.as_dict(), skips=list(counts.skips)), indent=2) + "\n")
    return path


def read_summaries(folder: str) -> Suites:
    """The counts :func:`write_summary` left in ``folder``, per suite."""
    out: Dict[str, TestCounts] = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                doc = json.load(fh)
            passed, failed, skipped, errors = (int(doc.get(k, 0)) for k in ("passed", "failed", "skipped", "errors"))
            counts = TestCounts(passed, failed, skipped, errors, tuple(doc.get("skips", ())))
            out[str(doc["suite"])] = out.get(str(doc["suite"]), TestCounts()) + counts
    return out


def merge_suites(*parts: Suites) -> Suites:
    out: Dict[str, TestCounts] = {}
    for part in parts:
        for group, counts in part.items():
            out[group] = out.get(group, TestCounts()) + counts
    return dict(sorted(out.items()))


def total(suites: Suites) -> TestCounts:
    return sum(suites.values(), TestCounts())


def results_dir(root: str) -> str:
    return os.environ.get(RESULTS_ENV) or os.path.join(root, "results")


def write_record(
    folder: str,
    row: PlanRow,
    check: Optional[Dict[str, Any]],
    suites: Optional[Suites],
    build: Optional[Dict[str, Any]],
    phases: Dict[str, float],
    outcome: str,
    error: Optional[str] = None,
    tree: Optional[Dict[str, Any]] = None,
    ops: Optional[Dict[str, Any]] = None,
    refusals: Sequence[Dict[str, Any]] = (),
) -> Dict[str, Any]:
    """Write the cell's result record (JSON) to ``folder/<cell>.json`` and return it.

    ``tree`` is what the sources were: ``{commit, dirty, sources: {hash, paths}}``
    (:func:`tree_state`). ``ops`` is the op sweep's summary
    (:func:`adapter_matrix.device.opsweep.record.summary`), when it ran. ``refusals`` are what :func:`verify_refusal` kept for each companion. The key order is fixed: :mod:`adapter_matrix.ci.evidence`
    copies a subset of it into the committed evidence folder.
    """
    env = check["checks"][0]["environment"] if check else {}
    counts = total(suites) if suites is not None else None
    tree = tree or {}
    companions = {c["name"]: c["installed"] for c in (check["checks"][0].get("companions", ()) if check else ()) if c["installed"]}
    record = {
        "schema": RECORD_SCHEMA,
        "cell": row.id,  # what ran: the plan row, which tests every cell it stands for
        "session": row.session,
        "release": str(row.cell.release.version),
        "outcome": outcome,
        "error": error,
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": tree.get("commit"),
        "dirty": tree.get("dirty"),
        "sources": tree.get("sources"),
        "python": env.get("python") or str(row.cell.python),
        "python_minor": str(row.cell.python),
        "torch_claimed": str(row.cell.torch),
        "torch": env.get("torch"),
        "torch_variant": env.get("torch_variant"),
        "adapter": env.get("adapter"),
        "companions": companions,
        "companion_refusals": list(refusals),
        "source_hash": (build or {}).get("source_hash"),
        "platform": f"{platform.system()}-{platform.machine()}",
        "build_seconds": (build or {}).get("build_seconds"),  # the compile, now or when it was cached
        "build_cached": not (build or {}).get("compiled", False),
        "duration": round(sum(phases.values()), 2),
        "tests": None if counts is None else counts.as_dict(),
        "suites": None if suites is None else {group: c.as_dict() for group, c in sorted(suites.items())},
        "skips": list(counts.skips) if counts else [],
        "ops": ops,  # the OpInfo sweep: mode, task counts by outcome, float32 match rate, its record's path
        "phases": {k: round(v, 2) for k, v in phases.items()},
    }
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{row.id}.json")
    atomic_write(path, json.dumps(record, indent=2) + "\n")
    record["_path"] = path
    return record


def tree_state(matrix: Matrix) -> Dict[str, Any]:
    """What a record says about the sources it ran on: the commit, whether the evidence
    sources differed from it, and their hash (:func:`adapter_matrix.ci.evidence.sources_hash`)."""
    commit, dirty = git_state(matrix)
    return {"commit": commit, "dirty": dirty, "sources": {"hash": sources_hash(matrix), "paths": list(matrix.evidence.sources)}}
