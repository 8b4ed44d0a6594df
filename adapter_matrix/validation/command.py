"""``validate``'s use case: a frozen request, :func:`run` and a typed :class:`ValidateResult`.

The command line (:mod:`adapter_matrix.cli.validate`) finds the files, refuses options that do
not go together, reads ``--results``' records and prints the result; :func:`run` validates each
adapter's matrix (``--write``: corrects its facts or its ``pyproject.toml`` first) and each
layer's against its adapter's. A file that is no valid matrix, or a write that fails, stops the
run where it happened: the result holds what came before it and the stop, and the command line
prints both, in that order, as it always has.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from typing import TYPE_CHECKING, Callable, ContextManager, List, NamedTuple, Optional, Tuple

from ..matrix.diagnostics import MatrixError
from ..matrix.model import Matrix
from .index_answers import IndexAnswers
from .layerfile import LayerValidation
from .matrixfile import Validation

if TYPE_CHECKING:
    from ..ci.record import RecordSet

__all__ = [
    "ValidateRequest",
    "FileDone",
    "LayerDone",
    "Stopped",
    "ValidateResult",
    "run",
    "SchemaRequest",
    "SchemaResult",
    "run_schema",
]


class ValidateRequest(NamedTuple):
    """What ``validate`` is asked: the files (found by the command line) and one field per option."""

    paths: Tuple[str, ...]  # adapters' matrices and layers' (told apart here)
    pyproject: Optional[str] = None
    upstream: Optional[str] = None  # pypi, a recorded folder, or torch's recorded Simple JSON
    write: bool = False
    record: Optional[str] = None  # --upstream pypi: save its answers here first
    records: Optional[RecordSet] = None  # --results' records
    results: Optional[str] = None  # the folder they came from
    strict: bool = False
    today: Optional[_dt.date] = None
    # around every read of an index (the command line shows its progress); none: no progress
    reading: Callable[[], ContextManager[None]] = contextlib.nullcontext


class FileDone(NamedTuple):
    """One adapter's matrix file: what ``--write`` did first, then what was found."""

    path: str
    found: Validation
    pyproject: Optional[str] = None  # --write --pyproject: corrected, or already agreeing
    facts: Optional[str] = None  # --write --upstream: the facts updated, or already up to date


class LayerDone(NamedTuple):
    path: str
    found: LayerValidation


class Stopped(NamedTuple):
    """Why the run stopped at ``path``: the file is no valid matrix (``invalid``), or ``problem``."""

    path: str
    invalid: Optional[MatrixError] = None
    problem: Optional[str] = None  # a write that failed (a full disk, a read-only folder)


class ValidateResult(NamedTuple):
    recorded: Tuple[str, ...]  # --record: the answers saved
    files: Tuple[FileDone, ...]
    layers: Tuple[LayerDone, ...] = ()
    stopped: Optional[Stopped] = None
    # the files that are no valid matrix, each with its errors: the others were still checked
    # (pre-commit passes every changed file; the first broken one hid the rest's errors)
    invalid: Tuple[Tuple[str, MatrixError], ...] = ()

    @property
    def failed(self) -> bool:
        """Whether a file has errors (exit 2)."""
        return bool(self.invalid) or any(f.found.errors for f in self.files) or any(f.found.errors for f in self.layers)


def run(request: ValidateRequest) -> ValidateResult:
    """Every finding about each file of ``request``, adapters' first, then layers'."""
    from ..matrix.cache import load_matrix
    from .layerfile import is_layer_file

    layers = [path for path in request.paths if is_layer_file(path)]  # checked against its adapter's
    paths = [path for path in request.paths if path not in layers]
    recorded: List[str] = []
    upstream = request.upstream
    try:
        if upstream and request.record:
            for path in paths:
                with request.reading():
                    recorded += [
                        ", ".join(IndexAnswers.record(request.record, [load_matrix(path, use_cache=False).matrix]))
                    ]
            upstream = request.record
        index = IndexAnswers(upstream) if upstream else None
    except MatrixError as exc:
        return ValidateResult(tuple(recorded), (), (), Stopped(path, invalid=exc))
    except OSError as exc:  # FileWriteError: a full disk, a read-only folder
        return ValidateResult(tuple(recorded), (), (), Stopped("", problem=str(exc)))
    files: List[FileDone] = []
    invalid: List[Tuple[str, MatrixError]] = []
    for path in paths:
        try:
            files.append(_one(request, path, index, upstream))
        except MatrixError as exc:  # no valid matrix: its errors listed, the next file still checked, exit 2
            invalid.append((path, exc))
        except OSError as exc:  # FileWriteError; the file is unchanged
            failed = Stopped(path, problem=str(exc))
            return ValidateResult(tuple(recorded), tuple(files), (), failed, tuple(invalid))
    if invalid:  # the layers are checked against valid adapters' matrices only: once these are fixed
        return ValidateResult(tuple(recorded), tuple(files), (), None, tuple(invalid))
    import gc

    # no cyclic collection while the layers are read and checked: a layer of 5,000 releases is a
    # million objects, walked again by every collection its checks' allocations trigger
    gc.disable()
    try:
        done, stopped = _layers(request, layers, paths, index)
    finally:
        gc.enable()
    return ValidateResult(tuple(recorded), tuple(files), done, stopped)


def _one(request: ValidateRequest, path: str, index: Optional[IndexAnswers], upstream: Optional[str]) -> FileDone:
    from .matrixfile import validate_file, write_facts

    corrected = _write_pyproject(path, request.pyproject) if request.write and request.pyproject else None
    said = None
    if request.write and index is not None:  # --write needs --upstream (the command line refuses it without)
        with request.reading():
            found, changed = write_facts(
                path,
                index,
                pyproject=request.pyproject,
                records=request.records,
                strict=request.strict,
                today=request.today,
            )
        m = found.matrix
        if changed:
            said = f"{m.path}: updated the {' and '.join(changed)} facts from {upstream}"
        else:
            subject = "torch and companion facts" if any(c.torch_facts for c in m.companions) else "torch facts"
            said = f"{m.path}: {subject} already up to date"
    else:
        with request.reading():
            found = validate_file(
                path,
                pyproject=request.pyproject,
                upstream=index,
                records=request.records,
                strict=request.strict,
                today=request.today,
            )
    return FileDone(path, found, corrected, said)


def _write_pyproject(path: str, pyproject: str) -> Optional[str]:
    """Correct ``pyproject``'s requires-python, classifiers and torch pin to the matrix at
    ``path`` (the validation that follows reports what is left)."""
    from ..files import atomic_write
    from ..matrix.cache import load_matrix
    from ..upstream.pyproject import fixed_pyproject

    text, left = fixed_pyproject(load_matrix(path, use_cache=False).matrix, pyproject)
    if text is None:
        return None if left else f"{pyproject}: already agrees with {path}"
    atomic_write(pyproject, text)  # an OSError (a read-only folder) leaves the file unchanged
    return f"{pyproject}: corrected to agree with {path}"


def _layers(
    request: ValidateRequest, layers: List[str], adapters: List[str], index: Optional[IndexAnswers]
) -> Tuple[Tuple[LayerDone, ...], Optional[Stopped]]:
    """Each layer's matrix against its adapter's (among ``adapters``, else the installed one)."""
    from ..matrix.cache import load_matrix
    from ..matrix.discovery import registered_matrices
    from .layerfile import validate_layer

    if not layers:
        return (), None
    known: List[Matrix] = []
    for path in adapters:
        try:
            known.append(load_matrix(path).matrix)
        except MatrixError as exc:
            return (), Stopped(path, invalid=exc)
    for located in registered_matrices():
        try:
            known.append(load_matrix(located.path).matrix)
        except MatrixError:  # an installed adapter's broken matrix (or a layer's) is no adapter to check against
            continue
    done: List[LayerDone] = []
    for path in layers:
        try:
            with request.reading():
                done.append(LayerDone(path, validate_layer(path, known, upstream=index, today=request.today)))
        except MatrixError as exc:
            return tuple(done), Stopped(path, invalid=exc)
    # layers that require one another in a cycle: an error at the pin that closes it
    from ..matrix.stack_rules import layer_cycles

    cycles = layer_cycles([d.found.layer for d in done])
    for d in done:
        d.found.findings.extend(c for c in cycles if c.mark.file == d.found.layer.path)
    return tuple(done), None


# -- schema --------------------------------------------------------------------------------


class SchemaRequest(NamedTuple):
    """What ``schema`` is asked: where to write compat.yaml's JSON Schema (None: nowhere, printed)."""

    output: Optional[str] = None


class SchemaResult(NamedTuple):
    text: str  # the schema, as written or to print
    written: Optional[str] = None  # the file it was written to


def run_schema(request: SchemaRequest) -> SchemaResult:
    """compat.yaml's JSON Schema (editors validate the file with it), written atomically to
    ``output`` when given; an ``OSError`` (a missing folder, a full disk) leaves no file."""
    import json

    from ..files import atomic_write
    from ..matrix.schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if request.output:
        atomic_write(request.output, text)
    return SchemaResult(text, request.output)
