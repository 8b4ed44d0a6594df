"""A pip requirement as the shell of an OS takes it: every command ``check`` writes quotes through here.

A requirement such as ``torch>=2.15,<2.16`` holds characters a shell reads itself (``<``
and ``>`` redirect), so a command quotes it. POSIX shells take single quotes, which keep
every character as is: ``pip install 'torch>=2.15,<2.16'``. Windows' cmd.exe does not know
single quotes (it passes them on to pip, and still redirects at ``<``), so a command for
Windows quotes with double quotes, which cmd.exe and PowerShell both take, and only where
the requirement needs it: ``pip install torch==2.8.0+cpu``, ``pip install "torch>=2.7,<2.8"``.

Which shell a fix's commands are for (:func:`shell_of`), when the matrix has an ``os``
dimension: the OS of the cell the fix lands in (the ``os`` its release names); a cell of a
release that names no OS serves every OS, and when Windows is among them its commands are
written so that both shells take them, as for Windows (a requirement's characters mean the
same inside double quotes in a POSIX shell): one text, so the selector page's row and
``check``'s fix stay the same on every OS. Without an ``os`` dimension, the commands are for
the OS ``check`` runs on (:attr:`~adapter_matrix.check.judgment.Environment.platform_os`),
and for a POSIX shell where none is known (a generated page).
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Mapping, Optional

if TYPE_CHECKING:  # cheap to import: an adapter's activation quotes its warning's command here
    from ..matrix.model import Matrix, Value
    from .judgment import Environment

__all__ = ["POSIX", "WINDOWS", "ANY", "is_windows", "quoted", "shell_of", "host_shell"]

POSIX = "posix"  # sh, bash, zsh: single quotes
WINDOWS = "windows"  # cmd.exe and PowerShell: double quotes where needed
ANY = "any"  # a command either shell takes: written as for Windows

# what cmd.exe and PowerShell both read as part of a plain word: a requirement of only these needs no quotes
_PLAIN_ON_WINDOWS = re.compile(r"[A-Za-z0-9._+=-]+")


def is_windows(os_name: Optional[str]) -> bool:
    """Whether ``os_name`` (an ``os`` dimension's value, as the built-in detector names it) is Windows."""
    return os_name is not None and os_name.lower().startswith("win")


def quoted(requirement: str, shell: str = POSIX) -> str:
    """``requirement`` as one argument of a pip command typed in ``shell``: single-quoted
    for a POSIX shell; for Windows (or either shell) double-quoted, or bare when it holds
    no character cmd.exe, PowerShell or a POSIX shell reads (``torch==2.8.0+cpu``)."""
    if shell == POSIX:
        return f"'{requirement}'"
    if _PLAIN_ON_WINDOWS.fullmatch(requirement):
        return requirement
    return f'"{requirement}"'


def shell_of(matrix: Matrix, env: Environment, cell_dims: Optional[Mapping[str, Value]] = None) -> str:
    """The shell of the commands that reach a cell (``cell_dims``: the dimension values its
    release constrains) from ``env``: :data:`POSIX`, :data:`WINDOWS` or :data:`ANY` (see the
    module's docstring). Without ``cell_dims``: the shell of ``env`` itself."""
    declared = matrix.dimension("os")
    if declared is not None:
        value = (cell_dims or {}).get("os") if cell_dims is not None else env.dimension("os")
        if value is not None and not value.absent:
            return WINDOWS if is_windows(value.text) else POSIX
        if cell_dims is not None and any(is_windows(v.text) for v in declared.values):
            return ANY  # a cell of every OS: one command each shell takes
    return WINDOWS if is_windows(env.platform_os) else POSIX


def host_shell() -> str:
    """The shell of the OS this process runs on: for a command a message prints here."""
    return WINDOWS if sys.platform == "win32" else POSIX
