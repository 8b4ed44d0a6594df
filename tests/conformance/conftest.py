"""The device conformance suite: every supported torch release must pass it.

Each test computes the same thing on ``npu`` and on CPU and compares. A test is skipped
only when the active shim declares that this torch release lacks the feature
(``@requires("grad_scaler")``), with the shim's reason.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from .support import DEVICE  # noqa: E402


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
