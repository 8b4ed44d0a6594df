"""Read the installed value of an extra dimension (a driver toolkit, a SoC, the OS, ...).

Each :class:`~adapter_matrix.matrix.model.Detector` names one source: an environment
variable, a file matched with a regex, a command (run without a shell, with a
timeout) whose output is matched with a regex, a Python distribution, or a built-in
(``os``: linux, windows, macos; ``arch``: x86_64, aarch64, as wheel tags spell them). Detectors
are tried in order; the first that yields a version wins. A detector that fails says
why, and a dimension no detector can read is *unknown*, never an exception.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, List, NamedTuple, Optional, Tuple

if TYPE_CHECKING:  # the import-time guard runs detectors without loading the model
    from ..matrix.model import Detector, Dimension

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


def _match(regex: Optional[str], text: str) -> Tuple[Optional[str], Optional[str]]:
    if regex is None:
        stripped = text.strip()
        return (stripped, None) if stripped else (None, "it is empty")
    match = re.search(regex, text, re.MULTILINE)
    if match is None:
        return None, f"regex {regex!r} did not match"
    groups = match.groupdict()
    value: Optional[str] = groups.get("version") if "version" in groups else (match.group(1) if match.re.groups else match.group(0))
    return (value.strip(), None) if value else (None, f"regex {regex!r} matched an empty version")


def run_detector(detector: Detector) -> Tuple[Optional[str], Optional[str]]:
    """Run one detector; return ``(version, None)`` or ``(None, why it failed)``."""
    kind, target = detector.kind, detector.target
    if kind == "env":
        raw = os.environ.get(target[0])
        if raw is None:
            return None, f"${target[0]} is not set"
        return _match(detector.regex, raw)
    if kind == "file":
        path = os.path.expanduser(os.path.expandvars(target[0]))
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(1 << 20)
        except OSError as exc:
            return None, f"cannot read {path}: {exc.strerror}"
        return _match(detector.regex, text)
    if kind == "command":
        import subprocess  # only commands need it; keeps check's start-up lean

        try:
            proc = subprocess.run(
                list(target),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=detector.timeout,
                check=False,
            )
        except FileNotFoundError:
            return None, f"command {target[0]!r} not found"
        except PermissionError:
            return None, f"command {target[0]!r} is not executable"
        except subprocess.TimeoutExpired:
            return None, f"command {target[0]!r} timed out after {detector.timeout:g} s"
        except OSError as exc:
            return None, f"command {target[0]!r} failed to start: {exc.strerror}"
        if proc.returncode != 0:
            return None, f"command {target[0]!r} exited with {proc.returncode}"
        return _match(detector.regex, proc.stdout.decode("utf-8", "replace"))
    if kind == "builtin":
        found = builtin_value(target[0])
        return (found, None) if found else (None, f"no built-in detector {target[0]!r}")
    if kind == "distribution":
        from .facts import distribution_version

        found = distribution_version(target[0])
        if found is None:
            return None, f"distribution {target[0]!r} is not installed"
        return _match(detector.regex, found)
    return None, f"unknown detector kind {kind!r}"  # pragma: no cover - the loader rejects these


def detect(dimension: Dimension) -> Detection:
    """Try each detector of ``dimension`` in order."""
    failures: List[str] = []
    for detector in dimension.detectors:
        value, error = run_detector(detector)
        if value is not None:
            return Detection(dimension.name, value, detector.describe(), None)
        failures.append(error or "no answer")
    why = "; ".join(failures) if failures else "no detector is declared"
    return Detection(dimension.name, None, None, why)
