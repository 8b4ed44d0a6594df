"""The typer application every command group registers on, and the shared helpers
(re-exported from :mod:`adapter_matrix.cli.base`, which does not need typer)."""

from __future__ import annotations

from typing import Any

import click
import typer
from typer.core import TyperGroup

from ..errors import EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE, EXIT_WARNING  # noqa: F401  (re-exported for the command modules)
from .base import (  # noqa: F401  (re-exported for the command modules)
    MATRIX_HELP,
    TODAY_HELP,
    console_for,
    date_or_exit,
    fail,
    fail_invalid,
    fail_with,
    find_or_exit,
    load_or_exit,
    one_matrix,
    print_diagnostics,
    release_or_exit,
)


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
