"""The device conformance suite: every supported torch release must pass it.

Each test computes the same thing on ``npu`` and on CPU and compares. A test is skipped
only when the active shim declares that this torch release lacks the feature
(``@requires("grad_scaler")``), with the shim's reason. Every test runs in a forked
process (isolation.py), so a crash is a failed test, not a dead session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from . import isolation  # noqa: E402
from .support import DEVICE  # noqa: E402

HERE = Path(__file__).parent


def pytest_collection_finish(session):
    """Each conformance test runs in a forked process (isolation.py): a crash fails that test."""
    if isolation.enabled() and not session.config.option.collectonly:
        isolation.start(session, [item for item in session.items if HERE in Path(str(item.fspath)).parents])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    return True if isolation.run_isolated(item) else None


def pytest_sessionfinish(session):
    isolation.shutdown()


@pytest.fixture
def npu():
    return DEVICE


@pytest.fixture(autouse=True)
def _suite_group(request, record_property):
    """``@pytest.mark.suite("NAME")`` puts a test in group NAME of the cell's record
    (adapter_matrix.ci.cells.read_junit); without it the test's folder decides."""
    marker = request.node.get_closest_marker("suite")
    if marker is not None:
        record_property("suite", marker.args[0])


@pytest.fixture(autouse=True)
def _back_to_device_0():
    yield
    torch.npu.set_device(0)
