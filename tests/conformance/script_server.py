"""Run scripts as forks of one interpreter that has imported torch, instead of as fresh interpreters.

    python script_server.py ADDRESS --parent PID [--preload torch,shims,...]   (conftest.py starts it)

Why: a distributed comparison starts its ranks and its CPU reference as scripts
(workloads/ranks.py), and each fresh interpreter pays torch's import again before its first
line of work: 1.6 s of CPU with torch 2.13's CPU wheel, 3.6 s with PyPI's CUDA builds, 6 s
with FSDP's or the distributed checkpoint's modules and 8 s with dynamo's (CUDA builds import
triton). A cell starts about 25 of them. Here the imports happen once per test session lane,
in a server that then only forks: it creates no tensor and starts no OpenMP, autograd or
compile-worker thread, so each child starts its own, as a fresh interpreter does (the
conformance fork server of isolation.py, and exit_launcher.py, rely on the same).

Each child runs its script as ``python SCRIPT ARGS`` would: ``__main__`` through runpy, the
script's folder first on ``sys.path``, the client's environment in ``os.environ``, faulthandler
on when ``PYTHONFAULTHANDLER`` asks, and output to a file the client names. What a fresh
interpreter reads from the environment before its first line is set as such: the intra-op
thread count (``OMP_NUM_THREADS``, read by OpenMP when torch loads) through
``torch.set_num_threads``, which sets OpenMP's and MKL's. A child ends with atexit's handlers
and ``os._exit`` (the scripts write their results before they return; how a plain
interpreter exits is test_exit.py's question).

The conftest starts one server per session lane (:func:`start`, when the session has
workloads to run) and ends it (:func:`stop`), so the server, and the forks it reaps, count in
the session's CPU time as fresh interpreters would; a test's own report adds its forks' CPU
seconds (:data:`CPU_OF_FORKS`, isolation.py). A run asks over an abstract Unix socket, one
connection per run (:func:`spawn`): its request as a JSON line; the answer is the child's pid,
then its exit status (negative: the signal) and CPU seconds when it has ended. A client that
goes away kills its child. A request whose environment differs from the server's in more
than what a child sets itself is refused, and the caller starts a fresh interpreter.
The server also leaves when its session lane has ended, or after :data:`IDLE` seconds
without a request.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence

IDLE = 900.0  # seconds without a run after which a server leaves anyway
START_TIMEOUT = 300.0  # seconds a server may take to import what it preloads
# Variables a child sets itself (module docstring), and pytest's own per-test ones: a server
# serves every environment that differs only in these.
PER_CHILD = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "PYTHONFAULTHANDLER",
    "PYTEST_CURRENT_TEST",
    "ADAPTER_MATRIX_SCRIPT_SERVER",
)


# -- the server ------------------------------------------------------------------------------


def _child(request: Dict[str, Any]) -> None:
    """In the fork: the request's script as ``python SCRIPT ARGS`` runs it; never returns."""
    code = 1
    try:
        target = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd in (1, 2):
            os.dup2(target, fd)
        os.close(target)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        if os.environ.get("PYTHONFAULTHANDLER"):
            import faulthandler

            faulthandler.enable()
        threads = os.environ.get("OMP_NUM_THREADS")
        if threads and "torch" in sys.modules:
            sys.modules["torch"].set_num_threads(int(threads))
        sys.path[0] = os.path.dirname(os.path.abspath(request["argv"][0]))
        code = run_as_main(request["argv"])
    except BaseException:
        import traceback

        traceback.print_exc()
    try:
        import atexit

        atexit._run_exitfuncs()  # the handlers a script (or the adapter) registered
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def run_as_main(argv: Sequence[str]) -> int:
    """Run the script ``argv[0]`` as ``__main__`` with ``sys.argv = argv``, as ``python`` does;
    its exit status (its ``sys.exit``'s, 1 for an exception, whose traceback is printed)."""
    import runpy

    sys.argv = list(argv)
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1
    return 0


def exit_code(status: int) -> int:
    """As subprocess reports a wait status: the exit status, or minus the signal that ended it."""
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _send(conn: socket.socket, message: Mapping[str, Any]) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:  # the client went away; its child is killed when its connection reads EOF
        pass


def _read_request(conn: socket.socket) -> Dict[str, Any]:
    conn.settimeout(30)
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("the client closed before its request")
        data += chunk
    conn.settimeout(None)
    return json.loads(data)


def _served(env: Mapping[str, str]) -> Dict[str, str]:
    return {k: v for k, v in env.items() if k not in PER_CHILD}


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def serve(address: str, parent: int, preload: Sequence[str]) -> int:
    for name in preload:
        try:
            __import__(name)
        except Exception:  # a saving only: a script that needs the module imports it and fails there
            pass
    environment = _served(os.environ)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + address)
    listener.listen(64)
    running: Dict[int, socket.socket] = {}  # pid -> its client's connection
    signal.signal(signal.SIGTERM, _stop)
    last = time.monotonic()
    try:
        while running or (_alive(parent) and time.monotonic() - last < IDLE):
            readable, _, _ = select.select([listener, *running.values()], [], [], 0.05)
            for ready in readable:
                if ready is listener:
                    conn, _ = listener.accept()
                    try:
                        request = _read_request(conn)
                    except (OSError, ValueError):
                        conn.close()
                        continue
                    differs = sorted(set(_served(request["env"]).items()) ^ set(environment.items()))
                    if differs:  # what this server imported was imported under another environment
                        _send(conn, {"refused": f"another environment: {differs[0][0]}"})
                        conn.close()
                        continue
                    sys.stdout.flush()
                    sys.stderr.flush()
                    # SIGTERM stays blocked across the fork: a run signalled at once must die of it,
                    # as a plain interpreter would, not run this server's handler (_stop) and exit 1
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                    pid = os.fork()
                    if pid == 0:
                        signal.signal(signal.SIGTERM, signal.SIG_DFL)
                        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
                        listener.close()
                        for other in running.values():
                            other.close()
                        conn.close()
                        _child(request)
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
                    running[pid] = conn
                    last = time.monotonic()
                    _send(conn, {"pid": pid})
                else:  # a client's connection is readable only once it closed: its run is not wanted
                    for pid in [p for p, c in running.items() if c is ready]:
                        _kill(pid)
            _reap(running, os.WNOHANG)
    finally:
        for pid in list(running):
            _kill(pid)
        _reap(running, 0)
    return 0


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(running: Dict[int, socket.socket], options: int) -> None:
    """Tell each ended child's client its status and CPU seconds (wait4's, as the client's own
    children's would count)."""
    while running:
        pid, status, usage = os.wait4(-1, options)
        if pid == 0:
            return
        conn = running.pop(pid, None)
        if conn is not None:
            _send(conn, {"status": exit_code(status), "cpu": usage.ru_utime + usage.ru_stime})
            conn.close()


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address", help="the abstract Unix socket's name")
    parser.add_argument("--parent", type=int, required=True, help="leave when this process has ended")
    parser.add_argument("--preload", default="torch", help="modules imported once, before the forks")
    args = parser.parse_args(argv)
    return serve(args.address, args.parent, [m for m in args.preload.split(",") if m])


# -- the client ------------------------------------------------------------------------------

ADDRESS_ENV = "ADAPTER_MATRIX_SCRIPT_SERVER"  # "ADDRESS:PID" of the session lane's server
CPU_OF_FORKS = [0.0]  # CPU seconds of the forks this process waited for (isolation.py adds them)
_server: Optional[subprocess.Popen] = None
_log = ""


def start(env: Mapping[str, str], preload: Sequence[str], log: str) -> None:
    """Start this session lane's server (it imports in the background) and advertise it in
    ``os.environ`` to the processes forked from here. Call before the test processes fork."""
    global _server, _log
    _log = log
    address = f"adapter-matrix-scripts-{os.getpid()}-{time.monotonic_ns()}"
    with open(log, "wb") as out:
        _server = subprocess.Popen(
            [
                sys.executable,
                os.path.abspath(__file__),
                address,
                "--parent",
                str(os.getpid()),
                "--preload",
                ",".join(preload),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={k: v for k, v in env.items() if k not in PER_CHILD},
        )
    os.environ[ADDRESS_ENV] = f"{address}:{_server.pid}"


def stop() -> None:
    """End the server (its running forks with it) and reap it: its CPU and its forks' count
    in this process's children's, as a fresh interpreter's would. Its log is kept when it
    ended with an error (the runs then started fresh interpreters)."""
    global _server
    if _server is not None:
        _server.terminate()
        try:
            _server.wait(30)
        except subprocess.TimeoutExpired:
            _server.kill()
            _server.wait()
        if _server.returncode == 0 and _log:
            os.unlink(_log)
        _server = None
        os.environ.pop(ADDRESS_ENV, None)


class Forked:
    """A script running as a fork of the server: the part of ``subprocess.Popen`` the workloads
    use (``communicate``, ``poll``, ``send_signal``, ``kill``, ``returncode``); its output,
    stdout and stderr together, is read from its file when it has ended."""

    def __init__(self, conn: socket.socket, pid: int, output: str, argv: Sequence[str]) -> None:
        self.conn, self.pid, self.output, self.args = conn, pid, output, list(argv)
        self.returncode: Optional[int] = None

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None:
            try:
                ended = _message(self.conn, timeout, self.args)
            except ConnectionError:
                self.conn.close()
                raise
            self.returncode = int(ended["status"])
            CPU_OF_FORKS[0] += float(ended["cpu"])
            self.conn.close()
        return self.returncode

    def poll(self) -> Optional[int]:
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def communicate(self, timeout: Optional[float] = None) -> tuple:
        self.wait(timeout)
        with open(self.output, "rb") as fh:
            return fh.read(), None

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _message(conn: socket.socket, timeout: Optional[float], argv: Sequence[str]) -> Dict[str, Any]:
    data = b""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not select.select([conn], [], [], left)[0]:
            raise subprocess.TimeoutExpired(list(argv), timeout or 0.0)
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError(f"the script server ended while {argv[0]} ran")
        data += chunk
    return json.loads(data)


def _connect(advertised: str) -> Optional[socket.socket]:
    """A connection to the advertised server, once it listens; None if it has ended."""
    address, _, pid = advertised.rpartition(":")
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and _alive(int(pid)):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect("\0" + address)
            return conn
        except (ConnectionRefusedError, FileNotFoundError):  # still importing
            conn.close()
            time.sleep(0.05)
    return None


def spawn(argv: Sequence[str], env: Mapping[str, str], output: str) -> Optional[Forked]:
    """``python ARGV...`` with ``env``, as a fork of the session lane's server, its stdout and
    stderr to the file ``output``. None where there is no server, or where ``env`` differs
    from the server's in more than what a child sets itself (:data:`PER_CHILD`): start a
    fresh interpreter then."""
    advertised = os.environ.get(ADDRESS_ENV)
    conn = _connect(advertised) if advertised else None
    if conn is None:
        return None
    # the output file exists before the fork, as Popen's stdout does: a run killed before it
    # opened the file has an empty output, not a missing one
    with open(output, "wb"):
        pass
    request = {"argv": list(argv), "env": dict(env), "cwd": os.getcwd(), "output": output}
    conn.sendall(json.dumps(request).encode() + b"\n")
    answer = _message(conn, START_TIMEOUT, argv)
    if "pid" not in answer:  # refused: another environment
        conn.close()
        return None
    return Forked(conn, int(answer["pid"]), output, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
