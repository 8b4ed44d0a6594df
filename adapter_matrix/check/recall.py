"""``adapter-matrix check`` answered again: the earlier answer to the same command line, while
nothing it was decided from has changed.

A check's answer depends on its command line, this tool's code, the Python, the day, the
matrix files, and the environment: what the folders of the import path hold (torch's, the
adapter's and each companion's version; the registered matrices; the ``torch.backends`` entry
points and the plugin chain above them), the adapter's libraries against torch's (the binary
check), and what a detector reads.

- the *question* (the key) is the command line, the tool's version, the interpreter, today's
  date, the working folder, the import path, whether the output is colored and the terminal's
  width it is wrapped to, and the
  environment variables the tool reads;
- the *deps* are stamped (:mod:`adapter_matrix.memo`): each matrix file, ``./compat.yaml``
  (one that appears is found first), each folder of the import path (an install, upgrade or
  uninstall changes its folder), every module and folder of this package (an edited checkout
  answers anew), and what the binary check's and the autoload lint's own stored answers were
  decided from (each library, dist-info and entry point's module they read).

A warm ``check`` is :func:`recall` alone, from the console script's first lines: a hash of the
question, one read and a ``stat`` per dep. This module imports only ``os``, ``sys``, ``time``,
``marshal`` and the built-in BLAKE2, never ``typing``, ``json`` or ``re`` (about 60 modules
and 8 ms of CPU), and nothing that decides an answer. The entry is a ``marshal``-ed tuple of
strings and integers, read as the cache's other entries are (never through a link, only when
it and its folders are this user's alone: :func:`~adapter_matrix.files.untrusted_reason`) and
checked value by value; a damaged or untrusted entry is a miss.

Only a plain question is remembered (:func:`remember`'s caller decides): no ``--env``,
``--requirements``, ``--constraints``, ``--deep`` or ``--adapter DIST``; no matrix whose extra
dimensions a detector reads (a file or a command can change without a stamp); no run that said
anything on stderr. Those answer the long way each time, as everything does with
``ADAPTER_MATRIX_NO_MEMO=1``.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from .. import limits
from .._version import __version__
from ..memo import blake2b, entry_path, stamp

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the point of this module)
if TYPE_CHECKING:
    from typing import Dict, Optional, Sequence, Tuple

    from ..memo import Stamp

__all__ = ["FORMAT", "recall", "stamps", "remember", "terminal_width"]

FORMAT = 2  # bumped when the stored answer's shape changes
KIND = "check-answers"
SUFFIX = ".marshal"
NO_MEMO = "ADAPTER_MATRIX_NO_MEMO"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# besides ADAPTER_MATRIX_*: the loader's path (the binary check), torch's autoload switch, the
# vLLM plugins to load (the platform-conflict finding), and what decides the colors (with
# whether stdout is a terminal)
_ENVIRONMENT = ("LD_LIBRARY_PATH", "TORCH_DEVICE_BACKEND_AUTOLOAD", "VLLM_PLUGINS", "NO_COLOR", "TERM")


def terminal_width() -> Optional[int]:
    """The columns of the terminal stdout is (``$COLUMNS`` first, as a shell sets it), which the
    report is wrapped to; None for a pipe or a file (one line each). Part of the question: an
    answer remembered for one width is not replayed on another."""
    if not sys.stdout.isatty():
        return None
    try:
        columns = int(os.environ.get("COLUMNS") or os.get_terminal_size(sys.stdout.fileno()).columns)
    except (OSError, ValueError):
        return None
    return columns if columns > 0 else None  # a terminal that says 0 (a serial console): not wrapped


def _entry(argv: Sequence[str]) -> str:
    """The entry of the question ``check ARGV`` asks here and now."""
    environ = sorted((k, v) for k, v in os.environ.items() if k.startswith("ADAPTER_MATRIX_") or k in _ENVIRONMENT)
    question = (
        FORMAT,
        __version__,
        sys.executable,
        sys.version,
        getattr(sys, "abiflags", ""),
        time.strftime("%Y-%m-%d"),  # the local date, as datetime.date.today() (not imported: 2 ms)
        os.getcwd(),
        tuple(argv),
        sys.stdout.isatty(),
        terminal_width(),
        tuple(sys.path),
        tuple(environ),
    )
    key = blake2b(repr(question).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return entry_path(KIND, key, SUFFIX)


def _read(path: str) -> Optional[bytes]:
    """The entry's bytes, if it is a regular file of this user's alone (never through a link)."""
    from ..files import FileReadError, read_regular, untrusted_reason
    from ..memo import cache_root

    try:
        data = read_regular(path, limits.RECALLED_ANSWER_BYTES, follow=False)
    except FileReadError:
        return None
    return data if untrusted_reason(path, cache_root()) is None else None


def _is_stamp(value: object) -> bool:
    return value is None or (isinstance(value, tuple) and len(value) == 3 and all(type(v) is int for v in value))


def recall(argv: Sequence[str]) -> Optional[Tuple[int, str]]:
    """The exit code and output of ``check ARGV`` asked before, while everything it was decided
    from is unchanged; None otherwise (the caller answers the long way)."""
    if os.environ.get(NO_MEMO):
        return None
    try:
        data = _read(_entry(argv))
    except OSError:  # no working folder (removed under us): the long way says so
        return None
    if data is None:
        return None
    try:
        value = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(value, tuple) and len(value) == 4 and value[0] == FORMAT):
        return None
    _format, deps, code, stdout = value
    if not (isinstance(deps, tuple) and type(code) is int and isinstance(stdout, str)):
        return None
    for dep in deps:
        if not (isinstance(dep, tuple) and len(dep) == 2 and isinstance(dep[0], str) and _is_stamp(dep[1])):
            return None
        if stamp(dep[0]) != dep[1]:
            return None
    return code, stdout


def stamps(located: Sequence[str], paths: Sequence[str]) -> Dict[str, Stamp]:
    """The deps of a check that it can name before it answers, stamped before it reads them:
    a file that changes while it runs leaves a stamp that no longer matches, so the next check
    answers anew. ``located``: the matrix files; ``paths``: the import path's folders."""
    from ..matrix.discovery import DEFAULT_NAME

    deps: Dict[str, Stamp] = {path: stamp(path) for path in located}
    here = os.path.join(os.getcwd(), DEFAULT_NAME)  # one that appears (or goes) is found first
    deps[here] = stamp(here)
    deps.update((p, stamp(p)) for p in paths if p)
    for folder, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        deps[folder] = stamp(folder)  # a module added or removed
        deps.update(
            (os.path.join(folder, f), stamp(os.path.join(folder, f))) for f in sorted(files) if f.endswith(".py")
        )
    return deps


def remember(argv: Sequence[str], deps: Dict[str, Stamp], code: int, stdout: str) -> None:
    """Store the answer to ``check ARGV`` with ``deps`` (:func:`stamps`, and the stored answers'
    deps it was built on: :func:`adapter_matrix.memo.entry_deps`)."""
    from ..files import FileWriteError, atomic_write, private_folder

    path = _entry(argv)
    entry = (FORMAT, tuple((p, None if st is None else tuple(st)) for p, st in deps.items()), code, stdout)
    try:
        private_folder(os.path.dirname(path))
        atomic_write(path, marshal.dumps(entry), mode=0o600, follow=False)
    except (OSError, FileWriteError):  # a read-only home: the next run decides again
        pass
