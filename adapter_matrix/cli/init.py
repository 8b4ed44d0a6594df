"""`init`: a first compat.yaml for a new adapter, from PyPI's torch facts."""

from __future__ import annotations

import os
from typing import List, Optional

import typer

from .common import app, console_for, fail, print_diagnostics


@app.command()
def init(
    distribution: str = typer.Option(..., "--distribution", help="The adapter's distribution name on PyPI, e.g. my-adapter."),
    device: str = typer.Option(..., "--device", help="The PrivateUse1 device name, e.g. npu."),
    torch: List[str] = typer.Option(
        [], "--torch", help="A torch line (2.12) or a specifier set ('>=2.9') to cover; repeatable (default: the newest line)."
    ),
    python: Optional[str] = typer.Option(None, "--python", help="The release's Python range (default: every Python its torch lines have)."),
    version: str = typer.Option("0.1.0", "--version", help="The adapter's first release."),
    upstream: str = typer.Option("pypi", "--upstream", help="Where the torch facts come from: 'pypi', or a recorded Simple JSON file (offline)."),
    output: str = typer.Option("compat.yaml", "--output", "-o", help="The file to write."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file."),
) -> None:
    """Write a first compat.yaml: the adapter, its torch lines with their wheel facts, one
    experimental release. It validates as written. Exit 0 written, 2 usage error."""
    from ..files import atomic_write
    from ..matrix.diagnostics import MatrixError
    from ..matrix.loader import load_text
    from ..upstream.index import UpstreamError, read_upstream
    from ..upstream.starter import choose_lines, starter_text

    if os.path.exists(output) and not force:
        fail(f"{output} exists; give --force to replace it, or --output another file")
    try:
        index = read_upstream(upstream)
        lines = choose_lines(index, torch)
        text = starter_text(distribution, device, lines, "PyPI" if upstream == "pypi" else os.path.basename(upstream), version, python)
    except (UpstreamError, ValueError) as exc:
        fail(str(exc))
    try:
        load_text(text, output)
    except MatrixError as exc:  # a name the file cannot hold, e.g. a device that is no identifier
        print_diagnostics(exc.diagnostics)
        fail(f"{output} was not written: the options above make an invalid matrix")
    try:
        atomic_write(output, text)
    except OSError as exc:
        fail(f"{output}: cannot write: {exc.strerror}")
    console_for().print(
        f"{output}: written \u2014 torch {lines[0].minor}\u2013{lines[-1].minor}, release {version}; "
        "next: `adapter-matrix validate`, `adapter-matrix table`, `adapter-matrix plan`",
        markup=False,
    )
