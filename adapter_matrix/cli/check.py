"""`check`: is this environment a supported combination, and if not, what to install.

``adapter-matrix check`` is answered without typer (:mod:`adapter_matrix.cli.quick`); this
typer command is built from the same declaration, :data:`~adapter_matrix.cli.quick.CHECK_OPTIONS`,
for ``--help``, completion and the errors of a command line the quick path does not take.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import typer

from .common import app
from .quick import CHECK_OPTIONS, CheckOption, run_check

if TYPE_CHECKING:
    from ..check.elsewhere import Target

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


@app.command("env")
def env_command(
    matrix: List[str] = typer.Option([], "--matrix", "-m", help=CHECK_OPTIONS[0].help),
    env: Optional[str] = typer.Option(
        None, "--env", help="Report another environment from its files: a virtual environment, a prefix, a site folder."
    ),
    sets: List[str] = typer.Option([], "--set", help="An extra dimension's value, NAME=VALUE, where none is detected."),
    no_binary: bool = typer.Option(False, "--no-binary", help="Skip the binary check."),
    as_json: bool = typer.Option(False, "--json", help="Print the documented JSON document instead of Markdown."),
    today: Optional[str] = typer.Option(None, "--today", help="The date support windows are judged on (YYYY-MM-DD)."),
    pythonpath: Optional[str] = typer.Option(
        None, "--pythonpath", help="Folders searched before the environment's own, as PYTHONPATH's are (A:B)."
    ),
) -> None:
    """This environment as one Markdown block for a bug report.

    Python, torch and its build, the adapter, every layer and package of the stack with where
    it came from (a wheel, a VCS install and its commit, a checkout and its path and commit),
    each dimension and where its value came from, the plugins that load, the binary check's
    findings, check's verdict and its first fix.
    Exit 0 written (whatever the verdict), 2 usage error or invalid matrix.
    """
    import json
    import sys

    from ..check.env_report import env_report, render_report
    from ..check.facts import search_path
    from ..check.pipeline import CheckRefused, CheckRequest, matrix_paths, run
    from ..check.provenance import current_survey
    from ..errors import AdapterMatrixError
    from .base import fail
    from .quick import _FLAG_OF, _probes

    request = CheckRequest(
        _probes(),
        matrix=matrix,
        sets=sets,
        no_binary=no_binary,
        env=env,
        today=today,
        as_json=True,
        pythonpath=pythonpath,
    )
    try:
        result = run(request)
        target = _target_of(env, pythonpath)
        paths = search_path(target)
        pinned = _pinned(matrix_paths(matrix, paths), target)
    except CheckRefused as exc:
        fail(f"{_FLAG_OF[exc.field]}{exc.problem}" if exc.field else exc.problem)
    except AdapterMatrixError as exc:
        fail(str(exc))
    for warning in result.warnings:  # as check says them: a distribution skipped, a layer without its adapter
        sys.stderr.write(f"warning: {warning}\n")
    if result.document is None or not result.document.checks:
        fail("no adapter's matrix to judge this environment with: pass --matrix PATH")
    report = env_report(result.document, target, pinned, current_survey(target))
    sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n" if as_json else render_report(report))


def _target_of(env: Optional[str], pythonpath: Optional[str]) -> Optional[Target]:
    """The environment reported, located as ``check`` locates it: ``--env``'s (else this
    interpreter), with ``--pythonpath``'s folders first."""
    import os

    from ..check.elsewhere import locate, with_front

    return with_front(locate(env) if env is not None else None, (pythonpath or "").split(os.pathsep))


def _pinned(located: List[Any], target: Optional[Target]) -> List[Tuple[str, str]]:
    """What the layers of the stack pin (vllm, triton-ascend), as installed where ``target`` is;
    each version read as ``check`` reads it (its ``Version:`` header: a METADATA whose other
    fields are not UTF-8 is no internal error)."""
    from ..check.facts import distribution_version
    from ..check.stack.judge import stack_packages
    from ..matrix.cache import load_any
    from ..matrix.diagnostics import MatrixError
    from ..matrix.model import LayerResult

    layers = []
    for place in located:
        try:
            loaded = load_any(place.path)
        except MatrixError:
            continue
        if isinstance(loaded, LayerResult):
            layers.append(loaded.layer)
    installed = {name: distribution_version(name, target) for name in stack_packages(layers)}
    return [(name, version) for name, version in installed.items() if version is not None]
