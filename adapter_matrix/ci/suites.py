"""Test counts of a cell, per *suite group*.

The conformance suite's own tests are ``conformance``, each sub-folder of
``tests/conformance`` (say ``workloads``) is a group, a test marked
``@pytest.mark.suite("NAME")`` belongs to NAME, and a suite that is not a pytest run
reports its counts with :func:`write_summary`. Counts come from pytest's JUnit XML
(:func:`read_junit`) and from those summaries (:func:`read_summaries`).
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Dict, Optional, Sequence, Tuple

from ..files import atomic_write

__all__ = [
    "SUMMARIES_ENV",
    "SUITE_ROOT",
    "TestCounts",
    "Suites",
    "suite_group",
    "read_junit",
    "write_summary",
    "read_summaries",
    "merge_suites",
    "total",
    "judge",
]


SUMMARIES_ENV = "ADAPTER_MATRIX_SUITE_SUMMARIES"  # where a non-pytest suite leaves its counts (write_summary)


SUITE_ROOT = "tests/conformance"  # the suite every cell runs; its sub-folders are groups of their own


@dataclass(frozen=True)
class TestCounts:
    __test__ = False  # counts, not a test class: pytest would collect it where a test module imports it

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

    def __add__(self, other: TestCounts) -> TestCounts:
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
            one = TestCounts(
                skipped=1, skips=(f"{case.get('classname', '')}.{case.get('name', '')}: {skipped.get('message', '')}",)
            )
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
    atomic_write(
        path, json.dumps(dict(suite=suite, **counts.as_dict(), skips=list(counts.skips)), indent=2) + "\n", follow=False
    )
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


def judge(ran: Suites, wanted: Optional[Sequence[str]], narrowed: bool = False) -> Tuple[Suites, Optional[str]]:
    """The groups a cell's record keeps (``wanted``; every group that ran when ``None``) and
    why the cell fails, if it does: a failure or an error in any group that ran, kept or not
    (a test the record does not count still ran, and its failure is the cell's), a wanted
    group that passed no test (unless posargs ``narrowed`` the run), or no test passed."""
    kept = dict(ran) if wanted is None else {g: c for g, c in ran.items() if g in wanted}
    absent = [] if wanted is None or narrowed else [g for g in wanted if ran.get(g, TestCounts()).passed == 0]
    broken = [f"{group}: {c.failed} failed, {c.errors} errors" for group, c in sorted(ran.items()) if not c.ok]
    problems = broken + [f"suite group {g} passed no test" for g in absent]
    if problems:
        return kept, "; ".join(problems)
    return kept, None if total(kept).passed else "no test passed"
