"""A fork server for ``ops tests``: torch imported and the device activated once, each file in a fork.

One process per test file keeps a segfault to its file, but every process would import torch,
the adapter and PyTorch's test machinery again (seconds of CPU each, more than a small file's
tests). This server does that once, under the run's hooks, then forks one child per file: the
child starts from a pristine copy (it changes only its own memory: the override file applies
to its own ``op_db``), runs ``pytest.main`` on its file in a session of its own, and its end
(its exit code, or the signal that killed it) is reported as if it had been a process of its own.

Protocol, one JSON object a line: the runner writes ``{"id", "args", "cwd", "env", "out"}`` on
the server's standard input; the server answers ``{"id", "pid"}`` when the child runs and
``{"id", "exit"}`` (``-N`` for signal N) when it ends, on its standard output. The server
ends when its standard input closes and its children have ended.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Dict, List, Mapping, TypedDict

_lock = threading.Lock()


class ForkRequest(TypedDict):
    """One line of the server's input: run pytest with ``args`` in a fork, in ``cwd`` with ``env``
    added, its output to the file ``out``; the server answers ``{"id", "pid"}`` then ``{"id", "exit"}``."""

    id: str
    args: List[str]
    cwd: str
    env: Dict[str, str]
    out: str


def _say(message: Mapping[str, object]) -> None:
    out = sys.__stdout__
    assert out is not None
    with _lock:
        out.write(json.dumps(message) + "\n")
        out.flush()


def _child(request: ForkRequest) -> None:
    """In the forked child: its own session, its output to its file, then pytest on its file."""
    code = 3
    try:
        import resource

        os.setsid()  # its own process group: a time limit ends its children too
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(out, 1)  # pytest reports a collection error on its standard output
        os.dup2(out, 2)
        os.chdir(request["cwd"])
        os.environ.update(request["env"])
        sys.argv = ["pytest", *request["args"]]
        import pytest

        code = int(pytest.main(list(request["args"])))
        sys.stderr.flush()
    except BaseException as exc:
        try:
            sys.stderr.write(f"the fork server's child failed: {type(exc).__name__}: {exc}\n")
            sys.stderr.flush()
        except Exception:
            pass
    finally:
        os._exit(code)


def _wait(ident: str, pid: int) -> None:
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    _say({"id": ident, "exit": code})


def main() -> int:
    import faulthandler
    import warnings

    faulthandler.enable(file=sys.stderr, all_threads=False)
    warnings.simplefilter("ignore")
    activate, device = sys.argv[1], sys.argv[2]
    sys.argv = sys.argv[:1]  # common_utils parses sys.argv when imported
    import torch

    from ..opsweep.activation import activate as activate_device

    if activate:
        activate_device(torch, activate, device)
    import importlib

    import pytest  # noqa: F401 - imported once, for every child

    # common_device_type runs TORCH_TEST_DEVICES' base file; op_db takes seconds to build. A
    # module an older torch lacks (common_optimizers before 2.2) is left to the files.
    for name in (
        "common_utils",
        "common_device_type",
        "common_methods_invocations",
        "common_modules",
        "common_optimizers",
    ):
        try:
            importlib.import_module(f"torch.testing._internal.{name}")
        except ImportError:
            pass

    _say({"ready": True})
    waiters = []
    for line in sys.stdin:
        request: ForkRequest = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _say({"id": request["id"], "pid": pid})
        waiter = threading.Thread(target=_wait, args=(request["id"], pid), daemon=True)
        waiter.start()
        waiters.append(waiter)
    for waiter in waiters:
        waiter.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
