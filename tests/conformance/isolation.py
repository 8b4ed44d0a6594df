"""Each conformance test runs in a forked process, so a crash fails that test only.

The device is C++ code running inside the test process: a bad kernel ends in SIGSEGV,
and without isolation that ends the whole pytest session, taking the report (and a
nox cell's result record) with it. Here a crash becomes an ordinary failed test whose
message names the test and the signal.

How: right after collection, the session forks a *fork server* (a copy of the session
before any test ran). For each test the server forks a child that
runs the test's whole protocol (setup, call, teardown) and writes the reports to a
file; the session reads them and reports them as its own. The children are forked from
the server, never from a process that ran tests: torch's OpenMP thread pool does not
survive fork, so a child of a process that already used it hangs in its first parallel
region. Children of the server start their own pool, with every thread.

Costs one fork per test, about 50 ms: the 73 tests outside the workloads group take 6.0 s
forked and 2.3 s in-process (torch 2.13, 2 cores). The server warms up lazy imports first
(the conftest's ``_warm_up``), or every child would pay them again (0.7 s each). Off with
``ADAPTER_MATRIX_NO_FORK=1`` (e.g. to debug a test in-process), and where there is no
``os.fork``.

Each test's report carries the CPU seconds its process and the processes it waited for
spent (the user property ``cpu_seconds``, in the JUnit report): a forked child starts
with its own counters, so this is the test's own cost, the ranks and interpreters it
started included, however busy the machine is (benchmarks/cell_split.py reads it).
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import struct
import tempfile
from typing import Any, Callable, List, Optional

import pytest
from _pytest.reports import TestReport
from _pytest.runner import runtestprotocol

__all__ = ["ForkServer", "enabled", "start", "run_isolated", "shutdown", "time_limit", "CPU_PROPERTY"]

ENV = "ADAPTER_MATRIX_NO_FORK"
TIMEOUT_ENV = "ADAPTER_MATRIX_TEST_TIMEOUT"  # seconds a single test may take in its process
DEFAULT_TIMEOUT = 900.0
CPU_PROPERTY = "cpu_seconds"  # a report's user property: the test's CPU time (module docstring)
CPU_ELSEWHERE: List[Callable[[], float]] = []  # CPU seconds of a test's work done by other processes


def enabled() -> bool:
    return hasattr(os, "fork") and not os.environ.get(ENV)


def _write_int(fd: int, value: int) -> None:
    os.write(fd, struct.pack("!q", value))


def _read_int(fd: int, timeout: Optional[float] = None) -> Optional[int]:
    if timeout is not None and not select.select([fd], [], [], timeout)[0]:
        return None
    data = b""
    while len(data) < 8:
        chunk = os.read(fd, 8 - len(data))
        if not chunk:
            raise EOFError("the fork server closed its pipe")
        data += chunk
    return struct.unpack("!q", data)[0]


class ForkServer:
    """A forked copy of the session that forks one child per test."""

    def __init__(self, items: List[pytest.Item], folder: str, warm_up: Optional[Callable[[], None]] = None) -> None:
        self.items = items
        self.index = {id(item): i for i, item in enumerate(items)}
        self.folder = folder
        to_server_r, self.to_server = os.pipe()
        self.from_server, from_server_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the server
            os.close(self.to_server)
            os.close(self.from_server)
            if warm_up is not None:
                warm_up()  # once here instead of in every child
            self._serve(to_server_r, from_server_w)
            os._exit(0)
        os.close(to_server_r)
        os.close(from_server_w)

    # -- in the server -------------------------------------------------------------------

    def _serve(self, requests: int, replies: int) -> None:
        while True:
            try:
                index = _read_int(requests)
            except EOFError:
                return
            if index is None or index < 0:
                return
            child = os.fork()
            if child == 0:
                self._run_child(index)
            _write_int(replies, child)
            _, status = os.waitpid(child, 0)
            _write_int(replies, status)

    def _run_child(self, index: int) -> None:
        code = 0
        try:
            item = self.items[index]
            reports = runtestprotocol(item, log=False, nextitem=None)
            if reports:  # the last report (teardown) is the one JUnit takes properties from
                reports[-1].user_properties.append((CPU_PROPERTY, round(_cpu_seconds(), 3)))
            data = [item.config.hook.pytest_report_to_serializable(config=item.config, report=r) for r in reports]
            path = self._result_path(index)
            with open(path + ".tmp", "wb") as fh:
                pickle.dump(data, fh)  # (JSON would turn a skip's location tuple into a list)
            os.replace(path + ".tmp", path)
        except BaseException:
            code = 3
        finally:
            os._exit(code)

    # -- in the session ------------------------------------------------------------------

    def _result_path(self, index: int) -> str:
        return os.path.join(self.folder, f"{index}.pickle")

    def run(self, item: pytest.Item) -> List[Any]:
        """The reports of running ``item`` in a child of the server."""
        index = self.index[id(item)]
        _write_int(self.to_server, index)
        child = _read_int(self.from_server)
        timeout = time_limit(item)
        status = _read_int(self.from_server, timeout=timeout)
        if status is None:  # hung: kill it, then the server reports its status
            os.kill(child, signal.SIGKILL)
            status = _read_int(self.from_server)
            return [
                _failure(
                    item,
                    f"the test did not finish within {timeout:.0f} s and was killed "
                    f"(set {TIMEOUT_ENV} to allow longer)",
                )
            ]
        path = self._result_path(index)
        if os.path.exists(path):
            with open(path, "rb") as fh:
                data = pickle.load(fh)
            os.remove(path)
            return [item.config.hook.pytest_report_from_serializable(config=item.config, data=d) for d in data]
        return [_failure(item, _describe(status))]

    def close(self) -> None:
        try:
            _write_int(self.to_server, -1)
            os.close(self.to_server)
            os.close(self.from_server)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def _cpu_seconds() -> float:
    """User and system time of this process and of its waited-for children, since the fork,
    and what each of :data:`CPU_ELSEWHERE` counts (the script server's forks, which it waits
    for, not the test: conftest.py)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + sum(f() for f in CPU_ELSEWHERE)


def time_limit(item: pytest.Item) -> float:
    """Seconds ``item`` may take in its process before it is killed: $ADAPTER_MATRIX_TEST_TIMEOUT
    (default 900), or more for a test marked ``@pytest.mark.time_limit(SECONDS)``."""
    limit = float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))
    marker = item.get_closest_marker("time_limit")
    return max(limit, float(marker.args[0])) if marker is not None else limit


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"the test process crashed: killed by {name}"
    return f"the test process exited with status {os.WEXITSTATUS(status)} before reporting"


def _failure(item: pytest.Item, message: str) -> TestReport:
    return TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords=dict.fromkeys(item.keywords, 1),
        outcome="failed",
        longrepr=f"{item.nodeid}: {message}",
        when="call",
        sections=[],
        duration=0.0,
    )


_server: Optional[ForkServer] = None


def start(session: pytest.Session, items: List[pytest.Item], warm_up: Optional[Callable[[], None]] = None) -> None:
    """Fork the server (call after collection, before any test runs in this process).

    ``warm_up`` runs in the server before its first child: lazy imports the tests would
    each pay for (a child's imports die with it). It must not start OpenMP threads."""
    global _server
    if _server is None and items:
        session.config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]  # one base for all children
        _server = ForkServer(items, tempfile.mkdtemp(prefix="conformance-"), warm_up)


def run_isolated(item: pytest.Item) -> bool:
    """Run ``item`` in a forked child and log its reports; False when not isolating it."""
    if _server is None or id(item) not in _server.index:
        return False
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in _server.run(item):
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def shutdown() -> None:
    global _server
    if _server is not None:
        _server.close()
        try:
            os.rmdir(_server.folder)
        except OSError:
            pass
        _server = None
