"""The verdict for an environment and the fixes that reach a supported cell.

``check`` and the runtime guard ask :func:`verdict`; it reads the model through
:mod:`adapter_matrix.matrix.queries` and never re-decides a cell's status.

A fix lands in a cell that is usable for **every** dimension of the environment: the
user's Python, torch (version and variant) and adapter, and each extra dimension such
as a driver toolkit or a SoC. A dimension the user cannot change (``changeable:
false``: a SoC, an OS) is never changed by a fix. One that can (a driver toolkit) is
changed only by a fix that says so in ``manual`` ("upgrade cann from 8.0.0 to
8.1.RC1"), ranked after every fix that keeps it, and never hidden in a pip command.
Whatever a fix does not name in ``changes`` stays as installed.
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import Version

from ..matrix.diagnostics import Mark
from ..matrix.model import Matrix, PythonVersion, Release, ShimRange, Status, TorchLine, Value
from ..matrix.queries import Cell, cell_status, claimed_lines, claimed_patches, dimension_values, pythons_for, shim_for, torch_source

__all__ = ["Outcome", "Environment", "Fix", "Verdict", "verdict", "torch_requirement", "torch_label"]


class Outcome(str, enum.Enum):
    """The answer of ``check``; each has a documented exit code."""

    SUPPORTED = "supported"
    EXPERIMENTAL = "experimental"
    DEPRECATED = "deprecated"
    EOL = "eol"
    BROKEN = "broken"
    UNSUPPORTED = "unsupported"

    @property
    def exit_code(self) -> int:
        """0 supported; 3 works with a warning; 1 unsupported or known broken."""
        if self is Outcome.SUPPORTED:
            return 0
        if self in (Outcome.EXPERIMENTAL, Outcome.DEPRECATED, Outcome.EOL):
            return 3
        return 1

    def __str__(self) -> str:
        return self.value


class Environment(NamedTuple):
    """What is installed (or what a what-if question assumes). ``torch`` keeps its local
    label (``2.8.0+cpu``): the variant is part of what is installed."""

    python: PythonVersion
    python_full: str = ""
    implementation: str = "cpython"
    torch: Optional[Version] = None
    adapter: Optional[Version] = None
    dimensions: Tuple[Tuple[str, Optional[Value]], ...] = ()

    def dimension(self, name: str) -> Optional[Value]:
        return dict(self.dimensions).get(name)


class Fix(NamedTuple):
    """A usable combination reachable from an environment.

    ``changes`` names what differs from the environment (``python``, ``adapter``,
    ``torch`` and extra dimensions such as ``cann``); ``manual`` lists the steps no pip
    command can do (another driver toolkit, a value to make sure of); ``commands`` are
    the pip commands to paste, after the manual steps.
    """

    summary: str
    commands: Tuple[str, ...]
    changes: Tuple[str, ...]
    cell: Cell
    manual: Tuple[str, ...] = ()


class Verdict(NamedTuple):
    """The answer for one environment, with the rows that decided it."""

    outcome: Outcome
    reasons: Tuple[str, ...]
    release: Optional[Release] = None
    line: Optional[TorchLine] = None
    shim: Optional[ShimRange] = None
    decided_by: Tuple[Mark, ...] = ()
    assumptions: Tuple[str, ...] = ()
    fixes: Tuple[Fix, ...] = ()

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code


_RANK = {o: i for i, o in enumerate(Outcome)}


def torch_requirement(release: Release, line: TorchLine) -> str:
    """The pip requirement for ``line`` under ``release``: the whole line when the release
    claims a range holding every known patch, else the newest claimed version exactly;
    with the local label when the release needs a torch variant (``torch==2.8.0+cpu``)."""
    patches = claimed_patches(release, line)
    if not patches:
        return f"torch{line.spec.text}"
    newest = max(patches)
    pinned = any(line.holds(pin) for pin in release.pins)
    if not release.variant and not pinned and len(patches) == len(line.patches):
        return f"torch{line.spec.text}"
    return f"torch=={newest}" + (f"+{release.variant}" if release.variant else "")


def torch_label(torch: Version) -> str:
    """``torch`` as messages name it: a pre-release says what it is."""
    if not torch.is_prerelease:
        return str(torch)
    base = torch.base_version
    if torch.is_devrelease and torch.pre is None:
        kind = f"a nightly build before {base}"
    elif torch.pre is not None and torch.pre[0] == "rc":
        kind = f"a release candidate of {base}"
    else:
        kind = f"a pre-release of {base}"
    return f"{torch} ({kind})"


def _variant_label(torch: Version) -> str:
    if torch.local:
        return f"the {torch.local} build"
    return "no variant label: PyPI's default build, CUDA on Linux x86_64"


# -- verdicts ----------------------------------------------------------------------------


def _python_range(pythons: Sequence[PythonVersion]) -> str:
    plain = [p for p in pythons if not p.free_threaded]
    if not plain:
        return ", ".join(str(p) for p in pythons) or "none"
    return f"{plain[0]}\u2013{plain[-1]}" if len(plain) > 1 else str(plain[0])


def _prerelease_note(matrix: Matrix, release: Release, torch: Version) -> Optional[str]:
    """Why a pre-release torch is experimental: the release claims releases, and pins no
    pre-release (IPEX 2.10.10 pins a nightly: that one is its claim)."""
    public = Version(torch.public)
    if not public.is_prerelease or public in release.pins:
        return None
    return (
        f"torch {torch_label(torch)} is a pre-release: {matrix.adapter.distribution} {release.version} "
        f"claims torch {release.torch} releases, not pre-releases"
    )


def _assess(
    matrix: Matrix,
    release: Release,
    torch: Version,
    python: PythonVersion,
    dims: Dict[str, Optional[Value]],
    today: _dt.date,
) -> Tuple[Status, Tuple[str, ...], Optional[str], Tuple[Mark, ...]]:
    """The status of a combination the release claims: the cell's status, a pre-release
    torch the release does not pin counting as experimental at best."""
    status, reason, link, marks = cell_status(release, Version(torch.public), python, dims, today)
    reasons: Tuple[str, ...] = (reason,) if reason else ()
    note = _prerelease_note(matrix, release, torch)
    if note is not None:
        reasons = (note,) + reasons
        if status is Status.SUPPORTED:
            status = Status.EXPERIMENTAL
    return status, reasons, link, marks


def verdict(matrix: Matrix, env: Environment, today: Optional[_dt.date] = None) -> Verdict:
    """Decide whether ``env`` is a supported combination, and how to reach one if not."""
    today = today or _dt.date.today()
    if env.adapter is None:
        return _verdict_without_adapter(matrix, env, today)
    entries = matrix.releases_of(env.adapter)
    if not entries:
        known = ", ".join(dict.fromkeys(str(r.version) for r in matrix.releases))
        reason = f"{matrix.adapter.distribution} {env.adapter} is not a release this matrix describes (known: {known})"
        return _with_fixes(matrix, env, today, Verdict(Outcome.UNSUPPORTED, (reason,)))
    # Entries of one version serve different values of a dimension (an OS): the one for
    # this machine answers, else the best answer.
    answers = [(not _fits_machine(matrix, rel, env), _verdict_for_release(matrix, env, rel, today)) for rel in entries]
    return _with_fixes(matrix, env, today, min(answers, key=lambda a: (_RANK[a[1].outcome], a[0]))[1])


def _with_fixes(matrix: Matrix, env: Environment, today: _dt.date, answer: Verdict) -> Verdict:
    """``answer`` with the fixes that reach a usable cell, unless it is supported."""
    if answer.outcome is Outcome.SUPPORTED:
        return answer
    return answer._replace(fixes=tuple(_fixes(matrix, env, today)))


def _fits_machine(matrix: Matrix, release: Release, env: Environment) -> bool:
    """Whether the release accepts every dimension value the user cannot change."""
    return _machine_mismatch(matrix, release, env) is None


def _machine_mismatch(matrix: Matrix, release: Release, env: Environment) -> Optional[Tuple[str, object, Value]]:
    """The first dimension value the user cannot change that the release refuses."""
    for name, constraint in release.dimensions:
        dim, value = matrix.dimension(name), env.dimension(name)
        if dim is not None and not dim.changeable and value is not None and not constraint.contains(value):
            return name, constraint, value
    return None


def _verdict_without_adapter(matrix: Matrix, env: Environment, today: _dt.date) -> Verdict:
    """No adapter installed: say which release would serve this environment, and how to get it."""
    answers = [_verdict_for_release(matrix, env, rel, today) for rel in reversed(matrix.releases)]
    best = min(answers, key=lambda v: _RANK[v.outcome], default=None)
    reason = f"{matrix.adapter.distribution} is not installed"
    if best is None or best.release is None or best.outcome is Outcome.UNSUPPORTED:
        return _with_fixes(matrix, env, today, Verdict(Outcome.UNSUPPORTED, (reason,)))
    would_be = f"release {best.release.version} would be {best.outcome}" + "".join(f": {r}" for r in best.reasons[:1])
    return _with_fixes(matrix, env, today, best._replace(outcome=Outcome.UNSUPPORTED, reasons=(reason, would_be)))


def _verdict_for_release(matrix: Matrix, env: Environment, release: Release, today: _dt.date) -> Verdict:
    """The answer of one release for ``env``, without fixes (the caller adds them once)."""
    dist = matrix.adapter.distribution

    def fail(reason: str, *marks: Mark) -> Verdict:
        return Verdict(Outcome.UNSUPPORTED, (reason,), release, None, None, tuple(marks))

    if env.implementation.lower() != "cpython":
        return fail(f"torch publishes wheels for CPython only, not {env.implementation}")
    mismatch = _machine_mismatch(matrix, release, env)
    if mismatch is not None:  # a release for another machine: say so first
        name, constraint, value = mismatch
        return fail(f"{dist} {release.label} needs {name} {constraint}, found {value}", release.mark_of("dimensions"))
    if env.torch is None:
        return fail("torch is not installed")
    line = matrix.torch_line(env.torch)
    if line is None:
        known = ", ".join(str(t.minor) for t in matrix.torch)
        return fail(f"torch {torch_label(env.torch)} is not a torch release this matrix describes (described: {known})")
    if not release.torch.contains(env.torch):
        return fail(f"{dist} {release.label} supports torch {release.torch}, not {torch_label(env.torch)}", release.mark_of("torch"))
    if release.variant and env.torch.local != release.variant:
        return fail(
            f"{dist} {release.version} needs torch's {release.variant} build, found torch {env.torch} ({_variant_label(env.torch)})",
            release.mark_of("torch-variant") if "torch-variant" in dict(release.marks) else release.mark_of("torch"),
        )
    if env.python not in line.python:
        return fail(f"torch {line.minor} has no wheel for Python {env.python} (it has {_python_range(line.python)})", line.mark)
    if not release.python.admits(env.python):
        return fail(f"{dist} {release.label} supports Python {release.python}, not {env.python}", release.mark_of("python"))
    assumptions: List[str] = []
    for name, constraint in release.dimensions:
        detected = env.dimension(name)
        if detected is None:
            assumptions.append(f"{name} could not be detected; assumed it satisfies {constraint}")
        elif not constraint.contains(detected):
            return fail(f"{dist} {release.label} needs {name} {constraint}, found {detected}", release.mark_of("dimensions"))
    status, reasons, _link, marks = _assess(matrix, release, env.torch, env.python, dict(env.dimensions), today)
    outcome = Outcome(status.value)
    shim = shim_for(matrix, env.torch)
    if shim is not None:
        marks = marks + (shim.mark,)
    return Verdict(outcome, reasons, release, line, shim, (line.mark,) + marks, tuple(assumptions))


# -- fixes -------------------------------------------------------------------------------

_REACHABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)


class _Target(NamedTuple):
    """A usable combination and what reaching it changes."""

    cell: Cell
    dims: Dict[str, Optional[Value]]  # every dimension after the fix
    changed_dims: Tuple[str, ...]  # driver-level values the user must change by hand
    unknown_dims: Tuple[str, ...]  # constrained values that could not be detected
    keeps_torch: bool


def _dimension_plan(
    matrix: Matrix, release: Release, env: Environment
) -> Optional[Tuple[Dict[str, Optional[Value]], Tuple[str, ...], Tuple[str, ...]]]:
    """The dimension values under which ``release`` serves this machine: the user's where
    the release accepts them, else (for a changeable dimension) the declared value
    nearest above the user's. ``None`` when a value the user cannot change is refused."""
    dims = dict(env.dimensions)
    changed, unknown = [], []
    for name, constraint in release.dimensions:
        dim, value = matrix.dimension(name), dims.get(name)
        if value is None:
            unknown.append(name)
            continue
        if constraint.contains(value):
            continue
        options = dimension_values(matrix, name, constraint)
        if dim is None or not dim.changeable or not options:
            return None
        newer = [o for o in options if o.version is not None and value.version is not None and o.version > value.version]
        dims[name] = min(newer, key=lambda o: o.order) if newer else max(options, key=lambda o: o.order)
        changed.append(name)
    return dims, tuple(changed), tuple(unknown)


def _targets(matrix: Matrix, env: Environment, today: _dt.date) -> List[_Target]:
    out: List[_Target] = []
    for release in matrix.releases:
        plan = _dimension_plan(matrix, release, env)
        if plan is None:
            continue
        dims, changed, unknown = plan
        cell_dims = tuple((name, value) for name, _c in release.dimensions if (value := dims.get(name)) is not None)
        for line, patches in claimed_lines(matrix, release):
            installed = env.torch
            claims_installed = (
                installed is not None
                and line.holds(installed)
                and release.torch.contains(installed)
                and (release.variant is None or installed.local == release.variant)
            )
            for python in pythons_for(release, line):
                # keep the installed torch (not in a new environment: a new Python), or
                # install the newest the release claims
                choices = [(False, max(patches))]
                if claims_installed and python == env.python and installed is not None:
                    choices.insert(0, (True, installed))
                for keeps, torch in choices:
                    status, reasons, link, marks = _assess(matrix, release, torch, python, dims, today)
                    if status in _REACHABLE:
                        cell = Cell(release, line, Version(torch.public), python, cell_dims, status, "; ".join(reasons), link, marks)
                        out.append(_Target(cell, dims, changed, unknown, keeps))
    return out


def _index_options(matrix: Matrix, release: Release, line: TorchLine) -> str:
    """Where pip finds the torch a release needs: only when it names a variant or a
    source; otherwise PyPI, as for every other pip command."""
    if not (release.variant or release.torch_source):
        return ""
    src = matrix.source(torch_source(matrix, release, line))
    if src is None or src.name == "pypi":
        return ""
    if src.index_url:
        return f" --index-url {src.index_url}"
    return f" --find-links {src.find_links}" if src.find_links else ""


def _driver_changes(env: Environment, target: _Target) -> List[str]:
    """``upgrade cann from 8.0.0 to 8.1.RC1`` for each value the user must change."""
    out = []
    for name in target.changed_dims:
        old, new = env.dimension(name), target.dims[name]
        if old is None or new is None or old.version is None or new.version is None:
            verb = "change"  # names (a changeable enumeration) have no direction
        else:
            verb = "upgrade" if old.version < new.version else "downgrade"
        out.append(f"{verb} {name} from {old} to {new}")
    return out


def _what_changes(env: Environment, target: _Target) -> Tuple[Tuple[str, ...], Tuple[str, ...], bool, bool, bool]:
    """What reaching ``target`` changes (names), the manual steps it needs, and whether
    Python, the adapter and torch change."""
    cell, release = target.cell, target.cell.release
    python_changes = cell.python != env.python
    adapter_changes = env.adapter != release.version
    torch_after = env.torch if target.keeps_torch else Version(f"{cell.torch}+{release.variant}" if release.variant else str(cell.torch))
    torch_changes = torch_after != env.torch
    changes = tuple(
        name for name, changed in (("python", python_changes), ("adapter", adapter_changes), ("torch", torch_changes)) if changed
    ) + target.changed_dims
    manual = tuple(f"{step} (not a pip package: install it yourself)" for step in _driver_changes(env, target)) + tuple(
        f"make sure {name} is {release.constraint(name)} ({name} could not be detected)" for name in target.unknown_dims
    )
    return changes, manual, python_changes, adapter_changes, torch_changes


def _fix_for(matrix: Matrix, env: Environment, target: _Target) -> Fix:
    """How to get from ``env`` to ``target``. A new Python is a new environment, so its
    commands install both torch and the adapter."""
    cell, release, dist = target.cell, target.cell.release, matrix.adapter.distribution
    changes, manual, python_changes, adapter_changes, torch_changes = _what_changes(env, target)
    pip = f"python{cell.python} -m pip" if python_changes else "pip"
    adapter_req = f"'{dist}=={release.version}'" + (f" --extra-index-url {release.index_url}" if release.index_url else "")
    requirement = torch_requirement(release, cell.line)
    index = _index_options(matrix, release, cell.line)
    # A new Python is a new environment: it needs torch and the adapter, changed or not.
    install_torch, install_adapter = torch_changes or python_changes, adapter_changes or python_changes
    commands: List[str] = []
    if install_torch and index:  # torch from its own index first, then the adapter
        commands.append(f"{pip} install '{requirement}'{index}")
        if install_adapter:
            commands.append(f"{pip} install {adapter_req}")
    elif install_torch or install_adapter:
        requirements = ([adapter_req] if install_adapter else []) + ([f"'{requirement}'"] if install_torch else [])
        commands.append(f"{pip} install " + " ".join(requirements))
    parts = []
    if python_changes:
        parts.append(f"use Python {cell.python}")
    if torch_changes:
        parts.append(f"install torch {requirement[len('torch=='):] if requirement.startswith('torch==') else cell.line.minor}")
    if adapter_changes:
        parts.append(f"install {dist} {release.version}")
    summary = ", then ".join(_driver_changes(env, target) + ([" and ".join(parts)] if parts else []))
    facts = [f"{dist} {release.version}", f"torch {cell.torch}" + (f"+{release.variant}" if release.variant else ""), f"Python {cell.python}"]
    facts += [f"{name} {value}" for name, value in cell.dimensions]
    summary = (summary or "nothing to change") + f" ({cell.status}: {', '.join(facts)})"
    return Fix(summary, tuple(commands), changes, cell, manual)


def _fixes(matrix: Matrix, env: Environment, today: _dt.date, limit: int = 3) -> List[Fix]:
    """The nearest usable cells, cheapest change first, one per kind of change.

    A driver-level change costs more than any pip install: fixes that keep every
    dimension come first. Then changing Python costs most (a new environment), then
    changing the adapter, then torch. Within a kind of change a supported cell beats an
    experimental or deprecated one, and the torch line nearest to the installed one
    wins, the newer on ties. A fix that changes more than a listed one (with the same
    manual steps) without reaching a better status is left out; fixes that need another
    value of an undetected dimension are listed each with its own. At most ``limit``
    fixes, the best driver-level fix always among them, last.
    """

    def line_key(v: Version) -> int:
        return v.major * 1000 + v.minor

    def cost(target: _Target) -> Tuple[int, int, int, int, int, int]:
        cell = target.cell
        python_change = int(cell.python != env.python)
        adapter_change = int(env.adapter is not None and cell.release.version != env.adapter)
        if env.torch is None:
            distance = -line_key(cell.line.minor)  # nothing installed: the newest line
        else:
            gap = line_key(cell.line.minor) - line_key(env.torch)
            distance = abs(gap) * 2 + int(gap < 0)  # the nearest line, the newer one on ties
        python_gap = abs(line_key(cell.python.version) - line_key(env.python.version))
        return (
            len(target.changed_dims),
            python_change * 2 + adapter_change,
            _REACHABLE.index(cell.status),
            distance,
            -matrix.releases.index(cell.release),
            python_gap,
        )

    kept: List[Fix] = []  # fixes that keep every dimension
    driver: List[Fix] = []  # fixes that change a driver (sorted after all the others)
    for target in sorted(_targets(matrix, env, today), key=cost):
        if target.changed_dims and driver and (kept or len(driver) >= limit):
            break  # one driver-level fix after pip fixes, or `limit` of them alone
        if not target.changed_dims and len(kept) >= limit:
            continue
        changes, manual = _what_changes(env, target)[:2]
        if not changes:
            continue
        rank = _REACHABLE.index(target.cell.status)
        # dominated: a listed fix with the same manual steps changes less for a status as good
        if any(
            c.manual == manual and set(c.changes) <= set(changes) and _REACHABLE.index(c.cell.status) <= rank
            for c in kept + driver
        ):
            continue
        (driver if target.changed_dims else kept).append(_fix_for(matrix, env, target))
    return kept[: limit - len(driver)] + driver if kept else driver
