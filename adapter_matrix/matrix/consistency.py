"""Cross-reference checks of a loaded matrix: what no single key can tell.

The loader has already checked each value's syntax; these checks look at how the
sections fit together (claims against upstream facts, shims against claims, names
against declarations). Each finding is a diagnostic pointing at the row to change.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Dict, Iterator, List, Optional, Set, Tuple

from packaging.version import Version

from . import companions
from .diagnostics import Diagnostic, Diagnostics, Mark
from .model import ENUM, Constraint, InstallSource, Matrix, Release, Spec, Status, minor_line
from .queries import claimed_lines, claimed_patches, dimension_values, pythons_for, shim_for

__all__ = ["check"]

_BOUNDED = ("<", "<=", "==", "~=", "===")
_MAX_GAP = 100  # minors probed past each known one for claims the file does not describe


def check(matrix: Matrix, *, check_modules: bool = True, complete: bool = True) -> List[Diagnostic]:
    """Every rule across the model's parts. ``complete=False``: the file's fields had errors, so
    entries were dropped from the model (a torch line, a shim): the rules that would only echo a
    dropped entry's absence (a claim no line describes, a torch no shim serves, a smoke cell of an
    unknown line) wait until those errors are fixed; every other rule still speaks (issue 67)."""
    diags = Diagnostics()
    _sources(matrix, diags)
    _torch_lines(matrix, diags)
    _duplicate_releases(matrix, diags)
    _dimensions(matrix, diags)
    _runnerless_dimensions(matrix, diags)
    for release in matrix.releases:
        _release(matrix, release, diags, complete)
    if matrix.declares_shims:
        _shim_overlaps(matrix, diags)
        if check_modules:
            _shim_modules(matrix, diags)
    if complete:
        _smoke(matrix, diags)
    diags.extend(companions.check(matrix))
    return diags.items


def _runnerless_dimensions(matrix: Matrix, diags: Diagnostics) -> None:
    """A dimension whose releases name several values but no runner label: the plan's rows for
    each value would run on the same runners (x86_64 and aarch64 rows on one machine)."""
    for dim in matrix.dimensions:
        if dim.runner is not None:
            continue
        used: List[str] = []  # the first values the releases admit: two are enough to warn, a few to show
        constraints = [c for r in matrix.releases for name, c in r.dimensions if name == dim.name]
        for value in dim.values:
            if any(c.contains(value) for c in constraints):
                used.append(str(value))
                if len(used) > 3:
                    break
        if len(used) > 1:
            shown = ", ".join(used[:3]) + (", ..." if len(used) > 3 else "")
            diags.warning(
                dim.mark,
                f"dimension {dim.name} has values in the releases ({shown}) but no runner label: "
                f"the rows of {' and '.join(used[:2])} would run on the same runners",
                f'add `runner: "{dim.name}-{{value}}"` (the label of the runners that have each value) or a mapping',
            )


def _sources(matrix: Matrix, diags: Diagnostics) -> None:
    names = {s.name for s in matrix.sources}
    for src in matrix.sources:
        if src.fallback is not None and src.fallback not in names:
            diags.error(
                src.mark,
                f"source {src.name!r} falls back to unknown source {src.fallback!r}",
                f"known: {', '.join(sorted(names))}",
            )
        seen = {src.name}
        cur: Optional[InstallSource] = src
        while cur is not None and cur.fallback is not None:
            if cur.fallback in seen:
                diags.error(
                    src.mark, f"source {src.name!r} has a fallback cycle", "end the chain at a source without fallback"
                )
                break
            seen.add(cur.fallback)
            cur = matrix.source(cur.fallback)


def _torch_lines(matrix: Matrix, diags: Diagnostics) -> None:
    previous = None
    for line in matrix.torch:
        if matrix.source(line.install) is None:
            names = ", ".join(s.name for s in matrix.sources)
            diags.error(
                line.mark,
                f"torch {line.minor} installs from unknown source {line.install!r}",
                f"declare it under sources: (known: {names})",
            )
        if previous is not None and line.released < previous.released:
            diags.warning(
                line.mark, f"torch {line.minor} is dated before torch {previous.minor}", "check the release dates"
            )
        previous = line


def _disjoint(matrix: Matrix, a: Release, b: Release) -> bool:
    """Whether two entries of one version serve different dimension values (IPEX 2.9.10
    on Linux and on Windows): some dimension both constrain with no value in common."""
    for name, ca in a.dimensions:
        cb = b.constraint(name)
        if cb is not None and not {v.text for v in dimension_values(matrix, name, ca)} & {
            v.text for v in dimension_values(matrix, name, cb)
        }:
            return True
    return False


def _duplicate_releases(matrix: Matrix, diags: Diagnostics) -> None:
    seen: Dict[Version, List[Release]] = {}
    for release in sorted(matrix.releases, key=lambda r: r.mark):
        earlier = [r for r in seen.get(release.version, []) if not _disjoint(matrix, r, release)]
        if earlier:
            diags.error(
                release.mark_of("version"),
                f"duplicate release {release.version}",
                f"it is already listed at line {earlier[0].mark.line}"
                + (
                    "; entries of one version must serve disjoint values of a dimension (os: linux, os: windows)"
                    if matrix.dimensions
                    else ""
                ),
            )
        seen.setdefault(release.version, []).append(release)


def _dimensions(matrix: Matrix, diags: Diagnostics) -> None:
    for dim in matrix.dimensions:
        if dim.kind == ENUM and not dim.values:
            diags.error(dim.mark, f"enumeration {dim.name} lists no values", "list them under values:")
        if dim.runner is not None:
            for known, _label in dim.runner.labels:
                if not any(v.text.casefold() == known.casefold() for v in dim.values):
                    diags.warning(
                        dim.mark,
                        f"runner label for {dim.name} {known}, which is not among its values",
                        "add it to values: or remove the label",
                    )


def _mentioned_versions(spec: Spec) -> Iterator[Tuple[str, Version]]:
    for s in spec.specifier:
        text = s.version.replace(".*", "")
        try:
            yield s.operator, Version(text)
        except ValueError:  # arbitrary equality (===) with a non-version string
            continue


def _undescribed_claims(matrix: Matrix, release: Release) -> List[str]:
    """Torch versions the release claims that the ``torch:`` section does not describe.

    Probes every minor between the lowest and highest one the specifier or the file
    mentions (``<2.17`` probes 2.16.0), plus exact pins such as ``==2.4.3``.
    """
    mentioned = [v for _, v in _mentioned_versions(release.torch)]
    probes: Set[Version] = {v for v in mentioned if len(v.release) >= 3}
    for major in {v.major for v in mentioned}:
        minors = [v.minor for v in mentioned if v.major == major]
        minors += [t.minor.minor for t in matrix.torch if t.minor.major == major]
        top = max(minors)
        # Every minor from the lowest to the highest, but never more than _MAX_GAP past a
        # mentioned or described one: `<2.100000000` would otherwise probe 10**8 minors.
        for start in set(minors):
            probes.update(Version(f"{major}.{m}.0") for m in range(start, min(start + _MAX_GAP, top) + 1))
    out: Set[str] = set()
    for v in probes:
        if not release.torch.contains(v):
            continue
        line = matrix.torch_line(v)
        if line is None:
            out.add(str(minor_line(v)))
        elif v not in line.patches and not claimed_patches(release, line):
            out.add(str(v))
    return sorted(out, key=Version)


def _release(matrix: Matrix, release: Release, diags: Diagnostics, complete: bool = True) -> None:
    where_torch = release.mark_of("torch")
    for unknown in _undescribed_claims(matrix, release) if complete else ():
        diags.error(
            where_torch,
            f"release {release.version} claims torch {unknown} (torch {release.torch}), which this file does not describe",
            f"add a `torch: {unknown}:` entry with its facts, or narrow the specifier",
        )
    if not any(op in _BOUNDED for op, _ in _mentioned_versions(release.torch)):
        diags.warning(
            where_torch,
            f"release {release.version} claims every future torch ({release.torch})",
            "add an upper bound such as <2.16",
        )
    lines = claimed_lines(matrix, release)
    if not lines and complete:
        diags.error(
            where_torch,
            f"release {release.version} claims no torch release this file describes",
            "check the torch specifier",
        )
    for line, patches in lines:
        if release.python.exact:
            for python in release.python.exact:
                if python not in line.python:
                    diags.error(
                        release.mark_of("python"),
                        f"release {release.version} claims Python {python} with torch {line.minor}, which has no {python.tag} wheel",
                        f"torch {line.minor} has wheels for {', '.join(str(p) for p in line.python)}; narrow the claim",
                    )
        elif not pythons_for(release, line):
            diags.error(
                release.mark_of("python"),
                f"release {release.version} claims torch {line.minor}, but none of its Pythons ({', '.join(str(p) for p in line.python)}) matches {release.python}",
                "widen the Python range or narrow the torch specifier",
            )
        if complete and matrix.declares_shims and (release.status not in (Status.BROKEN, Status.EOL) or release.rules):
            missing = [p for p in patches if shim_for(matrix, p) is None]
            if missing:
                diags.error(
                    where_torch,
                    f"release {release.version} supports torch {', '.join(map(str, missing))} but no shim serves it",
                    "add a shim range covering it under shims:",
                )
    for name, constraint in release.dimensions:
        _constraint(matrix, name, constraint, release.mark_of("dimensions"), f"release {release.version}", diags)
    _torch_build(matrix, release, diags)
    for rule in release.rules:
        for name, constraint in rule.dimensions:
            _constraint(matrix, name, constraint, rule.mark, "exception", diags)
        if rule.torch is not None and not any(rule.torch.contains(p) for _, ps in lines for p in ps):
            diags.warning(
                rule.mark,
                f"exception for torch {rule.torch} matches no torch that release {release.version} claims",
                _exception_hint(rule.torch),
            )
        if rule.status is Status.BROKEN and not rule.reason:
            diags.error(rule.mark, "a broken exception needs a reason", "add `reason:`")
    if release.date and release.supported_until and release.supported_until < release.date:
        diags.error(
            release.mark_of("supported-until"),
            f"release {release.version} support ends before its release date",
            "fix supported-until",
        )


def _constraint(matrix: Matrix, name: str, constraint: Constraint, mark: Mark, who: str, diags: Diagnostics) -> None:
    """A constraint must name a declared dimension and match one of its declared values
    (else no cell, table or plan would ever show it)."""
    dim = matrix.dimension(name)
    if dim is None:
        diags.error(mark, f"{who} names unknown dimension {name!r}", "declare it under dimensions:")
    elif dim.values and not dimension_values(matrix, name, constraint):
        known = ", ".join(str(v) for v in dim.values)
        diags.error(
            mark,
            f"{who} needs {name} {constraint}, which matches none of its declared values ({known})",
            f"add the value to dimensions.{name}.values",
        )


def _torch_build(matrix: Matrix, release: Release, diags: Diagnostics) -> None:
    """The torch variant and source a release names must be installable."""
    if release.torch_source is not None:
        src = matrix.source(release.torch_source)
        if src is None:
            names = ", ".join(s.name for s in matrix.sources)
            diags.error(
                release.mark_of("torch-source"),
                f"release {release.version} installs torch from unknown source {release.torch_source!r}",
                f"declare it under sources: (known: {names})",
            )
        elif release.variant and src.variant not in (None, release.variant):
            diags.error(
                release.mark_of("torch-source"),
                f"source {src.name} installs torch's {src.variant} build, release {release.version} needs {release.variant}",
                "pick a source of that variant",
            )
    elif release.variant and not any(src.variant == release.variant for src in matrix.sources):
        diags.error(
            release.mark_of("torch-variant") if "torch-variant" in dict(release.marks) else release.mark_of("torch"),
            f"release {release.version} needs torch's {release.variant} build, but no source installs it",
            f"declare a source with `variant: {release.variant}` and the index-url that has it",
        )


def _shim_overlaps(matrix: Matrix, diags: Diagnostics) -> None:
    probes = sorted(
        {p for line in matrix.torch for p in line.patches} | {Version(f"{line.minor}.0") for line in matrix.torch}
    )
    for i, a in enumerate(matrix.shims):
        for b in matrix.shims[i + 1 :]:
            both = [v for v in probes if a.torch.contains(v) and b.torch.contains(v)]
            if both:
                diags.error(
                    b.mark,
                    f"shim {b.module} ({b.torch}) overlaps {a.module} ({a.torch}) at torch {both[0]}",
                    f"make the ranges disjoint (the other is at line {a.mark.line})",
                )


def _package_dir(matrix: Matrix, top: str) -> Optional[str]:
    """Where the shims' top-level package lives: beside the matrix file, or the folder
    the file is packaged in (a link is followed to its target), else installed."""
    for path in dict.fromkeys((os.path.abspath(matrix.path), os.path.realpath(matrix.path))):
        folder = os.path.dirname(path)
        # a regular package only: a folder named like it may be the project that holds it
        # (this repository's `shims/` is the adapter's project, its package is shims/src/shims)
        if os.path.isfile(os.path.join(folder, top, "__init__.py")):
            return os.path.join(folder, top)
        if os.path.basename(folder) == top and os.path.isfile(os.path.join(folder, "__init__.py")):
            return folder
    try:
        spec = importlib.util.find_spec(top)  # top-level only: does not import the package
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    if spec.origin in (None, "namespace"):  # a folder without __init__.py: a project named like the package
        return None  # (this repository's shims/ beside the working directory), not the package
    return list(spec.submodule_search_locations)[0]


def _shim_modules(matrix: Matrix, diags: Diagnostics) -> None:
    for shim in matrix.shims:
        top, *rest = shim.module.split(".")
        base = _package_dir(matrix, top)
        if base is None:
            diags.warning(shim.mark, f"cannot check shim module {shim.module}: package {top!r} is not installed")
            continue
        path = os.path.join(base, *rest)
        if not (os.path.isfile(path + ".py") or os.path.isfile(os.path.join(path, "__init__.py")) or not rest):
            diags.error(
                shim.mark,
                f"shim module {shim.module} does not exist (no {path}.py)",
                "create it, e.g. with `adapter-matrix new-shim`",
            )


def _smoke(matrix: Matrix, diags: Diagnostics) -> None:
    for ref in matrix.smoke:
        line = matrix.torch_line(ref.torch)
        if line is None:
            diags.error(ref.mark, f"smoke cell names torch {ref.torch}, which this file does not describe")
        elif ref.python not in line.python:
            diags.error(
                ref.mark, f"smoke cell names Python {ref.python}, but torch {line.minor} has no {ref.python.tag} wheel"
            )


def _exception_hint(torch: Spec) -> str:
    """The fix for an exception that matches nothing. A local label (``==2.7.1+cpu``) is the
    commonest cause: the cells are torch's public versions, the build comes from the release's
    ``torch-variant``, and PEP 440 lets ``==2.7.1+cpu`` match only that label."""
    labelled = [s for s in torch.specifier if "+" in s.version]
    if labelled:
        public = ",".join(f"{s.operator}{s.version.split('+', 1)[0]}" for s in torch.specifier)
        label = labelled[0].version.split("+", 1)[1]
        return f"write `{public}`: the build (+{label}) comes from the release's torch-variant"
    return "remove it or fix its specifier"
