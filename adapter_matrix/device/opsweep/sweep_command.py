"""The use case of ``ops sweep``: a frozen request, a ``run`` and a typed result.

The command line (:mod:`adapter_matrix.cli.ops`) parses its options into a
:class:`SweepRequest` (how the matrix and the expectations are loaded, how lines are said and
how the progress shows passed in, since they print) and prints the :class:`SweepResult`'s
record; the run neither prints nor exits. A request it cannot run raises
:class:`~adapter_matrix.errors.AdapterMatrixError`, a bad option's a
:class:`~adapter_matrix.errors.ChoiceError` with the request's field as its subject.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, ContextManager, List, NamedTuple, Optional, Sequence, Tuple

from ...errors import AdapterMatrixError, ChoiceError
from . import baseline
from . import compiled as compiled_worker
from . import expected as ex
from . import record as rec
from .activation import ActivationError, activation_of
from .runner import COMPILED_WORKERS, Selection, run_sweeps

__all__ = ["SweepRequest", "SweepResult", "run"]


def _no_loader(*args: Any) -> Any:
    raise AdapterMatrixError("no loader given")


def _quiet() -> ContextManager[Any]:
    return contextlib.nullcontext(None)


class SweepRequest(NamedTuple):
    """What ``ops sweep`` is asked, one field per option as given."""

    matrix: Optional[str] = None
    expected: Optional[str] = None
    write_expected: bool = False
    expected_format: str = "yaml"
    sample: bool = False
    op: Tuple[str, ...] = ()
    dtype: Tuple[str, ...] = ()
    kind: Tuple[str, ...] = ()
    with_compile: bool = False
    timeout: float = 300.0
    jobs: int = 0  # 0: one per core
    activate: Optional[str] = None
    # the validated matrix of --matrix (None: the one found), and the expectations with the files
    # read (--expected, the matrix's path, the device, to write): the command line lists their errors
    load: Callable[[Optional[str]], Any] = _no_loader
    load_expectations: Callable[[Optional[str], str, str, bool], Tuple[Any, List[str]]] = _no_loader
    say: Callable[[str], None] = lambda line: None  # what the sweep does, as it goes
    warn: Callable[[str], None] = lambda line: None  # the device build's first-use notice
    # around the sweeps: yields their progress(task, done, total)
    progress: Callable[[], ContextManager[Any]] = _quiet


class SweepResult(NamedTuple):
    """The sweep's record (``device.opsweep.record``), judged against the expectations."""

    record: rec.SweepRecord

    @property
    def ok(self) -> bool:
        return bool(self.record["ok"])


def _first_build_notice(matrix: Any) -> Optional[str]:
    """The device build's first-use notice (device/build.py), or None: no shims package or C++ core."""
    from ..build import BuildError, Extension, first_build

    if matrix.adapter.shims is None:
        return None
    try:
        return first_build(Extension.of_package(matrix.adapter.shims, matrix.adapter.device))
    except BuildError:
        return None


def _write_expected(
    request: SweepRequest,
    read: List[str],
    matrix_path: str,
    device: str,
    expectations: Any,
    tasks: List[Any],
    torch: str,
) -> List[str]:
    """Write the sweep's tasks as the expectations: to --expected, else to the files the
    sweep read, else to the torch line's file of ``fmt``; the files written."""
    from ...matrix.diagnostics import display_path

    if request.expected is not None:
        targets = [request.expected]
    elif read:
        targets = list(read)
    else:
        line = baseline.torch_line_of(torch)
        targets = [baseline.paths_for(os.path.dirname(os.path.abspath(matrix_path)), line)[request.expected_format]]
    for target in targets:
        baseline.write(target, tasks, torch, device, expectations.sample, read)
        request.say(f"wrote the expectations {display_path(target)}")
    return targets


def _selected(request: SweepRequest, expectations: Any) -> Tuple[List[str], List[str]]:
    """The eager sweep's ops and the compiled sample's, the choices checked."""
    if request.expected_format not in baseline.FORMATS:
        raise ChoiceError("expected_format", f"{request.expected_format!r}: choose from {', '.join(baseline.FORMATS)}")
    for value in request.dtype:
        if value not in ex.DTYPES:
            raise ChoiceError("dtype", f"{value!r}: choose from {', '.join(ex.DTYPES)}")
    for value in request.kind:
        if value not in ex.EAGER_KINDS:
            raise ChoiceError(
                "kind", f"{value!r}: choose from {', '.join(ex.EAGER_KINDS)} (the compiled sample: --compile)"
            )
    if request.sample and request.op:
        raise ChoiceError("sample", "and --op exclude each other")
    if request.sample and not expectations.sample:
        raise AdapterMatrixError(f"{expectations.path} lists no `sample` ops")
    ops = list(expectations.sample) if request.sample else list(request.op)
    compile_ops = list(request.op) or list(expectations.sample)  # a full sweep compiles the sample
    if request.with_compile and not compile_ops:
        raise ChoiceError("with_compile", f"{expectations.path} lists no `sample` ops to compile; name them with --op")
    return ops, compile_ops


def _unmatched(ops: Sequence[str], sweeps: Sequence[Any]) -> List[str]:
    """The ``--op`` values no task of the sweeps ran for (an op's name also names its variants)."""
    ran = {task.op for sweep in sweeps for task in sweep.tasks}
    return [o for o in ops if not any(r == o or r.startswith(o + ".") for r in ran)]


def run(request: SweepRequest) -> SweepResult:
    """Sweep torch's OpInfo ops on the matrix's device against CPU and judge the tasks."""
    matrix = request.load(request.matrix)
    adapter = matrix.adapter
    try:
        activation = activation_of(adapter.distribution, adapter.shims, request.activate)
    except ActivationError as exc:  # --activate's own: the command line puts the option in front
        raise (ChoiceError("activate", str(exc)) if request.activate else AdapterMatrixError(str(exc))) from exc
    expectations, paths = request.load_expectations(
        request.expected, matrix.path, adapter.device, request.write_expected
    )
    if request.write_expected and request.expected is None and any(p.endswith(baseline.REPOSITORY_FILE) for p in paths):
        raise ChoiceError(
            "write_expected",
            f"{baseline.REPOSITORY_FILE} is kept by hand (every torch line, with comments); "
            "name a file with --expected",
        )
    ops, compile_ops = _selected(request, expectations)
    mode = "sample" if request.sample else ("full" if not (request.op or request.dtype or request.kind) else "custom")
    if request.jobs < 0:
        raise ChoiceError("jobs", f"{request.jobs}: at least 1 (0: one per core)")
    if not request.timeout > 0:  # 0 or less: every task would end as a timeout
        raise ChoiceError("timeout", f"{request.timeout:g}: the seconds one task may run, more than 0")
    jobs = request.jobs or os.cpu_count() or 1
    request.say(f"op sweep ({mode}) of {adapter.device}, expectations {expectations.path}")
    request.say(f"activates the device with {activation.how}")
    notice = _first_build_notice(matrix)
    if notice:  # the workers compile the device's core at their first import: say so now
        request.warn(notice)
    selections = [Selection(ops, tuple(request.dtype or ex.DTYPES), tuple(request.kind or ex.EAGER_KINDS))]
    if request.with_compile:
        request.say(f"compiled sample ({compiled_worker.CAPABILITY}) of {len(compile_ops)} ops")
        # first: compiling is the longest part, and its ops go to every process slot
        selections.insert(
            0, Selection(compile_ops, (compiled_worker.DTYPE,), (ex.COMPILED,), COMPILED_WORKERS, shards=jobs)
        )
    with request.progress() as progress:
        *done_compiled_or_none, done = run_sweeps(
            adapter.device, activation.target, selections, timeout=request.timeout, progress=progress, jobs=jobs
        )
    missing = _unmatched(request.op, (*done_compiled_or_none, done)) if not done.absent else []
    configs = done.selection.get("configs")
    if missing and configs:  # the adapter's own op_allowlist may leave an op out: said, not refused
        request.warn(f"--op {', '.join(map(repr, missing))}: no task ran for it ({configs})")
    elif missing:  # a typo's sweep of nothing is no green run
        raise ChoiceError(
            "op",
            f"{', '.join(map(repr, missing))}: no task of torch {done.torch} ran for it \u2014 give an id of torch's "
            "op_db (add, nn.functional.relu, max.binary) that CPU runs in the dtypes and kinds asked",
        )
    if request.write_expected:
        tasks = [t for sweep in (*done_compiled_or_none, done) for t in sweep.tasks]
        targets = _write_expected(request, paths, matrix.path, adapter.device, expectations, tasks, done.torch)
        expectations = baseline.load(targets, adapter.device)
    compiled = None
    if request.with_compile:
        done_compiled = done_compiled_or_none[0]
        compiled = rec.compiled_record(
            done_compiled, ex.judge(done_compiled, expectations), compiled_worker.CAPABILITY, compiled_worker.SAMPLES
        )
    if done.absent:
        request.say(f"not run: {done.absent}")
    verdicts = ex.judge(done, expectations)
    return SweepResult(rec.build_record(done, verdicts, expectations, mode, compiled))
