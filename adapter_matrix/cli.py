"""The ``adapter-matrix`` command line.

Exit codes (documented in the README):

0  supported / clean
1  unsupported or broken (``check``); a failed ``--check`` or result (``table``, ``results``)
2  usage error or an invalid matrix
3  supported with a warning: experimental, deprecated or end of life (``check``)

Start-up matters (``check`` must answer well under a second and never imports torch),
so each command imports what it needs when it runs.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional

import typer

if TYPE_CHECKING:  # pragma: no cover
    from .model import LoadResult

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_show_locals=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="One compat.yaml for an out-of-tree PyTorch backend: check, validate, tables, test plans.",
)

MATRIX_HELP = "Matrix file (default: ./compat.yaml, else the matrices of installed adapters)."
EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE, EXIT_WARNING = 0, 1, 2, 3


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 200  # pipes and CI logs: do not squeeze tables to 80 columns
    return Console(stderr=stderr, highlight=False, emoji=False, soft_wrap=True, width=width)


def _fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    from rich.markup import escape

    _console(stderr=True).print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def _print_diagnostics(diagnostics: List[Any]) -> None:
    from rich.markup import escape

    err = _console(stderr=True)
    for d in diagnostics:
        style = "yellow" if d.severity == "warning" else "red"
        err.print(f"[{style}]{escape(str(d))}[/]", soft_wrap=True)


def _load(path: str, fresh: bool = False) -> "LoadResult":
    """Load a matrix or exit 2 listing its errors. ``fresh`` bypasses the compiled cache."""
    from .cache import load_matrix
    from .diagnostics import MatrixError

    try:
        result = load_matrix(path, use_cache=not fresh)
    except MatrixError as exc:
        _print_diagnostics(exc.diagnostics)
        errors = sum(1 for d in exc.diagnostics if d.severity == "error")
        _fail(f"{path}: {errors} error{'s' if errors != 1 else ''} in the matrix")
    return result


def _matrices(explicit: Optional[str]) -> List[Any]:
    from .discovery import find_matrices

    found = find_matrices(explicit)
    if not found:
        _fail("no ./compat.yaml and no installed adapter registers a matrix; pass --matrix PATH")
    return found


def _one_matrix(explicit: Optional[str]) -> "LoadResult":
    found = _matrices(explicit)
    if len(found) > 1:
        _fail("several installed adapters register a matrix (" + ", ".join(f.path for f in found) + "); pass --matrix PATH")
    return _load(found[0].path)


def _release(result: "LoadResult", version: Optional[str]) -> Any:
    if version is None:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        release = result.matrix.release(Version(version))
    except InvalidVersion:
        _fail(f"--release {version!r} is not a PEP 440 version")
    if release is None:
        _fail(f"--release {version}: no such release in {result.matrix.path}")
    return release


@app.command()
def validate(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    pyproject: Optional[str] = typer.Option(
        None, "--pyproject", help="Also check this pyproject.toml's requires-python, classifiers and torch pin."
    ),
    upstream: Optional[str] = typer.Option(
        None, "--upstream", help="Check the torch facts against PyPI's wheels: 'pypi', or a recorded Simple JSON file."
    ),
    write: bool = typer.Option(False, "--write", help="With --upstream: update the torch facts in the matrix file."),
) -> None:
    """Lint the matrix: every error at once, as FILE:LINE:COL: message — fix. Exit 2 on errors."""
    from .queries import cells

    if write and not upstream:
        _fail("--write needs --upstream")
    index = None
    if upstream:
        from . import upstream as up
        from . import upstream_write

        try:
            index = up.read_upstream(upstream)
        except up.UpstreamError as exc:
            _fail(str(exc))

    def findings_of(path: str) -> Any:
        result = _load(path, fresh=True)
        found = list(result.warnings)
        if pyproject:
            from .pyproject import check_pyproject

            found += check_pyproject(result.matrix, pyproject)
        if index is not None:
            found += up.verify(result.matrix, index)
        return result.matrix, found

    failed = False
    for located in _matrices(matrix):
        m, findings = findings_of(located.path)
        if write:
            try:
                changed = upstream_write.write(located.path, m, index)
            except up.UpstreamError as exc:
                _fail(str(exc))
            if changed:
                _console().print(f"{m.path}: updated the torch facts from {upstream}")
                m, findings = findings_of(located.path)  # report on what the file says now
            else:
                _console().print(f"{m.path}: torch facts already up to date")
        _print_diagnostics(findings)
        errors = sum(1 for d in findings if d.severity == "error")
        failed = failed or errors > 0
        _console().print(
            f"{m.path}: {'invalid' if errors else 'valid'} \u2014 {len(m.releases)} release(s), {len(m.torch)} torch lines, "
            f"{len(cells(m))} cells, {len(m.shims)} shims"
            + (f", {errors} error(s)" if errors else "")
            + (f", {len(findings) - errors} warning(s)" if len(findings) - errors else "")
        )
    if failed:
        raise typer.Exit(EXIT_USAGE)


def _parse_sets(values: List[str]) -> Dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            _fail(f"--set {item!r}: write NAME=VALUE, e.g. --set cann=8.0")
        out[name.strip()] = value.strip()
    return out


@app.command()
def check(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    torch: Optional[str] = typer.Option(None, "--torch", help="Assume this torch version instead of the installed one."),
    python: Optional[str] = typer.Option(None, "--python", help="Assume this Python (e.g. 3.9) instead of this interpreter."),
    adapter: Optional[str] = typer.Option(None, "--adapter", help="Assume this adapter version instead of the installed one."),
    sets: List[str] = typer.Option([], "--set", help="Assume an extra dimension's version, NAME=VALUE (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the documented JSON document instead of a report."),
    deep: bool = typer.Option(False, "--deep", help="Also import torch, activate the adapter and run a timed smoke on its device."),
) -> None:
    """Is this environment a supported combination? If not, what exactly to install.

    Reads versions from distribution metadata: never imports torch (unless --deep).
    Exit 0 supported, 1 unsupported or broken, 2 usage/matrix error, 3 experimental/deprecated/eol.
    """
    from .environment import detect_environment
    from .model import PythonVersion
    from .queries import verdict
    from .report import CHECK_SCHEMA, check_document, combined_exit_code, render_check

    python_override = None
    if python is not None:
        try:
            python_override = PythonVersion.parse(python)
        except ValueError as exc:
            _fail(f"--python: {exc}")
    overrides = _parse_sets(sets)
    docs = []
    for located in _matrices(matrix):
        result = _load(located.path)
        try:
            installed = detect_environment(
                result.matrix, python=python_override, torch=torch, adapter=adapter, dimensions=overrides
            )
        except ValueError as exc:
            _fail(str(exc))
        answer = verdict(result.matrix, installed.environment)
        doc = check_document(result.matrix, located.origin, installed, answer)
        if deep:
            from .deep import deep_check

            report = deep_check(result.matrix)
            doc["deep"] = report.as_dict()
            if not report.ok and doc["exit_code"] in (0, 3):
                doc["exit_code"] = EXIT_UNSUPPORTED
        docs.append(doc)
    code = combined_exit_code([d["exit_code"] for d in docs])
    if as_json:
        typer.echo(json.dumps({"schema": CHECK_SCHEMA, "exit_code": code, "checks": docs}, indent=2))
    else:
        console = _console() if sys.stdout.isatty() else None  # colors only where someone sees them
        for i, doc in enumerate(docs):
            if i:
                typer.echo("")
            render_check(doc, console)
    raise typer.Exit(code)


def _table_fix(options: Dict[str, Optional[str]], tail: List[str]) -> str:
    """The ``adapter-matrix table`` command line that rewrites what ``--check`` found stale."""
    import shlex

    args = ["adapter-matrix", "table"]
    for flag, value in options.items():
        if value is not None:
            args += [flag, value]
    return " ".join(shlex.quote(a) for a in args + tail)


@app.command()
def table(
    files: List[str] = typer.Argument(None, help="Documents whose adapter-matrix:table blocks to --update or --check."),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    view: Optional[str] = typer.Option(
        None, "--view", help="grid (torch x Python; the default), verified (the grid with test evidence) or releases."
    ),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="markdown (the default), rst, html, csv or json."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language of headers and legend: en (the default) or zh."),
    release: Optional[str] = typer.Option(None, "--release", help="Adapter release (default: the newest)."),
    results: Optional[str] = typer.Option(
        None, "--results", help="Folder of result records for --view verified (and for verified blocks without results=)."
    ),
    today: Optional[str] = typer.Option(None, "--today", help="Judge support windows on this date, YYYY-MM-DD (default: today)."),
    output: Optional[str] = typer.Option(
        None, "--output", "-o", help="Write the table to this file, atomically; with --check, verify the file instead."
    ),
    update: bool = typer.Option(False, "--update", help="Rewrite the blocks between markers in FILES, atomically."),
    check_: bool = typer.Option(False, "--check", help="Exit 1 with a diff if a block in FILES (or the --output file) is stale."),
) -> None:
    """Render a compatibility table, or keep the tables in documents and generated files up to date.

    Exit 0 done or up to date, 1 --check found a stale table (the diff and the fixing
    command are printed), 2 usage error, bad marker or invalid matrix.
    """
    import datetime as _dt

    from . import docs, tables

    if update and check_:
        _fail("--update and --check exclude each other")
    if files and output:
        _fail("give FILES (blocks to --update/--check) or --output FILE (a whole generated file), not both")
    if files and not (update or check_):
        _fail("give --update or --check with FILES")
    if update and output:
        _fail("--output writes the file by itself; --update is for the blocks in FILES")
    if check_ and not (files or output):
        _fail("--check needs FILES or --output FILE")
    if update and not files:
        _fail("--update needs at least one FILE")
    if files:
        given = [flag for flag, value in (("--view", view), ("--format", fmt), ("--lang", lang), ("--release", release)) if value]
        if given:
            _fail(f"{', '.join(given)}: a block takes these from its marker (e.g. view=grid lang=zh), not from the command line")
    when = None
    if today is not None:
        try:
            when = _dt.date.fromisoformat(today)
        except ValueError:
            _fail(f"--today {today!r}: write a date as YYYY-MM-DD")
    result = _one_matrix(matrix)
    common = {"--matrix": matrix, "--today": today, "--results": results}
    console = _console()
    if files:
        try:
            outcomes = docs.sync(result.matrix, files, write=update, today=when, results=results)
        except docs.DocError as exc:
            _fail(str(exc))
        stale = [o.path for o in outcomes if o.changed]
        for o in outcomes:
            if update:
                console.print(f"{o.path}: {'updated' if o.changed else 'up to date'} ({o.blocks} block{'s' if o.blocks != 1 else ''})", markup=False)
            elif o.changed:
                typer.echo(o.diff, nl=False)
        if check_ and stale:
            fix = _table_fix(common, ["--update"] + stale)
            _console(stderr=True).print(f"stale tables in {' '.join(stale)}; fix with:\n    {fix}", markup=False, style="red")
            raise typer.Exit(EXIT_UNSUPPORTED)
        if check_:
            console.print(f"{len(outcomes)} file(s), {sum(o.blocks for o in outcomes)} table block(s): up to date")
        return
    try:
        records = docs.load_records(results) if results else None
        text = tables.render(
            result.matrix, view=view or "grid", fmt=fmt or "markdown", lang=lang or "en",
            release=_release(result, release), today=when, records=records,
        )
    except ValueError as exc:  # a bad view, format or language, or unreadable records
        _fail(str(exc))
    if not output:
        typer.echo(text, nl=False)
        return
    try:
        outcome = docs.sync_output(output, text, write=not check_)
    except docs.DocError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{output}: cannot write: {exc.strerror}")
    if check_ and outcome.changed:
        typer.echo(outcome.diff, nl=False)
        fix = _table_fix({**common, "--view": view, "--format": fmt, "--lang": lang, "--release": release}, ["--output", output])
        _console(stderr=True).print(f"{output} is stale; fix with:\n    {fix}", markup=False, style="red")
        raise typer.Exit(EXIT_UNSUPPORTED)
    console.print(f"{output}: {'written' if outcome.changed else 'up to date'}", markup=False)


@app.command()
def plan(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    strategy: str = typer.Option("full", "--strategy", "-s", help="full, edges, latest or smoke."),
    fmt: str = typer.Option("text", "--format", "-f", help="text, json, or github ({\"include\": [...]})."),
    release: Optional[str] = typer.Option(None, "--release", help="Adapter release (default: the newest)."),
) -> None:
    """The combinations to test, each named by the nox session that runs it."""
    from .plan import STRATEGIES, plan as make_plan

    if strategy not in STRATEGIES:
        _fail(f"--strategy {strategy!r}: choose from {', '.join(STRATEGIES)}")
    if fmt not in ("text", "json", "github"):
        _fail(f"--format {fmt!r}: choose from text, json, github")
    result = _one_matrix(matrix)
    rows = make_plan(result.matrix, strategy, _release(result, release))
    if fmt == "json":
        typer.echo(json.dumps([r.as_dict() for r in rows], indent=2))
    elif fmt == "github":
        include = [
            {"session": r.session, "python": str(r.cell.python), "torch": str(r.cell.torch), "id": r.cell.id}
            for r in rows
        ]
        typer.echo(json.dumps({"include": include}, separators=(",", ":")))
    else:
        for r in rows:
            typer.echo(f"{r.session:<28} torch {str(r.cell.torch):<8} {r.cell.status.value:<12} {' '.join(r.tiers)}")


@app.command()
def build(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the compiler's commands."),
    as_json: bool = typer.Option(False, "--json", help="Print what was built as JSON (for CI)."),
) -> None:
    """Compile the adapter's C++ core for the installed torch (cached: a no-op when up to date).

    Exit 0 built or up to date, 1 the compiler failed (its whole output is shown), 2 usage.
    """
    import os
    import time

    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")  # do not activate the adapter here
    result = _one_matrix(matrix)
    from .build import BuildError, BuildMismatch, Extension, ensure_built

    try:
        import torch  # noqa: F401
    except ImportError:
        _fail(f"torch is not installed; install it first, e.g. `adapter-matrix check` says which")
    try:
        ext = Extension.of_package(result.matrix.adapter.shims, result.matrix.adapter.device)
    except BuildError as exc:
        _fail(str(exc))
    console = _console()
    start = time.perf_counter()
    progress = None

    def announce(folder: object) -> None:
        nonlocal progress
        if as_json:
            return
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True)
        progress.start()
        progress.add_task(f"compiling {ext.name} for torch {torch.__version__} (about a minute on 2 cores)")

    try:
        done = ensure_built(ext, verbose=verbose, on_compile=announce)
    except (BuildError, BuildMismatch) as exc:
        if progress is not None:
            progress.stop()
        _console(stderr=True).print(str(exc), markup=False, highlight=False)
        raise typer.Exit(EXIT_UNSUPPORTED)
    if progress is not None:
        progress.stop()
    if as_json:
        typer.echo(json.dumps({"extension": ext.name, "path": str(done.path), "compiled": done.compiled, **done.manifest}, indent=2))
        return
    what = f"compiled in {done.manifest['build_seconds']:.0f} s" if done.compiled else f"up to date ({time.perf_counter() - start:.2f} s, nothing compiled)"
    console.print(f"{ext.name} for torch {done.manifest['torch']}: {what}")
    console.print(f"cache: {done.path}")


@app.command()
def results(
    folder: str = typer.Argument(..., help="Folder of result records (searched recursively)."),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    expect: Optional[str] = typer.Option(None, "--expect", help="A plan strategy whose every cell must have a record."),
    fmt: str = typer.Option("text", "--format", "-f", help="text, markdown or json."),
) -> None:
    """Aggregate the result records of test sessions. Exit 1 if a cell failed or is missing."""
    from . import results as res

    try:
        records = res.read_records(folder)
    except res.RecordError as exc:
        _fail(str(exc))
    expected = None
    if expect is not None:
        from .plan import STRATEGIES, plan as make_plan

        if expect not in STRATEGIES:
            _fail(f"--expect {expect!r}: choose from {', '.join(STRATEGIES)}")
        expected = [r.cell.id for r in make_plan(_one_matrix(matrix).matrix, expect)]
    summary = res.summarize(records, expected)
    if fmt == "json":
        clean = [{k: v for k, v in r.items() if not k.startswith("_")} for r in summary.records]
        typer.echo(json.dumps({"ok": summary.ok, "records": clean, "missing": summary.missing}, indent=2))
    elif fmt == "markdown":
        typer.echo(res.render_markdown(summary), nl=False)
    elif fmt == "text":
        from rich.table import Table

        table = Table(*res.HEADERS, title=f"{len(summary.records)} cell(s) in {folder}")
        style = {"passed": "green", "failed": "red", "missing": "yellow"}
        for row in res.rows(summary):
            table.add_row(*row[:3], f"[{style.get(row[3], 'red')}]{row[3]}[/]", *row[4:])
        _console().print(table)
    else:
        _fail(f"--format {fmt!r}: choose from text, markdown, json")
    if not summary.ok:
        raise typer.Exit(EXIT_UNSUPPORTED)


def _csrc(result: "LoadResult") -> Any:
    """The adapter's C++ sources folder, found without importing the adapter (or None)."""
    from .build import BuildError, Extension

    try:
        return Extension.of_package(result.matrix.adapter.shims, result.matrix.adapter.device).csrc
    except BuildError:
        return None


def _read_json(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        _fail(f"{path}: cannot read a probe: {exc}")


@app.command()
def probe(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the probe as JSON (to save and diff later)."),
    diff: Optional[List[str]] = typer.Option(None, "--diff", help="Compare two saved probes: --diff A.json --diff B.json."),
) -> None:
    """Which PrivateUse1 capabilities the installed torch has (imports torch), or what moved between two probes."""
    from . import probe as pr

    if diff:
        if len(diff) != 2:
            _fail("--diff takes two probe files: --diff A.json --diff B.json")
        a, b = (_read_json(p) for p in diff)
        changes = pr.diff(a, b)
        for change in changes:
            typer.echo(change.describe(f"torch {a.get('torch')}", f"torch {b.get('torch')}"))
        if not changes:
            typer.echo(f"no differences between torch {a.get('torch')} and torch {b.get('torch')}")
        return
    found = _matrices(matrix)
    csrc = _csrc(_load(found[0].path)) if found else None
    try:
        answer = pr.probe(csrc)
    except ImportError:
        _fail("torch is not installed: probe asks the installed torch")
    if as_json:
        typer.echo(json.dumps(answer, indent=2))
        return
    console = _console()
    console.print(f"torch {answer['torch']} (Python {answer['python']})")
    for name, value in answer["capabilities"].items():
        shown = ", ".join(f"{k}={'on' if v else 'off'}" for k, v in value.items()) if isinstance(value, dict) else value
        console.print(f"  {name:<40} {shown}", markup=False)


@app.command(name="new-shim")
def new_shim(
    version: str = typer.Argument(..., help="The new torch minor, e.g. 2.16."),
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    probe_new: Optional[str] = typer.Option(None, "--probe", help="Probe of the new torch (default: probe the installed one if it is that minor)."),
    probe_base: Optional[str] = typer.Option(None, "--base", help="Probe of the previous torch (default: docs/probes/torch-X.Y.json next to the matrix)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the changes without writing them."),
) -> None:
    """Scaffold the shim for a new torch minor, add it to compat.yaml as experimental, and list what to check."""
    from pathlib import Path

    from packaging.version import InvalidVersion, Version

    from . import newshim

    try:
        minor = Version(version)
    except InvalidVersion:
        _fail(f"{version!r} is not a torch version such as 2.16")
    located = _matrices(matrix)[0]
    result = _load(located.path, fresh=True)
    matrix_path = Path(located.path).resolve()
    new = _read_json(probe_new) if probe_new else None
    if new is None:
        from . import probe as pr

        try:
            answer = pr.probe(_csrc(result))
            if answer["torch_minor"] == f"{minor.major}.{minor.minor}":
                new = answer
        except ImportError:
            pass
    if probe_base is None:
        recorded = newshim.recorded_probe(matrix_path, result.matrix, minor)
        probe_base = str(recorded) if recorded else None
    base = _read_json(probe_base) if probe_base else None
    try:
        plan_ = newshim.scaffold(matrix_path, result.matrix, minor, new, base)
        if not dry_run:
            newshim.apply(matrix_path, plan_)
    except newshim.NewShimError as exc:
        _fail(str(exc))
    console = _console()
    console.print(f"{'would write' if dry_run else 'wrote'} {plan_.module_path} ({plan_.module})")
    typer.echo(plan_.matrix_diff, nl=False)
    console.print("[bold]to do:[/]")
    for item in plan_.todo:
        console.print(f"  - {item}", markup=False)


shims_app = typer.Typer(help="Shim lifecycle: what the supported torch releases no longer need.", no_args_is_help=True)
app.add_typer(shims_app, name="shims")


@shims_app.command("report")
def shims_report(matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP)) -> None:
    """Shims that serve no supported torch and C++ gates that are constant for all of them. Exit 1 if any."""
    from .shimsreport import report, supported_torch

    result = _one_matrix(matrix)
    findings = report(result.matrix, _csrc(result))
    torch = supported_torch(result.matrix)
    console = _console()
    span = f"torch {torch[0]}\u2013{torch[-1]}" if torch else "no torch"
    for finding in findings:
        console.print(str(finding), markup=False)
    console.print(f"{len(findings)} finding(s); supported releases claim {span}")
    if findings:
        raise typer.Exit(EXIT_UNSUPPORTED)


@app.command()
def schema(
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to this file (atomically) instead of stdout."),
) -> None:
    """Print the JSON Schema of compat.yaml (reference it from the file so editors validate it)."""
    from .markers import atomic_write
    from .schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if output:
        atomic_write(output, text)
    else:
        typer.echo(text, nl=False)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(130)
