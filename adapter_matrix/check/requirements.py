"""``check --requirements FILE``: judge what a requirements or lock file would install,
before anything is installed.

The file's exact pins (``torch==2.14.0``) become what ``check`` assumes, as ``--torch``,
``--adapter`` and ``--companion`` would: the matrix judges them, and an installed adapter
whose metadata pins the torch it was built for is refused beside another torch. Read:

- requirements files (``pip freeze``, ``pip-compile``, ``uv pip compile`` output), with
  ``-r``/``-c`` includes, environment markers evaluated for this interpreter, hashes and
  options ignored;
- ``pylock.toml`` (PEP 751) and ``uv.lock``: each package's ``name`` and ``version``.

A range (``torch>=2.12,<2.13``) is kept as a range (:attr:`Pins.ranges`), never dropped: a torch
range is judged by the torch lines it admits (:func:`ranged_torch`: at the newest patch the
matrix describes when it admits one line of it, and against the torch minor an installed
binary was built for), or refused with why when it admits several. ``--resolve`` asks pip's
resolver what it would install (``pip install --dry-run --ignore-installed --report``), which
needs the index the file names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Tuple

from ..names import canonical_name

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

    from ..matrix.model import Matrix
    from .elsewhere import Target

__all__ = ["Pins", "Ranged", "read_pins", "resolve_pins", "ranged_torch", "kept_ranges", "RequirementsError"]


class RequirementsError(ValueError):
    """The file cannot be read or resolved: one line."""


class Pins(NamedTuple):
    """What a file would install: normalized name -> exact version, and the file's name;
    ``ranges``: normalized name -> the requirement of a package it names without an exact
    pin (``torch>=2.12,<2.13``, ``torch`` for a bare name)."""

    source: str
    versions: Dict[str, str]
    ranges: Optional[Dict[str, str]] = None

    def get(self, name: str) -> Optional[str]:
        return self.versions.get(canonical_name(name))

    def range(self, name: str) -> Optional[str]:
        """The file's requirement on ``name`` when it pins no exact version of it."""
        if self.get(name) is not None:
            return None
        return (self.ranges or {}).get(canonical_name(name))


def _requirements_txt(
    path: str, seen: Optional[List[str]] = None, ranges: Optional[Dict[str, str]] = None
) -> Dict[str, str]:
    """The exact pins of a requirements file; its other requirements go into ``ranges``."""
    from packaging.requirements import InvalidRequirement, Requirement

    seen = seen if seen is not None else []
    ranges = ranges if ranges is not None else {}
    real = os.path.realpath(path)
    if real in seen:
        return {}
    seen.append(real)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise RequirementsError(f"cannot read {path}: {exc.strerror or exc}") from None
    out: Dict[str, str] = {}
    for number, raw in enumerate(text.replace("\\\n", " ").splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        include = re.match(r"^(?:-r|--requirement|-c|--constraint)[\s=]+(\S+)", line)
        if include:
            out.update(_requirements_txt(os.path.join(os.path.dirname(path), include.group(1)), seen, ranges))
            continue
        if line.startswith("-"):  # --index-url, --hash on its own line, -e ...: not a pin
            continue
        line = re.sub(r"\s--hash[=\s]\S+", "", line)
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise RequirementsError(f"{path}:{number}: {exc}") from None
        if req.marker is not None and not req.marker.evaluate():
            continue
        exact = [s for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        name = canonical_name(req.name)
        if exact:
            out[name] = exact[0].version
        elif name in ranges:  # named twice (a base file and a constraint): pip takes both
            ranges[name] = f"{req.name}{req.specifier & _specifier(ranges[name])}"
        else:
            ranges[name] = f"{req.name}{req.specifier}"
    return out


def _specifier(requirement: str) -> SpecifierSet:
    from packaging.requirements import Requirement

    return Requirement(requirement).specifier


def _lock(path: str) -> Dict[str, str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - tomli is a dependency there
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise RequirementsError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RequirementsError(f"{path}: not valid TOML ({exc})") from None
    packages = data.get("packages") or data.get("package") or []  # pylock.toml, uv.lock
    return {
        canonical_name(p["name"]): str(p["version"])
        for p in packages
        if isinstance(p, dict) and p.get("name") and p.get("version")
    }


def read_pins(path: str) -> Pins:
    """The exact pins of a requirements file, ``pylock.toml`` or ``uv.lock``."""
    name = os.path.basename(path)
    if name.endswith((".toml", ".lock")):
        return Pins(path, _lock(path))
    ranges: Dict[str, str] = {}
    versions = _requirements_txt(path, ranges=ranges)
    return Pins(path, versions, {k: v for k, v in ranges.items() if k not in versions})


def resolve_pins(path: str, python: str = sys.executable, timeout: float = 600) -> Pins:
    """What pip's resolver would install for the requirements file ``path`` (nothing is installed)."""
    cmd = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report", "-", "-r", path]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise RequirementsError(f"cannot run pip's resolver: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RequirementsError(f"pip could not resolve {path}: {last}")
    try:
        report = json.loads(done.stdout)
        versions = {canonical_name(i["metadata"]["name"]): i["metadata"]["version"] for i in report.get("install", [])}
    except (ValueError, KeyError, TypeError) as exc:
        raise RequirementsError(f"pip's report for {path} is not one this reads ({exc})") from None
    return Pins(path, versions)


class Ranged(NamedTuple):
    """What a torch range of the file comes to in a matrix: the torch lines it admits patches
    of (``2.12``), and the newest such patch when they are one line."""

    requirement: str  # torch>=2.12,<2.13
    lines: Tuple[str, ...]
    torch: Optional[str]


def ranged_torch(matrix: Matrix, requirement: str) -> Ranged:
    """The torch releases ``matrix`` describes that ``requirement`` (the file's torch range)
    admits, by line: pip installs the newest its index has, which check cannot know offline,
    so one line is judged at its newest described patch and several are not judged."""
    specifier = _specifier(requirement)
    lines: Dict[str, str] = {}
    for line in matrix.torch:
        admitted = [p for p in line.patches if specifier.contains(p, prereleases=True)]
        if admitted:
            lines[str(line.minor)] = str(max(admitted))
    only = next(iter(lines.values())) if len(lines) == 1 else None
    return Ranged(requirement, tuple(lines), only)


def kept_ranges(
    pins: Pins, names: List[str], target: Optional[Target] = None
) -> Tuple[Dict[str, str], Tuple[str, ...], Tuple[str, ...]]:
    """What the file's ranges on ``names`` (the adapter, then its companions) come to: the
    installed release where the range admits it (pip keeps it, so it is judged), a note for
    each range either way, and the names whose installed release the range does not admit (pip
    would install one check cannot know offline): ``(kept, notes, unknown)``."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import InvalidVersion, Version

    from .facts import distribution_version

    kept: Dict[str, str] = {}
    notes: List[str] = []
    unknown: List[str] = []
    for name in names:
        asked = pins.range(name)
        if asked is None:
            continue
        installed = distribution_version(name, target)
        try:
            admits = installed is not None and Requirement(asked).specifier.contains(
                Version(installed), prereleases=True
            )
        except (InvalidRequirement, InvalidVersion):
            admits = False
        if admits and installed is not None:
            kept[name] = installed
            notes.append(
                f"{name} {installed}: installed, and {pins.source} asks for {asked}, which admits it (pip keeps it)"
            )
            continue
        unknown.append(name)
        have = (
            f"which the installed {name} {installed} does not satisfy" if installed else f"and no {name} is installed"
        )
        notes.append(
            f"{pins.source} asks for {asked}, {have}: which release pip installs depends on its index, so it is "
            f"not judged (pin it in the file, or --resolve asks pip's resolver)"
        )
    return kept, tuple(notes), tuple(unknown)
