"""C++ names for people: ``_ZN5torch10ValueErrorC1EPKcz`` is
``torch::ValueError::ValueError(char const*, ...)``.

``c++filt`` (binutils) demangles when it is on ``PATH``: one process for all the names
of a report. Without it, :mod:`.itanium` demangles the common shapes of the Itanium C++
ABI itself, and a name it cannot read is shown mangled (still exact, still searchable).
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Dict, Sequence

__all__ = ["demangle_all"]


def demangle_all(names: Sequence[str], use_cxxfilt: bool = True) -> Dict[str, str]:
    """Each mangled name with its readable form (a plain C name maps to itself)."""
    wanted = [n for n in dict.fromkeys(names) if n.startswith("_Z")]
    out = {n: n for n in names}
    if not wanted:
        return out
    program = shutil.which("c++filt") if use_cxxfilt else None
    if program is not None:
        try:
            done = subprocess.run(
                [program], input="\n".join(wanted) + "\n", capture_output=True, text=True, timeout=10, check=False
            )
            lines = done.stdout.splitlines()
            if done.returncode == 0 and len(lines) == len(wanted):
                out.update(zip(wanted, lines))
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    from .itanium import demangle

    out.update((n, demangle(n)) for n in wanted)
    return out
