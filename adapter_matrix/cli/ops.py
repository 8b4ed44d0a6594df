"""`ops sweep`: PyTorch's OpInfo tests against the adapter's device, judged against expectations."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, List, Optional

import typer

from ..errors import EXIT_UNSUPPORTED
from .base import MATRIX_HELP, console_for, fail, one_matrix, run_or_exit
from .common import app, sub_app

if TYPE_CHECKING:  # the run stays off the CLI's start-up path
    from ..device.optests.optests_command import OpTestsResult

ops_app = sub_app("PyTorch's own op tests (OpInfo) on the adapter's device.")
app.add_typer(ops_app, name="ops")

DEFAULT_EXPECTED = "op-sweep/torch-X.Y.yaml or op-sweep/pytorch-disabled-tests-X.Y.json"
LISTED_PROBLEMS = 20  # more disagreements than this are summed up by cause


def _expectations(path: Optional[str], matrix_path: str, device: str, to_write: bool = False) -> Any:
    """The expectations (``--expected``, else the files next to the matrix for the installed
    torch's line) and the files they came from; ``to_write``: an --expected file that is not
    there yet is started empty."""
    from ..device.opsweep import baseline
    from ..device.opsweep import expected as ex
    from ..matrix.diagnostics import display_path

    matrix_dir = os.path.dirname(os.path.abspath(matrix_path))
    paths = [path] if path is not None else baseline.find(matrix_dir, baseline.installed_torch_line())
    if to_write:
        paths = [p for p in paths if os.path.exists(p)]
    try:
        return baseline.load(paths, device), paths
    except ex.ExpectationsError as exc:
        from .base import print_diagnostics

        print_diagnostics(exc.problems)
        named = ", ".join(display_path(p) for p in paths)
        fail(f"{named}: {len(exc.problems)} problem(s) in the expectations")


@ops_app.command("sweep")
def sweep(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    expected: Optional[str] = typer.Option(
        None,
        "--expected",
        "-e",
        help=f"Expectations file, YAML or PyTorch's disabled-tests JSON (default: {DEFAULT_EXPECTED} next to the "
        "matrix for the installed torch's line, or this repository's tests/ops/expected.yaml).",
    ),
    write_expected: bool = typer.Option(
        False,
        "--write-expected",
        help="Record what this sweep saw as the expectations (the files read, --expected, else the torch line's "
        "file of --expected-format): from then on a new failure and a new pass both disagree.",
    ),
    expected_format: str = typer.Option(
        "yaml",
        "--expected-format",
        metavar="yaml|json",
        help="The format --write-expected starts a torch line's file in: the tool's YAML or PyTorch's "
        "disabled-tests JSON.",
    ),
    sample: bool = typer.Option(False, "--sample", help="Only the expectations' fixed sample of ops."),
    op: Optional[List[str]] = typer.Option(None, "--op", help="Only this op id (repeatable)."),
    dtype: Optional[List[str]] = typer.Option(
        None,
        "--dtype",
        metavar="float32|float64|bfloat16|int64|bool|complex64",
        help="Only this dtype (repeatable; default: all six).",
    ),
    kind: Optional[List[str]] = typer.Option(
        None,
        "--kind",
        metavar="forward|backward|module",
        help="Only this kind of task (repeatable; default: all three; the compiled sample: --compile).",
    ),
    with_compile: bool = typer.Option(
        False,
        "--compile",
        help="Also the compiled sample: each op of the sample (or of --op), its first float32 samples through "
        "torch.compile(backend='inductor') on the device, against eager CPU (skipped, with the reason, where the "
        "device declares the capability inductor absent).",
    ),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds one task may run before its worker is killed."),
    jobs: int = typer.Option(
        0,
        "--jobs",
        "-j",
        help="Worker processes at once (default 0: one per core): the eager workers and the compiled sample run "
        "side by side, the compiled sample's ops dealt across this many processes. 1: one after the other.",
    ),
    activate: Optional[str] = typer.Option(
        None,
        "--activate",
        metavar="MODULE[:FUNCTION]",
        help="What activates the device in the workers (default: the matrix's shims package, else the adapter's "
        "torch.backends entry point, else the module its distribution installs).",
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the sweep record (JSON) to this file."),
    as_json: bool = typer.Option(False, "--json", help="Print the sweep record instead of the summary."),
) -> None:
    """Compare every OpInfo op of torch on the device with CPU.

    Imports torch: every OpInfo of torch's op_db runs on the device and on CPU. Forward in float32, float64, bfloat16, int64, bool and complex64, backward in float32
    and float64, wherever CPU supports the dtype. Each op runs in a worker process that is
    restarted after a crash. With --compile, the compiled sample follows: one task per
    op, kept apart from the eager counts in the record. Exit 0 when every task ends as
    the expectations say, 1 when one does not (a new failure or a new pass), 2 usage
    error, bad expectations, or no worker could start.
    """
    from ..device.opsweep import baseline
    from ..device.opsweep import compiled as compiled_worker
    from ..device.opsweep import expected as ex
    from ..device.opsweep import record as rec
    from ..device.opsweep.activation import ActivationError, activation_of
    from ..device.opsweep.runner import COMPILED_WORKERS, Selection, run_sweeps
    from .progress import sweep_progress

    result = one_matrix(matrix)
    adapter = result.matrix.adapter
    try:
        activation = activation_of(adapter.distribution, adapter.shims, activate)
    except ActivationError as exc:
        fail(str(exc))
    expectations, expectation_paths = _expectations(expected, result.matrix.path, adapter.device, write_expected)
    if write_expected and expected is None and any(p.endswith(baseline.REPOSITORY_FILE) for p in expectation_paths):
        fail(
            f"--write-expected: {baseline.REPOSITORY_FILE} is kept by hand (every torch line, with comments); "
            "name a file with --expected"
        )
    if expected_format not in baseline.FORMATS:
        fail(f"--expected-format {expected_format!r}: choose from {', '.join(baseline.FORMATS)}")
    for value in dtype or ():
        if value not in ex.DTYPES:
            fail(f"--dtype {value!r}: choose from {', '.join(ex.DTYPES)}")
    for value in kind or ():
        if value not in ex.EAGER_KINDS:
            fail(f"--kind {value!r}: choose from {', '.join(ex.EAGER_KINDS)} (the compiled sample: --compile)")
    if sample and op:
        fail("--sample and --op exclude each other")
    if sample and not expectations.sample:
        fail(f"{expectations.path} lists no `sample` ops")
    ops = list(expectations.sample) if sample else list(op or ())
    compile_ops = list(op or ()) or list(expectations.sample)  # a full sweep compiles the sample
    if with_compile and not compile_ops:
        fail(f"--compile: {expectations.path} lists no `sample` ops to compile; name them with --op")
    mode = "sample" if sample else ("full" if not (op or dtype or kind) else "custom")
    console = console_for(stderr=as_json)

    def crashed(task: Any) -> None:
        if task.outcome in ("crashed", "timeout"):  # failures are judged and listed at the end
            console.print(f"  {task.key}: {task.outcome}: {task.error}", markup=False, highlight=False)

    if jobs < 0:
        fail(f"--jobs {jobs}: at least 1 (0: one per core)")
    jobs = jobs or os.cpu_count() or 1
    console.print(f"op sweep ({mode}) of {adapter.device}, expectations {expectations.path}", markup=False)
    console.print(f"activates the device with {activation.how}", markup=False)
    notice = _first_build_notice(result)
    if notice:  # the workers compile the device's core at their first import: say so now
        console_for(stderr=True).print(notice, markup=False, highlight=False)
    eager = Selection(ops, tuple(dtype or ex.DTYPES), tuple(kind or ex.EAGER_KINDS))
    selections = [eager]
    if with_compile:
        console.print(f"compiled sample ({compiled_worker.CAPABILITY}) of {len(compile_ops)} ops", markup=False)
        # first: compiling is the longest part, and its ops go to every process slot
        selections.insert(
            0, Selection(compile_ops, (compiled_worker.DTYPE,), (ex.COMPILED,), COMPILED_WORKERS, shards=jobs)
        )
    with sweep_progress(as_json, crashed) as progress:  # a bar with elapsed time and ETA (cli/progress.py)
        *done_compiled_or_none, done = run_sweeps(
            adapter.device, activation.target, selections, timeout=timeout, progress=progress, jobs=jobs
        )
    if write_expected:
        targets = _write_expected(
            console, expected, expectation_paths, result.matrix.path, expected_format, adapter.device, expectations,
            [t for sweep in (*done_compiled_or_none, done) for t in sweep.tasks], done.torch,
        )  # fmt: skip
        expectations = baseline.load(targets, adapter.device)
    compiled = None
    if with_compile:
        done_compiled = done_compiled_or_none[0]
        compiled = rec.compiled_record(
            done_compiled, ex.judge(done_compiled, expectations), compiled_worker.CAPABILITY, compiled_worker.SAMPLES
        )
    if done.absent:
        console.print(f"not run: {done.absent}", markup=False)
    verdicts = ex.judge(done, expectations)
    record = rec.build_record(done, verdicts, expectations, mode, compiled)
    _write_record(output, record)
    _leave_suite_counts(record)
    if as_json:
        typer.echo(json.dumps(record, indent=1))
    else:
        _print_summary(console, record)
    if not record["ok"]:
        raise typer.Exit(EXIT_UNSUPPORTED)


def _write_record(output: Optional[str], record: Any) -> None:
    """``--output``: the run's record, as JSON, written atomically (its folder made)."""
    if output:
        from ..files import atomic_write

        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        atomic_write(output, json.dumps(record, indent=1) + "\n")


def _first_build_notice(result: Any) -> Optional[str]:
    """The device build's first-use notice (device/build.py), or None: no shims package or C++ core."""
    from ..device.build import BuildError, Extension, first_build

    if result.matrix.adapter.shims is None:
        return None
    try:
        return first_build(Extension.of_package(result.matrix.adapter.shims, result.matrix.adapter.device))
    except BuildError:
        return None


def _write_expected(
    console: Any,
    expected: Optional[str],
    read: List[str],
    matrix_path: str,
    fmt: str,
    device: str,
    expectations: Any,
    tasks: List[Any],
    torch: str,
) -> List[str]:
    """Write the sweep's tasks as the expectations: to --expected, else to the files the
    sweep read, else to the torch line's file of ``fmt``; the files written."""
    from ..device.opsweep import baseline
    from ..matrix.diagnostics import display_path

    if expected is not None:
        targets = [expected]
    elif read:
        targets = list(read)
    else:
        line = baseline.torch_line_of(torch)
        targets = [baseline.paths_for(os.path.dirname(os.path.abspath(matrix_path)), line)[fmt]]
    for target in targets:
        baseline.write(target, tasks, torch, device, expectations.sample, read)
        console.print(f"wrote the expectations {display_path(target)}", markup=False)
    return targets


def _print_summary(console: Any, record: Any) -> None:
    from rich.table import Table

    from ..device.opsweep.runner import OUTCOMES

    table = Table(
        "dtype", "kind", *OUTCOMES, title=f"torch {record['torch']}, {record['ops']} ops, {record['seconds']:.0f} s"
    )
    for dtype, kinds in record["by_dtype"].items():
        for kind, counts in kinds.items():
            table.add_row(dtype, kind, *(str(counts.get(o, 0)) for o in OUTCOMES))
    console.print(table)
    if record["selection"].get("configs"):
        console.print(record["selection"]["configs"], markup=False)
    f32 = record["float32"]
    if f32["compared"]:
        console.print(
            f"float32: {f32['matched']} of {f32['compared']} ops match CPU forward and backward ({f32['percent']}%); "
            f"{f32['ops'] - f32['compared']} not comparable (CPU raises for every sample)",
            markup=False,
        )
    compiled = record.get("compiled")
    problems = list(record["problems"]) + (compiled["problems"] if compiled else [])
    if compiled and compiled["skipped"]:
        console.print(f"compiled sample skipped: {compiled['skipped']}", markup=False)
    elif compiled:
        counts = ", ".join(f"{n} {o}" for o, n in compiled["outcomes"].items() if n)
        f32c = compiled["float32"]
        console.print(
            f"compiled ({compiled['backend']}, {compiled['samples_per_op']} float32 samples per op): {compiled['ops']} "
            f"ops, {counts}; {f32c['matched']} of {f32c['compared']} match eager CPU ({f32c['percent']}%), "
            f"{compiled['seconds']:.0f} s",
            markup=False,
        )
    if len(problems) > LISTED_PROBLEMS:  # a first sweep of a new adapter: by cause, not task by task
        _print_causes(console, record)
    else:
        for problem in problems:
            console.print(
                f"[red]{problem['task']}: {problem['problem']}[/] ({problem['error'] or 'no error'})", highlight=False
            )
    console.print(
        "agrees with the expectations" if record["ok"] else f"{len(problems)} task(s) disagree with the expectations",
        markup=False,
    )


def _print_causes(console: Any, record: Any) -> None:
    """The disagreements grouped: a capability the device lacks (a dtype or a kind where
    nothing passed), then each cause with its tasks per family (every task: --json, --output)."""
    from rich.markup import escape
    from rich.table import Table

    from ..device.opsweep.causes import digest

    found = digest(record)
    for gap in found["absent"]:
        what = f"dtype {gap['dtype']}" if "dtype" in gap else f"kind {gap['kind']}"
        console.print(
            f"{what}: none of its {gap['tasks']} failing tasks passes, a capability the device lacks? ({gap['cause']})",
            markup=False,
            highlight=False,
        )
    table = Table("tasks", "cause", "families", "dtypes / kinds", "ops", title="disagreements by cause")
    for cause in found["causes"]:
        table.add_row(
            str(cause["tasks"]),
            escape(cause["cause"]),
            ", ".join(f"{f} {n}" for f, n in cause["families"].items()),
            ", ".join(cause["dtypes"]) + " / " + ", ".join(cause["kinds"]),
            escape(f"{cause['ops']}: " + ", ".join(cause["examples"]))
            + (", …" if cause["ops"] > len(cause["examples"]) else ""),
        )
    console.print(table)
    console.print("every task with its error: --json, or the record (--output)", markup=False)


def _leave_suite_counts(record: Any) -> None:
    """Inside a nox cell ($ADAPTER_MATRIX_SUITE_SUMMARIES), the sweep is the suite group
    ``ops``: a task that agrees with the expectations passes (a known failure counts as
    skipped, with its reason), a task that disagrees fails the cell. The compiled sample's
    ops count there too (:func:`compiled_counts`)."""
    from ..ci.suites import TestCounts, write_summary

    passed = sum(k.get("passed", 0) for kinds in record["by_dtype"].values() for k in kinds.values())
    passed -= sum(1 for p in record["problems"] if p["outcome"] == "passed")  # a new pass disagrees
    total = record["tasks_run"]
    failed = len(record["problems"])
    skips = tuple(
        f"{f['op']} ({', '.join(f['tasks'])}): {f['reason']}" for f in record["failures"] if f["state"] != "unexpected"
    )
    counts = TestCounts(passed, failed, total - passed - failed, 0, skips)
    compiled = record.get("compiled")
    if compiled:  # in the same group: a matrix's `evidence: suites:` names `ops`, and a cell fails on it
        counts = counts + compiled_counts(compiled)
    write_summary("ops", counts)


def compiled_counts(compiled: Any) -> Any:
    """The compiled sample's test counts: an op that agrees with the expectations passes
    (a known failure is skipped with its reason), one that disagrees fails; when the
    device declares the compiler absent, one skip with that reason."""
    from ..ci.suites import TestCounts

    if compiled["skipped"]:
        return TestCounts(0, 0, 1, 0, (f"compiled sample: {compiled['skipped']}",))
    outcomes = compiled["outcomes"]
    failed = len(compiled["problems"])
    passed = outcomes.get("passed", 0) - sum(1 for p in compiled["problems"] if p["outcome"] == "passed")
    skips = tuple(
        f"{f['op']} (compiled): {f['reason']}" for f in compiled["failures"] if f["state"] != "unexpected"
    ) + tuple(
        f"{t['op']} (compiled): {t.get('error') or 'skipped'}" for t in compiled["tasks"] if t["outcome"] == "skipped"
    )
    return TestCounts(passed, failed, compiled["ops"] - passed - failed, 0, skips)


# -- PyTorch's own test files: `ops pack`, `ops tests` (docs/op-coverage.md "PyTorch's test files")


@ops_app.command("pack")
def pack(
    release: str = typer.Argument(..., help="The torch release whose test files to take, X.Y.Z."),
    source: Optional[str] = typer.Option(
        None,
        "--pack",
        metavar="FILE|DIR",
        help="An offline copy of the release's source archive (pytorch-vX.Y.Z.tar.gz, checked against the tool's "
        "table or --sha256), or a folder you trust (a checkout of the tag), used in place.",
    ),
    sha256: Optional[str] = typer.Option(
        None, "--sha256", help="The digest the archive must have (an archive of your own, a release not in the table)."
    ),
    files: Optional[List[str]] = typer.Option(
        None, "--file", "-f", help="A test file of test/ to take (repeatable; default: every device-generic one)."
    ),
) -> None:
    """Fetch, verify and unpack a torch release's test files.

    The release's source archive from GitHub (or --pack FILE) must have the sha256 the tool's
    table pins (or --sha256); the named test files and the helpers they import from test/ are
    unpacked into the user cache. Exit 0, or 2 with one message: an unknown release, a digest
    that differs, a member outside the archive's root, no network.
    """
    from ..upstream.testpacks import PackError, PackRequest, run

    try:
        found = run(PackRequest(release, source, sha256, tuple(files or ())))
    except PackError as exc:
        fail(str(exc))
    console = console_for()
    how = "reused from the cache" if found.reused else f"pinned by {found.pinned_by}"
    console.print(f"test pack of torch {found.release} ({how}): {found.test_dir}", markup=False)
    console.print(f"  {len(found.files)} test files: {', '.join(found.files)}", markup=False, highlight=False)
    if found.helpers:
        console.print(f"  {len(found.helpers)} helpers: {', '.join(found.helpers)}", markup=False, highlight=False)


@ops_app.command("tests")
def tests(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    files: Optional[List[str]] = typer.Option(
        None, "--file", "-f", help="A test file of the pack (repeatable; default: every file of the pack)."
    ),
    source: Optional[str] = typer.Option(
        None,
        "--pack",
        metavar="FILE|DIR",
        help="The pack: an archive (as `ops pack --pack`) or a trusted folder; default: the installed torch "
        "release's pack in the cache (`ops pack X.Y.Z`).",
    ),
    sha256: Optional[str] = typer.Option(None, "--sha256", help="With --pack FILE: the digest the archive must have."),
    overrides: Optional[List[str]] = typer.Option(
        None,
        "--overrides",
        help="Override file (repeatable; default: op-tests/overrides.yaml and op-tests/overrides-X.Y.yaml next to "
        "the matrix).",
    ),
    expected: Optional[str] = typer.Option(
        None,
        "--expected",
        "-e",
        help="Expectations, PyTorch's disabled-tests JSON (default: op-sweep/pytorch-disabled-tests-X.Y.json next "
        "to the matrix, the file the op sweep reads too).",
    ),
    update_expected: bool = typer.Option(
        False, "--update-expected", help="Write what this run saw as the expectations (the tests that did not pass)."
    ),
    control: Optional[str] = typer.Option(
        None,
        "--control",
        metavar="cpu",
        help="Run the device's failures again on CPU: a failure there too is told apart.",
    ),
    jobs: int = typer.Option(0, "--jobs", "-j", help="Files (or shards) at once (default 0: one per core)."),
    timeout: float = typer.Option(1800.0, "--timeout", help="Seconds one file (or shard) may run before it is killed."),
    activate: Optional[str] = typer.Option(
        None, "--activate", metavar="MODULE[:FUNCTION]", help="What activates the device (as `ops sweep`)."
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the run's record (JSON) to this file."),
    as_json: bool = typer.Option(False, "--json", help="Print the record instead of the summary."),
) -> None:
    """Run PyTorch's test files of a test pack on the device.

    Each file in a process of its own, through PyTorch's device hooks (TORCH_TEST_DEVICES with a
    generated base file, PYTORCH_TESTING_DEVICE_ONLY_FOR, PYTORCH_TESTING_DEVICE_FOR_CUSTOM), the
    adapter's override file applied before the test modules import. Exit 0 when every test ends
    as the expectations say, 1 on a new failure or a new pass, 2 usage error.
    """
    from ..device.optests.optests_command import OpTestsRequest, run

    console = console_for(stderr=as_json)
    request = OpTestsRequest(
        matrix, tuple(files or ()), source, sha256, tuple(overrides or ()), expected, update_expected, control, jobs,
        timeout, activate, load=lambda path: one_matrix(path).matrix, find_pack=_find_pack,
        begin=lambda line: _tests_begin(console, line),
    )  # fmt: skip
    done = run_or_exit(run, request, {"jobs": "--jobs", "control": "--control", "pack": "--pack:"})
    _show_tests(console, done, output, as_json)


def _show_tests(console: Any, done: OpTestsResult, output: Optional[str], as_json: bool) -> None:
    """The expectations rewritten, the record written (--output) and left for nox, then shown;
    exit 1 on a new failure or a new pass (unless the expectations were rewritten)."""
    if done.updated:
        console.print(f"wrote the expectations {done.prepared.expected_path}", markup=False)
    _write_record(output, done.record)
    _leave_tests_counts(done.done)
    if as_json:
        typer.echo(json.dumps(done.record, indent=1))
    else:
        _print_tests(console, done.record)
    if not done.ok:
        raise typer.Exit(EXIT_UNSUPPORTED)


def _find_pack(release: str, source: Optional[str], sha256: Optional[str]) -> Any:
    """--pack (with --sha256) read, else the cache's pack of ``release`` (None: not there)."""
    from ..upstream.testpacks import PackRequest, cached
    from ..upstream.testpacks import run as run_pack

    return run_pack(PackRequest(release, source, sha256)) if source else cached(release)


def _tests_begin(console: Any, line: str) -> Any:
    """Says what runs, then shows its progress."""
    console.print(line, markup=False)
    return _tests_progress(console)


def _tests_progress(console: Any) -> Any:
    """A bar with the tests done, of those collected so far, and the ETA (a terminal); else a
    line per file with the same counts."""
    import contextlib
    import time

    @contextlib.contextmanager
    def bar() -> Any:
        if console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            with Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                console=console, transient=True,
            ) as shown:  # fmt: skip
                task = shown.add_task("tests", total=None)

                def report(p: Any) -> None:
                    shown.update(
                        task,
                        completed=p.done,
                        total=p.total or None,
                        description=f"{p.phase} files {p.files_done}/{p.files}",
                    )

                yield report
            return
        began = time.perf_counter()
        seen = [0, began]

        def plain(p: Any) -> None:
            now = time.perf_counter()
            if p.files_done != seen[0] or now - seen[1] > 10:  # each file's end, else every 10 s
                seen[:] = [p.files_done, now]
                elapsed = now - began
                by_tests = elapsed / p.done * (p.total - p.done) if p.done else 0.0
                by_files = elapsed / p.files_done * (p.files - p.files_done) if p.files_done else by_tests
                eta = max(by_tests, by_files)  # files not yet collected count by the files' pace
                console.print(
                    f"[{p.phase}] files {p.files_done}/{p.files}, tests {p.done}/{p.total}, "
                    f"{elapsed:.0f} s, ETA {f'{eta:.0f} s' if p.done else 'unknown (no test done yet)'}",
                    markup=False,
                )

        yield plain

    return bar()


def _print_tests(console: Any, record: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ..device.optests.packrecord import files_table

    table = Table(
        "file", "tests", "passed", "failed", "known", "CPU too", "skipped", "ended",
        title=f"torch {record['torch']} on {record['device']}, {record['seconds']:.0f} s",
    )  # fmt: skip
    for row in files_table(record):
        table.add_row(*(escape(c) for c in row))
    console.print(table)
    for change in record["configured"]:
        console.print(f"override: {change}", markup=False)
    for entry in record["new_failures"]:
        console.print(
            f"[red]new failure: {escape(entry['test'])}[/] ({escape(entry.get('error') or entry['outcome'])})",
            highlight=False,
        )
    for entry in record["new_passes"]:
        console.print(
            f"[red]new pass: {escape(entry['test'])}[/] ({escape(entry.get('reason') or '')})", highlight=False
        )
    for entry in record["cpu_too"]:
        console.print(f"fails on CPU too (not the device): {entry['test']}: {entry.get('error')}", markup=False)
    console.print(
        "agrees with the expectations"
        if record["ok"]
        else f"{len(record['new_failures'])} new failure(s), {len(record['new_passes'])} new pass(es)",
        markup=False,
    )


def _leave_tests_counts(done: Any) -> None:
    """Inside a nox cell: one suite group per file, ``op-tests/<file>`` (a known or CPU-too
    failure is a skip with its reason, a new failure or pass fails the cell)."""
    from ..ci.suites import TestCounts, write_summary
    from ..device.optests.packrun import test_counts

    for name, passed, failed, skipped in test_counts(done):
        reasons = tuple(
            f"{t.id}: {t.reason}" for t in done.tests if t.file == name and t.verdict in ("known", "cpu-too")
        )
        write_summary(
            f"op-tests-{name[:-3] if name.endswith('.py') else name}", TestCounts(passed, failed, skipped, 0, reasons)
        )
