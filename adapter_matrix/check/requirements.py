"""``check --requirements FILE``: judge what a requirements or lock file would install,
before anything is installed.

The file's exact pins (``torch==2.14.0``) become what ``check`` assumes, as ``--torch``,
``--adapter`` and ``--companion`` would: the matrix judges them, and an installed adapter
whose metadata pins the torch it was built for is refused beside another torch. Read:

- requirements files (``pip freeze``, ``pip-compile``, ``uv pip compile`` output), with
  ``-r``/``-c`` includes, environment markers evaluated for this interpreter, hashes and
  options ignored;
- ``pylock.toml`` (PEP 751) and ``uv.lock``: each package's ``name`` and ``version``.

A file of ranges (``torch>=2.4``) says nothing exact: ``--resolve`` asks pip's resolver
what it would install (``pip install --dry-run --ignore-installed --report``), which needs
the index the file names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Dict, List, NamedTuple, Optional

from ..names import canonical_name

__all__ = ["Pins", "read_pins", "resolve_pins", "RequirementsError"]


class RequirementsError(ValueError):
    """The file cannot be read or resolved: one line."""


class Pins(NamedTuple):
    """What a file would install: normalized name -> exact version, and the file's name."""

    source: str
    versions: Dict[str, str]

    def get(self, name: str) -> Optional[str]:
        return self.versions.get(canonical_name(name))


def _requirements_txt(path: str, seen: Optional[List[str]] = None) -> Dict[str, str]:
    from packaging.requirements import InvalidRequirement, Requirement

    seen = seen if seen is not None else []
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
            out.update(_requirements_txt(os.path.join(os.path.dirname(path), include.group(1)), seen))
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
        if exact:
            out[canonical_name(req.name)] = exact[0].version
    return out


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
    return Pins(path, _requirements_txt(path))


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
