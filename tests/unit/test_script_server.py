"""The conformance suite's script server (tests/conformance/script_server.py): the workloads'
ranks and references run as forks of one interpreter that imported torch once. Each run must
look to its script as ``python SCRIPT ARGS`` does, report its status and its CPU time, and die
with its client or its server. Run without torch: the server preloads a stdlib module."""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on an abstract Unix socket")

PATH = Path(__file__).resolve().parents[1] / "conformance" / "script_server.py"

SCRIPT = """
import json, os, sys, time
if sys.argv[1] == "sleep":
    time.sleep(60)
deadline = time.process_time() + 0.2  # some CPU, for the server to count
while time.process_time() < deadline:
    pass
print(json.dumps({"name": __name__, "argv": sys.argv, "path0": sys.path[0], "cwd": os.getcwd(),
                  "flavour": os.environ.get("FLAVOUR"), "threads": os.environ.get("OMP_NUM_THREADS"),
                  "preloaded": "decimal" in sys.modules}))
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture
def server(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("script_server_under_test", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.delenv(module.ADDRESS_ENV, raising=False)
    env = dict(os.environ, FLAVOUR="plain")
    module.start(env, ["decimal"], str(tmp_path / "server.log"))
    yield module, env
    module.stop()


def _script(tmp_path: Path) -> str:
    folder = tmp_path / "scripts"
    folder.mkdir(exist_ok=True)
    (folder / "job.py").write_text(textwrap.dedent(SCRIPT))
    return str(folder / "job.py")


def test_a_run_is_the_script_as_python_runs_it_with_its_status_output_and_cpu(server, tmp_path):
    import json

    module, env = server
    script = _script(tmp_path)
    run = module.spawn([script, "work", "3"], dict(env, OMP_NUM_THREADS="1"), str(tmp_path / "out.log"))
    assert run is not None and run.pid != os.getpid()
    out, _ = run.communicate(timeout=60)
    assert run.returncode == 3
    lines = out.decode().splitlines()
    seen = json.loads(lines[0])
    assert seen == {
        "name": "__main__",
        "argv": [script, "work", "3"],
        "path0": str(Path(script).parent),
        "cwd": os.getcwd(),
        "flavour": "plain",
        "threads": "1",  # set per run: not part of what the server was started under
        "preloaded": True,  # imported once by the server, before the fork
    }
    assert "to stderr" in lines
    assert module.CPU_OF_FORKS[0] >= 0.2  # the fork's CPU, counted for the client that waited


def test_a_run_killed_by_a_signal_reports_it_negative_like_popen(server, tmp_path):
    """Signalled at once, as a client that gives up does: the fork must die of the signal. It
    used to inherit the server's SIGTERM handler for a moment after the fork, and a signal then
    either ran it (exit 1) or was lost (the script slept on): 1 of 300 runs."""
    module, env = server
    codes = []
    for _ in range(30):
        run = module.spawn([_script(tmp_path), "sleep", "0"], env, str(tmp_path / "out.log"))
        run.send_signal(signal.SIGTERM)
        run.communicate(timeout=60)
        codes.append(run.returncode)
    assert codes == [-signal.SIGTERM] * 30


def test_another_environment_is_refused_and_the_caller_starts_a_fresh_interpreter(server, tmp_path):
    module, env = server
    assert module.spawn([_script(tmp_path), "work", "0"], dict(env, FLAVOUR="other"), str(tmp_path / "o")) is None


def test_stopping_the_server_ends_its_runs_and_later_runs_start_fresh(server, tmp_path):
    module, env = server
    run = module.spawn([_script(tmp_path), "sleep", "0"], env, str(tmp_path / "out.log"))
    pid = run.pid
    module.stop()
    assert _gone(pid)
    assert run.wait(30) == -signal.SIGKILL  # told before the server left
    assert module.spawn([_script(tmp_path), "work", "0"], env, str(tmp_path / "o")) is None


def test_a_client_that_goes_away_takes_its_run_with_it(server, tmp_path):
    module, env = server
    run = module.spawn([_script(tmp_path), "sleep", "0"], env, str(tmp_path / "out.log"))
    run.conn.close()  # as when the test's process is killed
    assert _gone(run.pid)


def _gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
