"""The compiled example adapters' committed evidence proves what issue 48 asks of it: each cell
compiled the adapter against its own torch, and the cell's binary check read the adapter's
libraries as the loader will (examples/cpp-adapter: the extension; examples/cmake-adapter: the
`_C` stub and its `lib/libtinyreg.so`) and found nothing `import` would fail on. Fresh on the
examples' current sources: an edit of a `.cpp` file without a new cell run fails here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from adapter_matrix.ci.record import read_records

from .helpers import REPO

# each example, and how many ELF files of its distribution the binary check must have read
EXAMPLES = {"cpp-adapter": 1, "cmake-adapter": 2}


@pytest.mark.parametrize("example, libraries", sorted(EXAMPLES.items()))
def test_every_committed_cell_of_a_compiled_example_passed_its_binary_check(example, libraries):
    folder = REPO / "examples" / example
    records = list(read_records(str(folder / "evidence")))
    assert {r.python[:4] for r in records} >= {"3.11", "3.12"}  # two Pythons ...
    assert len({r.torch.rsplit(".", 1)[0] for r in records if r.torch}) >= 2  # ... and two torch lines
    for record in records:
        assert record.passed, f"{example} {record.cell}: {record.error}"
        assert record.binary is not None, f"{example} {record.cell}: the record predates the binary check"
        assert record.binary == {"ok": True, "libraries": libraries, "problems": []}, (example, record.cell)

    # and the records are evidence of the sources as they are now: every recorded cell verified
    command = ["table", "--view", "verified", "--results", "evidence", "--format", "json"]
    view = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *command],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    states = [cell["state"] for row in json.loads(view.stdout)["rows"] for cell in row[1:]]
    assert states.count("verified") == len(records), states
    assert "stale" not in states and "failed" not in states


def test_the_plugin_examples_cells_built_the_adapter_then_the_plugin_and_checked_both():
    """examples/fused-plugin (issue 57, item 1): each cell built tiny-openreg, then tiny-fused
    against it, ran both suites, and its binary check read the plugin's op library beside the
    adapter's two; on two torch lines, and on the sources as they are now (the adapter's and the
    plugin's own)."""
    from adapter_matrix.ci.evidence import sources_hash
    from adapter_matrix.matrix.cache import load_matrix

    folder = REPO / "examples" / "fused-plugin"
    matrix = load_matrix(str(REPO / "examples" / "cmake-adapter" / "compat.yaml")).matrix
    records = list(read_records(str(folder / "evidence")))
    assert len({r.torch.rsplit(".", 1)[0] for r in records if r.torch}) >= 2
    for record in records:
        assert record.passed, f"{record.cell}: {record.error}"
        # in order, each against the cell's torch (compiled then, or the cache's build of the same sources)
        assert [b["project"] for b in record.builds or ()] == ["tiny-openreg", "tiny-fused"], record.cell
        assert all(b["source_hash"] for b in record.builds or ()), record.cell
        assert record.binary == {"ok": True, "libraries": 3, "problems": []}, record.cell
        assert {g for g, counts in (record.suites or {}).items() if counts["passed"]} == {"fused", "tests"}
        paths = record.sources["paths"] if record.sources else []
        own = paths[len(matrix.evidence.sources) :]
        assert paths[: len(matrix.evidence.sources)] == list(matrix.evidence.sources)
        assert "../fused-plugin/tiny_fused" in own and "../fused-plugin/setup.py" in own
        assert record.sources is not None and record.sources["hash"] == sources_hash(matrix, own), record.cell
    # the plugin's compat.yaml is a layer its adapter's matrix supports
    layer = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "validate", "compat.yaml", "../cmake-adapter/compat.yaml"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert layer.returncode == 0 and "layer tiny-fused, 1 release(s)" in layer.stdout, layer.stdout + layer.stderr
