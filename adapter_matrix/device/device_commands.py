"""The use cases of ``build`` and ``new-shim``: each a frozen request, a ``run`` and a typed result.

The command line (:mod:`adapter_matrix.cli.device`) loads the matrix, reads the probes it is
given and prints the result; these neither print nor exit. A request they cannot run raises an
:class:`~adapter_matrix.errors.AdapterMatrixError` worded whole (``ChoiceError`` names the
request's field: ``version``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Dict, Mapping, NamedTuple, Optional

from ..errors import AdapterMatrixError
from ..matrix.model import Matrix
from .newshim import Scaffold

__all__ = ["BuildRequest", "BuildResult", "run_build", "NewShimRequest", "run_new_shim", "read_probe"]

JsonObject = Dict[str, object]  # a document read from JSON (a probe, a build's manifest), by its keys


class BuildRequest(NamedTuple):
    """What ``build`` is asked: the adapter's shims package and device, how loud."""

    package: str
    device: str
    verbose: bool = False
    # called with what is being compiled just before a compile (a minute or more): the command
    # line shows it with a spinner; not called when the cache answers
    on_compile: Optional[Callable[[str], None]] = None


class BuildResult(NamedTuple):
    """The build of the adapter's C++ core for the installed torch."""

    extension: str
    path: str
    compiled: bool  # False: the cache had it
    manifest: JsonObject  # what the build recorded (torch, build_seconds, ...)
    seconds: float  # this run's wall time

    def as_json(self) -> JsonObject:
        return {"extension": self.extension, "path": self.path, "compiled": self.compiled, **self.manifest}


def run_build(request: BuildRequest) -> BuildResult:
    """Compile the adapter's C++ core for the installed torch (a no-op when up to date). Raises
    :class:`~adapter_matrix.device.build.BuildError` (the compiler's whole output) or
    ``BuildMismatch``, which the command line prints as they are."""
    from .build import Extension, ensure_built

    try:
        import torch
    except ImportError:
        raise AdapterMatrixError(
            "torch is not installed; install it first, e.g. `adapter-matrix check` says which"
        ) from None
    ext = Extension.of_package(request.package, request.device)
    start = time.perf_counter()
    said = f"compiling {ext.name} for torch {torch.__version__} (about a minute on 2 cores)"
    announce = request.on_compile
    done = ensure_built(ext, verbose=request.verbose, on_compile=(lambda _folder: announce(said)) if announce else None)
    return BuildResult(ext.name, str(done.path), done.compiled, dict(done.manifest), time.perf_counter() - start)


class NewShimRequest(NamedTuple):
    """What ``new-shim`` is asked: the torch minor, the matrix, the two probes (None: none read)."""

    version: str  # the new torch minor, e.g. 2.16
    matrix: Matrix
    matrix_path: Path
    csrc: Optional[Path]  # the adapter's C++ sources folder (None: none found), for probing the installed torch
    new: Optional[JsonObject] = None  # --probe's, else the installed torch's when it is that minor
    base: Optional[JsonObject] = None  # --base's, else the recorded probe beside the matrix
    base_given: bool = False  # --base was given (no recorded probe is looked for)
    dry_run: bool = False


def run_new_shim(request: NewShimRequest) -> Scaffold:
    """The shim for a new torch minor, from the nearest one, and the torch line added to the
    matrix as experimental (written unless ``dry_run``); what moved between the probes is its to-do list."""
    from packaging.version import InvalidVersion, Version

    from . import newshim

    try:
        minor = Version(request.version)
    except InvalidVersion:
        raise AdapterMatrixError(f"{request.version!r} is not a torch version such as 2.16") from None
    if len(minor.release) < 2:  # "2" would be read as 2.0
        raise AdapterMatrixError(f"{request.version!r} is not a torch minor: write MAJOR.MINOR, such as 2.16")
    new: Optional[Mapping[str, object]] = request.new  # or the installed torch's probe (a probe.Probe)
    if new is None:
        from ..matrix.model import minor_line
        from . import probe as pr

        try:
            answer = pr.probe(request.csrc)
            if answer["torch_minor"] == str(minor_line(minor)):
                new = answer
        except ImportError:
            pass
    base = request.base
    if base is None and not request.base_given:
        recorded = newshim.recorded_probe(request.matrix_path, request.matrix, minor)
        base = read_probe(str(recorded)) if recorded else None
    plan = newshim.scaffold(request.matrix_path, request.matrix, minor, new, base)
    if not request.dry_run:
        newshim.apply(request.matrix_path, plan)
    return plan


def read_probe(path: str) -> JsonObject:
    """A saved probe (`probe --json`): a JSON object, else one line why it cannot be read."""
    import json

    from ..files import FileReadError, read_regular

    try:
        found = json.loads(read_regular(path).decode("utf-8"))
    except FileReadError as exc:  # its reason in words ("No such file or directory"), no [Errno 2]
        raise AdapterMatrixError(f"{path}: cannot read a probe: {exc.reason}") from None
    except ValueError as exc:  # not UTF-8, not JSON
        raise AdapterMatrixError(f"{path}: cannot read a probe: {exc}") from None
    if not isinstance(found, dict):
        raise AdapterMatrixError(
            f"{path}: cannot read a probe: not a JSON object (`adapter-matrix probe --json` writes one)"
        )
    return found
