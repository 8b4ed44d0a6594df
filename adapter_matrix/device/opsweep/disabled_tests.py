"""PyTorch's disabled-tests JSON, read and written: the sweep's expectations in the format
vendors already keep (torch_npu's ``test/unsupported_test_cases/.pytorch-disabled-tests-2.11.json``).

The format is the one ``torch.testing._internal.common_utils`` reads from
``$DISABLED_TESTS_FILE`` (``--import-disabled-tests``): one object, each key a test as
unittest names it, each value the issue that disables it and the platforms it is disabled
on (empty: all)::

    {
      "test_compare_cpu_add_npu_float32 (__main__.TestCommonPRIVATEUSE1)": ["", []],
      "test_cpu_gpu_parity_nn_LSTM_train_mode_npu_float64 (__main__.TestModulePRIVATEUSE1)": ["https://...", ["linux"]]
    }

A key matches a test as ``check_if_enable`` matches it: the test's class name starts with
the key's class (``TestCommon`` covers ``TestCommonPRIVATEUSE1``), and the key's method is
the test's method or that method without its device and dtype suffixes
(``test_compare_cpu_add`` covers every dtype). Platforms PyTorch does not know (torch_npu
writes ``[""]``) are dropped, as PyTorch drops them.

Each task of the sweep is named as the PyTorch test it re-implements (:func:`test_of`):

========  ===================================================================================
forward   ``test_compare_cpu_{op}_{device}_{dtype} (__main__.TestCommonPRIVATEUSE1)``
          (PyTorch's ``TestCommon.test_compare_cpu``)
module    ``test_cpu_gpu_parity_{module}[_{mode}_mode]_{device}_{dtype} (__main__.TestModulePRIVATEUSE1)``
          (PyTorch's ``TestModule.test_cpu_gpu_parity``)
backward  ``test_compare_cpu_backward_{op}_{device}_{dtype} (__main__.TestOpSweepPRIVATEUSE1)``
compiled  ``test_compiled_compare_cpu_{op}_{device}_float32 (__main__.TestOpSweepPRIVATEUSE1)``
========  ===================================================================================

(``{op}``: the OpInfo's ``formatted_name``, its id with ``_`` for ``.``.) PyTorch has no
backward or compiled device-versus-CPU test, so those two are the sweep's own class
``TestOpSweep``, which no PyTorch test file defines: a file that lists them still works
as ``DISABLED_TESTS_FILE`` for PyTorch's own tests. A listed task is expected not to pass
(outcome ``disabled``: it fails, crashes or hangs); a listed task that passes disagrees.

Reading keeps every entry, in order, whether or not it names a task of the sweep (a
vendor's file lists tens of thousands of PyTorch's other tests); writing puts one entry on
a line, as torch_npu's files are laid out, so a file read and written again is the same.
"""

from __future__ import annotations

import json
import re
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

from ...matrix.diagnostics import Diagnostic, Mark, display_path
from .expected import DISABLED, Expectation, ExpectationsError
from .runner import Task

__all__ = ["PLATFORMS", "DisabledTests", "test_of", "key_of", "read", "parse", "dumps", "Index", "entries_for"]

# check_if_enable's platforms; only the OS ones can be true where the sweep runs
PLATFORMS = (
    "mac",
    "macos",
    "win",
    "windows",
    "linux",
    "rocm",
    "xpu",
    "asan",
    "dynamo",
    "dynamo_wrapped",
    "inductor",
    "slow",
)
PRIVATEUSE1 = "PRIVATEUSE1"
CLASSES = {
    "forward": ("TestCommon", "test_compare_cpu"),
    "backward": ("TestOpSweep", "test_compare_cpu_backward"),
    "compiled": ("TestOpSweep", "test_compiled_compare_cpu"),
    "module": ("TestModule", "test_cpu_gpu_parity"),
}
MODES = ("train", "eval")
_KEY_LINE = re.compile(r'^\s*("(?:[^"\\]|\\.)*")\s*:')


def _platform_is_here(platform: str) -> bool:
    if platform in ("linux",):
        return sys.platform.startswith("linux")
    if platform in ("mac", "macos"):
        return sys.platform == "darwin"
    if platform in ("win", "windows"):
        return sys.platform.startswith("win")
    return False  # rocm, xpu, asan, dynamo, inductor, slow: not how the sweep runs


def test_of(task: Task, device: str) -> Tuple[str, str]:
    """(method, instantiated class) of the PyTorch test a task stands for."""
    cls, prefix = CLASSES.get(task.kind, ("TestOpSweep", f"test_{task.kind}"))
    op = task.op
    if task.kind == "module":
        name, _, mode = op.rpartition(".")
        op = f"{name}.{mode}_mode" if name and mode in MODES else op
    return f"{prefix}_{op.replace('.', '_')}_{device}_{task.dtype}", cls + PRIVATEUSE1


def key_of(task: Task, device: str) -> str:
    method, cls = test_of(task, device)
    return f"{method} (__main__.{cls})"


@dataclass
class DisabledTests:
    """A disabled-tests file: its entries in order (key -> [issue, platforms]) and each
    key's line, for diagnostics."""

    path: str
    entries: OrderedDict[str, List[object]] = field(default_factory=OrderedDict)
    lines: Dict[str, int] = field(default_factory=dict)


def parse(text: str, path: str) -> DisabledTests:
    """The entries of a disabled-tests JSON text; :class:`ExpectationsError` names every
    entry that is not ``"TEST (CLASS)": [ISSUE, [PLATFORM, ...]]``."""
    name = display_path(path)
    lines: Dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _KEY_LINE.match(line)
        if match:
            try:
                lines.setdefault(json.loads(match.group(1)), number)
            except ValueError:
                pass
    try:
        data = json.loads(text, object_pairs_hook=OrderedDict)
    except json.JSONDecodeError as exc:
        raise ExpectationsError([Diagnostic(Mark(name, exc.lineno, exc.colno), f"not JSON: {exc.msg}")]) from None
    if not isinstance(data, OrderedDict):
        raise ExpectationsError(
            [Diagnostic(Mark(name, 1, 1), "a disabled-tests file is one JSON object", '{"TEST (CLASS)": ["", []]}')]
        )
    problems = []
    for key, value in data.items():
        mark = Mark(name, lines.get(key, 1), 1)
        if len(key.split()) < 2 or not key.split()[1].startswith("("):
            problems.append(Diagnostic(mark, f"{key!r}: not a test name", 'write "test_method (module.TestClass)"'))
        ok = (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], str)
            and isinstance(value[1], list)
            and all(isinstance(p, str) for p in value[1])
        )
        if not ok:
            problems.append(
                Diagnostic(mark, f"{key!r}: expected [ISSUE, [PLATFORM, ...]], got {json.dumps(value)[:80]}")
            )
    if problems:
        raise ExpectationsError(problems)
    return DisabledTests(name, data, lines)


def read(path: str) -> DisabledTests:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ExpectationsError(
            [Diagnostic(Mark(display_path(path), 0, 0), f"cannot read the disabled tests: {exc.strerror}")]
        ) from None
    return parse(text, path)


def dumps(entries: Dict[str, List[object]]) -> str:
    """One entry a line, two spaces in, as torch_npu lays its files out; ``{}`` when empty."""
    if not entries:
        return "{}\n"
    body = ",\n".join(f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in entries.items())
    return "{\n" + body + "\n}\n"


def _sanitized(method: str, device: str, dtype: str) -> str:
    suffix = f"_{device}_{dtype}"
    return method[: -len(suffix)] if method.endswith(suffix) else method


class Index:
    """The tasks a disabled-tests file lists, found by test name (for
    :class:`~.expected.Expectations`' ``by_test``)."""

    def __init__(self, tests: DisabledTests, device: str) -> None:
        self.device = device
        self.by_method: Dict[str, List[Tuple[str, str, Expectation]]] = {}  # method -> (class, key, entry)
        for key, (issue, platforms) in tests.entries.items():
            assert isinstance(issue, str) and isinstance(platforms, list)  # parse checked each entry's shape
            parts = key.split()
            known = [p for p in platforms if p in PLATFORMS]
            if len(parts) < 2 or (known and not any(_platform_is_here(p) for p in known)):
                continue
            cls = parts[1][1:-1].split(".")[-1]
            reason = f"disabled: {issue}" if issue else f"disabled ({key})"
            entry = Expectation((), DISABLED, reason, Mark(tests.path, tests.lines.get(key, 1), 1), issue=issue or None)
            self.by_method.setdefault(parts[0], []).append((cls, key, entry))

    def find(self, task: Task) -> Optional[Tuple[str, Expectation]]:
        """The first entry that lists the task, and its key."""
        method, cls = test_of(task, self.device)
        for name in dict.fromkeys((method, _sanitized(method, self.device, task.dtype))):
            for prefix, key, entry in self.by_method.get(name, ()):
                if cls.startswith(prefix):
                    return key, entry
        return None

    def expected(self, task: Task) -> Optional[Expectation]:
        found = self.find(task)
        return found[1] if found else None


def entries_for(
    tasks: Iterable[Task], device: str, previous: Optional[DisabledTests] = None
) -> OrderedDict[str, List[object]]:
    """A file's entries after a sweep: ``previous``' entries that list no task of the sweep,
    as they were and where they were (another selection's tasks, PyTorch's other tests),
    then one entry per task that did not pass, its issue and platforms kept where an entry
    of ``previous`` listed it. An entry that listed a task of the sweep is decided anew
    (a key without device and dtype becomes one key per task that still fails)."""
    tasks = list(tasks)
    old: OrderedDict[str, List[object]] = previous.entries if previous is not None else OrderedDict()
    redecided: Dict[str, Optional[str]] = {}  # a task's key -> the old key that listed it
    if previous is not None:
        index = Index(previous, device)
        for t in tasks:
            hit = index.find(t)
            redecided[key_of(t, device)] = hit[0] if hit else None
    dropped = {k for k in redecided.values() if k is not None} | set(redecided) | {key_of(t, device) for t in tasks}
    out: OrderedDict[str, List[object]] = OrderedDict((k, v) for k, v in old.items() if k not in dropped)
    for t in tasks:
        if t.outcome in ("failed", "crashed", "timeout"):
            key = key_of(t, device)
            source = redecided.get(key)
            out[key] = list(old[source]) if source is not None else ["", []]
    return out
