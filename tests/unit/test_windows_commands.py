"""Every command generated for Windows is one cmd.exe takes: no single quote (issue 61, item 3).

cmd.exe passes single quotes on to pip (``'torch==2.8.0'`` is no requirement) and still
redirects at ``<`` and ``>``, so a command for Windows double-quotes a requirement that needs
it and leaves a plain one bare (:mod:`adapter_matrix.check.shell`). The commands come from one
place, ``check``'s fixes: this test asks for them on Windows over every cell of this repository's
matrix and of the fixture matrices (a fresh environment, and the cell's release beside another
torch line), for the selector's rows and the pytorch.org entry's ``windows`` commands, and for the
companions' own fixes. Each Windows command says the same as the POSIX one read by a POSIX
shell (only the quoting differs).
"""

from __future__ import annotations

import datetime as _dt
import shlex
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import pytest

from adapter_matrix.check.installed_companions import detect_companions, judge_companions, with_companions
from adapter_matrix.check.judgment import Environment, Fix
from adapter_matrix.check.shell import ANY, POSIX, WINDOWS, quoted, shell_of
from adapter_matrix.check.verdict import verdict
from adapter_matrix.matrix.loader import load
from adapter_matrix.matrix.model import Matrix, Value
from adapter_matrix.matrix.queries import cells
from adapter_matrix.tables.platform import platform_entry
from adapter_matrix.tables.views.selector import selector

from .helpers import FIXTURES, REPO

TODAY = _dt.date(2026, 1, 15)
MATRICES = [
    REPO / "compat.yaml",
    FIXTURES / "minimal.yaml",
    FIXTURES / "companions.yaml",
    *sorted((FIXTURES / "matrices").glob("*.yaml")),
]
_CMD_SPECIAL = set("<>|&^'")  # what cmd.exe reads outside double quotes (and the quote it does not know)


def _outside_double_quotes(command: str) -> str:
    """The characters of ``command`` cmd.exe reads itself: those outside double-quoted runs."""
    return "".join(part for i, part in enumerate(command.split('"')) if i % 2 == 0)


def _takes_on_windows(command: str) -> bool:
    """No single quote, and no character cmd.exe reads outside double quotes but the ``&&``
    that joins two commands (cmd.exe runs the second when the first succeeds)."""
    return "'" not in command and all(
        not (_CMD_SPECIAL & set(_outside_double_quotes(part))) for part in command.split(" && ")
    )


def _windows_env(matrix: Matrix, env: Environment) -> Environment:
    """``env`` on a Windows machine: its ``os`` dimension says so where the matrix has one."""
    declared = matrix.dimension("os")
    dims = dict(env.dimensions)
    if declared is not None:
        dims["os"] = next(v for v in declared.values if v.text.lower().startswith("win"))
    return env._replace(dimensions=tuple(dims.items()), platform_os="windows")


def _picks(matrix: Matrix) -> Iterator[Environment]:
    """Per cell: a fresh environment of its Python and dimension values, and one with its
    release installed beside the newest torch of the next older line (or of the newest)."""
    lines = sorted(matrix.torch, key=lambda line: line.minor)
    for cell in cells(matrix, today=TODAY):
        dims: Tuple[Tuple[str, Optional[Value]], ...] = tuple(cell.dimensions)
        yield Environment(python=cell.python, dimensions=dims)
        here = next(i for i, line in enumerate(lines) if line.minor == cell.line.minor)
        other = lines[here - 1] if here else lines[-1]
        yield Environment(python=cell.python, torch=max(other.patches), adapter=cell.release.version, dimensions=dims)


def _fixes(matrix: Matrix, env: Environment) -> List[Fix]:
    return list(verdict(matrix, env, TODAY).fixes)


@pytest.mark.parametrize("path", MATRICES, ids=[str(p.relative_to(REPO)) for p in MATRICES])
def test_no_fix_for_windows_has_a_single_quote(path: Path):
    matrix = load(str(path)).matrix
    seen = 0
    for i, env in enumerate(_picks(matrix)):
        windows_env = _windows_env(matrix, env)
        on_windows = _fixes(matrix, windows_env)
        for fix in on_windows:
            assert fix.shell in (WINDOWS, ANY)  # ANY: a cell of every OS, one command for each shell
            for command in fix.commands:
                seen += 1
                assert _takes_on_windows(command), (path.name, env, command)
        # the same fixes as on Linux, quoted for cmd.exe: a POSIX shell reads both alike (a sample)
        if matrix.dimension("os") is None and i % 7 == 0:
            on_linux = _fixes(matrix, windows_env._replace(platform_os="linux"))
            assert [[shlex.split(c) for c in f.commands] for f in on_windows] == [
                [shlex.split(c) for c in f.commands] for f in on_linux
            ]
    assert seen, path.name


@pytest.mark.parametrize("path", MATRICES, ids=[str(p.relative_to(REPO)) for p in MATRICES])
def test_the_selector_and_the_platform_entry_write_no_single_quote_for_windows(path: Path):
    matrix = load(str(path)).matrix
    declared = matrix.dimension("os")
    windows_listed = declared is not None and any(v.text.lower().startswith("win") for v in declared.values)
    # picks=False: the rows' commands are the same without check's answer for every pick (it
    # adds only indices of other rows, and costs torch_npu 20-50 s on this day)
    entries = selector(matrix, today=TODAY, picks=False).data["combinations"]
    for entry in entries:
        os_name = entry["dimensions"].get("os")
        # a row for Windows, or for every OS of a matrix that lists Windows: cmd.exe takes it
        if (os_name or "").lower().startswith("win") or (os_name is None and windows_listed):
            assert all(_takes_on_windows(c) for c in entry["commands"]), entry
    if windows_listed:
        assert any((e["dimensions"].get("os") or "").startswith("win") and e["commands"] for e in entries)
    try:
        data = platform_entry(matrix, "https://example.org/support", today=TODAY).data
    except ValueError:  # no supported combination for Linux: no entry to publish
        return
    for channel in ("stable", "preview"):
        command = data.get(channel, {}).get("windows")
        assert command is None or _takes_on_windows(command), (channel, command)


def test_ipex_windows_rows_are_written_for_cmd_and_its_linux_rows_for_sh():
    matrix = load(str(FIXTURES / "matrices" / "ipex.yaml")).matrix
    rows = {
        (e["release"], e["dimensions"].get("os")): e["commands"]
        for e in selector(matrix, today=TODAY, picks=False).data["combinations"]
    }
    assert rows[("2.7.10+xpu", "windows")][0] == (
        "pip install torch==2.7.0+xpu --index-url https://download.pytorch.org/whl/xpu"
    )
    assert rows[("2.7.10+xpu", "linux")][0] == (
        "pip install 'torch==2.7.0+xpu' --index-url https://download.pytorch.org/whl/xpu"
    )
    # a release that names no OS serves both: written so that either shell takes it
    assert rows[("2.6.10+xpu", None)][1].startswith("pip install intel-extension-for-pytorch==2.6.10+xpu ")


def test_a_range_is_double_quoted_for_windows_and_single_quoted_for_posix():
    assert quoted("torch>=2.15,<2.16", WINDOWS) == '"torch>=2.15,<2.16"'
    assert quoted("torch>=2.15,<2.16", ANY) == '"torch>=2.15,<2.16"'
    assert quoted("torch>=2.15,<2.16", POSIX) == "'torch>=2.15,<2.16'"
    assert quoted("torch==2.8.0+cpu", WINDOWS) == "torch==2.8.0+cpu"
    assert quoted("torch==2.8.0+cpu") == "'torch==2.8.0+cpu'"
    # this repository's matrix on Windows: the fix of an unknown torch, quoted for cmd.exe
    matrix = load(str(REPO / "compat.yaml")).matrix
    env = Environment(python=cells(matrix, today=TODAY)[0].python, platform_os="windows")
    assert shell_of(matrix, env) == WINDOWS
    (first, *_rest) = _fixes(matrix, env)
    assert first.commands and all(c.count('"') in (0, 2, 4) and "'" not in c for c in first.commands)


def test_a_companion_fix_on_windows_is_quoted_for_cmd():
    matrix = load(str(FIXTURES / "companions.yaml")).matrix
    from packaging.version import Version

    from adapter_matrix.matrix.model import PythonVersion

    env = Environment(
        python=PythonVersion.parse("3.11"),
        torch=Version("2.2.2+cpu"),
        adapter=Version("2.0.0"),
        platform_os="windows",
    )
    found = detect_companions(matrix, {"torchvision": "0.16.0+cpu", "torchaudio": "2.2.0", "demo-vision": "1.0.0"})
    states = judge_companions(matrix, env, found)
    fixed = [s.fix for s in states if s.fix is not None]
    assert fixed, [s.state for s in states]
    carried = with_companions(verdict(matrix, env._replace(torch=Version("2.1.2+cpu")), TODAY), matrix, states)
    commands = [c for f in fixed + list(carried.fixes) for c in f.commands]
    assert commands and all(_takes_on_windows(c) for c in commands), commands
