"""`check`: is this environment a supported combination, and if not, what to install.

``adapter-matrix check`` is answered without typer (:mod:`adapter_matrix.cli.quick`); this
typer command is built from the same declaration, :data:`~adapter_matrix.cli.quick.CHECK_OPTIONS`,
for ``--help``, completion and the errors of a command line the quick path does not take.
"""

from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional

import typer

from .common import app
from .quick import CHECK_OPTIONS, CheckOption, run_check

_TYPES: Dict[str, Any] = {"multiple": List[str], "flag": bool, "value": Optional[str]}


def _parameter(option: CheckOption) -> inspect.Parameter:
    default: Any = [] if option.kind == "multiple" else False if option.kind == "flag" else None
    declared = typer.Option(default, *option.flags, help=option.help, metavar=option.metavar)
    return inspect.Parameter(
        option.dest, inspect.Parameter.KEYWORD_ONLY, default=declared, annotation=_TYPES[option.kind]
    )


def check(**options: Any) -> None:
    """Is this environment a supported combination? If not, what exactly to install.

    Reads versions from distribution metadata and the adapter's libraries as the dynamic
    loader will: never imports torch (unless --deep).
    Exit 0 supported, 1 unsupported or broken, 2 usage/matrix error, 3 experimental/deprecated/eol.
    """
    raise typer.Exit(run_check(**options))


check.__signature__ = inspect.Signature([_parameter(o) for o in CHECK_OPTIONS])  # type: ignore[attr-defined]
check.__annotations__ = {o.dest: _TYPES[o.kind] for o in CHECK_OPTIONS}
app.command()(check)
