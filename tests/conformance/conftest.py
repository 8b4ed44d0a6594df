"""The device conformance suite: every supported torch release must pass it.

Each test computes the same thing on ``npu`` and on CPU and compares. A test is skipped
only when the active shim declares that this torch release lacks the feature
(``@requires("grad_scaler")``), with the shim's reason. Every test runs in a forked
process (isolation.py), so a crash is a failed test, not a dead session.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from . import isolation, script_server  # noqa: E402
from .support import DEVICE  # noqa: E402
from .workloads import ranks  # noqa: E402

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
    """Each conformance test runs in a forked process (isolation.py): a crash fails that test.
    The workloads' ranks and references run as forks of a server that imported torch once
    (script_server.py), started now so it imports while the first tests run."""
    if isolation.enabled() and not session.config.option.collectonly:
        items = [item for item in session.items if HERE in Path(str(item.fspath)).parents]
        if not os.environ.get(FRESH_RANKS) and any(HERE / "workloads" in Path(str(i.fspath)).parents for i in items):
            log = tempfile.mkstemp(prefix="script-server-", suffix=".log")
            os.close(log[0])
            script_server.start(ranks.environment(one_thread=False), _script_preload(), log[1])
            isolation.CPU_ELSEWHERE.append(lambda: script_server.CPU_OF_FORKS[0])
        isolation.start(session, items, _warm_up)


FRESH_RANKS = "ADAPTER_MATRIX_FRESH_RANKS"  # set: ranks and references start as fresh interpreters
# What ranks and references import, once in the script server: the distributed modules the
# workloads use (FSDP's or the distributed checkpoint's: 6 s of CPU with a CUDA build of torch).
SCRIPT_PRELOAD = (
    "torch",
    "shims",
    "torch.distributed",
    "torch.nn.parallel",
    "torch.distributed.fsdp",
    "torch.distributed.checkpoint",
)


# torch.compile's modules, imported once in the fork server rather than in every test that
# compiles (torch 2.13: dynamo 4.6 s of CPU, inductor's code generators 3 s more) or steps an
# optimizer (its step imports dynamo), for the capability that declares them present.
COMPILER_MODULES = {
    "dynamo": ("torch._dynamo",),
    "inductor": ("torch._inductor.compile_fx", "torch._inductor.codegen.cpp", "torch._inductor.codecache"),
}


def _warm_up() -> None:
    """What tests import lazily, done once in the fork server: the first comparison's
    (torch.testing pulls in torch.distributed.tensor: 0.7 s) and torch.compile's modules.
    Tiny CPU tensors and imports only: no OpenMP or compile-worker thread starts."""
    torch.testing.assert_close(torch.zeros(2), torch.zeros(2))
    import shims

    for feature, modules in COMPILER_MODULES.items():
        if shims.capability(feature) is None:
            for name in modules:
                try:
                    importlib.import_module(name)
                except Exception:  # a saving only: the tests that need the module import it and fail there
                    pass


def _script_preload() -> list:
    import shims

    compiler = [m for feature, names in COMPILER_MODULES.items() if shims.capability(feature) is None for m in names]
    return [*SCRIPT_PRELOAD, *compiler]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    return True if isolation.run_isolated(item) else None


def pytest_sessionfinish(session):
    isolation.shutdown()
    script_server.stop()
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
