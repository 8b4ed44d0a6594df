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
