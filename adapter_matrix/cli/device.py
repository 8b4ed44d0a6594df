"""The adapter's device: `build`, `probe`, `new-shim` and `shims report`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import typer

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console
    from rich.progress import Progress

    from ..matrix.model import LoadResult

from ..errors import EXIT_UNSUPPORTED, AdapterMatrixError
from .base import MATRIX_HELP, console_for, fail, fail_with, find_or_exit, load_or_exit, one_matrix, run_or_exit
from .common import app, sub_app


@app.command()
def build(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the compiler's commands."),
    as_json: bool = typer.Option(False, "--json", help="Print what was built as JSON (for CI)."),
) -> None:
    """Compile the adapter's C++ core for the installed torch.

    Cached: a no-op when up to date. Exit 0 built or up to date, 1 the compiler failed (its
    whole output is shown), 2 usage.
    """
    import os

    from ..device.build import BuildError, BuildMismatch
    from ..device.device_commands import BuildRequest, run_build

    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")  # do not activate the adapter here
    result = one_matrix(matrix)
    console = console_for()
    spinner = _Spinner(console, quiet=as_json)
    request = BuildRequest(shims_package(result), result.matrix.adapter.device, verbose, spinner.start)
    try:
        done = run_build(request)
    except (BuildError, BuildMismatch) as exc:  # the compiler's whole output, as it is
        spinner.stop()
        console_for(stderr=True).print(str(exc), markup=False, highlight=False)
        raise typer.Exit(EXIT_UNSUPPORTED) from None
    except AdapterMatrixError as exc:
        fail_with(exc)
    spinner.stop()
    if as_json:
        typer.echo(json.dumps(done.as_json(), indent=2))
        return
    what = (
        f"compiled in {done.manifest['build_seconds']:.0f} s"
        if done.compiled
        else f"up to date ({done.seconds:.2f} s, nothing compiled)"
    )
    console.print(f"{done.extension} for torch {done.manifest['torch']}: {what}")
    console.print(f"cache: {done.path}")


class _Spinner:
    """What ``build`` shows while it compiles (not with --json)."""

    def __init__(self, console: Console, quiet: bool) -> None:
        self.console, self.quiet = console, quiet
        self.progress: Optional[Progress] = None

    def start(self, said: str) -> None:
        if self.quiet:
            return
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=self.console, transient=True
        )
        self.progress.start()
        self.progress.add_task(said)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def shims_package(result: LoadResult) -> str:
    """The adapter's shims package, or exit 2: the device commands need one."""
    if result.matrix.adapter.shims is None:
        fail(
            f"{result.matrix.path} declares no shims package (adapter: shims:): this command works on an adapter with shims"
        )
    return result.matrix.adapter.shims


def _csrc(result: LoadResult) -> Any:
    """The adapter's C++ sources folder, found without importing the adapter (or None)."""
    from ..device.build import BuildError, Extension

    if result.matrix.adapter.shims is None:
        return None
    try:
        return Extension.of_package(result.matrix.adapter.shims, result.matrix.adapter.device).csrc
    except BuildError:
        return None


def _read_json(path: str) -> Dict[str, Any]:
    from ..device.device_commands import read_probe

    try:
        return read_probe(path)
    except AdapterMatrixError as exc:
        fail(str(exc))


@app.command()
def probe(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the probe as JSON (to save and diff later)."),
    diff: Optional[List[str]] = typer.Option(
        None, "--diff", help="Compare two saved probes: --diff A.json --diff B.json."
    ),
) -> None:
    """List the PrivateUse1 capabilities of the installed torch.

    Imports torch. With --diff, what moved between two saved probes instead.
    """
    from ..device import probe as pr

    if diff:
        if len(diff) != 2:
            fail("--diff takes two probe files: --diff A.json --diff B.json")
        a, b = (_read_json(p) for p in diff)
        changes = pr.diff(a, b)
        for change in changes:
            typer.echo(change.describe(f"torch {a.get('torch')}", f"torch {b.get('torch')}"))
        if not changes:
            typer.echo(f"no differences between torch {a.get('torch')} and torch {b.get('torch')}")
        return
    found = find_or_exit(matrix)
    csrc = _csrc(load_or_exit(found[0].path)) if found else None
    try:
        answer = pr.probe(csrc)
    except ImportError:
        fail("torch is not installed: probe asks the installed torch")
    if as_json:
        typer.echo(json.dumps(answer, indent=2))
        return
    console = console_for()
    console.print(f"torch {answer['torch']} (Python {answer['python']})")
    for name, value in answer["capabilities"].items():
        shown = ", ".join(f"{k}={'on' if v else 'off'}" for k, v in value.items()) if isinstance(value, dict) else value
        console.print(f"  {name:<40} {shown}", markup=False)


@app.command(name="new-shim")
def new_shim(
    version: str = typer.Argument(..., help="The new torch minor, e.g. 2.16."),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    probe_new: Optional[str] = typer.Option(
        None, "--probe", help="Probe of the new torch (default: probe the installed one if it is that minor)."
    ),
    probe_base: Optional[str] = typer.Option(
        None, "--base", help="Probe of the previous torch (default: docs/probes/torch-X.Y.json next to the matrix)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the changes without writing them."),
) -> None:
    """Scaffold the shim for a new torch minor.

    Writes the shim from the nearest one, adds the torch line to compat.yaml as experimental
    (comments kept) and lists what moved between the probes of the two torch releases: what
    to check.
    """
    from pathlib import Path

    from ..device.device_commands import NewShimRequest, run_new_shim

    located = find_or_exit(matrix)[0]
    result = load_or_exit(located.path, fresh=True)
    shims_package(result)
    new = _read_json(probe_new) if probe_new else None
    base = _read_json(probe_base) if probe_base else None
    request = NewShimRequest(
        version, result.matrix, Path(located.path).resolve(), _csrc(result), new, base, probe_base is not None, dry_run
    )
    plan_ = run_or_exit(run_new_shim, request, {})
    console = console_for()
    console.print(f"{'would write' if dry_run else 'wrote'} {plan_.module_path} ({plan_.module})")
    typer.echo(plan_.matrix_diff, nl=False)
    console.print("[bold]to do:[/]")
    for item in plan_.todo:
        console.print(f"  - {item}", markup=False)


shims_app = sub_app("Find what the shims carry that no supported torch needs.")
app.add_typer(shims_app, name="shims")


@shims_app.command("report")
def shims_report(matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP)) -> None:
    """List the shims and C++ gates no supported torch needs.

    A shim that serves no supported torch, a C++ version gate that is constant for every
    supported torch: dead code once the floor rises. Exit 1 if any.
    """
    from ..device.shimsreport import report, supported_torch

    result = one_matrix(matrix)
    shims_package(result)
    findings = report(result.matrix, _csrc(result))
    torch = supported_torch(result.matrix)
    console = console_for()
    span = f"torch {torch[0]}\u2013{torch[-1]}" if torch else "no torch"
    for finding in findings:
        console.print(str(finding), markup=False)
    console.print(f"{len(findings)} finding(s); supported releases claim {span}")
    if findings:
        raise typer.Exit(EXIT_UNSUPPORTED)
