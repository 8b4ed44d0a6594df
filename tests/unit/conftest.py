"""Fixtures shared by the tests that install this repository's distributions."""

from __future__ import annotations

from typing import Dict

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
