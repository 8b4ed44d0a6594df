"""Detector presets: the installed version of a vendor toolkit, read where its installers
put it, in each layout they have used. A matrix names one instead of writing paths and
regexes (``detect: [{preset: cann}]``); the paths below change with the vendors' layouts,
the matrices that use them do not.

- ``cann``: Ascend CANN. The toolkit ``set_env.sh`` selected (``$ASCEND_HOME_PATH``,
  ``$ASCEND_TOOLKIT_HOME``) first; else under ``/usr/local/Ascend`` (or ``~/Ascend``, a
  user's install) the 8.5 layout, ``cann`` or ``cann-<version>``, then the earlier one,
  ``ascend-toolkit/latest``. The version is the ``version=`` of its
  ``<arch>-linux/ascend_toolkit_install.info`` (what torch_npu reads), else its
  ``version.cfg``, else the folder's name (``cann-8.5.0``, ``ascend-toolkit/8.0.RC3``).
- ``ascend-driver``: ``/usr/local/Ascend/driver/version.info``'s ``Version=``.
- ``musa``: Moore Threads' toolkit: ``musa_toolkits_version``'s JSON ``version``, else
  the ``musa-<version>`` folder ``$MUSA_HOME`` (``/usr/local/musa``) links to.
- ``oneapi``: Intel oneAPI's compiler: ``$CMPLR_ROOT`` (what ``setvars.sh`` selected), else
  under ``$ONEAPI_ROOT`` (``/opt/intel/oneapi``) ``compiler/latest``'s target or the newest
  ``<year>.<minor>`` folder of the unified layout (2024.0 and later).
- ``neuware``: Cambricon's CTR-SDK: the ``Neuware Version`` line of
  ``$NEUWARE_HOME/version.txt`` (``/usr/local/neuware``), as torch_mlu's build reads it.

Each returns ``(version, where it was read, None)`` or ``(None, None, why not)``. Under
``check --env IMAGE_ROOT`` the paths are read inside the image.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Callable, Dict, List, Mapping, Optional, Tuple

__all__ = ["PRESETS", "run_preset"]

Answer = Tuple[Optional[str], Optional[str], Optional[str]]
_VERSION_LINE = re.compile(r"^\s*version\s*=\s*([^\s\]]+)", re.I | re.M)


def _read(path: str, limit: int = 1 << 16) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


def _version_key(text: str) -> Tuple[Tuple[int, int, str], ...]:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-_]", text))


class _Where:
    """Paths as the judged environment sees them (an image's root), and its variables."""

    def __init__(self, root: str, environ: Mapping[str, str]) -> None:
        self.root, self.environ = root, environ

    def path(self, path: str) -> str:
        path = os.path.expanduser(path)
        if self.root in ("", "/") or not os.path.isabs(path):
            return path
        return os.path.join(self.root, path.lstrip("/"))

    def shown(self, path: str) -> str:
        """``path`` as the environment names it (without the image's root)."""
        if self.root in ("", "/"):
            return path
        return "/" + os.path.relpath(path, self.root)


def _cann_version(folder: str) -> Tuple[Optional[str], str]:
    """The CANN version of a toolkit folder, and the file (or name) it was read from."""
    real = os.path.realpath(folder)
    for pattern in (
        "*-linux/ascend_toolkit_install.info",
        "ascend_toolkit_install.info",
        "*-linux/ascend_*_install.info",
    ):
        for info in sorted(glob.glob(os.path.join(glob.escape(real), pattern))):
            m = _VERSION_LINE.search(_read(info) or "")
            if m:
                return m.group(1), info
    cfg = _read(os.path.join(real, "version.cfg"))
    if cfg:
        m = _VERSION_LINE.search(cfg) or re.search(r"\[\s*([0-9][^:\]\s]*)", cfg)
        if m:
            return m.group(1), os.path.join(real, "version.cfg")
    name = os.path.basename(real.rstrip("/"))
    m = re.match(r"^(?:cann-)?(\d+\.\d+\.(?:\d+|RC\d+|T\d+)\S*)$", name, re.I)
    if m:
        return m.group(1), real
    return None, real


_COMPATIBLE = re.compile(r"^\s*compatible_version\s*=\s*(\S+)", re.I | re.M)
_INNER = re.compile(r"^\s*innerversion\s*=\s*(\S+)", re.I | re.M)


def _cann_source(where: _Where, source: str) -> str:
    """Where the CANN version was read, and, when its install info lists them, the toolkit's
    own compatible versions (``compatible_version=[V100R001C15],...``): inner release codes,
    shown as the toolkit states them (a matrix names its compatible series in CANN versions)."""
    shown = where.shown(source)
    if not source.endswith("install.info"):
        return shown
    text = _read(source) or ""
    compatible = _COMPATIBLE.search(text)
    if compatible is None:
        return shown
    inner = _INNER.search(text)
    own = f"innerversion {inner.group(1)}, " if inner else ""
    return f"{shown}; it states {own}compatible_version {compatible.group(1)}"


def _cann(where: _Where) -> Answer:
    tried: List[str] = []
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = where.environ.get(var)
        if value:
            folder = where.path(value)
            version, source = _cann_version(folder)
            if version:
                return version, f"${var} ({_cann_source(where, source)})", None
            tried.append(f"${var}={value} (no version found there)")
    bases = [where.path("/usr/local/Ascend"), where.path("~/Ascend")]
    for base in bases:
        linked = os.path.join(base, "cann")  # 8.5: the link set_env.sh lives behind
        if os.path.isdir(linked):
            version, source = _cann_version(linked)
            if version:
                return version, _cann_source(where, source), None
        installed = sorted(
            (p for p in glob.glob(os.path.join(glob.escape(base), "cann-*")) if os.path.isdir(p)),
            key=lambda p: _version_key(os.path.basename(p)[5:]),
            reverse=True,
        )
        for folder in installed:
            version, source = _cann_version(folder)
            if version:
                more = f"; the newest of {len(installed)} installed" if len(installed) > 1 else ""
                return version, _cann_source(where, source) + more, None
        latest = os.path.join(base, "ascend-toolkit", "latest")  # before 8.5
        if os.path.isdir(latest):
            version, source = _cann_version(latest)
            if version:
                return version, _cann_source(where, source), None
        tried.append(where.shown(base))
    return (
        None,
        None,
        "no CANN toolkit found (looked at " + ", ".join(tried) + "; `source set_env.sh` sets $ASCEND_HOME_PATH)",
    )


def _ascend_driver(where: _Where) -> Answer:
    path = where.path("/usr/local/Ascend/driver/version.info")
    text = _read(path)
    if text is None:
        return None, None, f"{where.shown(path)} does not exist (no Ascend driver)"
    m = _VERSION_LINE.search(text)
    if not m:
        return None, None, f"{where.shown(path)} has no Version= line"
    return m.group(1), where.shown(path), None


def _musa(where: _Where) -> Answer:
    if where.root in ("", "/"):
        from .bounded import run_command

        done = run_command(("musa_toolkits_version",), 5.0)
        if done.error is None and done.returncode == 0:
            m = re.search(r'"version"\s*:\s*"([^"]+)"', done.output.decode("utf-8", "replace"))
            if m:
                return m.group(1), "command musa_toolkits_version", None
    home = where.path(where.environ.get("MUSA_HOME") or "/usr/local/musa")
    real = os.path.realpath(home)
    m = re.match(r"^musa[-_]?(\d+\.\d+(?:\.\d+)?)", os.path.basename(real))
    if m:
        return m.group(1), f"{where.shown(home)} -> {os.path.basename(real)}", None
    if os.path.isdir(home):
        return None, None, f"{where.shown(home)} names no version and musa_toolkits_version did not answer"
    return None, None, f"no MUSA toolkit ({where.shown(home)} does not exist, musa_toolkits_version did not answer)"


def _oneapi(where: _Where) -> Answer:
    cmplr = where.environ.get("CMPLR_ROOT")
    if cmplr:
        name = os.path.basename(os.path.realpath(where.path(cmplr)).rstrip("/"))
        if re.match(r"^\d{4}\.\d+", name):
            return name, f"$CMPLR_ROOT ({cmplr})", None
    root = where.path(where.environ.get("ONEAPI_ROOT") or "/opt/intel/oneapi")
    latest = os.path.join(root, "compiler", "latest")
    if os.path.isdir(latest):
        name = os.path.basename(os.path.realpath(latest))
        if re.match(r"^\d{4}\.\d+", name):
            return name, f"{where.shown(latest)} -> {name}", None
    unified = sorted(
        (os.path.basename(p) for p in glob.glob(os.path.join(glob.escape(root), "20[0-9][0-9].*")) if os.path.isdir(p)),
        key=_version_key,
    )
    if unified:
        return unified[-1], where.shown(os.path.join(root, unified[-1])), None
    return None, None, f"no oneAPI compiler under {where.shown(root)} (and $CMPLR_ROOT is not set: `source setvars.sh`)"


def _neuware(where: _Where) -> Answer:
    home = where.path(where.environ.get("NEUWARE_HOME") or "/usr/local/neuware")
    path = os.path.join(home, "version.txt")
    text = _read(path)
    if text is None:
        return None, None, f"{where.shown(path)} does not exist (no Cambricon neuware; $NEUWARE_HOME names it)"
    m = re.search(r"Neuware Version\s*:?\s*(\S+)", text)
    if not m:
        return None, None, f"{where.shown(path)} has no 'Neuware Version' line"
    return m.group(1), where.shown(path), None


PRESETS: Dict[str, Callable[[_Where], Answer]] = {
    "cann": _cann,
    "ascend-driver": _ascend_driver,
    "musa": _musa,
    "oneapi": _oneapi,
    "neuware": _neuware,
}


def run_preset(name: str, root: str = "/", environ: Optional[Mapping[str, str]] = None) -> Answer:
    """``(version, source, None)`` or ``(None, None, why not)`` of preset ``name``."""
    preset = PRESETS.get(name)
    if preset is None:
        return None, None, f"unknown preset {name!r} (known: {', '.join(PRESETS)})"
    return preset(_Where(root, os.environ if environ is None else environ))
