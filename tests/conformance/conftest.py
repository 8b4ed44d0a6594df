"""The device conformance suite: every supported torch release must pass it.

Each test computes the same thing on ``npu`` and on CPU and compares. A test is skipped
only when the active shim declares that this torch release lacks the feature
(``@requires("grad_scaler")``), with the shim's reason. Every test runs in a forked
process (isolation.py), so a crash is a failed test, not a dead session.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from . import isolation  # noqa: E402
from .support import DEVICE  # noqa: E402

HERE = Path(__file__).parent


_inductor_cache = None


def pytest_configure(config):
    """Inductor's on-disk cache in a folder of this run: a cache that another adapter version
    or another cell on this machine filled must not answer this run's compiles (its key is
    torch's sources, not npu's code generator, before torch 2.8)."""
    global _inductor_cache
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        _inductor_cache = os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="torchinductor-")


def pytest_collection_finish(session):
    """Each conformance test runs in a forked process (isolation.py): a crash fails that test."""
    if isolation.enabled() and not session.config.option.collectonly:
        isolation.start(session, [item for item in session.items if HERE in Path(str(item.fspath)).parents], _warm_up)


def _warm_up() -> None:
    """What the first comparison imports lazily (torch.testing pulls in torch.distributed.tensor:
    0.7 s), done once in the fork server. Tiny CPU tensors: no OpenMP threads start."""
    torch.testing.assert_close(torch.zeros(2), torch.zeros(2))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    return True if isolation.run_isolated(item) else None


def pytest_sessionfinish(session):
    isolation.shutdown()
    if _inductor_cache is not None:
        shutil.rmtree(_inductor_cache, ignore_errors=True)


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
