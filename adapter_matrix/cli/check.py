"""`check`: is this environment a supported combination, and if not, what to install.

The work is :func:`adapter_matrix.cli.quick.run_check`, which ``adapter-matrix check``
reaches without typer; this typer command declares the same options for ``--help``,
completion and error messages.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from .base import MATRIX_HELP, TODAY_HELP
from .common import app
from .quick import run_check


@app.command()
def check(
    matrix: List[str] = typer.Option(
        [],
        "--matrix",
        "-m",
        help=MATRIX_HELP + " Repeatable: an adapter's matrix and the matrices of the layers above it (a stack).",
    ),
    torch: Optional[str] = typer.Option(
        None, "--torch", help="Assume this torch version instead of the installed one."
    ),
    python: Optional[str] = typer.Option(
        None, "--python", help="Assume this Python (e.g. 3.9) instead of this interpreter."
    ),
    adapter: Optional[str] = typer.Option(
        None,
        "--adapter",
        help="Assume this adapter version instead of the installed one; or, a distribution name, check that installed adapter (its binaries alone when it ships no compat.yaml).",
    ),
    sets: List[str] = typer.Option([], "--set", help="Assume an extra dimension's version, NAME=VALUE (repeatable)."),
    companions: List[str] = typer.Option(
        [],
        "--companion",
        help="Assume a companion's or a stack package's version (a layer, vllm), NAME=VERSION, or NAME=none for not installed (repeatable); a layer's version given so is held by the fixes.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the documented JSON document instead of a report."),
    deep: bool = typer.Option(
        False, "--deep", help="Also import torch, activate the adapter and run a timed smoke on its device."
    ),
    no_binary: bool = typer.Option(
        False, "--no-binary", help="Skip the binary check (the adapter's libraries against the installed torch)."
    ),
    env: Optional[str] = typer.Option(
        None,
        "--env",
        help="Judge another environment from its files, without running it: a virtual environment, a prefix, a site-packages folder or an image's unpacked root.",
    ),
    requirements: Optional[str] = typer.Option(
        None,
        "--requirements",
        help="Judge what this requirements file (or pylock.toml, uv.lock) would install, before installing it: its exact pins.",
    ),
    resolve: bool = typer.Option(
        False, "--resolve", help="With --requirements: ask pip's resolver what it would install (ranges, no lock)."
    ),
    constraints: Optional[str] = typer.Option(
        None,
        "--constraints",
        metavar="pip|uv",
        help="Print the pins that keep this working environment as it is: a pip constraints file, or a [tool.uv] block (override-dependencies) for pyproject.toml.",
    ),
    today: Optional[str] = typer.Option(None, "--today", help=TODAY_HELP),
) -> None:
    """Is this environment a supported combination? If not, what exactly to install.

    Reads versions from distribution metadata and the adapter's libraries as the dynamic
    loader will: never imports torch (unless --deep).
    Exit 0 supported, 1 unsupported or broken, 2 usage/matrix error, 3 experimental/deprecated/eol.
    """
    raise typer.Exit(
        run_check(
            matrix=matrix,
            torch=torch,
            python=python,
            adapter=adapter,
            sets=sets,
            companions=companions,
            as_json=as_json,
            deep=deep,
            no_binary=no_binary,
            env=env,
            requirements=requirements,
            resolve=resolve,
            constraints=constraints,
            today=today,
        )
    )
