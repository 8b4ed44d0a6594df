"""The typer application every command group registers on (the shared helpers, which do not
need typer, are in :mod:`adapter_matrix.cli.base`)."""

from __future__ import annotations

from typing import Any

import click
import typer
from typer.core import TyperGroup

from .base import fail_with


class Group(TyperGroup):
    """The root command group: every command and sub-command runs inside :meth:`invoke`, so
    an :class:`~adapter_matrix.errors.AdapterMatrixError` from any of them ends the same
    way, in one line with its exit code (:func:`~adapter_matrix.cli.base.fail_with`)."""

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
