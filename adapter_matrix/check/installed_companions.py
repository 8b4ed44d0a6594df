"""Companion packages in the user's environment: detected, judged against torch and the
adapter, and folded into the verdict.

Each companion the matrix declares is looked up in the distribution metadata (never
imported, like torch). An installed one is judged:

``paired``
    its release's torch requirement admits the installed torch (and the adapter's pin,
    when the adapter declares one, admits it), and it is a build for the same variant;
``unpaired``
    the requirement (or the adapter's pin) excludes what is installed: operators fail to
    load, or pip swaps torch on the next install;
``variant``
    the versions pair but the builds do not: PyTorch publishes each build of a companion
    beside the torch build it was compiled with, with the same local label (``+cpu``,
    ``+cu126``); PyPI's are unlabelled and built for PyPI's (CUDA) torch. A PyPI
    torchvision beside ``torch 2.13.0+cpu`` cannot load its operators ("operator
    torchvision::nms does not exist");
``unknown``
    a release the matrix does not list: nothing is claimed (an assumption says so);
``absent`` / ``unchecked``
    not installed / nothing to judge against (torch, or the adapter for its pins, missing).

An unpaired or variant companion makes the answer ``unsupported``, with one pip command
that keeps torch and fixes the companion; when the fix changes torch (the adapter needs
another torch), the companions move with it in the same command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.version import InvalidVersion, Version

from ..answer import CompanionFix, CompanionSeen
from ..matrix.diagnostics import Mark
from ..matrix.model import Companion, CompanionRelease, Matrix, requirement
from ..matrix.queries import Cell, cells
from ..matrix.status import Status
from .environment import AssumptionError
from .facts import distribution_version
from .judgment import Environment, Fix, Verdict
from .shell import quoted, shell_of
from .variants import is_variant, pytorch_index

if TYPE_CHECKING:
    from .elsewhere import Target

__all__ = [
    "BAD",
    "CompanionState",
    "detect_companions",
    "judge_companions",
    "with_companions",
    "companion_seen",
    "companion_line",
]

BAD = ("unpaired", "variant")


class CompanionState(NamedTuple):
    """One declared companion in the environment, and the answer for it."""

    companion: Companion
    installed: Optional[str]  # the version text as installed (or assumed)
    source: str  # "distribution metadata" or "--companion"
    state: str  # paired | unpaired | variant | unknown | absent | unchecked
    reason: str
    release: Optional[CompanionRelease]
    decided_by: Tuple[Mark, ...]
    fix: Optional[Fix] = None

    @property
    def version(self) -> Optional[Version]:
        return _parse(self.installed)


def _parse(text: Optional[str]) -> Optional[Version]:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def detect_companions(
    matrix: Matrix, overrides: Optional[Dict[str, str]] = None, target: Optional[Target] = None
) -> List[Tuple[Companion, Optional[str], str]]:
    """(companion, installed version or None, how it was found) for every declared companion
    (in ``target``, ``check --env``'s environment, if given).

    ``overrides`` maps a companion name to an assumed version, or to ``none`` for "not
    installed". Raises :class:`~adapter_matrix.check.environment.AssumptionError` for an
    unknown name or a bad version.
    """
    overrides = dict(overrides or {})
    out = []
    for comp in matrix.companions:
        given = next((v for k, v in overrides.items() if matrix.companion(k) is comp), None)
        if given is not None:
            if given != "none" and _parse(given) is None:
                raise AssumptionError("companion", "is not a PEP 440 version (or none)", comp.name, given)
            out.append((comp, None if given == "none" else given, "--companion"))
        else:
            out.append((comp, distribution_version(comp.name, target), "distribution metadata"))
    unknown = [k for k in overrides if matrix.companion(k) is None]
    if unknown:
        declared = ", ".join(c.name for c in matrix.companions) or "none"
        raise AssumptionError(
            "companion",
            f"names unknown companion(s) {', '.join(unknown)}; the matrix declares: {declared} (a package of a "
            f"layer above the adapter is known when the layer's matrix is installed or given with --matrix)",
        )
    return out


def _judged(variant: Optional[str]) -> bool:
    return variant is None or is_variant(variant)


def _requirement(comp: Companion, release: CompanionRelease, variant: Optional[str]) -> str:
    label = f"+{variant}" if variant else ""
    return f"{comp.name}=={release.version}{label}"


def _index_options(matrix: Matrix, variant: Optional[str]) -> str:
    """Where a labelled build comes from: a source of the matrix with that variant and an
    index, else PyTorch's index for the variant, if it has one (a C++11-ABI build has not:
    the user's own index then); PyPI (the default) for unlabelled ones."""
    if not variant:
        return ""
    source = next((s for s in matrix.sources if s.variant == variant and s.index_url), None)
    index = source.index_url if source else pytorch_index(variant)
    return f" --index-url {index}" if index else ""


def judge_companions(
    matrix: Matrix,
    env: Environment,
    found: Sequence[Tuple[Companion, Optional[str], str]],
) -> List[CompanionState]:
    """The answer for each declared companion (see the module docstring)."""
    return [_judge(matrix, env, comp, text, source) for comp, text, source in found]


def _judge(matrix: Matrix, env: Environment, comp: Companion, text: Optional[str], source: str) -> CompanionState:
    def state(
        name: str,
        reason: str = "",
        release: Optional[CompanionRelease] = None,
        marks: Tuple[Mark, ...] = (),
        fix: Optional[Fix] = None,
    ) -> CompanionState:
        return CompanionState(comp, text, source, name, reason, release, marks, fix)

    version = _parse(text)
    if text is None:
        return state("absent")
    if version is None:
        return state("unknown", f"{comp.name} {text} is not a PEP 440 version; its pairing is not checked")
    problems: List[Tuple[str, str, Tuple[Mark, ...]]] = []  # (state, reason, marks)
    release = comp.release(version) if comp.torch_facts else None
    judged_any = False
    if comp.torch_facts and env.torch is not None:
        judged_any = True
        if release is None:
            listed = comp.releases
            span = f" (listed: {listed[0].version}\u2013{listed[-1].version})" if listed else ""
            return state(
                "unknown",
                f"{comp.name} {text} is not a release this matrix lists{span}; its pairing with torch is not checked",
            )
        if not release.pairs_with(env.torch):
            problems.append(
                (
                    "unpaired",
                    f"{comp.name} {text} requires torch{requirement(release.torch)}, but torch {env.torch} is installed",
                    (release.mark,),
                )
            )
        elif _judged(env.torch.local) and _judged(version.local) and env.torch.local != version.local:
            problems.append(("variant", _variant_reason(comp, text, version, env.torch), (release.mark,)))
    pin = comp.pin(env.adapter) if comp.adapter and env.adapter is not None else None
    if comp.adapter and env.adapter is not None:
        judged_any = True
        dist = matrix.adapter.distribution
        if pin is None:
            return state(
                "unknown",
                f"{dist} {env.adapter} states no {comp.name} pin; its pairing with the adapter is not checked",
                release,
            )
        if pin.spec is None:
            problems.append(
                (
                    "unpaired",
                    f"{dist} {env.adapter} pairs with no {comp.name} release, but {comp.name} {text} is installed",
                    (pin.mark,),
                )
            )
        elif not pin.spec.contains(Version(version.public)):
            problems.append(
                (
                    "unpaired",
                    f"{dist} {env.adapter} pairs with {comp.name}{requirement(pin.spec)}, not {text}",
                    (pin.mark,),
                )
            )
    if not judged_any:
        return state(
            "unchecked",
            f"{comp.name} {text}: nothing to judge it against (torch or {matrix.adapter.distribution} is not installed)",
            release,
        )
    if not problems:
        marks = ((release.mark,) if release else ()) + ((pin.mark,) if pin else ())
        return state("paired", "", release, marks)
    name, _reason, _marks = problems[0]
    reason = "; ".join(r for _s, r, _m in problems)
    marks = tuple(m for _s, _r, ms in problems for m in ms)
    return state(name, reason, release, marks, _fix_companion(matrix, env, comp, text, version))


def _variant_reason(comp: Companion, text: str, version: Version, torch: Version) -> str:
    def build(label: Optional[str]) -> str:
        return f"the +{label} build" if label else "PyPI's (CUDA) build"

    return (
        f"{comp.name} {text} is {build(version.local)}, but torch {torch} is {build(torch.local)}: "
        f"a companion loads its compiled operators only beside the torch build it was made for"
    )


def _fix_companion(matrix: Matrix, env: Environment, comp: Companion, text: str, version: Version) -> Optional[Fix]:
    """One pip command that keeps torch (and the adapter) and fixes the companion; when no
    release pairs with this torch, the reverse: the torch that pairs with the companion."""
    variant = env.torch.local if env.torch is not None else None
    variant = variant if _judged(variant) else None
    pin = comp.pin(env.adapter) if env.adapter is not None else None
    cell = _current_cell(matrix, env)
    if cell is None:
        return None  # the adapter's own fixes (which change torch) carry the companion along
    shell = shell_of(matrix, env)
    if comp.torch_facts and env.torch is not None:
        target = comp.choose(env.torch)
        if target is not None and (pin is None or pin.spec is None or pin.spec.contains(target.version)):
            requirement_text = _requirement(comp, target, variant)
            return Fix(
                f"keep torch {env.torch}; install {comp.name} {target.version}{'+' + variant if variant else ''}, the build that pairs with it",
                (f"pip install {quoted(requirement_text, shell)}{_index_options(matrix, variant)}",),
                (comp.name,),
                cell,
                shell=shell,
            )
        release = comp.release(version)
        torches = [
            p
            for line in matrix.torch
            for p in line.patches
            if release is not None and release.pairs_with(p) and cell.release.torch.contains(p)
        ]
        if torches:
            torch = max(torches)
            return Fix(
                f"no {comp.name} release pairs with torch {env.torch}; keep {comp.name} {text} and install torch {torch}, the newest it pairs with",
                (f"pip install {quoted(f'torch=={torch}', shell)}",),
                ("torch",),
                cell,
                shell=shell,
            )
        return Fix(
            f"no {comp.name} release pairs with torch {env.torch}: uninstall it",
            (f"pip uninstall -y {comp.name}",),
            (comp.name,),
            cell,
            shell=shell,
        )
    if pin is not None and pin.spec is not None:
        return Fix(
            f"keep {matrix.adapter.distribution} {env.adapter}; install the {comp.name} it pairs with",
            (f"pip install {quoted(f'{comp.name}{requirement(pin.spec)}', shell)}",),
            (comp.name,),
            cell,
            shell=shell,
        )
    return Fix(
        f"{matrix.adapter.distribution} {env.adapter} pairs with no {comp.name}: uninstall it",
        (f"pip uninstall -y {comp.name}",),
        (comp.name,),
        cell,
        shell=shell,
    )


def _current_cell(matrix: Matrix, env: Environment) -> Optional[Cell]:
    """The matrix's cell of this environment (its adapter release, torch line, Python)."""
    if env.adapter is None or env.torch is None:
        return None
    release = matrix.release(env.adapter)
    line = matrix.torch_line(env.torch)
    if release is None or line is None:
        return None
    return next((c for c in cells(matrix, release) if c.line is line and c.python == env.python), None)


def _carry(matrix: Matrix, fix: Fix, states: Sequence[CompanionState]) -> Fix:
    """An adapter fix that changes torch (or the adapter) takes the installed companions
    along in its pip command, each at the release that pairs with its target."""
    extra: List[str] = []
    moved: List[str] = []
    notes: List[str] = []
    for s in states:
        if s.installed is None:
            continue
        comp = s.companion
        if comp.torch_facts and "torch" in fix.changes:
            target = comp.choose(fix.cell.torch)
            if target is None:
                notes.append(f"no {comp.name} release pairs with torch {fix.cell.torch}: pip uninstall -y {comp.name}")
                continue
            extra.append(f"{comp.name}=={target.version}")
            moved.append(comp.name)
        pin = comp.pin(fix.cell.release.version)
        if comp.adapter and "adapter" in fix.changes and pin is not None and not comp.torch_facts:
            if pin.spec is None:
                notes.append(f"{fix.cell.release.version} pairs with no {comp.name}: pip uninstall -y {comp.name}")
            else:
                extra.append(f"{comp.name}{requirement(pin.spec)}")
                moved.append(comp.name)
    if not extra and not notes:
        return fix
    commands = list(fix.commands)
    if commands and extra:
        commands[0] += "".join(f" {quoted(r, fix.shell)}" for r in extra)
    summary = fix.summary + (f", with {', '.join(extra)}" if extra else "") + "".join(f"; {n}" for n in notes)
    return fix._replace(summary=summary, commands=tuple(commands), changes=fix.changes + tuple(moved))


def with_companions(verdict: Verdict, matrix: Matrix, states: Sequence[CompanionState]) -> Verdict:
    """The verdict once the companions are judged: an unpaired or variant companion makes
    it unsupported (its fix first: it keeps everything else); unknown ones are assumptions;
    every fix that changes torch or the adapter carries the installed companions along."""
    bad = [s for s in states if s.state in BAD]
    fixes = tuple(_carry(matrix, f, states) for f in verdict.fixes)
    own = tuple(s.fix for s in bad if s.fix is not None)
    assumptions = verdict.assumptions + tuple(s.reason for s in states if s.state == "unknown")
    if not bad:
        return verdict._replace(fixes=fixes, assumptions=assumptions)
    worse = verdict.outcome if verdict.outcome.blocks else Status.UNSUPPORTED
    return verdict._replace(
        outcome=worse,
        reasons=verdict.reasons + tuple(s.reason for s in bad),
        decided_by=verdict.decided_by + tuple(m for s in bad for m in s.decided_by),
        assumptions=assumptions,
        fixes=own + fixes,
    )


_SAYS = {
    "paired": "pairs with this torch",
    "unpaired": "does not pair with this torch",
    "variant": "but a build for another torch variant",
    "unknown": "not checked",
    "unchecked": "not checked",
}


def companion_seen(state: CompanionState) -> CompanionSeen:
    """One entry of the answer's ``companions`` (keys documented in docs/commands.md)."""
    release = state.release
    return CompanionSeen(
        name=state.companion.name,
        installed=state.installed,
        variant=state.version.local if state.version is not None else None,
        source=state.source,
        state=state.state,
        requires=f"torch{requirement(release.torch)}" if release is not None else None,
        reason=state.reason or None,
        decided_by=tuple(str(m) for m in state.decided_by),
        fix=None if state.fix is None else CompanionFix(state.fix.summary, tuple(state.fix.commands)),
    )


def companion_line(seen: CompanionSeen) -> str:
    """The report's line for an installed companion, e.g. ``0.29.1  (requires torch>=2.14.0: does not pair)``."""
    requires = f"requires {seen.requires}" if seen.requires else ""
    detail = ": ".join(x for x in (requires, _SAYS.get(seen.state, "")) if x)
    return f"{seen.installed}  ({detail})" if detail else str(seen.installed)
