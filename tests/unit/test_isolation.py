"""The conformance suite's harness (tests/conformance/isolation.py): each test in a forked
child, killed after its time limit. Run on a tiny suite of its own, without torch."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ISOLATION = Path(__file__).resolve().parents[1] / "conformance" / "isolation.py"

CONFTEST = """
import pytest
import isolation

def pytest_configure(config):
    config.addinivalue_line("markers", "time_limit(seconds): more time in the fork")

def pytest_collection_finish(session):
    isolation.start(session, list(session.items))

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    return True if isolation.run_isolated(item) else None

def pytest_sessionfinish(session):
    isolation.shutdown()
"""

TESTS = """
import os, time
import pytest

def test_quick():
    pass

def test_slow():
    time.sleep(3)

@pytest.mark.time_limit(60)
def test_slow_with_a_time_limit():
    time.sleep(3)

def test_crash():
    os.abort()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the harness forks")
def test_a_test_gets_its_time_limit_and_the_others_the_default(tmp_path):
    shutil.copy(ISOLATION, tmp_path / "isolation.py")
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(TESTS))
    env = dict(os.environ, ADAPTER_MATRIX_TEST_TIMEOUT="1", PYTHONPATH=str(tmp_path))
    env.pop("ADAPTER_MATRIX_NO_FORK", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "test_suite.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    out = result.stdout
    assert "PASSED test_suite.py::test_quick" in out, out
    assert "PASSED test_suite.py::test_slow_with_a_time_limit" in out, out
    assert "FAILED test_suite.py::test_slow" in out and "did not finish within 1 s and was killed" in out, out
    assert "FAILED test_suite.py::test_crash" in out and "killed by SIGABRT" in out, out
    assert "2 failed, 2 passed" in out, out
