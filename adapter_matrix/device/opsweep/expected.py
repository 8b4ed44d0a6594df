"""What the op sweep expects of the device, per torch era, and the judgement of a sweep.

The expectations file (this repository's: ``tests/ops/expected.yaml``) is PyTorch's
skip/xfail lists in data form: every task it does not list must pass, and every task it
lists must still behave as listed. A newly failing op and a newly passing op both make
the judgement fail, so the file stays true::

    schema: 1
    sample: [add, nn.functional.conv2d, ...]    # the fixed subset of the default test run
    expected:
      - ops: [to_sparse]                         # op ids (name or name.variant), or names
        outcome: unsupported                     # fails | unsupported | crashes | hangs
        reason: the npu device holds strided tensors only
        torch: ">=2.5"                           # optional: a PEP 440 specifier of torch releases
        dtypes: [float32]                        # optional: only these dtypes
        kinds: [backward]                        # optional: forward | backward | module | compiled
        issue: 12                                # optional: where the fix is tracked
        exact: true                              # optional: the op ids only, not their variants

The first entry that matches a task decides. ``fails`` and ``unsupported`` match a task
that failed (``unsupported``: the device rejects the op by design, ``fails``: a defect),
``crashes`` one that killed its worker, ``hangs`` one that timed out. A skipped task
(nothing to compare) matches no entry and needs none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Protocol, Sequence, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ...errors import AdapterMatrixError
from ...matrix.diagnostics import Diagnostic, Mark, display_path
from ...matrix.source import Mapping, Node, Scalar, parse
from ...matrix.source import Sequence as SeqNode
from .runner import Sweep, Task

__all__ = [
    "EXPECTED_OUTCOMES",
    "KINDS",
    "EAGER_KINDS",
    "COMPILED",
    "DTYPES",
    "DISABLED",
    "MATCHES",
    "DEFAULT_SAMPLE",
    "ExpectationsError",
    "Expectation",
    "Expectations",
    "TaskVerdict",
    "load",
    "judge",
]

# expected outcome -> the task outcomes it matches
EXPECTED_OUTCOMES: Dict[str, Tuple[str, ...]] = {
    "fails": ("failed",),
    "unsupported": ("failed",),
    "crashes": ("crashed",),
    "hangs": ("timeout",),
}
# an entry of PyTorch's disabled-tests JSON (:mod:`.disabled_tests`): the test does not pass
# (fails, crashes or hangs); not an outcome of the YAML file
DISABLED = "disabled"
MATCHES: Dict[str, Tuple[str, ...]] = dict(EXPECTED_OUTCOMES, **{DISABLED: ("failed", "crashed", "timeout")})
EAGER_KINDS = ("forward", "backward", "module")  # module: PyTorch's device-generic module test (forward and backward)
COMPILED = "compiled"  # the compiled sample: float32 forward through torch.compile(backend="inductor")
KINDS = EAGER_KINDS + (COMPILED,)
DTYPES = ("float32", "float64", "bfloat16", "int64", "bool", "complex64")
# The sample (`ops sweep --sample`, a nox cell's default) where the expectations name none:
# tests/ops/expected.yaml's, every op family, views and aliasing, random ops, factories, an
# unsupported layout, and PyTorch's device-generic module tests over a few modules.
DEFAULT_SAMPLE = (
    "add", "mul", "div.no_rounding_mode", "abs", "exp", "sigmoid", "where", "clamp", "sum", "mean", "amax",
    "argmax", "std", "cumsum", "sort", "topk", "matmul", "addmm", "bmm", "linalg.solve", "linalg.qr", "fft.fft",
    "fft.rfft", "special.i0e", "nn.functional.conv2d", "nn.functional.linear", "nn.functional.softmax",
    "nn.functional.layer_norm", "nn.functional.embedding", "nn.functional.cross_entropy", "nn.functional.dropout",
    "normal", "bernoulli", "index_select", "index_put", "gather", "scatter_add", "cat", "reshape", "permute",
    "as_strided", "masked.sum", "signal.windows.hann", "empty_like", "full_like", "arange",
    "nn.functional.avg_pool2d", "nonzero", "to_sparse", "nn.Linear", "nn.Conv2d", "nn.BatchNorm2d", "nn.Embedding",
    "nn.TransformerEncoderLayer", "nn.CrossEntropyLoss",
)  # fmt: skip
ENTRY_KEYS = ("ops", "outcome", "reason", "torch", "dtypes", "kinds", "issue", "exact")


class ExpectationsError(AdapterMatrixError, ValueError):
    """An expectations file that cannot be used; the message lists every problem."""

    def __init__(self, problems: Sequence[Diagnostic]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True)
class Expectation:
    """One entry: the tasks it covers and how they are expected to end."""

    ops: Tuple[str, ...]  # op ids; ``as_strided`` also covers ``as_strided.partial_views``
    outcome: str
    reason: str
    mark: Mark
    torch: Optional[SpecifierSet] = None
    dtypes: Optional[Tuple[str, ...]] = None
    kinds: Optional[Tuple[str, ...]] = None
    issue: Optional[str] = None
    exact: bool = False  # the op ids only: a name does not cover its variants

    def covers(self, task: Task, torch: Version) -> bool:
        return (
            any(task.op == op or (not self.exact and task.op.startswith(op + ".")) for op in self.ops)  # variants
            and (self.dtypes is None or task.dtype in self.dtypes)
            and (self.kinds is None or task.kind in self.kinds)
            and (self.torch is None or self.torch.contains(torch, prereleases=True))
        )

    def describe(self) -> str:
        return f"{self.outcome}: {self.reason}" + (f" (issue {self.issue})" if self.issue else "")

    def to_json(self) -> Dict[str, Optional[str]]:
        return {
            "outcome": self.outcome,
            "reason": self.reason,
            "issue": self.issue,
            "where": f"{self.mark.file}:{self.mark.line}",
        }


class Lookup(Protocol):
    """Expectations kept by test name (PyTorch's disabled-tests JSON: :mod:`.disabled_tests`)."""

    def expected(self, task: Task) -> Optional[Expectation]: ...


@dataclass(frozen=True)
class Expectations:
    path: str
    sample: Tuple[str, ...]
    entries: Tuple[Expectation, ...]
    by_test: Tuple[Lookup, ...] = ()  # after the entries: disabled-tests files, by test name

    def expected(self, task: Task, torch: Version) -> Optional[Expectation]:
        for entry in self.entries:
            if entry.covers(task, torch):
                return entry
        for lookup in self.by_test:
            found = lookup.expected(task)
            if found is not None:
                return found
        return None


# -- loading ------------------------------------------------------------------------------


class _Reader:
    def __init__(self) -> None:
        self.problems: List[Diagnostic] = []

    def error(self, mark: Mark, message: str, hint: str = "") -> None:
        self.problems.append(Diagnostic(mark, message, hint))

    def words(
        self, node: Optional[Node], what: str, allowed: Optional[Sequence[str]] = None
    ) -> Optional[Tuple[str, ...]]:
        if node is None:
            return None
        items = list(node) if isinstance(node, SeqNode) else [node]
        out: List[str] = []
        for item in items:
            if not isinstance(item, Scalar) or item.is_null or not item.text:
                self.error(item.mark, f"{what}: expected a word, got {item.describe()}")
                continue
            if allowed is not None and item.text not in allowed:
                self.error(item.mark, f"{what}: unknown value {item.text!r}", f"use one of {', '.join(allowed)}")
                continue
            out.append(item.text)
        return tuple(out)

    def text(self, node: Optional[Node], what: str, mark: Mark) -> Optional[str]:
        if node is None:
            self.error(mark, f"missing {what}")
            return None
        if not isinstance(node, Scalar) or node.is_null or not node.text.strip():
            self.error(node.mark, f"{what}: expected text, got {node.describe()}")
            return None
        return node.text

    def entry(self, node: Node) -> Optional[Expectation]:
        if not isinstance(node, Mapping):
            self.error(node.mark, f"an expectation must be a mapping, got {node.describe()}")
            return None
        for key, _ in node:
            if key.text not in ENTRY_KEYS:
                self.error(key.mark, f"unknown key {key.text!r}", f"allowed: {', '.join(ENTRY_KEYS)}")
        ops = self.words(node.get("ops"), "ops")
        if not ops:
            self.error(node.mark, "an expectation needs `ops`: the op ids it covers")
        outcome = self.words(node.get("outcome"), "outcome", tuple(EXPECTED_OUTCOMES))
        if node.get("outcome") is None:
            self.error(node.mark, "missing `outcome`", f"one of {', '.join(EXPECTED_OUTCOMES)}")
        reason = self.text(
            node.get("reason"), "`reason` (why the op does not pass: a known failure needs one)", node.mark
        )
        torch = None
        spec = node.get("torch")
        if spec is not None:
            text = self.text(spec, "torch", spec.mark)
            try:
                torch = SpecifierSet(text or "")
            except InvalidSpecifier:
                self.error(spec.mark, f"torch: {text!r} is not a version specifier", 'write e.g. ">=2.5,<2.7"')
        issue = node.get("issue")
        issue_text = self.text(issue, "issue", node.mark) if issue is not None else None
        exact = node.get("exact")
        if exact is not None and not (isinstance(exact, Scalar) and exact.text in ("true", "false")):
            self.error(exact.mark, "exact: expected true or false")
        if not ops or not outcome or reason is None:
            return None
        return Expectation(
            ops,
            outcome[0],
            reason,
            node.mark,
            torch,
            self.words(node.get("dtypes"), "dtypes", DTYPES),
            self.words(node.get("kinds"), "kinds", KINDS),
            issue_text,
            isinstance(exact, Scalar) and exact.text == "true",
        )


def load(path: str) -> Expectations:
    """Read and validate an expectations file; :class:`ExpectationsError` lists every problem."""
    name = display_path(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ExpectationsError(
            [Diagnostic(Mark(name, 0, 0), f"cannot read the expectations: {exc.strerror}")]
        ) from None
    tree, problems = parse(text, name)
    reader = _Reader()
    reader.problems.extend(problems)
    if tree is None and not problems:
        reader.error(Mark(name, 1, 1), "the expectations file is empty", "start it with `schema: 1`")
    entries: List[Expectation] = []
    sample: Tuple[str, ...] = ()
    if isinstance(tree, Mapping):
        for key, _ in tree:
            if key.text not in ("schema", "sample", "expected"):
                reader.error(key.mark, f"unknown key {key.text!r}", "allowed: schema, sample, expected")
        schema = tree.get("schema")
        if not isinstance(schema, Scalar) or schema.text != "1":
            reader.error(tree.mark if schema is None else schema.mark, "schema: expected 1")
        sample = reader.words(tree.get("sample"), "sample") or ()
        listed = tree.get("expected")
        if listed is not None and not isinstance(listed, SeqNode):
            reader.error(listed.mark, f"expected: a list of entries, got {listed.describe()}")
        for item in listed if isinstance(listed, SeqNode) else ():
            entry = reader.entry(item)
            if entry is not None:
                entries.append(entry)
    elif tree is not None:
        reader.error(tree.mark, f"the expectations file must be a mapping, got {tree.describe()}")
    if reader.problems:
        raise ExpectationsError(reader.problems)
    return Expectations(name, sample, tuple(entries))


# -- judging a sweep ----------------------------------------------------------------------


@dataclass(frozen=True)
class TaskVerdict:
    """A task and what the expectations say of it; ``problem`` is None when they agree."""

    task: Task
    expected: Optional[Expectation]
    problem: Optional[str]


def _problem(task: Task, entry: Optional[Expectation]) -> Optional[str]:
    if entry is None:
        if task.outcome in ("passed", "skipped"):
            return None
        return {"failed": "new failure", "crashed": "new crash", "timeout": "new hang"}[task.outcome]
    if task.outcome in MATCHES[entry.outcome]:
        return None
    if task.outcome == "passed":
        return f"passes now, but {entry.mark} expects it to be {entry.outcome}: remove or narrow the entry"
    if task.outcome == "skipped":
        return f"skipped ({task.error}), but {entry.mark} expects it to be {entry.outcome}"
    return f"{task.outcome}, but {entry.mark} expects it to be {entry.outcome}"


def judge(sweep: Sweep, expectations: Expectations) -> List[TaskVerdict]:
    """Every task of the sweep with its expectation and the disagreement, if any."""
    try:
        torch = Version(Version(sweep.torch).public)
    except InvalidVersion:
        torch = Version("0")
    return [
        TaskVerdict(task, entry, _problem(task, entry))
        for task in sweep.tasks
        for entry in [expectations.expected(task, torch)]
    ]
