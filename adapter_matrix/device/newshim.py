"""``new-shim VERSION``: start supporting a new torch minor.

1. scaffold ``<shims>/torch_X_Y.py`` from the nearest existing shim (a subclass that
   changes nothing yet);
2. add the minor to ``compat.yaml``: upstream facts copied from the previous minor
   (to be checked with ``validate --upstream``), a shim range for it (narrowing an
   open-ended previous range), the newest release widened to claim it as
   ``experimental`` — editing the text in place, so comments and layout stay;
3. list what the probes of the two torch releases disagree on, as the to-do list.

The edited file must load cleanly before anything is written.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple
from typing import Mapping as PyMapping  # a probe's JSON; Mapping below is the YAML node

from packaging.version import Version

from ..errors import AdapterMatrixError
from ..files import FileWriteError, atomic_write, read_keeping_newlines, unified_diff
from ..matrix.diagnostics import MatrixError
from ..matrix.loader import load_text
from ..matrix.model import Matrix, minor_line
from ..matrix.model import ShimRange as ShimRange  # migration/torch_release.py names it through this module
from ..matrix.queries import shim_for
from ..matrix.source import Mapping, Node, Sequence, parse
from ..matrix.textedit import Edit, apply_edits, block_end, line_offsets, replace_scalar, section_stop
from .probe import diff

__all__ = [
    "NewShimError",
    "Scaffold",
    "scaffold",
    "apply",
    "recorded_probe",
    "shim_range_edits",
    "skeleton_text",
    "nearest",
]


class NewShimError(AdapterMatrixError, ValueError):
    """The new shim cannot be scaffolded; the message says why."""


@dataclass(frozen=True)
class Scaffold:
    module: str
    module_path: Path
    module_text: str
    matrix_text: str
    matrix_diff: str
    todo: List[str]


def _module_name(package: str, minor: Version) -> str:
    return f"{package}.torch_{minor.major}_{minor.minor}"


def nearest(matrix: Matrix, minor: Version) -> Tuple[ShimRange, Version]:
    """The shim serving the newest described torch below ``minor``, and that torch."""
    below = [line for line in matrix.torch if line.minor < minor]
    for line in reversed(below):
        shim = shim_for(matrix, line.latest)
        if shim is not None:
            return shim, line.minor
    raise NewShimError(f"no shim serves a torch below {minor} to start from")


def recorded_probe(matrix_path: Path, matrix: Matrix, minor: Version) -> Optional[Path]:
    """``docs/probes/torch-X.Y.json`` next to the matrix for the torch the new shim starts from."""
    _, base_minor = nearest(matrix, minor_line(minor))
    path = Path(matrix_path).parent / "docs" / "probes" / f"torch-{base_minor}.json"
    return path if path.is_file() else None


def _root_stop(root: Mapping, key: str, total: int) -> int:
    """0-based line index where the top-level entry after ``key`` starts (or the end)."""
    stop = section_stop(root, key, total)
    if stop is None:
        raise NewShimError(f"compat.yaml has no {key}: section")
    return stop


def _replace_scalar(lines: List[str], node: Optional[Node], new_text: str) -> Edit:
    assert node is not None  # the key is required in a matrix that loaded
    return replace_scalar(lines, node, new_text)


def _widen(spec_text: str, minor: Version) -> Optional[str]:
    """``>=2.1,<2.16`` -> ``>=2.1,<2.17`` for minor 2.16; None if there is no such bound."""
    nxt = f"{minor.major}.{minor.minor + 1}"
    pattern = re.compile(r"<\s*" + re.escape(str(minor_line(minor))) + r"(\.0)?(?=\s*(,|$))")
    return pattern.sub(f"<{nxt}", spec_text) if pattern.search(spec_text) else None


def shim_range_edits(
    lines: List[str], root: Mapping, previous: ShimRange, minor: Version, module: str, by: str = "new-shim"
) -> Tuple[List[Edit], Tuple[int, List[str]]]:
    """The ``shims:`` entry of ``module`` for torch ``minor``, inserted after ``previous`` (the
    shim it starts from), whose range is narrowed if it is open-ended: (scalar edits, the insert
    as a 0-based line index and its lines)."""
    shims_node = root.get("shims")
    assert isinstance(shims_node, Sequence)
    items = list(shims_node.items)
    index = next(
        i
        for i, item in enumerate(items)
        if isinstance(item, Mapping) and getattr(item.get("module"), "text", None) == previous.module
    )
    item = items[index]
    assert isinstance(item, Mapping)
    edits: List[Edit] = []
    if previous.torch.contains(Version(f"{minor}.0")):
        edits.append(_replace_scalar(lines, item.get("torch"), f"{previous.torch.text},<{minor}"))
    stop = items[index + 1].mark.line - 1 if index + 1 < len(items) else _root_stop(root, "shims", len(lines))
    dash = " " * (item.mark.column - 3)
    insert = (
        block_end(lines, item.mark.line - 1, stop),
        [
            f"{dash}- module: {module} # scaffolded by {by} from {previous.module}\n",
            f'{dash}  torch: ">={minor},<{minor.major}.{minor.minor + 1}"\n',
        ],
    )
    return edits, insert


def skeleton_text(
    previous: str, module: str, minor: Version, todo: List[str], command: str, subclass: bool = True
) -> str:
    """The new era's module: ``subclass``, a ``Shim`` subclassing the previous era's (the
    reference device's shims); else the previous era's names re-exported (an adapter whose
    eras are modules of functions); its docstring holds the to-do."""
    previous_name = previous.rsplit(".", 1)[1]
    notes = "".join(f"- {t}\n" for t in todo)
    head = (
        f'"""torch {minor}: what differs from the previous era (to be written).\n\n'
        f"Scaffolded by `{command}` from {previous}. To do:\n\n{notes}"
        f'"""\n\n'
    )
    if subclass:
        return head + (
            f"from __future__ import annotations\n\nfrom .{previous_name} import Shim as _Previous\n\n\n"
            f'class Shim(_Previous):\n    era = "{minor}"\n'
        )
    return head + f"from .{previous_name} import *  # noqa: F401,F403  (unchanged until the to-do says otherwise)\n"


Insert = Tuple[int, List[str]]  # (0-based line index, lines to insert there)


def scaffold(
    matrix_path: Path,
    matrix: Matrix,
    minor: Version,
    probe_new: Optional[PyMapping[str, object]],
    probe_base: Optional[PyMapping[str, object]],
    today: Optional[_dt.date] = None,
) -> Scaffold:
    """Work out every change; nothing is written (see :func:`apply`)."""
    minor = minor_line(minor)
    if matrix.torch_line(minor) is not None:
        raise NewShimError(f"torch {minor} is already described in {matrix.path}")
    previous, base_minor = nearest(matrix, minor)
    package = matrix.adapter.shims
    if package is None:
        raise NewShimError(
            f"{matrix.path} declares no shims package (adapter: shims:): new-shim scaffolds a shim inside one"
        )
    module = _module_name(package, minor)
    text, lines, root = _parsed(matrix_path)
    # 1. upstream facts, copied from the previous minor until validate --upstream confirms them
    inserts = [_torch_entry(lines, root, matrix, minor, base_minor, today or _dt.date.today())]
    # 2. the shim range, after the shim it starts from; narrow that one if it is open-ended
    edits, range_insert = shim_range_edits(lines, root, previous, minor, module)
    inserts.append(range_insert)
    # 3. the newest release claims the minor, as experimental
    claim_edits, claim_insert, todo = _release_claim(lines, root, matrix, minor)
    edits += claim_edits
    inserts.append(claim_insert)

    offsets = line_offsets(lines)
    edits += [(offsets[at], offsets[at], "".join(new_lines)) for at, new_lines in inserts]
    new_text = apply_edits("".join(lines), edits)
    todo += _probe_todo(probe_base, probe_new, base_minor, minor)
    todo.append(
        f"run the edges cells of torch {minor} (`nox -t torch{minor}`), then mark it supported in {matrix_path.name}"
    )
    module_text = skeleton_text(previous.module, module, minor, todo, f"adapter-matrix new-shim {minor}")
    return Scaffold(
        module,
        _module_path(matrix_path, matrix, package, module),
        module_text,
        new_text,
        unified_diff(text, new_text, str(matrix_path)),
        todo,
    )


def _parsed(matrix_path: Path) -> Tuple[str, List[str], Mapping]:
    """The matrix's text, its lines (the last one ended) and its parsed root."""
    text = read_keeping_newlines(str(matrix_path))[0]  # apply() writes it back in the file's line endings
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    root, problems = parse(text, str(matrix_path))
    if not isinstance(root, Mapping) or problems:
        raise NewShimError(f"{matrix_path} does not parse")
    return text, lines, root


def _torch_entry(
    lines: List[str], root: Mapping, matrix: Matrix, minor: Version, base_minor: Version, today: _dt.date
) -> Insert:
    """The new minor's ``torch:`` entry, its facts copied from ``base_minor``'s, after the last one."""
    torch_node = root.get("torch")
    assert isinstance(torch_node, Mapping)
    last_key = torch_node.entries[-1][0]
    indent = " " * (last_key.mark.column - 1)
    base_line = matrix.torch_line(base_minor)
    assert base_line is not None
    pythons = ", ".join(f'"{p}"' for p in base_line.python)
    entry = [
        f'{indent}"{minor}": # added by `adapter-matrix new-shim`; check with `adapter-matrix validate --upstream pypi`\n',
        f"{indent}  released: {today.isoformat()}\n",
        f"{indent}  patches: [{minor}.0]\n",
        f"{indent}  python: [{pythons}]\n",
    ]
    return block_end(lines, last_key.mark.line - 1, _root_stop(root, "torch", len(lines))), entry


def _release_claim(
    lines: List[str], root: Mapping, matrix: Matrix, minor: Version
) -> Tuple[List[Edit], Insert, List[str]]:
    """The newest release's claim on ``minor`` as experimental: its torch specifier widened (an
    edit, or a to-do when it cannot be), the exception rule inserted; (edits, insert, to-do)."""
    releases_node = root.get("releases")
    assert isinstance(releases_node, Sequence)
    newest = matrix.newest_release
    if newest is None:
        raise NewShimError("the matrix has no release to add the new torch to")
    rel_items = [r for r in releases_node.items if isinstance(r, Mapping)]
    rel_node = next(r for r in rel_items if (r.mark.line, r.mark.column) == (newest.mark.line, newest.mark.column))
    edits: List[Edit] = []
    todo: List[str] = []
    if not newest.torch.contains(Version(f"{minor}.0")):
        widened = _widen(newest.torch.text, minor)
        if widened is None:
            todo.append(f"widen release {newest.version}'s torch specifier ({newest.torch}) to include {minor}")
        else:
            edits.append(_replace_scalar(lines, rel_node.get("torch"), widened))
    col = " " * (rel_node.mark.column - 1)
    rule = [
        f'{col}  - torch: "=={minor}.*"\n',
        f"{col}    status: experimental\n",
        f"{col}    reason: new torch release; shim scaffolded by adapter-matrix new-shim, not verified yet\n",
    ]
    rel_index = rel_items.index(rel_node)
    rel_stop = (
        rel_items[rel_index + 1].mark.line - 1
        if rel_index + 1 < len(rel_items)
        else _root_stop(root, "releases", len(lines))
    )
    exceptions = rel_node.get("exceptions")
    if isinstance(exceptions, Sequence) and exceptions.items:
        return edits, (block_end(lines, exceptions.items[-1].mark.line - 1, rel_stop), rule), todo
    return edits, (block_end(lines, rel_node.mark.line - 1, rel_stop), [f"{col}exceptions:\n"] + rule), todo


def _module_path(matrix_path: Path, matrix: Matrix, package: str, module: str) -> Path:
    """Where the new module goes: beside the matrix's shims package, else in the installed one's."""
    module_path = Path(matrix_path).parent.joinpath(*module.split(".")).with_suffix(".py")
    if not module_path.parent.is_dir():
        from .build import Extension  # locate an installed shims package without importing it

        module_path = Extension.of_package(package, matrix.adapter.device).csrc.parent / module_path.name
    return module_path


def _probe_todo(
    probe_base: Optional[PyMapping[str, object]],
    probe_new: Optional[PyMapping[str, object]],
    base_minor: Version,
    minor: Version,
) -> List[str]:
    """What moved between the two probes, one to-do each; or to probe them, when one is missing."""
    differences = diff(probe_base, probe_new) if probe_new and probe_base else []
    a = f"torch {probe_base['torch']}" if probe_base else f"torch {base_minor}"
    b = f"torch {probe_new['torch']}" if probe_new else f"torch {minor}"
    todo = [d.describe(a, b) for d in differences]
    if not probe_new or not probe_base:
        todo.append("probe both releases (`adapter-matrix probe --json` with each torch installed) and diff them")
    return todo


def apply(matrix_path: Path, result: Scaffold) -> None:
    """Write the module, then the matrix, after checking that the edited matrix loads."""
    if result.module_path.exists():
        raise NewShimError(f"{result.module_path} already exists")
    # both atomically, the module first (the edited matrix's check finds it), taken back when the
    # matrix does not validate or cannot be written (a read-only checkout): one line, no stray shim
    atomic_write(str(result.module_path), result.module_text)
    try:
        load_text(result.matrix_text, str(matrix_path))
        atomic_write(str(matrix_path), read_keeping_newlines(str(matrix_path))[1](result.matrix_text))
    except MatrixError as exc:
        result.module_path.unlink()
        raise NewShimError("the edited matrix does not validate:\n" + str(exc)) from None
    except FileWriteError:
        result.module_path.unlink()
        raise
