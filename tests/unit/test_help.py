"""Every command's --help, as a user reads it (issue 58): the top-level help fits a screen with
one line per command in the order of the workflow; each command's help keeps its text (no
``[tool.uv]`` swallowed as markup, no line broken where the source was), shows its choices and
an example that the command accepts; a mistyped command gets one suggestion."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, List, Tuple

import click
import pytest
import typer

from adapter_matrix.cli import app
from adapter_matrix.cli.helptext import EXAMPLE_WIDTH, EXAMPLES, SUMMARY_WIDTH, WORKFLOW, example_lines, paragraphs

from .helpers import cli

WIDTH = 100


@pytest.fixture(autouse=True)
def _columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))  # rich sizes its console from it when not on a terminal


def _tree() -> click.Group:
    root = typer.main.get_command(app)
    assert isinstance(root, click.Group)
    return root


def _commands(command: click.Command, path: Tuple[str, ...] = ()) -> Iterator[Tuple[Tuple[str, ...], click.Command]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


PATHS = [path for path, _command in _commands(_tree())]


def _declared(path: Tuple[str, ...]) -> List[str]:
    """The help texts of a command as the source declares them (before the tidying)."""
    from adapter_matrix.cli.helptext import _declared_help

    command = _tree()
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    callback = getattr(command.callback, "__wrapped__", None)
    texts = [callback.__doc__ or ""] if callback is not None else []
    for param in command.params:
        declared = _declared_help(command, param)
        texts.append(declared or "")
    return texts


def _help(*path: str) -> str:
    res = cli(*path, "--help")
    assert res.code == 0, res.err
    return res.out


def _flat(text: str) -> str:
    """Rendered help without the panels' borders, its words on one line."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "adapter-matrix")
def test_every_help_keeps_its_text_fits_100_columns_and_has_an_example(path):
    out = _help(*path)
    from rich.cells import cell_len

    too_wide = [line for line in out.splitlines() if cell_len(line) > WIDTH]
    assert not too_wide, too_wide
    flat = _flat(out)
    for text in _declared(path):
        for bracketed in re.findall(r"\[[^\]\s]+\]", text):  # [tool.uv], [project]: what rich markup swallows
            assert bracketed in flat, (bracketed, out)
    assert "\\[" not in out  # escaped for rich, never shown escaped
    for line in example_lines(" ".join(path)):
        assert " ".join(line.split()) in flat
    assert EXAMPLES.get(" ".join(path)), f"{' '.join(path)} has no example"


@pytest.mark.parametrize("path", [p for p in PATHS if p], ids=" ".join)
def test_a_help_paragraph_is_one_line_for_the_terminal_to_wrap(path):
    """A docstring's line breaks are the source's: a paragraph's rendered lines fill the width
    (a short line inside a paragraph is an orphan of the source's wrap)."""
    out = _help(*path)
    description = out.split("╭")[0]  # before the panels
    lines = [line.strip() for line in description.splitlines()[3:]]  # after the usage line
    for this, after in zip(lines, lines[1:]):
        if this and after and not this.startswith("$") and not after.startswith(("$", "Examples")):
            assert len(this) + len(after.split()[0]) + 1 > WIDTH - 4, (this, after)


def test_the_top_level_help_lists_each_command_on_one_line_in_workflow_order():
    out = _help()
    lines = out.splitlines()
    assert len(lines) <= 40, out
    headings = [m.group(1) for m in re.finditer(r"╭─ (\w+) ─", out)]
    assert headings == ["Options"] + [panel for panel, _names in WORKFLOW]
    commands = out[out.index("╭─ " + WORKFLOW[0][0]) :]
    rows = [line for line in commands.splitlines() if line.startswith("│")]
    listed = [row.split()[1] for row in rows]  # a second row of one command would start with spaces
    expected = [name for _panel, names in WORKFLOW for name in names]
    assert listed == expected
    assert set(expected) == set(_tree().commands)


@pytest.mark.parametrize("path", [p for p in PATHS if p], ids=" ".join)
def test_a_summary_fits_its_line(path):
    command = _tree()
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    assert command.short_help and len(command.short_help) <= SUMMARY_WIDTH, command.short_help


def test_every_example_is_a_command_line_its_command_accepts():
    root = _tree()
    for path, shown in EXAMPLES.items():
        for line in example_lines(path):
            assert len(line) <= EXAMPLE_WIDTH, line
        for command_line, _what in shown:
            words = shlex.split(command_line.split(">")[0])
            assert words[0] == "adapter-matrix"
            if "COMMAND" in words:
                continue
            command: click.Command = root
            args = words[1:]
            while isinstance(command, click.Group):  # down to the command the words name
                command, args = command.commands[args[0]], args[1:]
            command.make_context(command.name, list(args))  # raises a UsageError for an option it lacks


def test_choices_are_shown_as_choices_and_are_the_real_ones():
    from adapter_matrix.ci.plan import STRATEGIES
    from adapter_matrix.device.opsweep.expected import DTYPES, EAGER_KINDS
    from adapter_matrix.tables.formats import FORMATS
    from adapter_matrix.tables.views import VIEWS
    from adapter_matrix.tables.words import LANGS

    root = _tree()

    def metavar(path: str, name: str) -> str:
        command = root
        for word in path.split():
            command = command.commands[word]  # type: ignore[attr-defined]
        (param,) = [p for p in command.params if p.name == name]
        return str(param.metavar)

    assert metavar("tier", "strategy") == "{" + "|".join(STRATEGIES) + "}"
    assert metavar("plan", "strategy") == metavar("results", "expect") == "|".join(STRATEGIES)
    assert metavar("table", "fmt") == "|".join(FORMATS)
    assert metavar("table", "lang") == "|".join(LANGS)
    assert metavar("ops sweep", "dtype") == "|".join(DTYPES)
    assert metavar("ops sweep", "kind") == "|".join(EAGER_KINDS)
    assert metavar("check", "constraints") == "pip|uv"
    view_help = _flat(_help("table"))
    for view in [*VIEWS, "platform"]:
        assert f" {view} (" in view_help or f" {view}," in view_help, view
    assert "{" + "|".join(STRATEGIES) + "}" in _flat(_help("tier"))


@pytest.mark.parametrize(
    ("args", "suggestion"), [(("chek",), "Did you mean 'check'?"), (("ops", "swep"), "Did you mean 'sweep'?")]
)
def test_a_mistyped_command_gets_one_suggestion(args, suggestion):
    res = cli(*args)
    assert res.code == 2
    assert res.err.count("Did you mean") == 1 and suggestion in res.err, res.err


def test_paragraphs_unwrap_prose_and_keep_example_blocks():
    text = """First line
    continues here.

    Second paragraph
    wraps too.

      $ adapter-matrix check
      $ adapter-matrix check --json
    """
    assert paragraphs(text) == [
        "First line continues here.",
        "Second paragraph wraps too.",
        "  $ adapter-matrix check\n  $ adapter-matrix check --json",
    ]


def test_the_top_level_help_lists_version():
    """Issue 67: `--version` works; `--help` now says so."""
    from adapter_matrix import __version__

    assert "--version" in cli("--help").out
    res = cli("--version")
    assert res.code == 0 and res.out.strip() == f"adapter-matrix {__version__}"
