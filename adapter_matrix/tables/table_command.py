"""The use case of ``table``: a frozen request, a ``run`` and a typed result.

The command line (:mod:`adapter_matrix.cli.table`) parses its options into a
:class:`TableRequest` (``--today`` read; how a matrix is loaded, how a layer's file is told
apart and how progress shows passed in, since they print) and prints the
:class:`TableResult`; the run neither prints nor exits. A request it cannot run raises
:class:`~adapter_matrix.errors.AdapterMatrixError`, worded whole with the option at fault in
front. docs/development.md ("Adding a command") takes this module as its worked example.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import shlex
from typing import Any, Callable, ContextManager, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..errors import AdapterMatrixError, ChoiceError
from ..matrix.model import Matrix
from ..matrix.queries import Releases
from .docs import Outcome
from .resolve import Resolutions

__all__ = ["TableRequest", "TableResult", "Resolved", "refusal", "run"]


class TableRequest(NamedTuple):
    """What ``table`` is asked, one field per option as given (the stale files' fixing command
    repeats them), ``--today`` read into ``when``."""

    files: Tuple[str, ...] = ()  # documents whose blocks to --update or --check
    matrix: Optional[str] = None
    adapter_matrix: Optional[str] = None
    view: Optional[str] = None
    dimension: Optional[str] = None
    fmt: Optional[str] = None
    lang: Optional[str] = None
    release: Optional[str] = None
    results: Optional[str] = None
    today: Optional[str] = None
    when: Optional[_dt.date] = None
    support_channel: Optional[str] = None
    platform_name: Optional[str] = None
    platform_id: Optional[str] = None
    resolve: bool = False
    recorded: Tuple[str, ...] = ()
    output: Optional[str] = None
    update: bool = False
    check: bool = False
    # the matrix of --matrix (None: the one found), and an adapter's by its path: the command
    # line lists an invalid file's errors; whether a path is a layer's matrix (validation's)
    load: Callable[[Optional[str]], Matrix] = lambda path: _no_loader(path)
    load_adapter: Callable[[str], Matrix] = lambda path: _no_loader(path)
    is_layer: Callable[[str], bool] = lambda path: False
    # around the selector's answers and --resolve's resolutions: yields a picks.Report, or None
    progress: Callable[[], ContextManager[Any]] = contextlib.nullcontext


class Resolved(NamedTuple):
    """What --resolve found among ``commands`` published commands, resolved against ``where``."""

    found: Resolutions
    commands: int
    where: str


class TableResult(NamedTuple):
    """A table printed (``text``), files written or compared (``written``: --output's, or
    --view platform's two), documents' blocks synced (``documents``), or --resolve's answer.
    ``stale``: what --check found stale and the command that fixes it (exit 1); ``problem``: a
    write that failed after the files before it (exit 2)."""

    text: Optional[str] = None
    written: Tuple[Outcome, ...] = ()
    documents: Tuple[Outcome, ...] = ()
    resolved: Optional[Resolved] = None
    update: bool = False
    check: bool = False
    stale: Optional[str] = None
    problem: Optional[str] = None
    skipped: Tuple[str, ...] = ()  # JSON files under --results that are not result records (RecordSet.skipped)


def _no_loader(path: Optional[str]) -> Matrix:
    raise AdapterMatrixError(f"{path or 'compat.yaml'}: this request has no loader of matrices")


def refusal(request: TableRequest) -> Optional[str]:
    """Why the options of ``request`` do not go together, or None (said before anything is read)."""
    files, output, update, check = request.files, request.output, request.update, request.check
    if update and check:
        return "--update and --check exclude each other"
    if files and output:
        return "give FILES (blocks to --update/--check) or --output FILE (a whole generated file), not both"
    if files and not (update or check):
        return "give --update or --check with FILES"
    if update and output:
        return "--output writes the file by itself; --update is for the blocks in FILES"
    if check and not (files or output):
        return "--check needs FILES or --output FILE"
    if update and not files:
        return "--update needs at least one FILE"
    if request.resolve and (request.fmt or request.lang):
        # its answer is a report on stderr/stdout, not a table: a --format json was silently ignored
        ignored = ", ".join(flag for flag, value in (("--format", request.fmt), ("--lang", request.lang)) if value)
        return f"--resolve prints a report, not a table: give no {ignored} (its exit code says whether every command installs)"
    if files:
        options = (
            ("--view", request.view),
            ("--format", request.fmt),
            ("--lang", request.lang),
            ("--release", request.release),
            ("--dimension", request.dimension),
        )
        given = [flag for flag, value in options if value]
        if given:
            return f"{', '.join(given)}: a block takes these from its marker (e.g. view=grid lang=zh), not from the command line"
    return None


def run(request: TableRequest) -> TableResult:
    """The table, files or answer ``request`` asks for."""
    refused = refusal(request)
    if refused:
        raise AdapterMatrixError(refused)
    if request.matrix and not request.files and request.is_layer(request.matrix):
        return _stack_table(request)
    if request.adapter_matrix:
        raise ChoiceError("adapter-matrix", "goes with a layer's --matrix (the stack view)")
    if request.view == "stack":
        raise ChoiceError("view", "stack draws a layer's matrix: give the layer's compat.yaml with --matrix")
    matrix = request.load(request.matrix)
    common = {"--matrix": request.matrix, "--today": request.today, "--results": request.results}
    if request.resolve:
        if request.files or request.output or request.update or request.check:
            raise AdapterMatrixError(_RESOLVE_ALONE)
        if request.view not in (None, "selector", "platform"):
            raise AdapterMatrixError(_RESOLVE_ALONE)
        return _resolve(request, matrix)
    if request.recorded:
        raise ChoiceError("recorded", "is an option of --resolve")
    if request.view == "platform":
        return _platform(request, matrix, common)
    if request.support_channel or request.platform_name or request.platform_id:
        raise AdapterMatrixError(_PLATFORM_ONLY)
    if request.files:
        return _documents(request, matrix, common)
    return _rendered(request, matrix, common)


_PLATFORM_ONLY = "--support-channel, --platform-name and --id are options of --view platform"
_RESOLVE_ALONE = "--resolve checks the selector's commands: give no FILES, --output, --update, --check or other --view"


def _fix(options: Mapping[str, Optional[str]], tail: Sequence[str]) -> str:
    """The ``adapter-matrix table`` command line that rewrites what ``--check`` found stale."""
    args = ["adapter-matrix", "table"]
    for flag, value in options.items():
        if value is not None:
            args += [flag, value]
    return " ".join(shlex.quote(a) for a in args + list(tail))


def _releases(matrix: Matrix, text: Optional[str]) -> Releases:
    """``--release TEXT``: the entries of an adapter version, or the packages of a release line."""
    if text is None:
        return None
    from ..matrix.queries import select_releases

    found = select_releases(matrix, text)
    if not found:
        lines = ", ".join(matrix.release_lines())
        known = f" or release line ({lines})" if lines else ""
        raise ChoiceError("release", f"{text}: no such release{known} in {matrix.path}")
    return found


def _rendered(request: TableRequest, matrix: Matrix, common: Dict[str, Optional[str]]) -> TableResult:
    """A view of the adapter's matrix: printed, or written to (or compared with) --output."""
    from ..ci.record import RecordSet
    from . import docs
    from . import views as tables
    from .picks import reporting

    view = request.view
    try:
        records = None
        if request.results:
            records = docs.load_records(request.results, tables.RECORDS.get(view or "grid", "results"))
    except ValueError as exc:  # unreadable records
        raise AdapterMatrixError(str(exc)) from exc
    release = _releases(matrix, request.release)
    try:
        with request.progress() as report, reporting(report):  # the selector's answers take seconds
            text = tables.render(
                matrix,
                view=view or "grid",
                fmt=request.fmt or "markdown",
                lang=request.lang or "en",
                release=release,
                today=request.when,
                records=records,
                dimension=request.dimension,
            )
    except ValueError as exc:  # a bad view, format or language, or unreadable records
        raise AdapterMatrixError(str(exc)) from exc
    options = {
        "--view": view,
        "--dimension": request.dimension,
        "--format": request.fmt,
        "--lang": request.lang,
        "--release": request.release,
    }
    skipped = records.skipped if isinstance(records, RecordSet) else ()  # op-sweep records are a list
    return _emit(request, text, _fix({**common, **options}, []))._replace(skipped=skipped)


def _emit(request: TableRequest, text: str, fix: str) -> TableResult:
    """A rendered table: printed, or written to --output (with --check: compared with it)."""
    from . import docs

    output = request.output
    if not output:
        return TableResult(text=text)
    try:
        outcome = docs.sync_output(output, text, write=not request.check)
    except OSError as exc:  # FileWriteError, one line already
        raise AdapterMatrixError(str(exc)) from exc
    stale = None
    if request.check and outcome.changed:
        stale = f"{output} is stale; fix with:\n    {fix} --output {shlex.quote(output)}"
    return TableResult(written=(outcome,), check=request.check, stale=stale)


def _platform(request: TableRequest, matrix: Matrix, common: Dict[str, Optional[str]]) -> TableResult:
    """--view platform: write (or --check) ID.json and ID.md in the --output folder (ID: --id)."""
    from ..files import make_folders, write_failed
    from . import docs
    from .platform import platform_entry

    output, check = request.output, request.check
    if not output:
        raise ChoiceError("view", "platform writes two files: give --output FOLDER")
    try:
        entry = platform_entry(
            matrix, request.support_channel or "", request.platform_name, request.when, request.platform_id
        )
    except ChoiceError:  # a choice of this command: the command line puts its option in front
        raise
    except ValueError as exc:
        raise AdapterMatrixError(str(exc)) from exc
    written: List[Outcome] = []
    for suffix, text in ((".json", entry.json_text), (".md", entry.markdown)):
        path = os.path.join(output, entry.platform_id + suffix)
        try:
            if not check:
                make_folders(output)
            written.append(docs.sync_output(path, text, write=not check))
        except OSError as exc:  # the files before it are said, then the failure, in one line
            return TableResult(written=tuple(written), check=check, problem=str(write_failed(exc, path)))
    stale = [o.path for o in written if check and o.changed]
    fix = None
    if stale:
        options = {
            **common,
            "--view": "platform",
            "--support-channel": request.support_channel,
            "--platform-name": request.platform_name,
            "--id": request.platform_id,
        }
        fix = f"{' '.join(stale)} stale; fix with:\n    {_fix(options, ['--output', output])}"
    return TableResult(written=tuple(written), check=check, stale=fix)


def _documents(request: TableRequest, matrix: Matrix, common: Dict[str, Optional[str]]) -> TableResult:
    """FILES: their adapter-matrix:table blocks updated, or compared."""
    from ..files import printable
    from . import docs

    try:
        outcomes = docs.sync(
            matrix, list(request.files), write=request.update, today=request.when, results=request.results
        )
    except OSError as exc:  # FileWriteError: a full disk, a read-only folder; each document is whole, old or new
        raise AdapterMatrixError(str(exc)) from exc
    stale = [o.path for o in outcomes if o.changed]
    words = None
    if request.check and stale:
        fix = _fix(common, ["--update"] + stale)
        words = f"stale tables in {printable(' '.join(stale))}; fix with:\n    {fix}"
    skipped = tuple(line for o in outcomes for line in o.skipped)
    return TableResult(
        documents=tuple(outcomes), update=request.update, check=request.check, stale=words, skipped=skipped
    )


def _stack_table(request: TableRequest) -> TableResult:
    """A layer's matrix: its stack view (the adapter's matrix, when installed, names the
    package of each release line the layer names); --release and --dimension (``cann=9.1.0``)
    filter its rows; --resolve: resolve each row's commands instead."""
    from ..matrix.cache import load_any
    from ..matrix.model import LayerResult
    from .formats import render_table
    from .views.stack import stack

    path, check, fmt, lang, when = request.matrix or "", request.check, request.fmt, request.lang, request.when
    release, dimension = request.release, request.dimension
    if request.view not in (None, "stack"):
        raise AdapterMatrixError(f"{path} is a layer's matrix: its view is stack (the adapter's matrix has the others)")
    loaded = load_any(path)
    if not isinstance(loaded, LayerResult):  # the caller read `layer:` in it
        raise AdapterMatrixError(f"{path} is not a layer's matrix")
    layer = loaded.layer
    adapter = request.load_adapter(request.adapter_matrix) if request.adapter_matrix else _registered(layer)
    try:
        if request.resolve:
            if adapter is None:
                raise ChoiceError(
                    "resolve", f"checks the stack's commands: give {layer.adapter}'s matrix with --adapter-matrix"
                )
            if request.output or check or fmt or lang:
                raise ChoiceError(
                    "resolve", "checks the stack table's commands: give no --output, --check, --format or --lang"
                )
            stack(layer, "en", adapter, when, release, dimension)  # the same refusals as the table
        else:
            text = render_table(stack(layer, lang or "en", adapter, when, release, dimension), fmt or "markdown")
    except ChoiceError:  # an unknown release or dimension: the command line puts its option in front
        raise
    except ValueError as exc:  # a bad format or language
        raise AdapterMatrixError(str(exc)) from exc
    if request.resolve and adapter is not None:  # without it, refused above
        return _resolve_stack(request, layer, adapter)
    flags = {
        "--matrix": path,
        "--adapter-matrix": request.adapter_matrix,
        "--release": release,
        "--dimension": dimension,
        "--format": fmt,
        "--lang": lang,
    }
    return _emit(request, text, _fix(flags, []))


def _registered(layer: Any) -> Optional[Matrix]:
    """The installed adapter's matrix a layer names, if one registers it."""
    from ..matrix.cache import load_matrix
    from ..matrix.diagnostics import MatrixError
    from ..matrix.discovery import registered_matrices
    from ..names import canonical_name

    for located in registered_matrices():
        try:
            found = load_matrix(located.path).matrix
        except MatrixError:
            continue
        if canonical_name(found.adapter.distribution) == layer.name_of_adapter:
            return found
    return None


def _resolve(request: TableRequest, matrix: Matrix) -> TableResult:
    """--resolve: every published command, through pip's resolver."""
    from .views.selector import selector

    release = _releases(matrix, request.release)
    combinations = selector(matrix, release=release, today=request.when, picks=False).data["combinations"]
    return _resolved(request, combinations)


def _resolve_stack(request: TableRequest, layer: Any, adapter: Matrix) -> TableResult:
    """--resolve of a layer's stack table: each row's commands, each for its own platform and Python."""
    from ..check.stack.space import Candidates
    from .views.stack import shown_releases, stack_installs

    candidates = Candidates()  # every row's search shares the stack's candidates

    today = request.when or _dt.date.today()
    combinations = [
        {"commands": list(i.commands), "python": i.python, "dimensions": i.dimensions, "torch": i.torch}
        for entry in shown_releases(layer, request.release, request.dimension)
        for i in stack_installs(adapter, layer, entry, today, candidates)
    ]
    return _resolved(request, combinations)


def _resolved(request: TableRequest, combinations: List[Dict[str, Any]]) -> TableResult:
    import tempfile

    from .resolve import build_index, check_commands

    recorded = list(request.recorded)
    with tempfile.TemporaryDirectory() as index, request.progress() as report:
        url = build_index(recorded, index) if recorded else None
        found = check_commands(combinations, url, progress=report)
    where = f"the recorded index ({', '.join(recorded)})" if recorded else "the commands' indexes"
    commands = len({tuple(c["commands"]) for c in combinations if c["commands"]})
    return TableResult(resolved=Resolved(found, commands, where))
