"""The check an adapter makes when it is imported: :func:`require`.

A PrivateUse1 adapter (torch_npu and the like) calls it at the top of its ``__init__``::

    from adapter_matrix import require

    support = require(__name__)          # finds <package>/compat.yaml, checks this process
    if support.usable:                   # False only under torch's autoload, after a warning
        _activate(support.shim)

It answers with the same verdict as ``adapter-matrix check`` (the model's
:func:`~adapter_matrix.check.verdict.verdict`) for the running Python, the torch that
is imported (else the installed one), the adapter's version and the extra dimensions
that environment variables, files or distributions tell (command detectors are left to
``check``: an import must not run programs; an undetected dimension is assumed to fit).

Policy:

=========================  =======================================  =================================
verdict                    plain ``import adapter``                 under ``import torch`` (autoload)
=========================  =======================================  =================================
supported, experimental    returns                                  returns
deprecated, eol            ``FutureWarning`` with the fix           same
unsupported, broken        raises :class:`UnsupportedEnvironment`   ``RuntimeWarning`` with the fix,
                           with the fix                             ``usable`` is False
=========================  =======================================  =================================

``ADAPTER_MATRIX_ALLOW_UNSUPPORTED=1`` turns the error into a warning for an adapter without
shims, and for one whose shim serves the torch (where none does, there is no code to run, and
the refusal says so instead of advertising the variable). Under autoload a missing or invalid matrix warns too: an exception there would
break ``import torch`` itself.

It runs inside ``import torch``, so a warm start costs a file read and two small JSON
memos under the cache folder: the *facts* of a matrix (distribution, device, detectors;
keyed by the file's bytes) and the *verdict* (keyed by those bytes, Python, torch,
adapter version, detected dimensions and today's date). Neither YAML nor the model nor
``packaging`` is imported then; a cold start reads the compiled matrix.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sys
import warnings
from types import FrameType
from typing import TYPE_CHECKING, Dict, List, Mapping, NamedTuple, Optional, Tuple

from .._version import __version__
from ..errors import EXIT_UNSUPPORTED, AdapterMatrixError
from ..matrix.status import Status
from .facts import distribution_version, python_identity

if TYPE_CHECKING:
    from .judgment import Verdict

__all__ = [
    "UnsupportedEnvironment",
    "Support",
    "ImportVerdict",
    "require",
    "select",
    "locate",
    "explain",
    "under_autoload",
    "ALLOW_ENV",
]

ALLOW_ENV = "ADAPTER_MATRIX_ALLOW_UNSUPPORTED"
MATRIX_NAME = "compat.yaml"
_CHEAP = ("env", "file", "distribution", "builtin")  # detectors an import may run; `command` is check's


class UnsupportedEnvironment(AdapterMatrixError, RuntimeError):
    """The running torch/Python is not a combination the adapter supports; the message has the fix."""

    exit_code = EXIT_UNSUPPORTED


class ImportVerdict(NamedTuple):
    """The verdict for one environment and the shim module that serves its torch."""

    outcome: Status
    shim: Optional[str]
    message: str
    # whether the escape hatch can activate anything: an adapter without shims always can; one
    # with shims only when a shim serves this torch (else there is no code to run)
    forceable: bool


class Support(NamedTuple):
    """What :func:`require` found: the verdict, the shim to use, and whether to activate."""

    outcome: Status
    shim: Optional[str]  # the shim module for this torch (e.g. ``my_adapter.shims.torch_2_4``)
    message: str  # the verdict and the fix, one paragraph
    matrix: str  # the matrix file that decided
    usable: bool  # activate? False when unsupported under autoload (a warning was given)


class _Probe(NamedTuple):
    """A detector as the facts memo keeps it (duck-types the model's Detector)."""

    kind: str
    target: Tuple[str, ...]
    regex: Optional[str]
    timeout: float
    template: Optional[str] = None


def under_autoload() -> bool:
    """True while torch imports device backends through its ``torch.backends`` entry points."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_import_device_backends":
            return True
        frame = frame.f_back
    return False


def explain(answer: Verdict, distribution: str, torch_version: Optional[str]) -> str:
    """One message for a :class:`~adapter_matrix.check.judgment.Verdict`: what is wrong and the
    fix, as ``check`` shows them (:func:`~adapter_matrix.check.report.verdict_lines`): the
    first reason and the first two fixes."""
    from .report import verdict_lines

    torch_text = f"torch {torch_version}" if torch_version else "no torch"
    lines = verdict_lines(f"{distribution} with {torch_text}: ", answer, reasons=1, fixes=2)
    return "\n".join("".join(text for text, _style in line) for line in lines)


# -- memos -------------------------------------------------------------------------------


def _memo_path(kind: str, key: str) -> str:
    """Where the memo ``kind`` (``facts``, ``verdict``) of ``key`` lives: an entry of the shared
    cache (:mod:`adapter_matrix.memo`), read and written as every other entry is."""
    from ..memo import entry_path

    return entry_path("runtime", key, f".{kind}.json")


def _read_memo(kind: str, key: str) -> Optional[Dict[str, object]]:
    """A memo as plain data, or None: missing, unreadable, refused (writable by others:
    see :func:`~adapter_matrix.memo.trusted_entry`) or not a JSON object."""
    from ..memo import read_entry

    value = read_entry(_memo_path(kind, key))
    return value if isinstance(value, dict) else None


def _write_memo(kind: str, key: str, value: Mapping[str, object]) -> None:
    from ..memo import write_entry

    write_entry(_memo_path(kind, key), value)  # a read-only cache only costs time


class _Facts(NamedTuple):
    """What an import needs of the matrix: the distribution, the device and the cheap
    detectors of each dimension (the facts memo, so that an import parses no YAML)."""

    distribution: str
    device: str
    dimensions: Tuple[Tuple[str, Tuple[_Probe, ...]], ...]

    def to_json(self) -> Dict[str, object]:
        return {
            "distribution": self.distribution,
            "device": self.device,
            "dimensions": [
                [name, [[p.kind, list(p.target), p.regex, p.timeout, p.template] for p in probes]]
                for name, probes in self.dimensions
            ],
        }


def _probe_of(probe: object) -> Optional[_Probe]:
    """A detector of a facts memo, if it is one an import may run (the memo is untrusted
    input: a ``command``, or anything else, in it must never run inside ``import torch``)."""
    from ..limits import MAX_REGEX_CHARS, MAX_TIMEOUT

    if not (isinstance(probe, list) and len(probe) in (4, 5)):  # memos written before templates have four fields
        return None
    kind, target, regex, timeout, *template = probe
    if template and not (template[0] is None or (isinstance(template[0], str) and len(template[0]) <= MAX_REGEX_CHARS)):
        return None
    if kind not in _CHEAP or not (isinstance(target, list) and len(target) == 1 and isinstance(target[0], str)):
        return None
    if not (regex is None or (isinstance(regex, str) and len(regex) <= MAX_REGEX_CHARS)):
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_TIMEOUT:
        return None
    return _Probe(str(kind), (target[0],), regex, timeout, template[0] if template else None)


def _facts_of(memo: Mapping[str, object]) -> Optional[_Facts]:
    """A facts memo read from disk, if it has the shape :meth:`_Facts.to_json` writes, with
    only the detectors an import may run."""
    distribution, device, dimensions = memo.get("distribution"), memo.get("device"), memo.get("dimensions")
    if not (isinstance(distribution, str) and isinstance(device, str) and isinstance(dimensions, list)):
        return None
    read: List[Tuple[str, Tuple[_Probe, ...]]] = []
    for entry in dimensions:
        if not (
            isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and isinstance(entry[1], list)
        ):
            return None
        probes = [_probe_of(probe) for probe in entry[1]]
        kept = [probe for probe in probes if probe is not None]
        if len(kept) != len(probes):
            return None
        read.append((entry[0], tuple(kept)))
    return _Facts(distribution, device, tuple(read))


def _facts(matrix_path: str, raw_key: str) -> _Facts:
    """Distribution, device and the cheap detectors of each dimension (memoized per file)."""
    memo = _read_memo("facts", raw_key)
    facts = _facts_of(memo) if memo is not None else None
    if facts is not None:
        return facts
    from ..matrix.cache import load_matrix

    matrix = load_matrix(matrix_path).matrix
    facts = _Facts(
        matrix.adapter.distribution,
        matrix.adapter.device,
        tuple(
            (
                d.name,
                tuple(
                    _Probe(p.kind, tuple(p.target), p.regex, p.timeout, p.template)
                    for p in d.detectors
                    if p.kind in _CHEAP
                ),
            )
            for d in matrix.dimensions
        ),
    )
    _write_memo("facts", raw_key, facts.to_json())
    return facts


def _detect(facts: _Facts) -> List[Tuple[str, Optional[str]]]:
    found: List[Tuple[str, Optional[str]]] = []
    if not facts.dimensions:
        return found
    from .detectors import run_detector

    for name, probes in facts.dimensions:
        value = None
        for probe in probes:
            if probe.kind not in _CHEAP:  # never a command inside an import, whatever a memo says
                continue
            value, _why = run_detector(probe)  # type: ignore[arg-type]  # duck-types Detector
            if value is not None:
                break
        found.append((name, value))
    return found


# -- the verdict -------------------------------------------------------------------------


def _decide(
    matrix_path: str,
    torch_version: Optional[str],
    adapter_version: Optional[str],
    dimensions: List[Tuple[str, Optional[str]]],
) -> ImportVerdict:
    from packaging.version import InvalidVersion, Version

    from ..matrix.cache import load_matrix
    from ..matrix.queries import shim_for
    from .detectors import builtin_value
    from .environment import current_python, dimension_value
    from .judgment import Environment
    from .pipeline import decide

    def version(text: Optional[str]) -> Optional[Version]:
        try:
            return Version(text) if text else None
        except InvalidVersion:
            return None

    matrix = load_matrix(matrix_path).matrix
    python, full, implementation = current_python()
    if torch_version and version(torch_version) is None:
        raise UnsupportedEnvironment(f"cannot read torch's version {torch_version!r}")
    declared = {d.name: d for d in matrix.dimensions}
    values = tuple((n, dimension_value(declared[n], v)) for n, v in dimensions if n in declared)
    env = Environment(
        python=python,
        python_full=full,
        implementation=implementation,
        torch=version(torch_version),
        adapter=version(adapter_version),
        dimensions=values,
        platform_os=builtin_value("os"),  # the fix's commands are typed in this OS's shell
    )
    answer = decide(matrix, env)  # check's judge: the same verdict `check` answers
    shim = answer.shim or (shim_for(matrix, env.torch) if env.torch is not None else None)
    return ImportVerdict(
        answer.outcome,
        shim.module if shim else None,
        explain(answer, matrix.adapter.distribution, torch_version),
        shim is not None or not (matrix.declares_shims and matrix.shims),
    )


def select(
    matrix_path: str,
    torch_version: Optional[str],
    adapter_version: Optional[str] = None,
    dimensions: Optional[Dict[str, Optional[str]]] = None,
) -> ImportVerdict:
    """The verdict for this interpreter with ``torch_version`` and the adapter at
    ``adapter_version`` (else its installed version), memoized.

    ``dimensions`` gives the extra dimensions' values; by default they are detected with
    the matrix's env, file and distribution detectors.
    """
    from ..files import read_regular
    from ..memo import digest

    raw_key = digest((__version__, hashlib.sha256(read_regular(matrix_path)).hexdigest()))
    facts = _facts(matrix_path, raw_key)
    if adapter_version is None:
        adapter_version = distribution_version(facts.distribution)
    found = sorted(dimensions.items()) if dimensions is not None else _detect(facts)
    key = digest((raw_key, *python_identity(), str(torch_version), str(adapter_version), json.dumps(found), _today()))
    memo = _read_memo("verdict", key) or {}
    outcome, shim, message, forceable = (memo.get(k) for k in ("outcome", "shim", "message", "forceable"))
    if (
        outcome in _STATUSES
        and isinstance(message, str)
        and (shim is None or isinstance(shim, str))
        and isinstance(forceable, bool)
        and len(memo) == 4
    ):
        return ImportVerdict(Status(outcome), shim, message, forceable)
    selection = _decide(matrix_path, torch_version, adapter_version, found)
    _write_memo("verdict", key, {**selection._asdict(), "outcome": selection.outcome.value})
    return selection


_STATUSES = {s.value for s in Status}  # what a verdict memo may say


def _today() -> str:
    return _dt.date.today().isoformat()


# -- the adapter's call ------------------------------------------------------------------


def _package_folder(package: str) -> Optional[str]:
    module = sys.modules.get(package)
    origin = getattr(module, "__file__", None)
    if origin:
        return os.path.dirname(os.path.abspath(str(origin)))
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)  # locates without importing
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def locate(package: str, matrix: Optional[os.PathLike[str] | str] = None) -> str:
    """The matrix of ``package``: ``matrix`` (relative to the package's folder), else
    ``<package>/compat.yaml``, else the ``adapter_matrix.matrices`` entry point that
    names this package. Raises :class:`FileNotFoundError` saying where it looked."""
    folder = _package_folder(package)
    if matrix is not None:
        path = os.path.join(folder or os.getcwd(), os.fspath(matrix))
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{package}: no matrix file {path}")
        return path
    if folder is not None and os.path.isfile(os.path.join(folder, MATRIX_NAME)):
        return os.path.join(folder, MATRIX_NAME)
    from ..matrix.discovery import package_matrices

    for path in package_matrices(package):
        return path
    raise FileNotFoundError(
        f"{package}: no {MATRIX_NAME} in {folder or 'its folder'} and no entry point in the group "
        f"adapter_matrix.matrices names it; ship the file in the package or pass matrix="
    )


def _torch_version() -> Optional[str]:
    torch = sys.modules.get("torch")
    found = getattr(torch, "__version__", None)
    return str(found) if found else distribution_version("torch")


def _privateuse1_clash(package: str, path: str) -> Optional[str]:
    """The message for a PrivateUse1 backend another adapter registered already in this process
    (PyTorch has one per process), naming both adapters and the way out; ``None`` when it is free.
    Looks only at a torch already imported: this check never imports it."""
    torch = sys.modules.get("torch")
    rename = getattr(getattr(torch, "_C", None), "_get_privateuse1_backend_name", None)
    if rename is None:
        return None
    try:
        taken = rename()
    except Exception:
        return None
    if taken == "privateuseone":  # free: the common case costs one call
        return None
    from ..matrix.cache import load_matrix
    from ..matrix.discovery import registered_matrices

    mine = load_matrix(path).matrix.adapter
    if taken == mine.device:
        return None
    holder = f"the adapter of device {taken!r}"
    for located in registered_matrices():
        try:
            other = load_matrix(located.path).matrix.adapter
        except Exception:
            continue
        if other.device == taken and other.distribution != mine.distribution:
            holder = f"{other.distribution} (device {taken!r})"
            break
    return (
        f"{mine.distribution} (device {mine.device!r}) cannot register its device: {holder} already holds PyTorch's one "
        f"PrivateUse1 backend in this process. Use one adapter per environment (pip uninstall one of them), or set "
        f"TORCH_DEVICE_BACKEND_AUTOLOAD=0 and import only the adapter you want."
    )


def _allowed() -> bool:
    """Whether the escape hatch is set: ``1``, ``true``, ``yes``; ``0``, ``false``, ``no``,
    ``off`` or empty mean unset (a user who writes ``=0`` to be safe must not be forced)."""
    return os.environ.get(ALLOW_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def require(
    package: str,
    *,
    matrix: Optional[os.PathLike[str] | str] = None,
    version: Optional[str] = None,
    torch_version: Optional[str] = None,
) -> Support:
    """Check this process against the matrix of the adapter ``package`` (pass ``__name__``).

    ``matrix``: the file, relative to the package's folder, when it is not
    ``compat.yaml`` there or registered as an entry point. ``version``: the adapter's
    version (default: its installed distribution's). ``torch_version``: default the
    imported torch's ``__version__``, else the installed torch's.

    Raises :class:`UnsupportedEnvironment` for an unsupported or broken pairing on a
    plain import; under torch's autoload warns instead and returns ``usable=False``. The
    same for a PrivateUse1 backend another adapter registered already in this process
    (the message names both adapters and the way out).
    """
    autoload = under_autoload()
    try:
        path = locate(package, matrix)
        torch_text = torch_version or _torch_version()
        selection = select(path, torch_text, version)
    except Exception as exc:
        if not autoload:
            raise
        warnings.warn(f"{package} was not activated: {exc}", RuntimeWarning, stacklevel=2)
        return Support(Status.UNSUPPORTED, None, str(exc), "", False)
    usable = True
    clash = (
        None if torch_version else _privateuse1_clash(package, path)
    )  # a torch named by the caller is not this process's
    if clash is not None:  # torch would say only "already been set! Current backend: npu"
        if autoload:
            warnings.warn(f"{package} was not activated: {clash}", RuntimeWarning, stacklevel=2)
            return Support(Status.UNSUPPORTED, selection.shim, clash, path, False)
        raise UnsupportedEnvironment(clash)
    if selection.outcome.blocks:
        if _allowed() and selection.forceable:
            warnings.warn(
                selection.message + f"\n({ALLOW_ENV} is set: activating anyway)", RuntimeWarning, stacklevel=2
            )
        elif autoload:
            warnings.warn(
                f"{package} was not activated: {selection.message}\n(import {package} to see this as an error)",
                RuntimeWarning,
                stacklevel=2,
            )
            usable = False
        elif selection.forceable:
            raise UnsupportedEnvironment(selection.message + f"\n(set {ALLOW_ENV}=1 to try anyway)")
        else:  # the hatch would be a lie: no shim of this adapter serves this torch
            raise UnsupportedEnvironment(
                selection.message + f"\n({ALLOW_ENV} cannot help: no shim of {package} serves torch {torch_text})"
            )
    elif selection.outcome.warns:
        warnings.warn(selection.message, FutureWarning, stacklevel=2)
    return Support(selection.outcome, selection.shim, selection.message, path, usable)
