"""`migrate torch X.Y.Z` and `migrate pending`: parse, run (adapter_matrix.migration), print."""

from __future__ import annotations

from typing import Optional

import typer

from .common import app, sub_app

migrate_app = sub_app("Move the adapter to a new torch release.")
app.add_typer(migrate_app, name="migrate")

UPSTREAM_HELP = (
    "Where torch's releases come from: 'pypi', PyTorch's test channel's URL (release candidates), or a "
    "recorded answer (a folder holding torch.json, the file, or a recorded page)."
)


@migrate_app.command("torch")
def migrate_torch(
    version: str = typer.Argument(..., help="The torch release, e.g. 2.16.0."),
    matrix: str = typer.Option("compat.yaml", "--matrix", "-m", help="The matrix (the repository root is its folder)."),
    upstream: str = typer.Option("pypi", "--upstream", metavar="pypi|PATH", help=UPSTREAM_HELP),
    probes: Optional[str] = typer.Option(
        None,
        "--probes",
        metavar="DIR",
        help="Recorded probes, torch-X.Y.json (default: docs/probes next to the matrix).",
    ),
    notes: str = typer.Option("MIGRATION.md", "--notes", help="The notes file, relative to the repository root."),
    allow_dirty: bool = typer.Option(False, "--allow-dirty", help="Edit a matrix that has uncommitted changes."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be written, write nothing."),
    body: Optional[str] = typer.Option(
        None, "--body", metavar="FILE", help="Also write the notes' section here (a PR body)."
    ),
) -> None:
    """Add a new torch release to the adapter's repository.

    The matrix gains the torch line (the index's facts) and an experimental row for the next
    release, comments kept; an adapter with shims gets the new era's skeleton; the API probe
    of the new line against the newest supported one, and what is left, go to MIGRATION.md.
    Idempotent: a second run changes nothing. Exit 0 done (or nothing to do), 2 refused (an
    unknown torch, uncommitted changes to the matrix, the index unreadable): nothing written.
    """
    from ..migration.torch_release import MigrateRequest, render, run

    request = MigrateRequest(version, matrix, upstream, probes, notes, allow_dirty, dry_run, body=body)
    typer.echo(render(run(request)), nl=False)


@migrate_app.command("pending")
def migrate_pending(
    matrix: str = typer.Option("compat.yaml", "--matrix", "-m", help="The matrix."),
    upstream: str = typer.Option("pypi", "--upstream", metavar="pypi|PATH", help=UPSTREAM_HELP),
    pre: Optional[str] = typer.Option(
        None,
        "--pre",
        metavar="URL|PATH",
        help="Also release candidates: PyTorch's test channel (https://download.pytorch.org/whl/test/torch/), "
        "or a recorded page of it.",
    ),
) -> None:
    """List the torch releases the matrix does not describe yet.

    One per line, the newest release of each torch line newer than the matrix's newest; a
    release candidate from --pre is followed by ` rc`. Exit 0, also when there are none.
    """
    from ..migration.pending import PendingRequest, render, run

    typer.echo(render(run(PendingRequest(matrix, upstream, pre))), nl=False)
