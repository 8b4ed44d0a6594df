"""Whether the environment a cell installed is the cell: what ``adapter-matrix check --json``
saw there (Python, torch and its variant, each companion paired, the adapter's libraries
loadable beside that torch), and that ``check`` refuses a companion built for another torch.
"""

from __future__ import annotations

from typing import Any, Dict, Sequence

from packaging.version import InvalidVersion, Version

from ..errors import AdapterMatrixError
from .plan import CompanionPick, PlanRow

__all__ = ["CellMismatch", "verify_environment", "verify_refusal"]


class CellMismatch(AdapterMatrixError, RuntimeError):
    """The environment is not the cell it claims to be (a resolver swapped torch)."""

    exit_code = 1


def verify_environment(row: PlanRow, check: Dict[str, Any], picks: Sequence[CompanionPick] = ()) -> None:
    """Fail unless ``adapter-matrix check --json`` saw the cell's Python and torch, and each
    companion installed with them (``picks``) at its release, paired."""
    (doc,) = list(check["checks"])
    env = doc["environment"]
    installed = env.get("torch")
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
    if env.get("python_minor") != str(row.cell.python):
        raise CellMismatch(
            f"cell {row.cell.id} claims Python {row.cell.python}, but the session runs {env.get('python')}"
        )
    binary = doc.get("binary") or {}
    if binary.get("problems"):  # the loader would refuse the adapter's libraries beside this torch
        raise CellMismatch(
            "adapter-matrix check's binary check: " + "; ".join(p["message"] for p in binary["problems"])
        )
    if doc["verdict"] in ("unsupported", "broken"):
        raise CellMismatch(f"adapter-matrix check says {doc['verdict']}: " + "; ".join(doc["reasons"]))
    seen = {c["name"]: c for c in doc.get("companions", ())}
    for pick in picks:
        entry = seen.get(pick.name, {})
        found = entry.get("installed")
        if found is None or Version(Version(found).public) != pick.version or entry.get("state") != "paired":
            raise CellMismatch(
                f"cell {row.cell.id} installs {pick.name} {pick.version}, but check sees {found or 'none'} ({entry.get('state', 'absent')})"
            )


def verify_refusal(check: Dict[str, Any], pick: CompanionPick, probe: str, torch: str) -> Dict[str, Any]:
    """``check --json`` after installing ``probe``, a release of ``pick`` built for another
    torch, with --no-deps: it must exit 1 naming both versions, and fix it with a command
    that installs the paired release. Returns what the result record keeps."""
    (doc,) = check["checks"]
    entry: Dict[str, Any] = next((c for c in doc.get("companions", ()) if c["name"] == pick.name), {})
    reason = entry.get("reason") or ""
    commands = (entry.get("fix") or {}).get("commands") or []
    if check.get("exit_code") != 1 or entry.get("state") != "unpaired":
        raise CellMismatch(
            f"check did not refuse {pick.name} {probe} beside torch {torch}: exit {check.get('exit_code')}, {entry.get('state')}"
        )
    if Version(probe).public not in reason or torch not in reason:
        raise CellMismatch(f"check refused {pick.name} {probe} without naming both versions: {reason}")
    if not any(f"{pick.name}=={pick.version}" in command for command in commands):
        raise CellMismatch(f"check's fix for {pick.name} {probe} does not install {pick.version}: {commands}")
    return {"installed": probe, "exit_code": 1, "reason": reason, "fix": commands[0]}
