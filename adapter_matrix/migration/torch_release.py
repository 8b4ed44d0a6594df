"""``migrate torch X.Y.Z``: a new torch release, written into an adapter's repository.

:func:`run` takes a frozen :class:`MigrateRequest` and returns a :class:`MigrateResult`;
nothing here prints or exits. Every read comes first (the matrix, git's view of it, the
index, the probes), then every text is computed and the edited matrix loaded, and only then
is anything written: a refused request or a network failure leaves the repository as it was.

What it writes, each only when it changes (so a second run writes nothing):

- ``compat.yaml``: the torch line with the index's facts (the torch section's own writer,
  :mod:`adapter_matrix.upstream.write`: comments and layout kept), a shim range for it when
  the adapter has shims, and an ``experimental`` row for the adapter's next release (the newest
  release's minor + 1, claiming everything the newest release claims and the new line);
- the shim skeleton for the new era (``new-shim``'s, :mod:`adapter_matrix.device.newshim`);
- ``MIGRATION.md``: a section between the tool's markers with the probe report and the steps
  left, which is also the pull request's body.

The probe report compares the new line with the newest line some release supports: what
moved for a PrivateUse1 adapter, grouped as hooks, dispatch registration and registration
entry points. Probing needs that torch imported; when the installed torch is another line,
a recorded probe (``docs/probes/torch-X.Y.json``, ``probe --json``) is used, else the report
says what was skipped and how to get it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, NamedTuple, Optional, Tuple

from packaging.version import InvalidVersion, Version

from ..device import newshim
from ..device.probe import diff
from ..errors import EXIT_USAGE, AdapterMatrixError
from ..files import atomic_write, make_folders, read_keeping_newlines
from ..matrix.diagnostics import MatrixError
from ..matrix.loader import load, load_text
from ..matrix.model import Matrix, Release, minor_line
from ..matrix.queries import claimed_lines, release_status, shim_for
from ..matrix.source import Mapping, Sequence, parse
from ..matrix.status import Status
from ..matrix.textedit import apply_edits, block_end, line_offsets, replace_scalar
from ..upstream.index import Upstream, UpstreamError
from ..upstream.test_channel import read_releases
from ..upstream.write import rewrite

__all__ = [
    "MigrateRefused",
    "MigrateRequest",
    "MigrateResult",
    "ProbeReport",
    "Written",
    "run",
    "render",
    "GROUPS",
]

# What a probe's answers tell a PrivateUse1 adapter, grouped as its maintainer reads them: the
# hooks torch calls (and the adapter's C++ gates on them), how kernels reach the dispatcher for the
# PrivateUse1 key (Library.impl and fallback, torch.library's registration functions: the probe
# asks the API, it lists no dispatch keys), and the entry points that register the backend.
GROUPS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    (
        "hooks",
        (
            "acc_python_hooks",
            "autocast_state_by_device_type",
            "get_device_module",
            "accelerator_api",
            "grad_scaler_device",
            "fork_rng_device_type",
            "cpp_gates",
        ),
    ),
    (
        "dispatch keys",
        ("library_fallback", "library_impl_parameters", "library_impl_allow_override_default", "torch_library_api"),
    ),
    (
        "registration entry points",
        ("rename_privateuse1_backend", "generate_methods_parameters", "register_device_module", "backend_autoload"),
    ),
)
MARKER_OPEN = "<!-- adapter-matrix:migrate torch={version} -->"
MARKER_CLOSE = "<!-- /adapter-matrix:migrate -->"


class MigrateRefused(AdapterMatrixError):
    """A request ``migrate`` refuses; the message says why and what to do. Exit 2."""

    exit_code = EXIT_USAGE


class MigrateRequest(NamedTuple):
    """What ``migrate torch`` is asked, one field per option of the command line."""

    torch: str  # the release, X.Y.Z
    matrix: str = "compat.yaml"  # as given: the repository root is its folder (a link is not followed)
    upstream: str = "pypi"  # or a recorded answer (a folder holding torch.json, or the file)
    probes: Optional[str] = None  # recorded probes (default: docs/probes next to the matrix)
    notes: str = "MIGRATION.md"  # relative to the repository root
    allow_dirty: bool = False
    dry_run: bool = False
    today: Optional[_dt.date] = None  # the day a release without an upload time (a candidate) is dated
    body: Optional[str] = None  # also write the notes' section to this file (a pull request's body)


@dataclass(frozen=True)
class ProbeSide:
    torch: str  # the minor line
    answer: Optional[Dict[str, object]]  # the probe's document, None when none could be had
    source: str  # "installed torch 2.16.0", "docs/probes/torch-2.15.json", or why none


@dataclass(frozen=True)
class ProbeReport:
    """The new line's API against the newest supported line's, or what was skipped."""

    base: ProbeSide
    new: ProbeSide
    changes: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (group, descriptions)

    @property
    def compared(self) -> bool:
        return self.base.answer is not None and self.new.answer is not None

    def skipped(self) -> List[str]:
        """What was not probed, and how to get it."""
        out = []
        for side in (self.new, self.base):
            if side.answer is None:
                out.append(
                    f"no probe of torch {side.torch}: {side.source}; get it with `pip install 'torch=={side.torch}.*'` "
                    f"in a fresh environment, then `adapter-matrix probe --json > docs/probes/torch-{side.torch}.json`, "
                    "and run migrate again"
                )
        return out


@dataclass(frozen=True)
class Written:
    """One file the migration writes (or would write, on a dry run)."""

    path: str
    what: str
    text: str = field(repr=False)


@dataclass(frozen=True)
class MigrateResult:
    torch: Version
    minor: Version
    released: Optional[_dt.date]  # the upload day of the release on the index
    pythons: Tuple[str, ...]  # with Linux x86_64 wheels
    variants: Tuple[str, ...]  # the local labels of its builds, on PyTorch's own indexes (cpu, cu130)
    release: str  # the adapter release that claims the line (experimental)
    shim: Optional[str]  # the module serving the line, when the adapter has shims
    probe: ProbeReport
    todo: Tuple[str, ...]
    files: Tuple[Written, ...]  # what changed; empty: the repository has it all (a second run)
    dry_run: bool
    notes: str  # the MIGRATION.md section's body: also the pull request's


# -- reading -----------------------------------------------------------------------------


def _version(text: str) -> Version:
    try:
        version = Version(text)
    except InvalidVersion:
        raise MigrateRefused(f"{text!r} is not a torch release such as 2.16.0") from None
    if len(version.release) != 3 or version.local or version.is_devrelease or version.is_postrelease:
        raise MigrateRefused(
            f"{text!r}: give the full torch release, X.Y.Z (2.16.0, or 2.16.0rc1 from the test channel)"
        )
    return version


def _git_dirty(root: str, path: str) -> Optional[bool]:
    """Whether git sees uncommitted changes to ``path`` or, for a link, to the file it points to
    (an adapter's compat.yaml links to its package's); ``None`` outside a git work tree."""
    paths = {os.path.abspath(path), os.path.realpath(path)}
    try:
        proc = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--", *sorted(paths)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(proc.stdout.strip()) if proc.returncode == 0 else None


def _read_index(source: str) -> Upstream:
    try:
        return read_releases(source)
    except UpstreamError as exc:
        raise MigrateRefused(f"{exc} (nothing was written)") from None


def _on_index(index: Upstream, version: Version, matrix: Matrix, today: _dt.date) -> Upstream:
    """The index cut to ``version``'s line, or a refusal naming what the index has. A page
    without upload times (the test channel's) dates its files ``today``: the day a candidate
    was seen (``validate --upstream pypi`` corrects ``released`` once the final is on PyPI)."""
    lines = index.lines()
    line = lines.get(minor_line(version))
    if line is None or line.patch(version) is None:
        newest = max((p.version for p in index.patches if p.python), default=None)
        raise MigrateRefused(
            f"torch {version} is not on {index.source} with a Linux x86_64 wheel"
            + (f" (its newest release: {newest})" if newest else "")
            + " \u2014 check the version, or record the index again"
        )
    described = matrix.torch_line(minor_line(version))
    seen = described.released if described is not None else today  # a second run keeps the first day
    kept = tuple(
        p if p.uploaded is not None else dataclasses.replace(p, uploaded=seen)
        for p in index.patches
        if minor_line(p.version) == minor_line(version)
    )
    return Upstream(index.source, kept, index.yanked)


# -- the probes --------------------------------------------------------------------------


def _installed_torch() -> Optional[Version]:
    """torch's version as installed, without importing it."""
    from importlib import metadata

    try:
        return Version(metadata.version("torch"))
    except (metadata.PackageNotFoundError, InvalidVersion):
        return None


def _probe_side(minor: Version, folder: str, root: str) -> ProbeSide:
    installed = _installed_torch()
    if installed is not None and minor_line(installed) == minor:
        from ..device.probe import probe

        return ProbeSide(str(minor), dict(probe()), f"the installed torch {installed}")  # a probe.Probe, as JSON reads
    path = os.path.join(folder, f"torch-{minor}.json")
    shown = os.path.relpath(path, root) if _inside(root, path) else path
    try:
        with open(path, encoding="utf-8") as fh:
            answer = json.load(fh)
    except FileNotFoundError:
        where = f"torch {installed} is installed" if installed else "torch is not installed"
        return ProbeSide(str(minor), None, f"{where} and {shown} does not exist")
    except (OSError, ValueError) as exc:
        raise MigrateRefused(f"{path}: not a probe recorded with `adapter-matrix probe --json` ({exc})") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("capabilities"), dict):
        raise MigrateRefused(f"{path}: not a probe recorded with `adapter-matrix probe --json`")
    return ProbeSide(str(minor), answer, shown)


def _inside(root: str, path: str) -> bool:
    top = os.path.realpath(root)
    return os.path.commonpath([top, os.path.realpath(path)]) == top


def _probe_report(matrix: Matrix, minor: Version, folder: str, root: str) -> ProbeReport:
    base_minor = _newest_supported_line(matrix, minor)
    base = _probe_side(base_minor, folder, root)
    new = _probe_side(minor, folder, root)
    changes: List[Tuple[str, Tuple[str, ...]]] = []
    if base.answer is not None and new.answer is not None:
        found = diff(base.answer, new.answer)
        a, b = f"torch {base.answer.get('torch', base_minor)}", f"torch {new.answer.get('torch', minor)}"
        grouped = {name for _g, names in GROUPS for name in names}
        for group, names in GROUPS:
            said = tuple(d.describe(a, b) for d in found if d.name in names)
            if said:
                changes.append((group, said))
        rest = tuple(d.describe(a, b) for d in found if d.name not in grouped)
        if rest:
            changes.append(("other", rest))
    return ProbeReport(base, new, tuple(changes))


def _newest_supported_line(matrix: Matrix, below: Version) -> Version:
    """The newest torch line below ``below`` that some release supports (else the newest described)."""
    lines = [line.minor for line in matrix.torch if line.minor < below]
    supported = {
        line.minor
        for release in matrix.releases
        if release_status(release)[0] is Status.SUPPORTED
        for line, _p in claimed_lines(matrix, release)
    }
    candidates = [m for m in lines if m in supported] or lines
    if not candidates:
        raise MigrateRefused(f"the matrix describes no torch line older than {below} to migrate from")
    return max(candidates)


# -- the matrix --------------------------------------------------------------------------


def _claiming(matrix: Matrix, version: Version) -> Optional[Release]:
    """The newest release that claims ``version``."""
    found = [r for r in matrix.releases if r.torch.contains(version)]
    return max(found, key=lambda r: r.version) if found else None


def next_release(release: Release) -> str:
    """The adapter's next release after ``release``: its minor + 1 (0.3.0 -> 0.4.0)."""
    v = release.version
    return f"{v.major}.{v.minor + 1}.0"


def _widened(spec: str, minor: Version) -> str:
    """``spec`` widened to include ``minor``: its upper bound moved past it, or a new bound."""
    nxt = f"{minor.major}.{minor.minor + 1}"
    bound = re.compile(r"<\s*(\d+)\.(\d+)(?:\.0)?(?=\s*(,|$))")
    found = bound.search(spec)
    if found is not None and Version(f"{found[1]}.{found[2]}") <= minor:
        return spec[: found.start()] + f"<{nxt}" + spec[found.end() :]
    return spec if found is not None else f"{spec},<{nxt}"


def _release_node(text: str, matrix: Matrix, release: Release) -> Tuple[List[str], Mapping, List[Mapping]]:
    lines = text.splitlines(keepends=True)
    root, problems = parse(text, matrix.path)
    if not isinstance(root, Mapping) or problems:
        raise MigrateRefused(f"{matrix.path} does not parse")
    releases = root.get("releases")
    items = [i for i in releases.items if isinstance(i, Mapping)] if isinstance(releases, Sequence) else []
    node = next((i for i in items if (i.mark.line, i.mark.column) == (release.mark.line, release.mark.column)), None)
    flow = node is not None and lines[node.mark.line - 1][node.mark.column - 1 :].startswith("{")
    if node is None or node.get("version") is None or flow:
        raise MigrateRefused(
            f"{matrix.path}: release {release.version} is not a `- version:` mapping migrate can edit "
            f"\u2014 write the next release (torch including the new line, status: experimental) by hand, then run "
            "migrate again"
        )
    return lines, node, items


def _widen_row(text: str, matrix: Matrix, release: Release, minor: Version) -> str:
    """``text`` with ``release``'s torch widened to ``minor``."""
    lines, node, _items = _release_node(text, matrix, release)
    torch = node.get("torch")
    assert torch is not None  # a release that loaded has one
    return apply_edits(text, [replace_scalar(lines, torch, _widened(release.torch.text, minor))])


def _release_row(text: str, matrix: Matrix, newest: Release, version: str, minor: Version, command: str) -> str:
    """``text`` with an experimental row for release ``version`` beside ``newest``: what
    ``newest`` claims (its Python, its dimensions) widened to the new line."""
    lines, node, items = _release_node(text, matrix, newest)
    col = " " * (node.mark.column - 1)
    python = str(newest.python)
    row = [
        f"{col[:-2]}- version: {version} # added by `{command}`: the next release, claiming torch {minor}\n",
        f'{col}torch: "{_widened(newest.torch.text, minor)}"\n',
        f'{col}python: "{python}"\n',
    ]
    dims = node.get("dimensions")
    if dims is not None:
        start, stop = _node_lines(lines, dims, node)
        copied = lines[start:stop]  # as written: a flow mapping or a block
        copied[0] = col + copied[0][len(col) :]  # the item's first key carries its `- `
        row += copied
    row += [
        f"{col}status: experimental\n",
        f'{col}reason: "torch {minor} is new: its cells have not run yet (MIGRATION.md says what is left)"\n',
    ]
    # newest first (as most matrices list them): before the newest release; else after it
    index = items.index(node)
    newest_first = index == 0
    if newest_first:
        at = node.mark.line - 1
        while at > 0 and lines[at - 1].lstrip().startswith("#"):  # its comment belongs to it
            at -= 1
    else:
        stop_line = len(lines) if index + 1 == len(items) else items[index + 1].mark.line - 1
        at = block_end(lines, node.mark.line - 1, stop_line)
    offsets = line_offsets(lines)
    return apply_edits(text, [(offsets[at], offsets[at], "".join(row))])


def _node_lines(lines: List[str], value: object, parent: Mapping) -> Tuple[int, int]:
    """0-based (first, stop) lines of the key whose value is ``value`` in a block mapping: its
    own line and the lines indented deeper than the key (blank and comment lines inside kept)."""
    key = next(k for k, v in parent.entries if v is value)
    start = key.mark.line - 1
    stop = start + 1
    for n in range(start + 1, len(lines)):
        body = lines[n].strip()
        if body and not body.startswith("#") and len(lines[n]) - len(lines[n].lstrip()) < key.mark.column:
            break
        stop = n + 1
    return start, block_end(lines, start, stop)


def _shim_edit(text: str, matrix: Matrix, minor: Version, command: str) -> Tuple[str, newshim.ShimRange, str]:
    previous, _base = newshim.nearest(matrix, minor)
    package = matrix.adapter.shims
    assert package is not None
    module = f"{package}.torch_{minor.major}_{minor.minor}"
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    root, _problems = parse(text, matrix.path)
    assert isinstance(root, Mapping)
    edits, (at, new_lines) = newshim.shim_range_edits(lines, root, previous, minor, module, by="migrate")
    offsets = line_offsets(lines)
    return apply_edits("".join(lines), edits + [(offsets[at], offsets[at], "".join(new_lines))]), previous, module


def _module_file(root: str, module: str) -> Optional[str]:
    """The file of an existing ``module`` in the repository: under the root, ``src/``, or a
    subfolder holding the package (this repository's ``shims/src/shims``)."""
    parts = module.split(".")
    for folder, dirs, _files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("build", "dist", "node_modules"))
        candidate = os.path.join(folder, *parts) + ".py"
        if os.path.isfile(candidate) and os.path.isfile(os.path.join(os.path.dirname(candidate), "__init__.py")):
            return candidate
    return None


# -- the notes ---------------------------------------------------------------------------


def _notes(
    version: Version,
    released: Optional[_dt.date],
    pythons: Tuple[str, ...],
    variants: Tuple[str, ...],
    release: str,
    shim: Optional[str],
    probe: ProbeReport,
    todo: Tuple[str, ...],
    matrix_name: str,
) -> str:
    minor = minor_line(version)
    out = [
        f"## torch {version}",
        "",
        f"torch {version} is on the index"
        + (f" since {released}" if released else "")
        + f", with Linux x86_64 wheels for Python {', '.join(pythons)}"
        + (f" (builds {', '.join(variants)})" if variants else "")
        + ". "
        f"`adapter-matrix migrate torch {version}` added torch {minor} to {matrix_name}"
        + (f", its shim `{shim}`" if shim else "")
        + f" and release {release} as `experimental`.",
        "",
        f"### The API of torch {minor} against torch {probe.base.torch}",
        "",
    ]
    if probe.compared:
        out.append(f"Probes: {probe.base.source} and {probe.new.source}.")
        out.append("")
        if not probe.changes:
            out.append("Nothing a PrivateUse1 adapter uses moved.")
        for group, said in probe.changes:
            out.append(f"- {group}:")
            out += [f"  - {s}" for s in said]
    else:
        out.append("Not compared (nothing was probed for the missing side):")
        out.append("")
        out += [f"- {s}" for s in probe.skipped()]
    out += ["", "### What is left", ""]
    out += [f"{n}. {t}" for n, t in enumerate(todo, 1)]
    return "\n".join(out) + "\n"


def _with_section(text: Optional[str], version: Version, body: str) -> str:
    opening = MARKER_OPEN.format(version=version)
    block = f"{opening}\n{body}{MARKER_CLOSE}\n"
    if text is None:
        return (
            "# Migrations to new torch releases\n\n"
            "Written by `adapter-matrix migrate torch X.Y.Z`, one section per torch release, between its markers "
            "(the tool rewrites only what is between them).\n\n" + block
        )
    start = text.find(opening)
    if start < 0:
        sep = "" if text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + block
    end = text.find(MARKER_CLOSE, start)
    if end < 0:
        raise MigrateRefused(f"the section of torch {version} has no closing `{MARKER_CLOSE}`: close it, or remove it")
    return text[:start] + block + text[end + len(MARKER_CLOSE) + 1 :]


# -- the use case ------------------------------------------------------------------------


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _migrate_matrix(
    old_text: str, matrix: Matrix, index: Upstream, version: Version, command: str
) -> Tuple[str, Matrix, str, Optional[str], Optional[newshim.ShimRange]]:
    """The matrix's text with the torch line (the index's facts), the shim range and the release
    that claims the line; the edited matrix, that release, the shim serving the line and (when
    it is new) the shim it starts from."""
    minor = minor_line(version)
    matrix_path = matrix.path
    text = rewrite(old_text, matrix, index, matrix.path)
    current = _loaded(text, matrix.path)
    shim: Optional[str] = None
    previous: Optional[newshim.ShimRange] = None
    if current.adapter.shims is not None:
        serving = shim_for(current, version)
        if serving is None:
            text, previous, shim = _shim_edit(text, current, minor, command)
            current = _loaded(text, matrix.path)
        else:
            shim = serving.module
    claiming = _claiming(current, version)
    newest = current.newest_release
    if claiming is None and newest is not None and newest.status is Status.EXPERIMENTAL and newest.date is None:
        # the next release is there already, unreleased (an earlier migration's row): it claims the line too
        text = _widen_row(text, current, newest, minor)
        current = _loaded(text, matrix.path)
        release = str(newest.version)
    elif claiming is None:
        if newest is None:
            raise MigrateRefused(f"{matrix_path} has no release to start the next one from")
        release = next_release(newest)
        if current.release(Version(release)) is not None:
            raise MigrateRefused(
                f"release {release} exists and does not claim torch {minor}: widen its torch, then run migrate again"
            )
        text = _release_row(text, current, newest, release, minor, command)
        current = _loaded(text, matrix.path)
    else:
        release = str(claiming.version)
    return text, current, release, shim, previous


def run(request: MigrateRequest) -> MigrateResult:
    """Migrate the adapter of ``request.matrix`` to ``request.torch``; see the module docstring."""
    version = _version(request.torch)
    minor = minor_line(version)
    matrix_path = request.matrix
    root = os.path.dirname(os.path.abspath(matrix_path))
    matrix = _matrix_to_migrate(request, root, minor)
    index = _index_to_migrate_to(request, matrix, version)
    line = index.lines()[minor]
    command = f"adapter-matrix migrate torch {version}"

    # 1. the matrix
    old_text, back = read_keeping_newlines(matrix_path)  # edited with \n, written in the file's line endings
    text, current, release, shim, previous = _migrate_matrix(old_text, matrix, index, version, command)

    # 2. the probes, the shim skeleton, the notes
    probe = _probe_report(current, minor, request.probes or os.path.join(root, "docs", "probes"), root)
    lacking = [c.name for c in current.companions if c.line(minor) is None]
    todo = _todo(probe, release, minor, os.path.basename(matrix_path), shim, lacking)
    files: List[Written] = []
    if text != old_text:
        files.append(Written(matrix_path, f"torch {minor}, release {release} (experimental)", back(text)))
    if previous is not None and shim is not None:
        files += _shim_skeleton(root, previous, shim, minor, todo, command)
    pythons = tuple(str(p) for p in line.python)
    patch = line.patch(version)
    variants = tuple(sorted(patch.variants)) if patch is not None else ()
    notes = _notes(version, line.released, pythons, variants, release, shim, probe, todo, os.path.basename(matrix_path))
    notes_path = os.path.join(root, request.notes)
    old_notes = _read(notes_path)
    new_notes = _with_section(old_notes, version, notes)
    if new_notes != old_notes:
        files.append(Written(os.path.relpath(notes_path), f"the section of torch {version}", new_notes))

    # 3. written, unless it is a dry run
    if not request.dry_run:
        _write(files, request.body, notes)
    return MigrateResult(
        version,
        minor,
        line.released,
        pythons,
        variants,
        release,
        shim,
        probe,
        todo,
        tuple(files),
        request.dry_run,
        notes,
    )


def _matrix_to_migrate(request: MigrateRequest, root: str, minor: Version) -> Matrix:
    """The matrix, refused when it is invalid, has uncommitted changes (without --allow-dirty) or
    already describes newer lines than ``minor``."""
    matrix_path = request.matrix
    try:
        matrix = load(matrix_path).matrix
    except MatrixError as exc:
        raise MigrateRefused(
            f"{matrix_path} is not a valid matrix; `adapter-matrix validate` lists why:\n{exc}"
        ) from None
    if not request.allow_dirty and _git_dirty(root, matrix_path):
        raise MigrateRefused(
            f"{matrix_path} has uncommitted changes: commit or stash them first (migrate's change is then a diff "
            "of its own), or give --allow-dirty"
        )
    if matrix.torch and minor < matrix.torch[0].minor:
        raise MigrateRefused(f"torch {minor} is older than the matrix's oldest line ({matrix.torch[0].minor})")
    return matrix


def _index_to_migrate_to(request: MigrateRequest, matrix: Matrix, version: Version) -> Upstream:
    """The index's facts of ``version``, refused when a torch line between the matrix's newest and
    ``version``'s is not described (a release claims a range of torch lines, without holes)."""
    minor = minor_line(version)
    every = _read_index(request.upstream)
    index = _on_index(every, version, matrix, request.today or _dt.date.today())
    skipped = [
        str(m)
        for m in every.lines()
        if matrix.torch and matrix.torch[-1].minor < m < minor and matrix.torch_line(m) is None
    ]
    if skipped:
        raise MigrateRefused(
            f"torch {', '.join(skipped)} comes before {minor} and the matrix does not describe it: migrate to "
            f"{skipped[0]} first (a release claims a range of torch lines, without holes)"
        )
    return index


def _shim_skeleton(
    root: str, previous: newshim.ShimRange, shim: str, minor: Version, todo: Tuple[str, ...], command: str
) -> List[Written]:
    """The new era's shim module, beside the one it starts from (none when it exists already)."""
    beside = _module_file(root, previous.module)
    if beside is None:
        raise MigrateRefused(f"cannot find {previous.module} under {root}: the new shim goes beside it")
    path = os.path.join(os.path.dirname(beside), shim.rsplit(".", 1)[1] + ".py")
    if os.path.exists(path):
        return []
    previous_text = _read(beside) or ""
    skeleton = newshim.skeleton_text(previous.module, shim, minor, list(todo), command, "class Shim" in previous_text)
    return [Written(os.path.relpath(path), f"the shim skeleton of torch {minor}", skeleton)]


def _write(files: List[Written], body: Optional[str], notes: str) -> None:
    """The notes to ``body`` when asked, then each file atomically. ``body`` goes first: a path
    the user typed (a missing folder) then fails before the repository changes, as an exit 2
    promises ("nothing written")."""
    if body is not None:  # outside the repository (the workflow's temporary folder): not a change
        atomic_write(body, notes)
    for item in files:
        make_folders(os.path.dirname(os.path.abspath(item.path)))
        atomic_write(os.path.realpath(item.path), item.text)


def _loaded(text: str, filename: str) -> Matrix:
    """The edited matrix, or a refusal (nothing is written): it must load as written."""
    try:
        return load_text(text, filename, check_modules=False).matrix
    except MatrixError as exc:
        raise MigrateRefused(
            f"{filename}: the migrated matrix would not validate (nothing was written); edit it by hand:\n{exc}"
        ) from None


def _todo(
    probe: ProbeReport, release: str, minor: Version, matrix_name: str, shim: Optional[str], companions: List[str]
) -> Tuple[str, ...]:
    out = []
    if not probe.compared:
        out += probe.skipped()
    else:  # what moved, each a step (the shim's docstring holds the same list)
        out += [f"check {group}: {said}" for group, all_said in probe.changes for said in all_said]
    if shim:
        out.append(f"write what differs in {shim} (its docstring holds the same list)")
    if companions:
        out.append(
            f"say which releases of {', '.join(companions)} pair with torch {minor}: "
            "`adapter-matrix validate --upstream pypi --write` reads them from their wheels"
        )
    out += [
        f"bump the adapter's version to {release} (`adapter-matrix validate` names where)",
        f"run the new line's cells: `adapter-matrix plan --strategy full | grep torch{minor}`, then "
        f"`nox -t torch{minor}` (or `adapter-matrix tier full -t torch{minor}`)",
        f"when they pass: `adapter-matrix release {release}`, set its status to supported in {matrix_name}, and "
        "`adapter-matrix validate --results evidence --strict` (docs/releasing.md)",
    ]
    return tuple(out)


# -- rendering ---------------------------------------------------------------------------


def render(result: MigrateResult) -> str:
    """What the command prints: each file written, then the notes' steps."""
    verb = "would write" if result.dry_run else "wrote"
    out = [
        f"torch {result.torch} (released {result.released or 'on an unknown day'}; Python {', '.join(result.pythons)}"
        + (f"; builds {', '.join(result.variants)})" if result.variants else ")")
    ]
    if not result.files:
        out.append("nothing to change: the repository has this migration already")
    out += [f"{verb} {item.path}: {item.what}" for item in result.files]
    if not result.probe.compared:
        out.append(
            f"probe: skipped, torch {result.minor} against {result.probe.base.torch} (steps below say how to get it)"
        )
    else:
        moved = sum(len(s) for _g, s in result.probe.changes)
        out.append(
            f"probe: torch {result.probe.base.torch} -> {result.minor}: {moved} change(s) a PrivateUse1 adapter may feel"
        )
    out.append("next:")
    out += [f"  {n}. {t}" for n, t in enumerate(result.todo, 1)]
    return "\n".join(out) + "\n"
