"""Running one matrix cell, in one import for the noxfile's ``device(...)`` sessions.

The sessions are thin: they call these functions, which know nothing about nox beyond a
``run``-like callable, so they are tested without it. Each step lives in its own module:

* :mod:`.install` -- the install attempts for the cell's torch and companions;
* :mod:`.verify` -- what ``adapter-matrix check --json`` must see in the installed environment;
* :mod:`.suites` -- test counts per suite group, from JUnit XML and suite summaries;
* :mod:`.record` -- the result record (its format, written and read in one place);
* :func:`.evidence.tree_state` -- the sources the cell ran on.
"""

from __future__ import annotations

from .evidence import tree_state
from .install import COMPANIONS_ENV, INDEX_ENV, VARIANT_ENV, InstallAttempt, cell_companions, install_attempts
from .record import RECORD_SCHEMA, RESULTS_ENV, ResultRecord, results_dir, write_record
from .suites import (
    SUITE_ROOT,
    SUMMARIES_ENV,
    Suites,
    TestCounts,
    judge,
    merge_suites,
    read_junit,
    read_summaries,
    suite_group,
    total,
    write_summary,
)
from .verify import CellMismatch, verify_environment, verify_refusal

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
    "judge",
    "total",
    "results_dir",
    "ResultRecord",
    "write_record",
    "tree_state",
]
