"""The answer of ``adapter-matrix check``: built once (:func:`answer_of`), then printed as the
JSON document (:class:`~adapter_matrix.answer.CheckDocument`) or rendered for the terminal
(:func:`render_check`). :func:`verdict_lines` is the one rendering of a verdict and its
fixes: the report shows it, and :func:`~adapter_matrix.check.guard.require` raises it.
"""

from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..answer import (
    ANSWER_SECTIONS,
    Answer,
    BinarySection,
    CellSeen,
    DeepSection,
    DimensionSeen,
    EnvironmentSeen,
    FixSeen,
    StackSeen,
)
from ..documents import keys_of
from ..errors import EXIT_OK, EXIT_UNSUPPORTED, EXIT_WARNING
from ..files import printable
from ..matrix.model import Matrix
from ..matrix.queries import Cell
from .environment import Installed
from .installed_companions import CompanionState, companion_line, companion_seen
from .judgment import Fix, Verdict

__all__ = ["CHECK_KEYS", "answer_of", "check_lines", "verdict_lines", "render_check", "stack_lines"]

CHECK_KEYS = tuple(k.name for k in keys_of(Answer) if k.name not in ANSWER_SECTIONS)
"""The keys of every answer (docs/commands.md documents each; a test holds the two together)."""


def _cell(cell: Cell) -> CellSeen:
    return CellSeen(
        release=str(cell.release.version),
        torch=str(cell.torch),
        python=str(cell.python),
        dimensions={name: str(value) for name, value in cell.dimensions},
        status=cell.status,
    )


def _fix(fix: Fix) -> FixSeen:
    return FixSeen(
        fix.summary, tuple(fix.manual), tuple(fix.commands), tuple(fix.changes), _cell(fix.cell), tuple(fix.diff)
    )


def answer_of(
    matrix: Matrix,
    origin: str,
    installed: Installed,
    verdict: Verdict,
    companions: Sequence[CompanionState] = (),
    *,
    stack: Optional[StackSeen] = None,
    binary: Optional[BinarySection] = None,
    location: Optional[str] = None,
    deep: Optional[DeepSection] = None,
) -> Answer:
    """One adapter's answer, as ``check --json`` prints it and the report renders it, built once
    from every step's part: the stack section, the binary check, which environment was judged
    (``check --env``), and ``--deep``'s run, whose failure makes a usable answer exit as unsupported."""
    env = installed.environment
    exit_code = verdict.exit_code
    if deep is not None and not deep.ok and exit_code in (EXIT_OK, EXIT_WARNING):
        exit_code = EXIT_UNSUPPORTED
    return Answer(
        matrix=matrix.path,
        origin=origin,
        adapter=matrix.adapter.distribution,
        environment=EnvironmentSeen(
            python=env.python_full or str(env.python),
            python_minor=str(env.python),
            implementation=env.implementation,
            free_threaded=env.python.free_threaded,
            torch=installed.torch_text,
            torch_variant=installed.torch_variant,
            torch_family=installed.torch_family,
            adapter=installed.adapter_text,
            dimensions={d.dimension: DimensionSeen(d.value, d.source, d.error) for d in installed.detections},
            location=location,
            torch_error=installed.torch_error,
        ),
        verdict=verdict.outcome,
        exit_code=exit_code,
        reasons=tuple(verdict.reasons),
        assumptions=tuple(verdict.assumptions),
        release=str(verdict.release.version) if verdict.release else None,
        torch_line=str(verdict.line.minor) if verdict.line else None,
        shim=verdict.shim.module if verdict.shim else None,
        decided_by=tuple(str(m) for m in verdict.decided_by),
        companions=tuple(companion_seen(c) for c in companions),
        fixes=tuple(_fix(f) for f in verdict.fixes),
        binary=binary,
        deep=deep,
        stack=stack,
    )


_STYLE = {
    "supported": "bold green",
    "experimental": "bold yellow",
    "deprecated": "bold yellow",
    "eol": "bold yellow",
    "broken": "bold red",
    "unsupported": "bold red",
}


Segment = Tuple[str, str]  # (text, rich style; "" for none)
COMMAND = "command"  # the style word of a command line (no color): a narrow terminal breaks it between arguments


def verdict_lines(
    head: str, verdict: Union[Verdict, Answer], reasons: int = -1, fixes: int = -1
) -> List[List[Segment]]:
    """A verdict (its ``outcome`` or ``verdict``, ``reasons`` and ``fixes``: a
    :class:`~adapter_matrix.check.judgment.Verdict` or an :class:`~adapter_matrix.answer.Answer`)
    as lines of styled segments: ``HEAD: OUTCOME: REASON`` and each fix, the steps by hand
    before the commands. ``reasons`` and ``fixes`` limit how many are shown (-1: all)."""
    outcome = str(verdict.outcome if isinstance(verdict, Verdict) else verdict.verdict)
    said = list(verdict.reasons if reasons < 0 else verdict.reasons[:reasons])
    lines: List[List[Segment]] = [
        [(head, "")] * bool(head) + [(outcome, _STYLE[outcome])] + [(": " + "; ".join(said), "")] * bool(said)
    ]
    shown: Sequence[Union[Fix, FixSeen]] = verdict.fixes if fixes < 0 else verdict.fixes[:fixes]
    for i, fix in enumerate(shown):
        lines.append([("fix:" if i == 0 else "or:", "bold"), (" " + fix.summary, "")])
        lines += [[("    by hand: ", "yellow"), (step, "")] for step in fix.manual]
        lines += [[(f"    {line}", "red" if line.startswith("-") else "green")] for line in getattr(fix, "diff", ())]
        lines += [[(f"    {command}", COMMAND)] for command in fix.commands]
    return lines


def check_lines(answer: Answer) -> List[List[Segment]]:
    """The report of one answer as lines of styled segments (no markup to escape)."""
    env = answer.environment
    rows = [
        ("matrix", f"{answer.matrix or 'none'}  ({answer.origin})"),
        ("Python", f"{env.python} ({env.implementation}{', free-threaded' if env.free_threaded else ''})"),
        ("torch", env.torch or env.torch_error or "not installed"),
        (answer.adapter, env.adapter or "not installed"),
    ]
    for name, found in env.dimensions.items():
        rows.append((name, f"{found.value}  (from {found.source})" if found.value else f"unknown: {found.error}"))
    rows += [(c.name, companion_line(c)) for c in answer.companions if c.installed]
    rows += [(label, value) for label, value in (("release", answer.release), ("shim", answer.shim)) if value]
    if answer.stack is not None:  # the layers above the adapter, each as installed
        rows += [(layer.name, _installed_as(layer.installed, layer.provenance)) for layer in answer.stack.layers]
        shown = {layer.name for layer in answer.stack.layers} | {"torch", answer.adapter}
        rows += [  # what the layers pin, when not a wheel: a VCS install, an editable install, a checkout
            (str(p["name"]), _installed_as(p.get("version") or "no version", p))
            for p in answer.stack.provenance or ()
            if p.get("kind") != "wheel" and p.get("name") not in shown
        ]
    if env.location:  # check --env: another environment, judged from its files
        rows.insert(0, ("environment", env.location))
    width = max(len(label) for label, _ in rows) + 2
    lines: List[List[Segment]] = [[(label.ljust(width), "dim"), (value, "")] for label, value in rows]
    verdict, *fixes = verdict_lines("", answer)
    lines.append(verdict)
    lines += [[("assumed:", "yellow"), (" " + note, "")] for note in answer.assumptions]
    if answer.decided_by:
        lines.append([("decided by " + ", ".join(answer.decided_by), "dim")])
    if answer.stack is not None:
        lines += stack_lines(answer.stack, len(answer.fixes))
    lines += fixes
    if answer.binary is not None:
        from .binary import binary_lines

        lines += binary_lines(answer.binary)
    if answer.stack is not None:  # each layer's own libraries (a plugin's op library), read against the adapter's
        from .binary import binary_lines

        for layer in answer.stack.layers:
            if layer.binary is not None and (layer.binary.files or layer.binary.problems):
                own = binary_lines(layer.binary)
                lines += [[(f"{layer.name} ", "bold"), *own[0]], *own[1:]]
    if answer.deep is not None:
        lines.append([("deep check", "bold")])
        for step in answer.deep.steps:
            detail = f"  {step.detail}" if step.detail else ""
            lines.append(
                [
                    ("  ", ""),
                    ("ok  " if step.ok else "FAIL", "green" if step.ok else "red"),
                    (f" {step.name:<28} {step.seconds * 1000:8.1f} ms{detail}", ""),
                ]
            )
    return lines


def _installed_as(installed: Optional[str], origin: Optional[Mapping[str, Optional[str]]]) -> str:
    """A layer's row: its version, and how it is installed when that is not a wheel from an
    index (``2.1.0  (checkout /src/MindSpeed-LLM, commit 5da670b17947, 3 commits past v2.1.0)``)."""
    from .provenance import Provenance

    if installed is None:
        return "not installed"
    if not origin or origin.get("kind") == "wheel":
        return str(installed)
    found = Provenance.from_json(origin)
    return f"{installed}  ({printable(found.shown())})"


def stack_lines(stack: StackSeen, fixes: int = 0) -> List[List[Segment]]:
    """Each layer's status (its broken pins are the answer's reasons), and the conflict: the
    ``fixes`` listed below it each give up one choice, or (none) no whole stack was found."""
    lines: List[List[Segment]] = []
    for layer in stack.layers:
        head = f"layer {layer.name} {layer.release or layer.installed or ''}".rstrip()
        lines.append([("  " + head + ": ", ""), (str(layer.status), _STYLE.get(str(layer.status), ""))])
    if stack.not_kept:  # a release no fix lands on (end of life): why the fixes move it, before any conflict
        lines.append([("not kept:", "bold yellow"), (" " + stack.not_kept, "")])
    if stack.conflict:
        lines.append([("conflict:", "bold red"), (" " + stack.conflict, "")])
        if fixes:
            lines.append([("  no stack keeps every choice you hold; each fix below gives up one", "dim")])
        elif not stack.no_fix:  # the search found no whole stack, not even one that gives up a choice
            lines.append(
                [("  no stack keeps every choice you hold, and no whole stack was found that gives up one", "dim")]
            )
    if stack.no_fix:  # no fix follows: why none exists, and what would have to change
        head, _sep, rest = stack.no_fix.partition(": ")
        lines.append([(head + ":", "bold"), (" " + rest, "")])
    return lines


# The styles the report uses, as terminal escapes (SGR): what rich would write, without
# loading rich (30 ms, more than the rest of a warm check).
_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33"}


def _styled(text: str, style: str) -> str:
    codes = ";".join(_SGR[word] for word in style.split() if word in _SGR)
    return f"\x1b[{codes}m{text}\x1b[0m" if codes and text else text


def render_check(answer: Answer, color: bool = False, width: Optional[int] = None) -> str:
    """One answer as the terminal shows it: colored with terminal escapes (``color``: stdout
    is a terminal and NO_COLOR is unset) or plain (pipes and CI logs). Every text is escaped
    first: values come from the matrix, the environment, files and programs' output, and
    none may move the cursor, retitle or clear the terminal. ``width``: the terminal's
    columns, each line wrapped to them (:func:`render_lines`); None (a pipe): one line each."""
    return render_lines(check_lines(answer), color, width)


def render_lines(lines: List[List[Segment]], color: bool = False, width: Optional[int] = None) -> str:
    """Styled lines as :func:`render_check` renders them. With ``width`` (a terminal's columns), a
    longer line is wrapped as the terminal would not: prose between words, its next lines
    indented under it; a command (a POSIX shell's) between its arguments, each line but the
    last ending in `` \\`` so that it is still one command to copy. A pipe gets one line each
    (grep, CI logs, the transcripts of the docs)."""
    out = []
    for line in lines:
        texts = [(printable(text), style) for text, style in line]
        plain = "".join(text for text, _style in texts)
        breaks: Dict[int, str] = {}
        if width is not None and len(plain) > width:
            breaks = _wrapped(plain, width, any(COMMAND in style.split() for _text, style in texts))
        at, rendered = 0, []
        for text, style in texts:
            for part, end in _split(text, at, breaks):
                rendered.append(_styled(part, style) if color else part)
                rendered.append(breaks.get(end, ""))
            at += len(text)
        out.append("".join(rendered) + "\n")
    return "".join(out)


def _split(text: str, at: int, breaks: Mapping[int, str]) -> List[Tuple[str, int]]:
    """``text`` (at offset ``at`` of its line) cut at the ``breaks`` inside it: (part, the
    offset where it ends, a break's offset when one follows it); a break's space is dropped."""
    parts, start = [], 0
    for offset in sorted(b for b in breaks if at <= b < at + len(text)):
        parts.append((text[start : offset - at], offset))
        start = offset - at + 1
    parts.append((text[start:], -1))
    return parts


def _wrapped(plain: str, width: int, command: bool) -> Dict[int, str]:
    """Where ``plain`` breaks to fit ``width`` columns: the offset of each space it breaks at,
    and what replaces that space (a new line and the indent; a command's `` \\`` first). A
    word longer than the line is left whole (the terminal wraps it, nothing is lost)."""
    lead = len(plain) - len(plain.lstrip(" "))
    if command:
        from .shell import POSIX, host_shell

        if host_shell() != POSIX:  # cmd.exe and PowerShell continue a line otherwise: one line
            return {}
        spaces, indent, room = _unquoted_spaces(plain, lead), " " * (lead + 4), width - 2
        new_line = " \\\n" + indent
    else:
        spaces, indent, room = [i for i in range(lead, len(plain)) if plain[i] == " "], " " * _hang(plain, lead), width
        new_line = "\n" + indent
    breaks: Dict[int, str] = {}
    start, column, last = 0, 0, None  # the current line's first offset, its first column, its last space
    for space in [*spaces, len(plain)]:
        if column + space - start > room and last is not None and last >= start:
            breaks[last] = new_line
            start, column = last + 1, len(indent)
        if space > start:
            last = space
    return breaks


# a line's label: "not kept:", "by hand:" (a word or two and a colon), or a row's name and the
# spaces before its value
_LABEL = re.compile(r" *(?:[^ :]+(?: [^ :]+)?: |\S+ {2,})")


def _hang(line: str, lead: int) -> int:
    """The indent of a wrapped line's next lines: under the text after its label (``not kept:``,
    a row's name), at least 5 columns in (the lines of a fix are 4 in, a layer's status 2), so
    that a continuation is not read as a line of its own."""
    label = _LABEL.match(line)
    hang = label.end() if label is not None else 0
    return max(hang, lead + 5) if hang < 40 else lead + 5


def _unquoted_spaces(command: str, lead: int) -> List[int]:
    """The offsets of the spaces between a POSIX command's arguments (not in quotes)."""
    spaces, quote = [], ""
    for i in range(lead, len(command)):
        char = command[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == " ":
            spaces.append(i)
    return spaces
