"""Work on untrusted input in bounded time and memory: a detector's regex and its command.

A matrix is written by the adapter's authors, or passed with ``--matrix`` by whoever
hands it over; its detectors run in ``check`` and (all but commands) in ``require()``,
that is inside ``import torch``. Neither may hang or exhaust memory, whatever the file says:

* :func:`search` runs a regex with a wall-clock budget. Python's ``re`` backtracks, so a
  pattern such as ``^(a|aa)+$`` takes exponential time on a short value; no static
  check rejects every slow pattern (``.*x`` on a long line is quadratic). The engine does
  check for signals every few thousand steps, so in the main thread an interval timer
  (``setitimer``) interrupts the match at the budget and the previous ``SIGALRM``
  handler is restored after; elsewhere (another thread, Windows, a timer already set)
  the match runs in a child Python that is killed at the budget. No compiled
  dependency is needed, and nothing changes for the usual pattern, which takes
  microseconds. docs/security.md weighs this against the ``regex`` package.
* :func:`run_command` runs an argument list (never a shell) in its own process group,
  keeps at most :data:`~adapter_matrix.limits.OUTPUT_BYTES` of its output, and kills the whole group at the
  timeout, when the output is too long, and after it exits (a detector leaves no
  background process behind).
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence

from .. import limits

if TYPE_CHECKING:  # the annotation only: subprocess loads when a command runs
    import subprocess

__all__ = [
    "REGEX_SECONDS",
    "INPUT_CHARS",
    "RegexTimeout",
    "RegexMatch",
    "search",
    "named_groups",
    "CommandResult",
    "run_command",
]

REGEX_SECONDS = 0.5  # a version regex on a version file takes microseconds
INPUT_CHARS = 1 << 20  # what a regex is matched against: the first MiB of a file or an output


class RegexTimeout(Exception):
    """The match took longer than its budget."""


class RegexMatch(NamedTuple):
    """A match, reduced to plain strings: the named groups, group 1 (if any) and group 0."""

    named: Dict[str, Optional[str]]
    first: Optional[str]
    whole: str
    groups: int

    @property
    def version(self) -> Optional[str]:
        """The ``version`` group, else group 1, else the whole match."""
        if "version" in self.named:
            return self.named["version"]
        return self.first if self.groups else self.whole


def _found(match: re.Match[str]) -> RegexMatch:
    return RegexMatch(match.groupdict(), match.group(1) if match.re.groups else None, match.group(0), match.re.groups)


def search(pattern: str, text: str, seconds: float = REGEX_SECONDS) -> Optional[RegexMatch]:
    """``re.search(pattern, text, re.MULTILINE)`` that gives up after ``seconds``
    (:class:`RegexTimeout`). ``text`` is cut to :data:`INPUT_CHARS` first."""
    answer = _bounded("search", pattern, text, seconds)
    return RegexMatch(*answer) if answer else None


def named_groups(pattern: str, text: str, seconds: float = REGEX_SECONDS) -> Dict[str, str]:
    """Each named group of ``pattern`` with the first value any match over ``text`` gives
    it (``re.finditer``, multi-line), under the same budget as :func:`search`: a detector
    template composes ``ID`` and ``VERSION_ID``, which /etc/os-release lists on lines of
    their own, in no fixed order."""
    found: Dict[str, str] = _bounded("groups", pattern, text, seconds) or {}
    return found


# The two questions, as code the child runs too (it must not import this package).
_QUESTIONS = (
    "import re\n"
    "def _ask(mode, pattern, text):\n"
    "    compiled = re.compile(pattern, re.MULTILINE)\n"
    "    if mode == 'search':\n"
    "        m = compiled.search(text)\n"
    "        return m and [m.groupdict(), m.group(1) if m.re.groups else None, m.group(0), m.re.groups]\n"
    "    found = {}\n"
    "    for m in compiled.finditer(text):\n"
    "        for name, value in m.groupdict().items():\n"
    "            if value is not None and name not in found:\n"
    "                found[name] = value\n"
    "    return found\n"
)
_namespace: Dict[str, object] = {}
exec(compile(_QUESTIONS, "<adapter_matrix.check.bounded>", "exec"), _namespace)
_ask = _namespace["_ask"]


def _bounded(mode: str, pattern: str, text: str, seconds: float) -> Any:  # the questions' JSON-shaped answer
    re.compile(pattern, re.MULTILINE)  # an invalid pattern is re.error here, in the caller's process
    text = text[:INPUT_CHARS]
    try:
        import signal

        setitimer = signal.setitimer
    except (ImportError, AttributeError):  # pragma: no cover - Windows
        return _in_child(mode, pattern, text, seconds)
    if signal.getitimer(signal.ITIMER_REAL)[0] or signal.getsignal(signal.SIGALRM) is None:
        return _in_child(mode, pattern, text, seconds)  # someone's alarm is set, or a handler we cannot restore
    armed = [True]

    def on_alarm(_signum: int, _frame: object) -> None:
        if armed[0]:
            raise RegexTimeout()

    try:
        previous = signal.signal(signal.SIGALRM, on_alarm)
    except ValueError:  # not the main thread: only it may handle signals
        return _in_child(mode, pattern, text, seconds)
    try:
        setitimer(signal.ITIMER_REAL, seconds)
        try:
            return _ask(mode, pattern, text)  # type: ignore[operator]
        finally:
            armed[0] = False
            setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)


_CHILD = _QUESTIONS + ("import json,sys\na=json.load(sys.stdin)\nprint(json.dumps(_ask(*a)))\n")


def _in_child(mode: str, pattern: str, text: str, seconds: float) -> Any:
    """The match in a child Python, killed at the budget (plus its start-up)."""
    import json

    result = run_command(
        [sys.executable, "-I", "-S", "-c", _CHILD], seconds + 2.0, stdin=json.dumps([mode, pattern, text]).encode()
    )
    if result.error is not None or result.returncode != 0:
        raise RegexTimeout()  # timed out, or cannot run it bounded: treat as too slow, never unbounded
    return json.loads(result.output)


class CommandResult(NamedTuple):
    """What a command did: its exit code and output, or ``error`` (``timeout``, ``too-long``,
    ``not-found``, ``not-executable`` or the reason it did not start)."""

    returncode: Optional[int]
    output: bytes
    error: Optional[str]


def run_command(
    argv: Sequence[str],
    timeout: float,
    *,
    stdin: Optional[bytes] = None,
    limit: int = limits.OUTPUT_BYTES,
    env: Optional[Dict[str, str]] = None,
) -> CommandResult:
    """Run ``argv`` without a shell, in a process group of its own; keep at most
    ``limit`` bytes of its standard output (standard error is discarded). The group is
    killed at ``timeout`` seconds, when the output passes ``limit``, and once the
    command has exited. ``env``: its whole environment (default: this process's)."""
    import subprocess

    posix = os.name == "posix"
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=posix,
            env=env,
        )
    except FileNotFoundError:
        return CommandResult(None, b"", "not-found")
    except PermissionError:
        return CommandResult(None, b"", "not-executable")
    except OSError as exc:
        return CommandResult(None, b"", exc.strerror or str(exc))
    if not posix:  # pragma: no cover - Windows: no process groups to kill, communicate's buffers
        try:
            out, _ = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return CommandResult(None, b"", "timeout")
        return CommandResult(proc.returncode, out[:limit], None if len(out) <= limit else "too-long")
    return _drain(proc, timeout, stdin, limit)


def _drain(proc: subprocess.Popen[bytes], timeout: float, stdin: Optional[bytes], limit: int) -> CommandResult:
    import selectors
    import signal
    import time

    deadline = time.monotonic() + timeout
    chunks: List[bytes] = []
    kept = 0
    error: Optional[str] = None
    assert proc.stdout is not None
    if stdin is not None and proc.stdin is not None:
        try:  # small (a regex and its text): the pipe's buffer, or the child reads it at once
            proc.stdin.write(stdin)
        except OSError:
            pass
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                error = "timeout"
                break
            if not selector.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:  # end of output: the command (and whatever shares its output) is done
                break
            chunks.append(chunk)
            kept += len(chunk)
            if kept > limit:
                error = "too-long"
                break
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: `sh -c "sleep 1000; ..."` leaves nothing
    except (ProcessLookupError, PermissionError):
        pass
    proc.stdout.close()
    returncode = proc.wait()
    output = b"".join(chunks)[:limit]
    if error is not None:
        return CommandResult(None, output, error)
    return CommandResult(returncode, output, None)


def describe_failure(error: str, program: str, timeout: float) -> str:
    """The reason a :class:`CommandResult` has no answer, in words (``program`` is escaped by the caller)."""
    if error == "timeout":
        return f"command {program} timed out after {timeout:g} s"
    if error == "too-long":
        return f"command {program} printed more than {limits.OUTPUT_BYTES >> 20} MiB; it was stopped"
    if error == "not-found":
        return f"command {program} not found"
    if error == "not-executable":
        return f"command {program} is not executable"
    return f"command {program} failed to start: {error}"
