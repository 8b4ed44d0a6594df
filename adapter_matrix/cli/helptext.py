"""How ``--help`` reads: one line per command in the top-level help, in the order of the
workflow (adopt, check, publish, test, release); an example in every command's help; the
help text shown as written.

The commands keep their help where they are declared (the docstring, each option's
``help=``); :func:`tidy_command` turns it into what the terminal shows, once, when the
command tree is built (:class:`adapter_matrix.cli.common.Group`):

- typer renders help as rich markup, which swallows ``[tool.uv]`` and ``[project]``: every
  text is escaped;
- a docstring's line breaks are the source's, not the terminal's: each paragraph becomes
  one line for the terminal to wrap (an example block keeps its lines);
- the top-level list shows a command's first sentence, which fits on one line (a test
  holds it under :data:`SUMMARY_WIDTH` characters), under its :data:`WORKFLOW` heading.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Dict, List, Optional, Tuple

__all__ = [
    "WORKFLOW",
    "EXAMPLES",
    "SUMMARY_WIDTH",
    "EXAMPLE_WIDTH",
    "example_lines",
    "panel_of",
    "summary",
    "paragraphs",
    "tidy_command",
]

WORKFLOW: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("Adopt", ("init", "schema", "new-shim", "migrate")),
    ("Check", ("check", "env", "validate")),
    ("Test", ("plan", "tier", "results", "build", "probe", "ops")),
    # tables and a release's frozen evidence are what a tested matrix publishes; one panel,
    # so the top-level help keeps room under its 40 lines for a new command
    ("Publish", ("table", "release", "shims")),
)

SUMMARY_WIDTH = 60  # the top-level list keeps every command on one line of an 80-column terminal
EXAMPLE_WIDTH = 78  # an example line, comment included, fits an 80-column terminal unwrapped

# Each command's examples, by its path: what a user types, then what it does. A test parses
# every one with the command's own options, so an example cannot outlive an option.
EXAMPLES: Dict[str, Tuple[Tuple[str, str], ...]] = {
    "": (
        ("adapter-matrix check", "is this environment a supported combination?"),
        ("adapter-matrix COMMAND -h", "a command's options and examples"),
    ),
    "init": (
        ("adapter-matrix init --distribution my-npu --device npu", "adopt the tool"),
        ("adapter-matrix init --from-index torch-npu --dry-run", "from its releases"),
    ),
    "schema": (("adapter-matrix schema > compat.schema.json", "for editors"),),
    "new-shim": (("adapter-matrix new-shim 2.16 --dry-run", "what it would write"),),
    "env": (
        ("adapter-matrix env", "this environment, as Markdown for an issue"),
        ("adapter-matrix env --json", "the same, as the documented document"),
    ),
    "migrate": (("adapter-matrix migrate torch 2.16.0", "the new torch line, shim, notes"),),
    "migrate torch": (("adapter-matrix migrate torch 2.16.0 --dry-run", "what it would write"),),
    "migrate pending": (("adapter-matrix migrate pending", "torch releases to migrate to"),),
    "check": (
        ("adapter-matrix check", "this environment"),
        ("adapter-matrix check --torch 2.16.0", "what if torch 2.16.0 were installed"),
        ("adapter-matrix check --json", "the documented JSON document"),
    ),
    "validate": (
        ("adapter-matrix validate", "lint ./compat.yaml"),
        ("adapter-matrix validate --upstream pypi --write", "fix the torch facts"),
        ("adapter-matrix validate --results evidence --strict", "the release gate"),
    ),
    "table": (
        ("adapter-matrix table --view releases --format rst", "print a table"),
        ("adapter-matrix table --update README.md docs/*.md", "rewrite the tables"),
        ("adapter-matrix table --check README.md", "fail if one is stale"),
    ),
    "plan": (
        ("adapter-matrix plan --strategy smoke", "the cells CI runs on every push"),
        ("adapter-matrix plan --format github", "a GitHub Actions job matrix"),
    ),
    "tier": (
        ("adapter-matrix tier edges --dry-run", "what would run, how long"),
        ("adapter-matrix tier full -t torch2.16 --commit", "one torch line, committed"),
    ),
    "results": (
        ("adapter-matrix results results", "this machine's records"),
        ("adapter-matrix results artifacts --into evidence", "merge CI's records"),
    ),
    "build": (("adapter-matrix build", "compile for the installed torch"),),
    "probe": (
        ("adapter-matrix probe --json > new.json", "save a probe"),
        ("adapter-matrix probe --diff old.json --diff new.json", "what moved"),
    ),
    "ops": (("adapter-matrix ops sweep --sample", "the sample of ops"),),
    "ops sweep": (
        ("adapter-matrix ops sweep --sample", "the sample of ops"),
        ("adapter-matrix ops sweep --op add --dtype float32", "one op in one dtype"),
    ),
    "ops pack": (
        ("adapter-matrix ops pack 2.13.0", "fetched"),
        ("adapter-matrix ops pack 2.13.0 --pack FILE --sha256 HASH", "an offline copy"),
    ),
    "ops tests": (
        ("adapter-matrix ops tests -f test_ops.py --control cpu", "one file"),
        ("adapter-matrix ops tests --update-expected", "record them"),
    ),
    "release": (("adapter-matrix release 0.3.0", "freeze release 0.3.0's evidence"),),
    "shims": (("adapter-matrix shims report", "dead shims, constant gates"),),
    "shims report": (("adapter-matrix shims report", "dead shims, constant gates"),),
}


def panel_of(name: str) -> Optional[str]:
    """The :data:`WORKFLOW` heading a top-level command is listed under."""
    return next((panel for panel, names in WORKFLOW if name in names), None)


_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")


def paragraphs(text: str) -> List[str]:
    """``text`` (a docstring or an option's help) as the terminal should wrap it: one line per
    paragraph, except a block of indented lines (an example), which keeps its lines."""
    out = []
    for block in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        lines = block.splitlines()
        if len(lines) > 1 and all(line.startswith("  ") for line in lines):
            out.append(block)
        else:
            out.append(" ".join(line.strip() for line in lines))
    return [p for p in out if p.strip()]


def summary(text: str) -> str:
    """A help text's first sentence: its line in the top-level list."""
    first = paragraphs(text)[0] if text.strip() else ""
    return _SENTENCE_END.split(first, maxsplit=1)[0]


def example_lines(path: str) -> List[str]:
    """The examples of the command at ``path``, one line each, their comments aligned."""
    shown = EXAMPLES.get(path, ())
    width = max((len(command) for command, _what in shown), default=0)
    # flush left: typer dedents what follows a help's first paragraph (inspect.cleandoc)
    return [f"$ {command:<{width}}  # {what}" for command, what in shown]


def _examples(path: str) -> str:
    lines = example_lines(path)
    return "Examples:\n" + "\n".join(lines) if lines else ""


def tidy_command(command: Any, path: str, rich: bool) -> None:
    """Make ``command`` (a click command of the tree, at ``path``: ``""`` for the root,
    ``"ops sweep"``) show its help as written: the paragraphs unwrapped, its examples
    appended, its first sentence as its line in the list, under its workflow heading;
    with ``rich`` (typer renders markup), every text escaped. Once per command."""
    if getattr(command, "_tidy", False):
        return
    command._tidy = True

    def shown(text: str) -> str:
        if not rich:
            return text
        from rich.markup import escape

        return escape(text)

    text = command.help or ""
    parts = paragraphs(text) if text.strip() else []
    example = _examples(path)
    if example:
        parts.append(example if rich else "\b\n" + example)  # click keeps a \b paragraph's lines
    if parts:
        command.help = shown("\n\n".join(parts))
        command.short_help = shown(summary(text or parts[0]))
    if " " not in path and path:
        panel = panel_of(path)
        if panel is not None:
            command.rich_help_panel = panel
    for param in command.params:
        text = getattr(param, "help", None) or _declared_help(command, param)
        if text:
            param.help = shown(" ".join(paragraphs(text)))


def _declared_help(command: Any, param: Any) -> Optional[str]:
    """The help an argument was declared with: typer hands it to click, whose ``Parameter``
    (8.2 on) sets its own ``help`` afterwards, to None for an argument."""
    callback = getattr(command.callback, "__wrapped__", None)  # typer's wrapper of the function
    if callback is None:
        return None
    declared = inspect.signature(callback).parameters.get(param.name or "")
    return getattr(getattr(declared, "default", None), "help", None)
