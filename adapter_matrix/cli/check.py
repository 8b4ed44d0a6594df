"""`check`: is this environment a supported combination, and if not, what to install."""

from __future__ import annotations

import json
import sys
from typing import Dict, List, Optional

import typer

from .common import EXIT_UNSUPPORTED, MATRIX_HELP, TODAY_HELP, app, console_for, date_or_exit, fail, find_or_exit, load_or_exit


def _parse_sets(values: List[str], option: str = "--set", example: str = "cann=8.0") -> Dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            fail(f"{option} {item!r}: write NAME=VALUE, e.g. {option} {example}")
        out[name.strip()] = value.strip()
    return out


@app.command()
def check(
    matrix: Optional[str] = typer.Option(None, "--matrix", "-m", help=MATRIX_HELP),
    torch: Optional[str] = typer.Option(None, "--torch", help="Assume this torch version instead of the installed one."),
    python: Optional[str] = typer.Option(None, "--python", help="Assume this Python (e.g. 3.9) instead of this interpreter."),
    adapter: Optional[str] = typer.Option(None, "--adapter", help="Assume this adapter version instead of the installed one."),
    sets: List[str] = typer.Option([], "--set", help="Assume an extra dimension's version, NAME=VALUE (repeatable)."),
    companions: List[str] = typer.Option(
        [], "--companion", help="Assume a companion package's version, NAME=VERSION, or NAME=none for not installed (repeatable)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the documented JSON document instead of a report."),
    deep: bool = typer.Option(False, "--deep", help="Also import torch, activate the adapter and run a timed smoke on its device."),
    today: Optional[str] = typer.Option(None, "--today", help=TODAY_HELP),
) -> None:
    """Is this environment a supported combination? If not, what exactly to install.

    Reads versions from distribution metadata: never imports torch (unless --deep).
    Exit 0 supported, 1 unsupported or broken, 2 usage/matrix error, 3 experimental/deprecated/eol.
    """
    from ..check.companions import detect_companions, judge_companions, with_companions
    from ..check.environment import detect_environment
    from ..check.report import CHECK_SCHEMA, check_document, combined_exit_code, render_check
    from ..check.verdict import verdict
    from ..matrix.model import PythonVersion

    python_override = None
    if python is not None:
        try:
            python_override = PythonVersion.parse(python)
        except ValueError as exc:
            fail(f"--python: {exc}")
    overrides = _parse_sets(sets)
    assumed_companions = _parse_sets(companions, "--companion", "torchvision=0.19.1")
    when = date_or_exit(today)
    docs = []
    for located in find_or_exit(matrix):
        result = load_or_exit(located.path)
        try:
            installed = detect_environment(
                result.matrix, python=python_override, torch=torch, adapter=adapter, dimensions=overrides
            )
            found = detect_companions(result.matrix, assumed_companions)
        except ValueError as exc:
            fail(str(exc))
        judged = judge_companions(result.matrix, installed.environment, found)
        answer = with_companions(verdict(result.matrix, installed.environment, when), result.matrix, judged)
        doc = check_document(result.matrix, located.origin, installed, answer, judged)
        if deep:
            from ..device.deep import deep_check

            report = deep_check(result.matrix)
            doc["deep"] = report.as_dict()
            if not report.ok and doc["exit_code"] in (0, 3):
                doc["exit_code"] = EXIT_UNSUPPORTED
        docs.append(doc)
    code = combined_exit_code([d["exit_code"] for d in docs])
    if as_json:
        typer.echo(json.dumps({"schema": CHECK_SCHEMA, "exit_code": code, "checks": docs}, indent=2))
    else:
        console = console_for() if sys.stdout.isatty() else None  # colors only where someone sees them
        for i, doc in enumerate(docs):
            if i:
                typer.echo("")
            render_check(doc, console)
    raise typer.Exit(code)
