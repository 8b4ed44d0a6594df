"""The per-user cache: compiled matrices and device builds.

Location: ``$ADAPTER_MATRIX_CACHE``, else ``$XDG_CACHE_HOME/adapter-matrix``, else
``~/.cache/adapter-matrix``.

A *compiled matrix* is the validated model pickled under the BLAKE2b digest of the
file's bytes (plus the tool version, the Python, the file's display name, and the size
and time of the modules that build the model: a development checkout that changes the
model between versions never reads a pickle of the old one). ``check`` and the runtime
guard read it instead of parsing YAML: same answers, a fraction of the start-up time.
A changed file has a new hash, so a stale entry is never read.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Optional

try:  # built into CPython; `import hashlib` would first load OpenSSL (~6 ms of every `check`)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from .._version import __version__

__all__ = ["cache_root", "compiled_matrix_path", "load_matrix"]


def cache_root() -> str:
    explicit = os.environ.get("ADAPTER_MATRIX_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "adapter-matrix")


_MODEL_MODULES = ("model.py", "loader.py", "schema.py", "consistency.py", "source.py", "diagnostics.py", "companions.py")
_stamp: Optional[bytes] = None


def _model_stamp() -> bytes:
    """Size and modification time of the modules that build the pickled model (a few stat
    calls, once per process): an edited model is a new key, an unchanged install the same."""
    global _stamp
    if _stamp is None:
        here = os.path.dirname(os.path.abspath(__file__))
        stats = []
        for name in _MODEL_MODULES:
            try:
                st = os.stat(os.path.join(here, name))
                stats.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:  # a zipped install: the version alone decides
                pass
        _stamp = ";".join(stats).encode()
    return _stamp


def compiled_matrix_path(raw: bytes, display_name: str) -> str:
    digest = blake2b(digest_size=16)
    for part in (__version__.encode(), _model_stamp(), display_name.encode(), b"py%d.%d" % sys.version_info[:2], raw):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return os.path.join(cache_root(), "matrices", digest.hexdigest()[:32] + ".pickle")


def _store(path: str, value: object) -> None:
    import tempfile  # only on a cache miss

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:  # a read-only home is not an error: the next run parses again
        pass


def load_matrix(path: "os.PathLike[str] | str", *, use_cache: bool = True):  # -> LoadResult
    """Like :func:`adapter_matrix.matrix.loader.load`, served from the compiled cache when possible."""
    from .diagnostics import display_path, read_matrix_file

    name = os.fspath(path)
    raw = read_matrix_file(name)
    display = display_path(name)
    compiled: Optional[str] = compiled_matrix_path(raw, display) if use_cache else None
    if compiled is not None:
        try:
            with open(compiled, "rb") as fh:
                return pickle.load(fh)
        except Exception:  # missing, truncated, or from an incompatible version: rebuild
            pass
    from .loader import load_bytes

    result = load_bytes(raw, display)
    if compiled is not None:
        _store(compiled, result)
    return result
