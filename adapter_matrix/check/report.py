"""The answer of ``adapter-matrix check``, as a JSON document and as a terminal report.

The JSON document (``check --json``) is a stable interface, documented in docs/commands.md
(``CHECK_KEYS`` lists its keys; a test holds the two together).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Sequence, Tuple

from ..files import printable
from ..matrix.model import Matrix
from ..matrix.queries import Cell
from .companions import CompanionState, companion_document, companion_line
from .environment import Installed
from .outcome import Fix, Verdict

__all__ = ["CHECK_SCHEMA", "CHECK_KEYS", "check_document", "combined_exit_code", "render_check"]

CHECK_SCHEMA = 1
CHECK_KEYS = (
    "matrix",
    "origin",
    "adapter",
    "environment",
    "verdict",
    "exit_code",
    "reasons",
    "assumptions",
    "release",
    "torch_line",
    "shim",
    "decided_by",
    "companions",
    "fixes",
)


def _cell(cell: Cell) -> Dict[str, Any]:
    return {
        "release": str(cell.release.version),
        "torch": str(cell.torch),
        "python": str(cell.python),
        "dimensions": {name: str(value) for name, value in cell.dimensions},
        "status": cell.status.value,
    }


def _fix(fix: Fix) -> Dict[str, Any]:
    return {
        "summary": fix.summary,
        "manual": list(fix.manual),
        "commands": list(fix.commands),
        "changes": list(fix.changes),
        "cell": _cell(fix.cell),
    }


def check_document(
    matrix: Matrix, origin: str, installed: Installed, verdict: Verdict, companions: Sequence[CompanionState] = ()
) -> Dict[str, Any]:
    """One adapter's answer as plain JSON-able data (keys: :data:`CHECK_KEYS`)."""
    env = installed.environment
    return {
        "matrix": matrix.path,
        "origin": origin,
        "adapter": matrix.adapter.distribution,
        "environment": {
            "python": env.python_full or str(env.python),
            "python_minor": str(env.python),
            "implementation": env.implementation,
            "free_threaded": env.python.free_threaded,
            "torch": installed.torch_text,
            "torch_variant": installed.torch_variant,
            "torch_family": installed.torch_family,
            "adapter": installed.adapter_text,
            "dimensions": {
                d.dimension: {"value": d.value, "source": d.source, "error": d.error} for d in installed.detections
            },
        },
        "verdict": verdict.outcome.value,
        "exit_code": verdict.exit_code,
        "reasons": list(verdict.reasons),
        "assumptions": list(verdict.assumptions),
        "release": str(verdict.release.version) if verdict.release else None,
        "torch_line": str(verdict.line.minor) if verdict.line else None,
        "shim": verdict.shim.module if verdict.shim else None,
        "decided_by": [str(m) for m in verdict.decided_by],
        "companions": [companion_document(c) for c in companions],
        "fixes": [_fix(f) for f in verdict.fixes],
    }


def combined_exit_code(codes: Sequence[int]) -> int:
    """Worst of several answers: 2 (error) > 1 (unsupported) > 3 (warning) > 0."""
    for code in (2, 1, 3):
        if code in codes:
            return code
    return 0


_STYLE = {
    "supported": "bold green",
    "experimental": "bold yellow",
    "deprecated": "bold yellow",
    "eol": "bold yellow",
    "broken": "bold red",
    "unsupported": "bold red",
}


Segment = Tuple[str, str]  # (text, rich style; "" for none)


def check_lines(doc: Dict[str, Any]) -> List[List[Segment]]:
    """The report of one check document as lines of styled segments (no markup to escape)."""
    env = doc["environment"]
    rows = [
        ("matrix", f"{doc['matrix'] or 'none'}  ({doc['origin']})"),
        ("Python", f"{env['python']} ({env['implementation']}{', free-threaded' if env['free_threaded'] else ''})"),
        ("torch", env["torch"] or "not installed"),
        (doc["adapter"], env["adapter"] or "not installed"),
    ]
    for name, found in env["dimensions"].items():
        rows.append(
            (name, f"{found['value']}  (from {found['source']})" if found["value"] else f"unknown: {found['error']}")
        )
    rows += [(entry["name"], companion_line(entry)) for entry in doc.get("companions", ()) if entry["installed"]]
    rows += [(label, doc[key]) for label, key in (("release", "release"), ("shim", "shim")) if doc[key]]
    if env.get("location"):  # check --env: another environment, judged from its files
        rows.insert(0, ("environment", env["location"]))
    width = max(len(label) for label, _ in rows) + 2
    lines: List[List[Segment]] = [[(label.ljust(width), "dim"), (value, "")] for label, value in rows]
    verdict = doc["verdict"]
    lines.append([(verdict, _STYLE[verdict])] + ([(": " + "; ".join(doc["reasons"]), "")] if doc["reasons"] else []))
    lines += [[("assumed:", "yellow"), (" " + note, "")] for note in doc["assumptions"]]
    if doc["decided_by"]:
        lines.append([("decided by " + ", ".join(doc["decided_by"]), "dim")])
    for i, fix in enumerate(doc["fixes"]):
        lines.append([("fix:" if i == 0 else "or:", "bold"), (" " + fix["summary"], "")])
        lines += [[("    by hand: ", "yellow"), (step, "")] for step in fix["manual"]]
        lines += [[(f"    {command}", "")] for command in fix["commands"]]
    if "binary" in doc:
        from .binary import binary_lines

        lines += binary_lines(doc["binary"])
    if "deep" in doc:
        lines.append([("deep check", "bold")])
        for step in doc["deep"]["steps"]:
            detail = f"  {step['detail']}" if step["detail"] else ""
            lines.append(
                [
                    ("  ", ""),
                    ("ok  " if step["ok"] else "FAIL", "green" if step["ok"] else "red"),
                    (f" {step['name']:<28} {step['seconds'] * 1000:8.1f} ms{detail}", ""),
                ]
            )
    return lines


def render_check(doc: Dict[str, Any], console: Any = None) -> None:
    """Print one check document: with colors through rich on a terminal, as plain text
    otherwise (pipes and CI logs; rich is then not even imported). Every text is escaped
    first: values come from the matrix, the environment, files and programs' output, and
    none may move the cursor, retitle or clear the terminal."""
    render_lines(check_lines(doc), console)


def render_lines(lines: List[List[Segment]], console: Any = None) -> None:
    """Print styled lines as :func:`render_check` does (escaped; plain text without a console)."""
    lines = [[(printable(text), style) for text, style in line] for line in lines]
    if console is None:
        sys.stdout.write("".join("".join(text for text, _style in line) + "\n" for line in lines))
        return
    from rich.text import Text

    for line in lines:
        console.print(Text.assemble(*line), soft_wrap=True, highlight=False)
