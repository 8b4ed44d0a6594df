"""The typer application every command group registers on (the shared helpers, which do not
need typer, are in :mod:`adapter_matrix.cli.base`)."""

from __future__ import annotations

from difflib import get_close_matches
from typing import Any, List, Optional, Tuple

import click
import typer
from typer.core import HAS_RICH, TyperGroup

from .base import fail_with
from .helptext import WORKFLOW, tidy_command


class Group(TyperGroup):
    """A command group of the tool (the root, ``shims``, ``ops``): every command and
    sub-command runs inside the root's :meth:`invoke`, so an
    :class:`~adapter_matrix.errors.AdapterMatrixError` from any of them ends the same way, in
    one line with its exit code (:func:`~adapter_matrix.cli.base.fail_with`). Its commands
    are listed in the order of the workflow, their help shown as written
    (:mod:`adapter_matrix.cli.helptext`), and a mistyped command gets one suggestion."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not self.name:  # the root (typer names it ""): its tree is complete now
            self._tidy_tree(self, "")

    def _tidy_tree(self, command: click.Command, path: str) -> None:
        rich = HAS_RICH and getattr(command, "rich_markup_mode", None) == "rich"
        tidy_command(command, path, rich)
        for name, sub in getattr(command, "commands", {}).items():
            self._tidy_tree(sub, f"{path} {name}".strip())

    def list_commands(self, ctx: click.Context) -> List[str]:
        order = [name for _panel, names in WORKFLOW for name in names]
        known = super().list_commands(ctx)
        return sorted(known, key=lambda name: order.index(name) if name in order else len(order))

    def resolve_command(
        self, ctx: click.Context, args: List[str]
    ) -> Tuple[Optional[str], Optional[click.Command], List[str]]:
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            close = get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)  # click and typer would both suggest
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        from ..errors import AdapterMatrixError

        try:
            return super().invoke(ctx)
        except AdapterMatrixError as exc:
            fail_with(exc)


app = typer.Typer(
    cls=Group,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="One compat.yaml for an out-of-tree PyTorch backend: check, validate, tables, test plans.",
)


def _print_version(value: bool) -> None:
    if value:
        from .._version import __version__

        typer.echo(f"adapter-matrix {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", is_eager=True, callback=_print_version, help="Print the version and exit."
    ),
) -> None:
    # main() answers a lone --version before typer loads; this lists it in --help (issue 67)
    pass


def sub_app(help: str) -> typer.Typer:
    """A group of sub-commands (``shims``, ``ops``), listed and suggesting as the root does."""
    return typer.Typer(
        cls=Group, help=help, no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]}
    )
