"""Compiled matrices, in the per-user cache (:mod:`adapter_matrix.memo`: its folder and the
rule of which entries are trusted).

A *compiled matrix* is the validated model pickled under the BLAKE2b digest of the
file's bytes (plus the tool version, the Python, the file's display name, and the size
and time of every module of ``adapter_matrix/matrix``, which builds the model: a
development checkout that changes the model between versions never reads a pickle of
the old one). ``check`` and the runtime
guard read it instead of parsing YAML: same answers, a fraction of the start-up time.
A changed file has a new hash, so a stale entry is never read.

The cache does not trust the file system (docs/security.md): a compiled matrix is
loaded only when it and every folder up to the cache's root belong to this user (or
root) and are writable by no one else, and it is unpickled with an allowlist: only the
model's own named tuples, :class:`~datetime.date` and packaging's ``Version``,
``Specifier`` and ``SpecifierSet`` can be built from it, so a planted pickle cannot call
anything else. An entry of the wrong shape is rebuilt. Folders are created 0700 and
entries 0600, through :func:`~adapter_matrix.files.atomic_write`.
"""

from __future__ import annotations

import os
import sys

try:  # built into CPython; `import hashlib` would first load OpenSSL (~6 ms of every `check`)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from .._version import __version__
from ..memo import cache_folder, trusted_entry

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a warm `check` never does)
if TYPE_CHECKING:
    from typing import Optional, Union

    from .model import LayerResult, LoadResult

__all__ = ["compiled_matrix_path", "load_matrix", "load_any"]


_stamp: Optional[bytes] = None


def _model_stamp() -> bytes:
    """Name, size and modification time of every module of this folder, the model's package
    (one listing and a few stat calls, once per process): an edited model, reader or loader
    is a new key, an unchanged install the same. No hand-kept list to forget a module in."""
    global _stamp
    if _stamp is None:
        here = os.path.dirname(os.path.abspath(__file__))
        stats = []
        try:
            names = sorted(n for n in os.listdir(here) if n.endswith(".py"))
        except OSError:  # a zipped install: the version alone decides
            names = []
        for name in names:
            try:
                st = os.stat(os.path.join(here, name))
                stats.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                pass
        _stamp = ";".join(stats).encode()
    return _stamp


def compiled_matrix_path(raw: bytes, display_name: str) -> str:
    digest = blake2b(digest_size=16)
    for part in (__version__.encode(), _model_stamp(), display_name.encode(), b"py%d.%d" % sys.version_info[:2], raw):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return os.path.join(cache_folder("matrices"), digest.hexdigest()[:32] + ".pickle")


# the modules whose named tuples and enums make up the model
_MODEL_PACKAGES = ("adapter_matrix.matrix.model", "adapter_matrix.matrix.diagnostics", "adapter_matrix.matrix.status")
_ALLOWED = {  # what a compiled matrix may contain besides plain values
    "datetime": {"date"},
    "packaging.version": {"Version"},
    "packaging.specifiers": {"Specifier", "SpecifierSet"},
}


def _model_unpickler(stream: object) -> object:
    """An unpickler that builds the model's named tuples and the values above, nothing else:
    a pickle cannot name ``os.system`` or any other callable. (``pickle`` is imported here:
    a warm ``check`` answers from its memo without the model, and pickle costs it 2 ms.)"""
    import enum
    import pickle

    class ModelUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> object:
            if module in _MODEL_PACKAGES:
                found = super().find_class(module, name)
                if (
                    isinstance(found, type)
                    and (issubclass(found, tuple) or issubclass(found, enum.Enum))
                    and not name.startswith("_")
                ):
                    return found
            elif name in _ALLOWED.get(module, ()):
                return super().find_class(module, name)
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a compiled matrix")

    return ModelUnpickler(stream)  # type: ignore[arg-type]


def _read(path: str) -> object:
    import io

    from ..files import read_regular

    return _model_unpickler(io.BytesIO(read_regular(path, follow=False))).load()  # type: ignore[attr-defined]


def _store(path: str, value: object) -> None:
    import pickle

    from ..files import atomic_write, private_folder

    try:
        private_folder(os.path.dirname(path))
        atomic_write(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), mode=0o600, follow=False)
    except OSError:  # a read-only home is not an error: the next run parses again
        pass


def load_matrix(path: os.PathLike[str] | str, *, use_cache: bool = True) -> LoadResult:
    """Like :func:`adapter_matrix.matrix.loader.load`, served from the compiled cache when possible."""
    result = _load(path, use_cache, layers=False)
    if TYPE_CHECKING:  # layers=False: load_bytes's LoadResult (a layer's file is an error)
        assert isinstance(result, LoadResult)
    return result


def load_any(path: os.PathLike[str] | str, *, use_cache: bool = True) -> Union[LoadResult, LayerResult]:
    """An adapter's matrix or a layer's (``layer:``), whichever the file is, from the same cache."""
    return _load(path, use_cache, layers=True)


def _load(path: os.PathLike[str] | str, use_cache: bool, layers: bool) -> Union[LoadResult, LayerResult]:
    from .diagnostics import display_path, read_matrix_file

    name = os.fspath(path)
    raw = read_matrix_file(name)
    display = display_path(name)
    compiled: Optional[str] = compiled_matrix_path(raw, display) if use_cache else None
    if compiled is not None and trusted_entry(compiled):
        try:
            cached = _read(compiled)
        except Exception:
            cached = None
        from .model import Layer, LayerResult, LoadResult, Matrix

        if isinstance(cached, LoadResult) and isinstance(cached.matrix, Matrix) and isinstance(cached.warnings, list):
            return cached
        if layers and isinstance(cached, LayerResult) and isinstance(cached.layer, Layer):
            return cached
    from .loader import load_any_bytes, load_bytes

    result = load_any_bytes(raw, display) if layers else load_bytes(raw, display)
    if compiled is not None:
        _store(compiled, result)
    return result
