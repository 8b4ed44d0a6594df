"""`init --from-index DISTRIBUTION`: an adapter's published releases become its matrix.

A code path of its own: `init` only dispatches here. It writes the matrix and nothing else
(run `init` again, without --from-index, for the adoption's other files: it keeps the matrix).
"""

from __future__ import annotations

import json
import os
from typing import List, NamedTuple, Optional

from .base import console_for, fail, print_diagnostics

__all__ = ["Imported", "import_matrix", "init_from_index", "record_index"]


class Imported(NamedTuple):
    """What an import wrote (or would write)."""

    text: str
    releases: int  # the releases written
    entries: int
    lines: int
    left_out: int = 0  # yanked releases the file leaves out (its header names them)


def record_index(distribution: str, upstream: str, folder: str) -> List[str]:
    """Save what an import of ``distribution`` from ``upstream`` (``pypi`` or an index's URL)
    reads into ``folder``: torch's answer (PyPI's) and the adapter's, in the form its index
    answered in; the paths written."""
    from ..files import make_folders
    from ..upstream import companion_index, history
    from ..upstream.index import read_answer

    raw, _origin = read_answer("pypi")
    make_folders(folder)
    torch_path = os.path.join(folder, "torch.json")
    companion_index.write_answer(torch_path, companion_index.trim(json.loads(raw)))
    index_url = None if upstream == "pypi" else upstream
    document = history.fetch_history(distribution, index_url=index_url)
    return [torch_path, history.record_history(folder, distribution, document)]


def import_matrix(
    distribution: str, device: Optional[str], upstream: str, output: str, *, write: bool = True
) -> Imported:
    """Read the history of ``distribution`` from ``upstream`` (``pypi``, an index's Simple API
    URL, or a recorded folder) and torch's facts (PyPI's, or the folder's ``torch.json``), and
    write the matrix to ``output``. Raises :class:`~adapter_matrix.upstream.index.UpstreamError`
    and :class:`~adapter_matrix.matrix.diagnostics.MatrixError`."""
    from ..files import atomic_write
    from ..matrix.loader import load_text
    from ..upstream.from_index import device_of, import_text
    from ..upstream.history import answer_path, is_index_url, page_path, read_history
    from ..upstream.index import UpstreamError, read_upstream

    live = upstream == "pypi" or is_index_url(upstream)
    if not live and not os.path.isdir(upstream):
        raise UpstreamError(
            f"--upstream {upstream}: --from-index reads 'pypi', an index's Simple API URL (https://...), or a "
            f"folder recorded with `init --from-index {distribution} --upstream pypi --record DIR`"
        )
    name = device or device_of(distribution)
    if name is None:
        raise UpstreamError(f"the device of {distribution} cannot be told from its name; give --device NAME")
    history = read_history(upstream, distribution)
    if history is None:
        raise UpstreamError(
            f"{upstream} holds no recorded answer for {distribution} ({answer_path(upstream, distribution)}, "
            f"or a PEP 503 page: {page_path(upstream, distribution)})"
        )
    torch = read_upstream("pypi" if live else upstream)
    folder = os.path.basename(os.path.normpath(upstream))
    origin = "PyPI" if live else folder
    if live:
        where = history.origin
    else:
        where = os.path.relpath(os.path.abspath(history.origin), os.path.dirname(os.path.abspath(upstream)))
    text = import_text(history, torch, name, where, origin)
    result = load_text(text, output)  # validates as written, or says why not
    if write:
        atomic_write(output, text)
    written = {r.version for r in result.matrix.releases}
    return Imported(
        text,
        len(written),
        len(result.matrix.releases),
        len(result.matrix.release_lines()),
        sum(1 for r in history.releases if r.version not in written),
    )


def init_from_index(
    distribution: str,
    device: Optional[str],
    upstream: str,
    output: str,
    force: bool,
    dry_run: bool,
    record: Optional[str] = None,
) -> None:
    """The command: write ``output`` unless it exists (``--force`` replaces it); with
    ``record``, save the index's answers into that folder first and import from it."""
    from ..matrix.diagnostics import MatrixError
    from ..upstream.history import is_index_url
    from ..upstream.index import UpstreamError

    if os.path.exists(output) and not force:
        fail(f"{output} exists; give --force to replace it with the imported history, or --output another file")
    from .progress import network_progress

    source = upstream
    if record is not None:
        if upstream != "pypi" and not is_index_url(upstream):
            fail(f"--record saves what an index answers: give --upstream pypi or the index's URL, not {upstream}")
        try:
            with network_progress():
                written = record_index(distribution, upstream, record)
        except UpstreamError as exc:
            fail(str(exc))
        console_for().print(f"recorded {', '.join(written)}", markup=False)
        source = record
    try:
        with network_progress(quiet=source != "pypi" and not is_index_url(source)):  # a folder is read at once
            done = import_matrix(distribution, device, source, output, write=not dry_run)
    except MatrixError as exc:  # a name the file cannot hold, e.g. a device that is no identifier
        print_diagnostics(exc.diagnostics)
        fail(f"{output} was not written: the imported history makes an invalid matrix")
    console = console_for()
    verb = "would write" if dry_run else "written"
    left = f"; {done.left_out} yanked releases left out (the file's header names them)" if done.left_out else ""
    console.print(
        f"{output}: {verb} \u2014 {done.releases} releases of {distribution} in {done.lines} release lines "
        f"({done.entries} entries) from {source}{left}; next: add what the index cannot know (a driver "
        "toolkit, end of life), then `adapter-matrix validate --upstream pypi`",
        markup=False,
    )
