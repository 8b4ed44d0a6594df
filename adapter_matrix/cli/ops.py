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


_SWEEP_MATRIX = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP)
_SWEEP_EXPECTED = typer.Option(
    None,
    "--expected",
    "-e",
    help=f"Expectations file, YAML or PyTorch's disabled-tests JSON (default: {DEFAULT_EXPECTED} next to the "
    "matrix for the installed torch's line, or this repository's tests/ops/expected.yaml).",
)
_SWEEP_WRITE_EXPECTED = typer.Option(
    False,
    "--write-expected",
    help="Record what this sweep saw as the expectations (the files read, --expected, else the torch line's "
    "file of --expected-format): from then on a new failure and a new pass both disagree.",
)
_SWEEP_EXPECTED_FORMAT = typer.Option(
    "yaml",
    "--expected-format",
    metavar="yaml|json",
    help="The format --write-expected starts a torch line's file in: the tool's YAML or PyTorch's disabled-tests JSON.",
)
_SWEEP_SAMPLE = typer.Option(False, "--sample", help="Only the expectations' fixed sample of ops.")
_SWEEP_OP = typer.Option(None, "--op", help="Only this op id (repeatable).")
_SWEEP_DTYPE = typer.Option(
    None,
    "--dtype",
    metavar="float32|float64|bfloat16|int64|bool|complex64",
    help="Only this dtype (repeatable; default: all six).",
)
_SWEEP_KIND = typer.Option(
    None,
    "--kind",
    metavar="forward|backward|module",
    help="Only this kind of task (repeatable; default: all three; the compiled sample: --compile).",
)
_SWEEP_WITH_COMPILE = typer.Option(
    False,
    "--compile",
    help="Also the compiled sample: each op of the sample (or of --op), its first float32 samples through "
    "torch.compile(backend='inductor') on the device, against eager CPU (skipped, with the reason, where the "
    "device declares the capability inductor absent).",
)
_SWEEP_TIMEOUT = typer.Option(300.0, "--timeout", help="Seconds one task may run before its worker is killed.")
_SWEEP_JOBS = typer.Option(
    0,
    "--jobs",
    "-j",
    help="Worker processes at once (default 0: one per core): the eager workers and the compiled sample run "
    "side by side, the compiled sample's ops dealt across this many processes. 1: one after the other.",
)
_SWEEP_ACTIVATE = typer.Option(
    None,
    "--activate",
    metavar="MODULE[:FUNCTION]",
    help="What activates the device in the workers (default: the matrix's shims package, else the adapter's "
    "torch.backends entry point, else the module its distribution installs).",
)
_SWEEP_OUTPUT = typer.Option(None, "--output", "-o", help="Write the sweep record (JSON) to this file.")
_SWEEP_AS_JSON = typer.Option(False, "--json", help="Print the sweep record instead of the summary.")


# the request's fields -> the options their refusals start with (run_or_exit)
_SWEEP_OPTIONS = {
    "expected_format": "--expected-format", "dtype": "--dtype", "kind": "--kind", "sample": "--sample",
    "with_compile": "--compile:", "write_expected": "--write-expected:", "jobs": "--jobs",
    "timeout": "--timeout", "op": "--op", "activate": "--activate",
}  # fmt: skip


@ops_app.command("sweep")
def sweep(
    matrix: Optional[str] = _SWEEP_MATRIX,
    expected: Optional[str] = _SWEEP_EXPECTED,
    write_expected: bool = _SWEEP_WRITE_EXPECTED,
    expected_format: str = _SWEEP_EXPECTED_FORMAT,
    sample: bool = _SWEEP_SAMPLE,
    op: Optional[List[str]] = _SWEEP_OP,
    dtype: Optional[List[str]] = _SWEEP_DTYPE,
    kind: Optional[List[str]] = _SWEEP_KIND,
    with_compile: bool = _SWEEP_WITH_COMPILE,
    timeout: float = _SWEEP_TIMEOUT,
    jobs: int = _SWEEP_JOBS,
    activate: Optional[str] = _SWEEP_ACTIVATE,
    output: Optional[str] = _SWEEP_OUTPUT,
    as_json: bool = _SWEEP_AS_JSON,
) -> None:
    """Compare every OpInfo op of torch on the device with CPU.

    Imports torch: every OpInfo of torch's op_db runs on the device and on CPU. Forward in float32, float64, bfloat16, int64, bool and complex64, backward in float32
    and float64, wherever CPU supports the dtype. Each op runs in a worker process that is
    restarted after a crash. With --compile, the compiled sample follows: one task per
    op, kept apart from the eager counts in the record. Exit 0 when every task ends as
    the expectations say, 1 when one does not (a new failure or a new pass), 2 usage
    error, bad expectations, or no worker could start.
    """
    from ..device.opsweep.sweep_command import SweepRequest, run
    from .progress import sweep_progress

    console = console_for(stderr=as_json)

    def crashed(task: Any) -> None:
        if task.outcome in ("crashed", "timeout"):  # failures are judged and listed at the end
            console.print(f"  {task.key}: {task.outcome}: {task.error}", markup=False, highlight=False)

    request = SweepRequest(
        matrix, expected, write_expected, expected_format, sample, tuple(op or ()), tuple(dtype or ()),
        tuple(kind or ()), with_compile, timeout, jobs, activate, load=lambda path: one_matrix(path).matrix,
        load_expectations=_expectations, say=lambda line: console.print(line, markup=False),
        warn=lambda line: console_for(stderr=True).print(line, markup=False, highlight=False),
        progress=lambda: sweep_progress(as_json, crashed),  # a bar with elapsed time and ETA (cli/progress.py)
    )  # fmt: skip
    record = run_or_exit(run, request, _SWEEP_OPTIONS).record
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
        from ..files import atomic_write, make_folders

        make_folders(os.path.dirname(os.path.abspath(output)))
        atomic_write(output, json.dumps(record, indent=1) + "\n")


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
