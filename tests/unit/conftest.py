"""Fixtures shared by the tests that install this repository's distributions."""

from __future__ import annotations

import copy
from typing import Any, Dict, Tuple

import pytest

from .helpers import REPO

PROJECTS = {"tool": REPO, "adapter": REPO / "shims", "example": REPO / "examples" / "toy-adapter"}


@pytest.fixture(scope="session")
def wheels(tmp_path_factory) -> Dict[str, object]:
    """The wheels of the tool, the reference adapter and the example adapter, built once
    per test run from sdists (as an index serves them)."""
    from adapter_matrix.ci.wheels import build_wheels

    from .freshvenv import UV

    if UV is None:
        pytest.skip("uv is not installed")
    built = build_wheels(list(PROJECTS.values()), tmp_path_factory.mktemp("wheels"))
    return dict(zip(PROJECTS, built))


@pytest.fixture(scope="session", autouse=True)
def _picks_answered_once():
    """The selector page's answers (tables.picks.pick_answers: check's first fix for every
    pick) computed once per matrix (its FixSpace), entries, axes and day for the whole run, not once per test:
    torch_npu's 2,080 picks cost 20-50 s each time, and about fifteen tests in six modules
    render its page or JSON (html, json, en, zh: the same answers). The function is pure in
    those four arguments: Matrix is an immutable, hashable tuple, and of the entries and axes
    the key holds every field pick_answers reads (READS: a new one read there belongs here, or
    two languages' pages would share answers they should not); every caller gets its own deep
    copy. A run that reports its progress (the command line's `table`, whose output a test
    reads) computes as before."""
    from adapter_matrix.tables import picks

    compute = picks.pick_answers
    READS = ("release", "torch_line", "torch", "python", "dimensions", "commands")  # of an entry
    answered: Dict[Tuple[Any, ...], Any] = {}

    def answers(space, entries, axes, today):
        if picks._REPORT.get() is not None:
            return compute(space, entries, axes, today)
        key = (
            space.matrix,  # the FixSpace's lines are derived from it (and are lists: unhashable)
            repr([[e.get(field) for field in READS] for e in entries]),
            repr([(a["key"], a["values"]) for a in axes]),
            today,
        )
        if key not in answered:
            answered[key] = compute(space, entries, axes, today)
        return copy.deepcopy(answered[key])

    picks.pick_answers = answers
    yield
    picks.pick_answers = compute


def pytest_configure(config):
    """Warnings are errors in the tests of the tool's own code. Not in pyproject.toml's pytest
    section: that would also govern the conformance suite, which runs against 15 torch
    releases whose warnings are not ours, and the example adapters' cells, whose pytest finds
    this repository's configuration above their folders. The one warning that is not ours,
    typer's import, is met once in tests/conftest.py, so `pytest -W error tests/unit` passes
    too."""
    config.addinivalue_line("filterwarnings", "error")


def pytest_collection_modifyitems(config, items):
    """Tests by cost: one that builds wheels or runs pre-commit must carry the `slow`
    marker, so that `pytest -m 'not slow'` stays fast (pyproject.toml: markers)."""
    for item in items:
        slow = "wheels" in getattr(item, "fixturenames", ()) or item.get_closest_marker("precommit") is not None
        if slow and item.get_closest_marker("slow") is None:
            raise pytest.UsageError(f"{item.nodeid} builds wheels or runs pre-commit: mark it @pytest.mark.slow")
