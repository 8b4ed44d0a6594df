"""``adapter-matrix check`` answered again: the earlier answer to the same question, while
nothing it was decided from has changed.

A check's answer depends on its command line, this tool's code, the Python, the day, the
matrix files, and the environment: what the folders of the import path hold (torch's, the
adapter's and each companion's version; the ``torch.backends`` entry points), the adapter's
libraries against torch's (the binary check), and what a detector reads. A warm ``check``
finds its answer without the model, ``packaging`` or rich (:mod:`adapter_matrix.memo`):

- the *question* (the key) is the command line, the tool's version, the interpreter, today's
  date, the working folder, the import path, the matrices found, whether the output is colored,
  and the environment variables the tool reads;
- the *deps* (stamped) are each matrix file, each folder of the import path (an install,
  upgrade or uninstall changes its folder) and every module of this package (an edited
  checkout answers anew);
- the binary and autoload sections stored with the answer must still be what their own
  stamped stores hold (the caller checks: :mod:`adapter_matrix.binary` sits outside ``check``).

Only a plain question is remembered: no ``--env``, ``--requirements``, ``--constraints``,
``--deep`` or ``--adapter DIST``; no matrix whose extra dimensions a detector reads (a file or
a command can change without a stamp); and no run that said anything on stderr. Those
answer the long way each time.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .._version import __version__
from ..memo import Stamp, digest, entry_path, load_stamped, stamp, store_stamped

__all__ = ["FORMAT", "question", "stamps", "recall", "remember"]

FORMAT = 1  # bumped when the stored answer's shape changes
KIND = "check-answers"
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ENVIRONMENT = ("LD_LIBRARY_PATH", "TORCH_DEVICE_BACKEND_AUTOLOAD")  # besides ADAPTER_MATRIX_*


def question(options: Mapping[str, Any], located: Sequence[Tuple[str, str]], color: bool, paths: Sequence[str]) -> str:
    """The key of a check: everything its answer depends on that is not a file's stamp."""
    environ = sorted((k, v) for k, v in os.environ.items() if k.startswith("ADAPTER_MATRIX_") or k in _ENVIRONMENT)
    parts = {
        "format": FORMAT,
        "version": __version__,
        "python": [sys.executable, sys.version, getattr(sys, "abiflags", "")],
        "today": time.strftime("%Y-%m-%d"),  # the local date, as datetime.date.today() (not imported: 2 ms)
        "cwd": os.getcwd(),
        "options": dict(options),
        "located": [list(m) for m in located],
        "color": color,
        "paths": list(paths),
        "environ": environ,
    }
    return digest([json.dumps(parts, sort_keys=True)])


def stamps(located: Sequence[Tuple[str, str]], paths: Sequence[str]) -> Dict[str, Stamp]:
    """The deps of a check, stamped before it reads them: a file that changes while it runs
    leaves a stamp that no longer matches, so the next check answers anew."""
    deps: Dict[str, Stamp] = {path: stamp(path) for _origin, path in located}
    deps.update((p, stamp(p)) for p in paths if p)
    for folder, dirs, files in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        deps.update(
            (os.path.join(folder, f), stamp(os.path.join(folder, f))) for f in sorted(files) if f.endswith(".py")
        )
    return deps


def recall(key: str) -> Optional[Dict[str, Any]]:
    """The stored answer to ``key`` while its deps are unchanged: ``code`` (the exit code),
    ``stdout`` (what was printed), ``binary`` (``[distribution, pin, section]`` each) and
    ``autoload`` (the section), for the caller to confirm against their stores."""
    found = load_stamped(entry_path(KIND, key))
    if found is None:
        return None
    ok = (
        isinstance(found.get("code"), int)
        and isinstance(found.get("stdout"), str)
        and isinstance(found.get("binary"), list)
        and all(isinstance(b, list) and len(b) == 3 and isinstance(b[0], str) for b in found["binary"])
        and isinstance(found.get("autoload"), dict)
    )
    return found if ok else None


def remember(
    key: str,
    deps: Dict[str, Stamp],
    code: int,
    stdout: str,
    binary: List[List[Any]],
    autoload: Dict[str, Any],
) -> None:
    """Store an answer with ``deps`` (:func:`stamps`, taken before it was decided)."""
    report = {"code": code, "stdout": stdout, "binary": binary, "autoload": autoload}
    store_stamped(entry_path(KIND, key), deps, report)
