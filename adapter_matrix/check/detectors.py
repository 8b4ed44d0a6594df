"""Read the installed value of an extra dimension (a driver toolkit, a SoC, the OS, ...).

Each :class:`~adapter_matrix.matrix.model.Detector` names one source: an environment
variable, a file matched with a regex, a command (run without a shell, with a
timeout) whose output is matched with a regex, a Python distribution, or a built-in
(``os``: linux, windows, macos; ``arch``: x86_64, aarch64, as wheel tags spell them), or a
preset for a vendor toolkit (:mod:`.presets`: ``cann``, ``ascend-driver``, ...). Detectors
are tried in order; the first that yields a version wins. A detector that fails says
why, and a dimension no detector can read is *unknown*, never an exception.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, List, NamedTuple, Optional, Tuple

from .. import limits
from ..files import FileReadError, printable, read_regular
from .bounded import REGEX_SECONDS, RegexTimeout, describe_failure, named_groups, run_command, search

if TYPE_CHECKING:  # the import-time guard runs detectors without loading the model
    from ..matrix.model import Detector, Dimension
    from .elsewhere import Target

__all__ = ["Detection", "detect", "run_detector", "builtin_value"]


_OS = {"linux": "linux", "win32": "windows", "cygwin": "windows", "darwin": "macos"}
_ARCH = {"amd64": "x86_64", "x64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


def builtin_value(name: str) -> Optional[str]:
    """The platform this process runs on: ``os`` or ``arch``, named as wheel tags name them."""
    if name == "os":
        return _OS.get(sys.platform, sys.platform)
    if name == "arch":
        if hasattr(os, "uname"):
            machine = os.uname().machine
        else:  # pragma: no cover - Windows
            import platform

            machine = platform.machine()
        return _ARCH.get(machine.lower(), machine.lower())
    return None


class Detection(NamedTuple):
    """The outcome for one dimension: a version string, or why none was found."""

    dimension: str
    value: Optional[str]
    source: Optional[str]
    error: Optional[str]


def _compose(regex: str, template: str, text: str) -> Tuple[Optional[str], Optional[str]]:
    """Fill ``template``'s ``{name}`` fields with the regex's named groups, each from the
    first match that sets it: /etc/os-release lists ``ID`` and ``VERSION_ID`` on lines of
    their own, in no fixed order, so one alternation (``^ID=(?P<id>..)|^VERSION_ID=..``)
    finds both."""
    try:
        found = {name: value.strip().strip('"') for name, value in named_groups(regex, text).items()}
    except RegexTimeout:
        return None, f"regex {printable(repr(regex))} took longer than {REGEX_SECONDS:g} s; it was stopped"
    except (re.error, RecursionError, OverflowError) as exc:  # a memo or a model built elsewhere
        return None, f"regex {printable(repr(regex))} is invalid: {exc}"
    missing = [name for name in re.findall(r"\{([^{}]*)\}", template) if not found.get(name)]
    if missing:
        return None, f"regex {printable(repr(regex))} found no {', '.join(missing)}"
    return re.sub(r"\{([^{}]*)\}", lambda m: found[m[1]], template), None


def _match(regex: Optional[str], text: str, template: Optional[str] = None) -> Tuple[Optional[str], Optional[str]]:
    if regex is not None and template is not None:
        return _compose(regex, template, text)
    if regex is None:
        value = text.strip()
        return (value, None) if value else (None, "it is empty")
    shown = printable(repr(regex))
    try:
        match = search(regex, text)
    except RegexTimeout:
        return None, f"regex {shown} took longer than {REGEX_SECONDS:g} s; it was stopped"
    except (re.error, RecursionError, OverflowError) as exc:  # a memo or a model built elsewhere
        return None, f"regex {shown} is invalid: {exc}"
    if match is None:
        return None, f"regex {shown} did not match"
    found = match.version
    return (found.strip(), None) if found else (None, f"regex {shown} matched an empty version")


def run_detector(detector: Detector, target: Optional[Target] = None) -> Tuple[Optional[str], Optional[str]]:
    """Run one detector; return ``(version, None)`` or ``(None, why it failed)``. The
    reason is escaped for a terminal; the version is a matched string (see :func:`printable`).
    ``target``: the environment ``check --env`` judges (its files and distributions), else this one."""
    kind, what = detector.kind, detector.target
    if kind == "env":
        raw = os.environ.get(what[0])
        if raw is None:
            return None, f"${printable(what[0])} is not set"
        return _match(detector.regex, raw, detector.template)
    if kind == "file":
        path = os.path.expanduser(os.path.expandvars(what[0]))
        if (
            target is not None and target.root != "/" and os.path.isabs(path)
        ):  # check --env IMAGE_ROOT: the image's file
            path = os.path.join(target.root, path.lstrip("/"))
        try:
            data = read_regular(path, limits.DETECTOR_FILE_BYTES, truncate=True)
        except FileReadError as exc:
            return None, str(exc)
        return _match(detector.regex, data.decode("utf-8", "replace"), detector.template)
    if kind == "command":
        result = run_command(what, detector.timeout)
        program = printable(repr(what[0]))
        if result.error is not None:
            return None, describe_failure(result.error, program, detector.timeout)
        if result.returncode != 0:
            return None, f"command {program} exited with {result.returncode}"
        return _match(detector.regex, result.output.decode("utf-8", "replace"), detector.template)
    if kind == "builtin":
        found = builtin_value(what[0])
        return (found, None) if found else (None, f"no built-in detector {what[0]!r}")
    if kind == "preset":
        found, _where, why = _preset(what[0], target)
        return found, why
    if kind == "distribution":
        from .facts import distribution_version

        found = distribution_version(what[0], target)
        if found is None:
            return None, f"distribution {what[0]!r} is not installed"
        return _match(detector.regex, found, detector.template)
    return None, f"unknown detector kind {kind!r}"  # pragma: no cover - the loader rejects these


def _preset(name: str, target: Optional[Target]) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    from .presets import run_preset

    return run_preset(name, target.root if target is not None else "/")


def detect(dimension: Dimension, target: Optional[Target] = None) -> Detection:
    """Try each detector of ``dimension`` in order (in ``target``, ``check --env``'s environment, if given)."""
    failures: List[str] = []
    for detector in dimension.detectors:
        if detector.kind == "preset":  # its source names where it read the version
            value, where, error = _preset(detector.target[0], target)
            source = f"{detector.describe()}: {where}"
        else:
            value, error = run_detector(detector, target)
            source = detector.describe()
        if value is not None:
            return Detection(dimension.name, value, source, None)
        failures.append(error or "no answer")
    why = "; ".join(failures) if failures else "no detector is declared"
    return Detection(dimension.name, None, None, why)
