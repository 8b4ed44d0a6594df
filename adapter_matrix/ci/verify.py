"""Whether the environment a cell installed is the cell: what ``adapter-matrix check --json``
saw there (Python, torch and its variant, each companion paired, the adapter's libraries
loadable beside that torch), and that ``check`` refuses a companion built for another torch.
The check's document is read typed (:func:`adapter_matrix.answer.read_check`): a key it
lacks fails the cell by name.
"""

from __future__ import annotations

from typing import Mapping, Sequence, Union

from packaging.version import InvalidVersion, Version

from ..answer import CheckDocument, read_check
from ..documents import DocumentError
from ..errors import EXIT_UNSUPPORTED, AdapterMatrixError
from .plan import CompanionPick, PlanRow
from .record import CompanionRefusal

__all__ = ["CellMismatch", "verify_environment", "verify_refusal"]

Check = Union[CheckDocument, Mapping[str, object]]  # check --json's output, parsed or as JSON


class CellMismatch(AdapterMatrixError, RuntimeError):
    """The environment is not the cell it claims to be (a resolver swapped torch)."""

    exit_code = EXIT_UNSUPPORTED


def _read(check: Check) -> CheckDocument:
    try:
        return read_check(check)
    except DocumentError as exc:
        raise CellMismatch(f"adapter-matrix check --json printed no check document: {exc}") from None


def verify_environment(row: PlanRow, check: Check, picks: Sequence[CompanionPick] = ()) -> None:
    """Fail unless ``adapter-matrix check --json`` saw the cell's Python and torch, and each
    companion installed with them (``picks``) at its release, paired."""
    answer = _read(check).answer
    env = answer.environment
    installed = env.torch
    try:
        public = Version(installed).public if installed else None
    except InvalidVersion:
        public = None
    if public is None or Version(public) != row.cell.torch:
        raise CellMismatch(
            f"cell {row.cell.id} claims torch {row.cell.torch}, but the environment has torch {installed or 'none'}: "
            "the installer resolved another torch"
        )
    variant = row.cell.release.variant
    if variant and (Version(installed).local if installed else None) != variant:
        raise CellMismatch(
            f"cell {row.cell.id} needs torch's {variant} build, but the environment has torch {installed}"
        )
    if env.python_minor != str(row.cell.python):
        raise CellMismatch(f"cell {row.cell.id} claims Python {row.cell.python}, but the session runs {env.python}")
    if answer.binary is not None and answer.binary.problems:  # the loader would refuse the adapter's libraries
        raise CellMismatch(
            "adapter-matrix check's binary check: " + "; ".join(p.message for p in answer.binary.problems)
        )
    if answer.verdict.blocks:
        raise CellMismatch(f"adapter-matrix check says {answer.verdict}: " + "; ".join(answer.reasons))
    for pick in picks:
        seen = answer.companion(pick.name)
        found = seen.installed if seen else None
        if found is None or Version(Version(found).public) != pick.version or seen is None or seen.state != "paired":
            raise CellMismatch(
                f"cell {row.cell.id} installs {pick.name} {pick.version}, but check sees {found or 'none'} "
                f"({seen.state if seen else 'absent'})"
            )


def verify_refusal(check: Check, pick: CompanionPick, probe: str, torch: str) -> CompanionRefusal:
    """``check --json`` after installing ``probe``, a release of ``pick`` built for another
    torch, with --no-deps: it must exit 1 naming both versions, and fix it with a command
    that installs the paired release. Returns what the result record keeps."""
    document = _read(check)
    seen = document.answer.companion(pick.name)
    reason = (seen.reason if seen else None) or ""
    commands = seen.fix.commands if seen and seen.fix else ()
    if document.exit_code != EXIT_UNSUPPORTED or seen is None or seen.state != "unpaired":
        raise CellMismatch(
            f"check did not refuse {pick.name} {probe} beside torch {torch}: exit {document.exit_code}, "
            f"{seen.state if seen else None}"
        )
    if Version(probe).public not in reason or torch not in reason:
        raise CellMismatch(f"check refused {pick.name} {probe} without naming both versions: {reason}")
    if not any(f"{pick.name}=={pick.version}" in command for command in commands):
        raise CellMismatch(f"check's fix for {pick.name} {probe} does not install {pick.version}: {list(commands)}")
    return {"installed": probe, "exit_code": EXIT_UNSUPPORTED, "reason": reason, "fix": commands[0]}
