"""The use case of ``ops tests``: a frozen request, a ``run`` and a typed result.

The command line (:mod:`adapter_matrix.cli.ops`) parses its options into an
:class:`OpTestsRequest` (how the matrix is loaded, how a test pack is found and how the run
shows, since they print or live in ``upstream``, passed in) and prints the
:class:`OpTestsResult`; the run neither prints nor exits. A request it cannot run raises
:class:`~adapter_matrix.errors.AdapterMatrixError`, a bad option's with the option's name as
its subject (:class:`~adapter_matrix.errors.ChoiceError`).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, ContextManager, NamedTuple, Optional, Tuple

from ...errors import AdapterMatrixError, ChoiceError
from .packrecord import OpTestsRecord, build
from .packrun import Progress, TestsResult
from .packrun import run as run_tests
from .packsetup import Prepared, TestsOptions, prepare, update

__all__ = ["OpTestsRequest", "OpTestsResult", "run"]


def _no_loader(path: Optional[str]) -> Any:
    raise AdapterMatrixError(f"{path}: no matrix loader given")


def _no_pack(release: str, source: Optional[str], sha256: Optional[str]) -> Any:
    return None


def _quiet() -> ContextManager[Optional[Callable[[Progress], None]]]:
    return contextlib.nullcontext(None)


class OpTestsRequest(NamedTuple):
    """What ``ops tests`` is asked, one field per option as given."""

    matrix: Optional[str] = None
    files: Tuple[str, ...] = ()
    pack: Optional[str] = None
    sha256: Optional[str] = None
    overrides: Tuple[str, ...] = ()
    expected: Optional[str] = None
    update_expected: bool = False
    control: Optional[str] = None
    jobs: int = 0  # 0: one per core
    timeout: float = 1800.0
    activate: Optional[str] = None
    # the validated matrix of --matrix (None: the one found); the command line lists its errors
    load: Callable[[Optional[str]], Any] = _no_loader
    # the test pack of a torch release: --pack (with --sha256) read, else the cache's (None: not
    # there); upstream.testpacks finds it, which this package may not import
    find_pack: Callable[[str, Optional[str], Optional[str]], Any] = _no_pack
    # given the line that says what runs: shows it and yields what takes the run's progress
    begin: Callable[[str], ContextManager[Optional[Callable[[Progress], None]]]] = lambda line: _quiet()


class OpTestsResult(NamedTuple):
    """What ran: the torch release, the run's request and outcome, and its record."""

    release: str
    prepared: Prepared
    done: TestsResult
    record: OpTestsRecord
    updated: bool  # the expectations were rewritten (--update-expected)

    @property
    def ok(self) -> bool:
        """Every test ended as expected, or the expectations were rewritten to say so."""
        return bool(self.record["ok"]) or self.updated


def installed_release() -> str:
    """The public version of the torch installed here, whose tests run."""
    from importlib import metadata

    from packaging.version import Version

    try:
        return Version(metadata.version("torch")).public
    except metadata.PackageNotFoundError:
        raise AdapterMatrixError(
            "torch is not installed in this environment: install the torch whose tests to run"
        ) from None


def run(request: OpTestsRequest) -> OpTestsResult:
    """Run the pack's test files on the matrix's device and judge them against the expectations."""
    import os

    if request.jobs < 0:
        raise ChoiceError("jobs", f"{request.jobs}: at least 1 (0: one per core)")
    if request.control not in (None, "cpu"):
        raise ChoiceError("control", f"{request.control!r}: only cpu")
    options = TestsOptions(
        request.files,
        request.overrides,
        request.expected,
        request.control,
        request.jobs or os.cpu_count() or 1,
        request.timeout,
        request.activate,
    )
    matrix = request.load(request.matrix)
    release = installed_release()
    try:
        found = request.find_pack(release, request.pack, request.sha256)
    except AdapterMatrixError as exc:
        raise ChoiceError("pack", str(exc)) from exc
    if found is None:
        raise AdapterMatrixError(
            f"no test pack of torch {release} in the cache: run `adapter-matrix ops pack {release}` (or give --pack)"
        )
    try:
        prepared = prepare(matrix, found.test_dir, found.files, options)
    except AdapterMatrixError as exc:  # one message: a bad override file, a file not in the pack, no activation
        raise AdapterMatrixError(str(exc)) from exc
    line = (
        f"ops tests of {prepared.request.device} on torch {release}: {len(prepared.request.files)} files, "
        f"activates with {prepared.activation}"
    )
    with request.begin(line) as progress:
        done = run_tests(prepared.request, progress)
    record = build(done, found.to_json(), prepared.expected_path)
    if request.update_expected:
        update(done, prepared)
    return OpTestsResult(release, prepared, done, record, request.update_expected)
