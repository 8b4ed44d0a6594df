"""`init --from-index DISTRIBUTION`: an adapter's published releases become its matrix.

A code path of its own: `init` only dispatches here. It writes the matrix and nothing else
(run `init` again, without --from-index, for the adoption's other files: it keeps the matrix).
"""

from __future__ import annotations

import os
from typing import NamedTuple, Optional

from .base import console_for, fail, print_diagnostics

__all__ = ["Imported", "import_matrix", "init_from_index"]


class Imported(NamedTuple):
    """What an import wrote (or would write)."""

    text: str
    releases: int
    entries: int
    lines: int


def import_matrix(
    distribution: str, device: Optional[str], upstream: str, output: str, *, write: bool = True
) -> Imported:
    """Read the history of ``distribution`` and torch's facts from ``upstream`` (``pypi`` or
    a recorded folder), and write the matrix to ``output``. Raises
    :class:`~adapter_matrix.upstream.index.UpstreamError` and
    :class:`~adapter_matrix.matrix.diagnostics.MatrixError`."""
    from ..files import atomic_write
    from ..matrix.loader import load_text
    from ..upstream.from_index import device_of, import_text
    from ..upstream.history import answer_path, read_history
    from ..upstream.index import UpstreamError, read_upstream

    if upstream != "pypi" and not os.path.isdir(upstream):
        raise UpstreamError(
            f"--upstream {upstream}: --from-index reads 'pypi' or a recorded folder holding torch.json and "
            f"the adapter's answer (benchmarks/index_import.py --record DIR)"
        )
    name = device or device_of(distribution)
    if name is None:
        raise UpstreamError(f"the device of {distribution} cannot be told from its name; give --device NAME")
    history = read_history(upstream, distribution)
    if history is None:
        raise UpstreamError(
            f"{upstream} holds no recorded answer for {distribution} ({answer_path(upstream, distribution)})"
        )
    torch = read_upstream(upstream)
    folder = os.path.basename(os.path.normpath(upstream))
    origin = "PyPI" if upstream == "pypi" else folder
    where = history.origin if upstream == "pypi" else f"{folder}/{os.path.basename(history.origin)}"
    text = import_text(history, torch, name, where, origin)
    result = load_text(text, output)  # validates as written, or says why not
    if write:
        atomic_write(output, text)
    return Imported(
        text,
        len(history.releases),
        len(result.matrix.releases),
        len(result.matrix.release_lines()),
    )


def init_from_index(
    distribution: str, device: Optional[str], upstream: str, output: str, force: bool, dry_run: bool
) -> None:
    """The command: write ``output`` unless it exists (``--force`` replaces it)."""
    from ..matrix.diagnostics import MatrixError

    if os.path.exists(output) and not force:
        fail(f"{output} exists; give --force to replace it with the imported history, or --output another file")
    try:
        done = import_matrix(distribution, device, upstream, output, write=not dry_run)
    except MatrixError as exc:  # a name the file cannot hold, e.g. a device that is no identifier
        print_diagnostics(exc.diagnostics)
        fail(f"{output} was not written: the imported history makes an invalid matrix")
    console = console_for()
    verb = "would write" if dry_run else "written"
    console.print(
        f"{output}: {verb} \u2014 {done.releases} releases of {distribution} in {done.lines} release lines "
        f"({done.entries} entries) from {upstream}; next: add what the index cannot know (a driver "
        "toolkit, end of life), then `adapter-matrix validate --upstream pypi`",
        markup=False,
    )
