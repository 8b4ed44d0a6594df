"""Installing a cell: the cell's torch and companions in one resolver call (the next source
after one that fails), then the adapter's wheels (a compiled project built here, against the
cell's torch), adapter-matrix itself and the tests' requirements; offline, from the wheel
folders only."""

from __future__ import annotations

import os
import time
from typing import List, Sequence

import nox
from packaging.requirements import Requirement

from ..ci import adapterbuild as _adapterbuild
from ..ci.install import InstallAttempt, cell_companions, install_attempts
from ..ci.record import BuildSeen
from ..ci.wheels import TOOL, WheelBuildError
from ..device.testimports import requirements_of_tests
from ..files import atomic_write
from ..names import canonical_name
from .cellrun import CellRun
from .declarations import EXTRAS_ENV, Pytest, op_sweep_requirements


def install_cell(cell: CellRun) -> None:
    """Install the cell: torch (with its companions), then the adapter and what its tests need."""
    row, session = cell.row, cell.session
    try:
        attempts = install_attempts(row)
    except ValueError as exc:
        cell.fail(str(exc))
    if cell.offline:
        attempts = _offline_attempts(attempts, cell.offline)
    for attempt in attempts:
        try:
            session.install(*attempt.options, attempt.requirement, *attempt.companions, env=cell.env)
            cell.attempt = attempt
            break
        except nox.command.CommandFailed:
            session.warn(f"could not install {attempt.describe()}; trying the next")
    else:
        cell.fail(f"no source could install torch {row.cell.torch} for Python {row.cell.python}")
    _note_missing_companions(cell, attempts)
    wanted = cell.adapter.requirements
    more = list(wanted(row) if callable(wanted) else wanted)
    tester = ["pytest"] if isinstance(cell.adapter.tests, Pytest) else []
    if isinstance(cell.adapter.tests, Pytest):  # read again: a test file added after `init` (device/testimports.py)
        folder = os.path.join(cell.adapter.root or os.getcwd(), cell.adapter.tests.path)
        more += [r for r in requirements_of_tests(folder) if r not in more]
    if cell.sweep_plan()[0] != "none" or cell.op_tests_wanted():  # PyTorch's test machinery imports expecttest, numpy
        more += [r for r in op_sweep_requirements(str(row.cell.torch)) if r not in more]
    if cell.op_tests_wanted() and "pytest" not in tester:  # ops tests runs each test file with pytest
        tester.append("pytest")
    # as a user installs them: wheels, with their dependencies (torch is already the cell's)
    try:
        tool = cell.cells.tool(session)
    except WheelBuildError as exc:
        cell.fail(f"cannot install {TOOL} into the cell: {exc}")
    cell.step(
        "installing the adapter", cell.install, *adapter_wheels(cell, cell.cells.wheels(session)), *tool, *tester, *more
    )
    extras = os.environ.get(EXTRAS_ENV, "").split()
    if extras:
        cell.step(f"installing {' '.join(extras)}", cell.install, *extras)


def adapter_wheels(cell: CellRun, pure: Sequence[str]) -> List[str]:
    """The adapter's wheels in ``projects`` order: the pure-Python ones built for the run
    (``pure``), each compiled one built here, against this cell's torch and Python."""
    out: List[str] = []
    pure_left = list(pure)
    paths = [os.path.join(cell.root, p) for p in cell.adapter.projects]
    compiled = [cell.cells.compiled(p) for p in paths]
    for i, (project, path) in enumerate(zip(cell.adapter.projects, paths)):
        if not compiled[i]:
            if pure_left:
                out.append(pure_left.pop(0))
            continue
        with cell.phase("build"):
            out.append(_build_compiled(cell, project, path, [_adapterbuild.project_name(p) for p in paths[:i]]))
        if any(compiled[i + 1 :]):  # a later project builds against this one: it must be installed first
            cell.step(f"installing {os.path.basename(out[-1])}", cell.install, *out, *cell.cells.tool(cell.session))
    return out


def _build_compiled(cell: CellRun, project: str, path: str, earlier: Sequence[str] = ()) -> str:
    # torch is the cell's; a project built before this one (the adapter a plugin builds
    # against) is installed already, from its own folder
    given = {"torch", *earlier}
    requires = [r for r in _adapterbuild.build_requires(path) if canonical_name(Requirement(r).name) not in given]
    if requires:  # the backend, from the cell's own sources (offline: the wheel folders)
        cell.step("installing the build requirements", cell.install, *requires)
    probe = (
        "import importlib.metadata as m, sys, sysconfig; "
        "print(m.version('torch'), sys.implementation.cache_tag, sysconfig.get_platform())"
    )
    torch, tag, platform = str(cell.run("python", "-c", probe, silent=True)).split()[-3:]
    name = _adapterbuild.project_name(path) or project
    cell.session.log(f"building {name} against torch {torch} ({tag}, {platform})")
    started = time.perf_counter()
    try:
        built = _adapterbuild.build_in_cell(
            path,
            cell.executable("python"),
            torch,
            tag,
            platform,
            os.path.join(cell.root, ".nox", "_wheels", "compiled"),
            sdist=cell.adapter.sdist,
            offline=bool(cell.offline),
            timeout=cell.adapter.build_timeout,
            command=cell.adapter.build_command,
        )
    except _adapterbuild.BuildFailed as exc:
        log = os.path.join(cell.results, f"{cell.row.id}.build.log")
        os.makedirs(cell.results, exist_ok=True)
        atomic_write(log, exc.log or str(exc), follow=False)
        cell.fail(f"building {name} against torch {torch} failed: {exc} (the whole log: {log})")
        raise  # not reached: fail() ends the session
    cell.session.log(("compiled " if built.compiled else "cached build ") + f"{built.wheel.name} ({built.key})")
    facts: BuildSeen = {
        "source_hash": built.key.rsplit("-src", 1)[-1],
        "build_seconds": round(time.perf_counter() - started, 2),
        "compiled": built.compiled,
    }
    if cell.build is None:  # the record says what the cell's adapter was built from
        cell.build = dict(facts)
    version = built.wheel.name.split("-")[1] if built.wheel.name.count("-") >= 2 else None
    cell.builds.append({"project": name, "version": version, **facts})
    return str(built.wheel)


def _note_missing_companions(cell: CellRun, attempts: Sequence[InstallAttempt]) -> None:
    """After torch went in without the cell's companions: ask the index once more for them
    beside it. If it says no again, the record names each one as unavailable (no build for
    this Python and torch on that index), which the evidence gate accepts in place of it;
    a folder of wheels (``find-links``) is no such answer, so nothing is recorded for it."""
    installed = cell.attempt
    assert installed is not None
    missing = [p for p in cell_companions(cell.row) if p not in installed.picks]
    if not missing:
        return
    retry = next(
        (a for a in attempts if a.picks and a.source == installed.source and a.requirement == installed.requirement),
        None,
    )
    if retry is not None and not retry.local:
        try:
            cell.session.install(*retry.options, retry.requirement, *retry.companions, env=cell.env)
            cell.attempt = retry
            return
        except nox.command.CommandFailed:
            cell.companions_unavailable = {
                p.name: f"{p.requirement(retry.variant)} could not be installed beside {retry.requirement} "
                f"for Python {cell.row.cell.python} from {retry.source}, twice; {retry.requirement} alone could"
                for p in missing
            }
    names = ", ".join(p.name for p in missing)
    cell.session.warn(f"installed without {names}: {installed.source} has no build of it for this cell")


def _offline_attempts(attempts: Sequence[InstallAttempt], folders: Sequence[str]) -> List[InstallAttempt]:
    """The attempts with every index replaced by the wheel folders (each distinct attempt once)."""
    out: List[InstallAttempt] = []
    for a in attempts:
        kept: List[str] = []
        options = list(a.options)
        while options:
            opt = options.pop(0)
            value = options.pop(0) if options else ""
            if opt == "--find-links":
                kept += [opt, value]
        kept += ["--no-index", *(o for folder in folders for o in ("--find-links", folder))]
        moved = InstallAttempt(a.source, a.requirement, tuple(kept), a.companions, a.picks, a.variant, True)
        if all(
            (m.requirement, m.companions, m.options) != (moved.requirement, moved.companions, moved.options)
            for m in out
        ):
            out.append(moved)
    return out
