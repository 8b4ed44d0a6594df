"""The per-user cache: compiled matrices and device builds.

Location: ``$ADAPTER_MATRIX_CACHE``, else ``$XDG_CACHE_HOME/adapter-matrix``, else
``~/.cache/adapter-matrix``.

A *compiled matrix* is the validated model pickled under the SHA-256 of the file's
bytes (plus the tool version and the file's display name). ``check`` and the runtime
guard read it instead of parsing YAML: same answers, a fraction of the start-up time.
A changed file has a new hash, so a stale entry is never read.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from typing import Optional

from .. import __version__

__all__ = ["cache_root", "compiled_matrix_path", "load_matrix"]


def cache_root() -> str:
    explicit = os.environ.get("ADAPTER_MATRIX_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "adapter-matrix")


def _model_shape() -> bytes:
    """The model types and their fields: a pickle of a model whose types have other fields
    (another checkout, a merge, a development step) is never read, even at the same version."""
    from . import model

    types = sorted((name, getattr(kind, "_fields", ())) for name, kind in vars(model).items() if isinstance(kind, type) and issubclass(kind, tuple))
    return repr(types).encode()


def compiled_matrix_path(raw: bytes, display_name: str) -> str:
    digest = hashlib.sha256()
    for part in (__version__.encode(), _model_shape(), display_name.encode(), b"py%d.%d" % sys.version_info[:2], raw):
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
