"""The binary check's place in ``check``: its section of the document, its effect on the
verdict, and its lines in the report. The check itself is :mod:`adapter_matrix.binary.audit`, and
:mod:`adapter_matrix.binary.section` runs it for ``check``.

A problem the loader would hit (a missing symbol or library, another C++ ABI, a system
library too old) makes the verdict ``unsupported`` whatever the matrix says: the matrix
judges versions, the binary check the files actually installed. Its reasons come after
the matrix's, each naming the adapter, the file and torch; each problem carries its fix.

Which torch a binary was built for is read from its metadata (:func:`built_for_torch`: the
``Requires-Dist`` on torch, any specifier that admits one torch minor, ``==2.13.0`` as well as
``<2.14,>=2.13``): a PrivateUse1 binary is tied to that minor, whether or not a symbol is missing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, NamedTuple, Optional, Sequence, Tuple

from ..answer import Answer, BinarySection, EnvironmentSeen
from ..matrix.model import PythonVersion, Release
from ..matrix.status import Status
from .judgment import Environment, Verdict

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

    from .elsewhere import Target
    from .requirements import Pins

__all__ = [
    "with_binary",
    "binary_lines",
    "binary_answer",
    "built_for",
    "pinned_torch",
    "BuiltFor",
    "built_for_torch",
    "torch_lines",
    "minor_of",
    "TIED_TO_A_MINOR",
    "is_distribution_name",
    "with_pins",
    "pins_answer",
    "built_for_installed",
    "admits_line",
    "one_torch_line",
]


def is_distribution_name(text: str) -> bool:
    """Whether ``--adapter TEXT`` names a distribution rather than a version (``0.2.1``)."""
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
        return False
    except InvalidVersion:
        return bool(re.match(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$", text))


def pinned_torch(requires: Sequence[str]) -> Optional[str]:
    """The torch an adapter's metadata pins exactly (``Requires-Dist: torch==2.2.0``): the
    torch its binaries were built for. A pin of an extra is not installed with it, and a
    wildcard (``==2.14.0.*``, torch_npu's) pins no one build."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..names import canonical_name

    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonical_name(req.name) != "torch" or (req.marker is not None and "extra" in str(req.marker)):
            continue
        specs = list(req.specifier)
        if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
            return specs[0].version
    return None


# Why a binary built for another torch minor is refused even when every symbol resolves.
TIED_TO_A_MINOR = (
    "a PrivateUse1 binary is tied to the torch minor it was compiled against (dispatch keys and the C++ ABI "
    "change between minors), so it can import and then fail at its first op"
)
_ANY = 10**9  # a minor number above every real one: an open upper end


class BuiltFor(NamedTuple):
    """The torch an adapter's binaries were built for, as its metadata declares it."""

    requirement: str  # ``torch<2.14,>=2.13``: what pip installs for it
    line: Optional[str]  # ``2.13``: the one torch minor it admits; None when it admits several
    exact: Optional[str]  # ``2.13.0`` when pinned exactly


def torch_lines(spec: SpecifierSet) -> Optional[Tuple[Tuple[int, int], Tuple[int, int]]]:
    """The lowest and highest torch minor (``(2, 13)``) a specifier admits, from its bounds
    (``!=`` narrows no line); None for one this cannot read (``===``, an invalid version)."""
    from packaging.version import InvalidVersion, Version

    low, high = (0, 0), (_ANY, _ANY)
    for item in spec:
        op, text = item.operator, item.version
        wild = text.endswith(".*")
        try:
            version = Version(text[:-2] if wild else text)
        except InvalidVersion:
            return None
        release = version.release + (0,)
        minor = (release[0], release[1])
        if op == "===":
            return None
        if op == "==":
            if wild and len(version.release) < 2:  # ==2.*: every minor of a major
                low, high = max(low, (release[0], 0)), min(high, (release[0], _ANY))
            else:
                low, high = max(low, minor), min(high, minor)
        elif op == "~=":  # ~=2.13.0 is >=2.13.0,==2.13.*; ~=2.13 is >=2.13,==2.*
            low = max(low, minor)
            high = min(high, minor if len(version.release) >= 3 else (release[0], _ANY))
        elif op in (">=", ">"):
            low = max(low, minor)
        elif op == "<=":
            high = min(high, minor)
        elif op == "<":
            # <2.14 (or <2.14.0) excludes 2.14.0 and its pre-releases: the last line it admits is 2.13
            first = not any(version.release[2:]) and not version.is_prerelease and version.post is None
            if first and release[1] > 0:
                high = min(high, (release[0], release[1] - 1))
            elif first:
                high = min(high, (release[0] - 1, _ANY))
            else:
                high = min(high, minor)
    return low, high


def minor_of(version: str) -> str:
    """``2.13`` of ``2.13.0+cpu`` (the text itself when it is no version)."""
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(version)
    except InvalidVersion:
        return version
    return f"{parsed.major}.{parsed.minor}"


def built_for_torch(requires: Sequence[str]) -> Optional[BuiltFor]:
    """The torch an adapter's ``Requires-Dist`` lines say its binaries were built for: the
    requirement on torch (not an extra's), with the one torch minor it admits (``==2.13.0``,
    ``==2.13.*``, ``~=2.13.0``, ``>=2.13,<2.14``); None when it declares no torch."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..names import canonical_name

    for text in requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if canonical_name(req.name) != "torch" or (req.marker is not None and "extra" in str(req.marker)):
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        lines = torch_lines(req.specifier)
        line = None
        if lines is not None and lines[0] == lines[1]:
            line = f"{lines[0][0]}.{lines[0][1]}"
        return BuiltFor(f"torch{req.specifier}", line, pinned_torch([text]))
    return None


def built_for(release: Optional[Release]) -> Optional[str]:
    """The torch a matrix release pins exactly (``torch: 2.2.0`` or ``==2.2.0``), which its
    binaries were built for; None for a range."""
    if release is None:
        return None
    specs = list(release.torch.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    return None


def with_binary(answer: Verdict, section: Optional[BinarySection]) -> Verdict:
    """``answer`` made unsupported, with the binary problems as reasons, when there are any."""
    if section is None or section.ok:
        return answer
    reasons = tuple(p.message for p in section.problems)
    outcome = answer.outcome if answer.outcome.rank >= Status.UNSUPPORTED.rank else Status.UNSUPPORTED
    return answer._replace(outcome=outcome, reasons=answer.reasons + reasons)


def binary_answer(
    distribution: str, section: BinarySection, environment: Environment, torch_text: Optional[str]
) -> Answer:
    """The ``check --json`` entry of an adapter without a matrix (``check --adapter DIST``):
    the binary check alone decides; the matrix's keys are empty."""
    answer = with_binary(Verdict(Status.SUPPORTED, ()), section)
    if answer.outcome is Status.SUPPORTED:
        answer = answer._replace(
            reasons=(
                f"{distribution} ships no compat.yaml: only its binaries were checked, and they load beside this torch",
            )
        )
    return _unmatrixed_answer(distribution, environment, torch_text, section.version, answer, section)


def _unmatrixed_answer(
    distribution: str,
    environment: Environment,
    torch_text: Optional[str],
    version: Optional[str],
    answer: Verdict,
    section: Optional[BinarySection],
    origin: str = "--adapter",
) -> Answer:
    seen = EnvironmentSeen(
        python=environment.python_full or str(environment.python),
        python_minor=str(environment.python),
        implementation=environment.implementation,
        free_threaded=environment.python.free_threaded,
        torch=torch_text,
        torch_variant=environment.torch.local if environment.torch is not None else None,
        torch_family=None,
        adapter=version,
        dimensions={},
    )
    return Answer(
        matrix=None,
        origin=origin,
        adapter=distribution,
        environment=seen,
        verdict=answer.outcome,
        exit_code=answer.exit_code,
        reasons=tuple(answer.reasons),
        assumptions=(),
        release=None,
        torch_line=None,
        shim=None,
        decided_by=(),
        companions=(),
        fixes=(),
        binary=section,
    )


Segment = Tuple[str, str]


def binary_lines(section: BinarySection) -> List[List[Segment]]:
    """The report's lines for the binary section: what was checked, then each problem's fix."""
    files = len(section.files)
    against = f" against torch {section.torch}" if section.torch else ""
    problems = section.problems
    if problems:
        head = [
            ("binary check: ", "bold"),
            (
                f"{len(problems)} problem{'s' if len(problems) > 1 else ''} in {files} librar{'ies' if files != 1 else 'y'}{against}",
                "red",
            ),
        ]
    elif not files:
        # a fresh install of an adapter that compiles its core at first use: no library yet, no failure
        what = " ".join(v for v in (section.distribution, section.version) if v) or "the adapter"
        head = [
            ("binary check: ", "bold"),
            (f"nothing built yet: {what} has no compiled library to read{against} (none is installed or built)", ""),
        ]
    else:
        head = [
            ("binary check: ", "bold"),
            (f"{files} librar{'ies' if files != 1 else 'y'} load{'s' if files == 1 else ''}{against}", "green"),
        ]
    lines = [head]
    for fix in dict.fromkeys(p.fix for p in problems):
        lines.append([("fix:", "bold"), (" " + fix, "")])
    lines += [[("    note: ", "dim"), (note, "")] for note in section.notes]
    return lines


def built_for_installed(distribution: str, target: Optional[Target] = None) -> Optional[Tuple[str, BuiltFor]]:
    """(installed version, the torch its metadata says it was built for) of an installed
    adapter (in ``target``, ``check --env``'s environment, if given): one exact torch or one
    torch minor; None when it says neither."""
    from .facts import distribution_requires, distribution_version

    version = distribution_version(distribution, target)
    built = built_for_torch(distribution_requires(distribution, target)) if version else None
    return (version, built) if version and built and (built.exact or built.line) else None


def _line_of(built: BuiltFor) -> str:
    return built.line or minor_of(built.exact or "")


def _named(built: BuiltFor) -> str:
    """``torch 2.13.0``, or ``torch 2.13 (torch<2.14,>=2.13 in its metadata)``."""
    return f"torch {built.exact}" if built.exact else f"torch {built.line} ({built.requirement} in its metadata)"


def admits_line(requirement: str, line: str) -> Optional[bool]:
    """Whether a torch requirement (``torch>=2.12,<2.13``) admits a torch of ``line`` (``2.13``)
    by its bounds; None when it cannot be read."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        bounds = torch_lines(Requirement(requirement).specifier)
        major, minor = (int(x) for x in line.split(".")[:2])
    except (InvalidRequirement, ValueError):
        return None
    return None if bounds is None else bounds[0] <= (major, minor) <= bounds[1]


def _refusal(
    found: Tuple[str, BuiltFor], distribution: str, torch: Optional[str], asked: Optional[str], source: str
) -> Optional[str]:
    """Why what ``source`` installs does not fit the installed build: its torch ``torch`` (an exact
    pin, or the patch a range was judged at), or its range ``asked``; None when it fits."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    version, built = found
    line = _line_of(built)
    head = f"{distribution} {version} (installed) was built for {_named(built)}"
    if asked is not None and admits_line(asked, line) is False:
        return f"{head}, but {source} asks for {asked}, which admits no torch {line}: {TIED_TO_A_MINOR}"
    if torch is None:
        return None
    try:
        other = (
            not SpecifierSet(f"=={built.exact}").contains(Version(torch), prereleases=True)
            if built.exact
            else minor_of(torch) != line
        )
    except InvalidVersion:
        return None
    if not other:
        return None
    tied = f": {TIED_TO_A_MINOR}" if minor_of(torch) != line else ""
    return f"{head}, but {source} would install torch {torch}{tied}"


def with_pins(
    answer: Verdict,
    distribution: str,
    adapter_pin: Optional[str],
    torch: Optional[str],
    source: str,
    asked: Optional[str] = None,
    target: Optional[Target] = None,
) -> Verdict:
    """``check --requirements``: the installed adapter (unless the file installs another
    version of it) refused beside the file's torch (``torch``; ``asked``: the file's range)
    when its metadata says it was built for another (an exact pin, or a torch minor).
    ``target``: ``check --env``'s environment, else this one."""
    found = built_for_installed(distribution, target)
    if found is None or (adapter_pin and adapter_pin != found[0]):
        return answer
    reason = _refusal(found, distribution, torch, asked, source)
    if reason is None:
        return answer
    outcome = answer.outcome if answer.outcome.rank >= Status.UNSUPPORTED.rank else Status.UNSUPPORTED
    return answer._replace(outcome=outcome, reasons=answer.reasons + (reason,))


def pins_answer(
    distribution: str,
    pins: Pins,
    python: PythonVersion,
    full: str,
    implementation: str,
    target: Optional[Target] = None,
) -> Answer:
    """``check --adapter DIST --requirements FILE`` for an adapter without a matrix: the
    torch its metadata says it was built for against the file's torch, an exact pin or a range
    (``target``: ``check --env``'s environment, else this one)."""
    from packaging.version import InvalidVersion, Version

    from .facts import distribution_version

    torch = pins.get("torch")
    asked = pins.range("torch") if torch is None else None
    found = built_for_installed(distribution, target)
    answer = Verdict(Status.SUPPORTED, ())
    if torch is None and asked is None:
        answer = Verdict(Status.UNSUPPORTED, (f"{pins.source} pins no torch: nothing to judge (--resolve asks pip)",))
    elif found is None:
        answer = Verdict(
            Status.EXPERIMENTAL,
            (f"{distribution} declares no torch it was built for: only installing {pins.source} would tell",),
        )
    else:
        answer = with_pins(answer, distribution, pins.get(distribution), torch, pins.source, asked, target)
        line = _line_of(found[1])
        if answer.outcome is Status.SUPPORTED and torch is not None:
            answer = answer._replace(
                reasons=(f"{distribution} {found[0]} was built for {_named(found[1])}, which {pins.source} installs",)
            )
        elif answer.outcome is Status.SUPPORTED and asked is not None:
            only = one_torch_line(asked)
            if only == line:
                answer = answer._replace(
                    reasons=(
                        f"{distribution} {found[0]} was built for {_named(found[1])}, the one torch minor "
                        f"{pins.source}'s {asked} installs",
                    )
                )
            else:
                answer = Verdict(
                    Status.EXPERIMENTAL,
                    (
                        f"{pins.source} asks for {asked}, not one torch minor: it admits others than torch {line}, "
                        f"the one {distribution} {found[0]} was built for, and which one pip installs depends on its "
                        f"index (pin torch>={line},<{_next(line)} in it, or --resolve asks pip's resolver)",
                    ),
                )
    try:
        torch_version = Version(torch) if torch else None
    except InvalidVersion:
        torch_version = None
    env = Environment(python=python, python_full=full, implementation=implementation, torch=torch_version)
    origin = f"--adapter, --requirements {pins.source}"
    # the binaries of a torch not yet installed: nothing was read, no binary section
    installed = distribution_version(distribution, target)
    return _unmatrixed_answer(distribution, env, torch, installed, answer, None, origin)


def one_torch_line(requirement: str) -> Optional[str]:
    """The one torch minor (``2.13``) a torch requirement admits; None for several, or none read."""
    built = built_for_torch([requirement])
    return built.line if built is not None else None


def _next(line: str) -> str:
    major, minor = line.split(".")[:2]
    return f"{major}.{int(minor) + 1}"
