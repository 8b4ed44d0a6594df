"""IPEX round 3 (issue 61, item 6): the two what-ifs of IPEX's import rule answer the same on
every way a maintainer can encode it.

IPEX's import only checks torch's major.minor, so torch 2.7.1+cpu imports beside IPEX
2.7.0+cpu, though Intel pairs it with 2.7.0+cpu. The encodings:

- ``ipex.yaml``: Intel's exact pins, one torch per release (``torch: 2.7.0+cpu``);
- ``ipex-rule/range-exception.yaml``: the same matrix with each CPU release claiming its
  whole torch line (``>=2.7,<2.8``, variant ``cpu``), the patch Intel does not pair made
  experimental by an exception;
- ``ipex-rule/imported.yaml``: what ``init --from-index intel-extension-for-pytorch`` writes
  (PyPI's versions without ``+cpu``, a line per release, exact pins);
- ``ipex-rule/imported-range-exception.yaml``: the import's shape with a range plus an exception.

On each: a user on the unpaired patch is sent back to the paired one, changing torch alone
(not a newer IPEX and torch both), and the full plan runs IPEX 2.5.0 with torch 2.5.0 on Linux.
"""

from __future__ import annotations

import json
from typing import Dict, List, NamedTuple, Optional

import pytest

from .helpers import FIXTURES, cli

MATRICES = FIXTURES / "matrices"
TODAY = "2026-01-15"  # IPEX is archived: fixes until 2026-03-31
CPU_INDEX = " --index-url https://download.pytorch.org/whl/cpu"


class Encoding(NamedTuple):
    path: str
    label: str  # the CPU builds' local label ("+cpu"), or "" where versions carry none
    os: Optional[str]  # the OS dimension the CPU builds name, if the matrix has one
    index: str  # the pip options that find the paired torch


ENCODINGS = {
    "exact pins": Encoding("ipex.yaml", "+cpu", "linux", CPU_INDEX),
    "range plus an exception": Encoding("ipex-rule/range-exception.yaml", "+cpu", "linux", CPU_INDEX),
    "imported": Encoding("ipex-rule/imported.yaml", "", None, ""),
    "imported, range plus an exception": Encoding("ipex-rule/imported-range-exception.yaml", "", None, ""),
}


def _dims(enc: Encoding) -> List[str]:
    return ["--set", f"os={enc.os}"] if enc.os else []


def _check(enc: Encoding, torch: str, adapter: str) -> Dict:
    res = cli(
        "check", "--json", "--matrix", str(MATRICES / enc.path), "--today", TODAY, "--python", "3.11",
        "--torch", torch, "--adapter", adapter, *_dims(enc),
    )  # fmt: skip
    (one,) = json.loads(res.out)["checks"]
    assert one["exit_code"] == res.code, res.err
    return one


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_unpaired_patch_goes_back_to_the_paired_one_changing_torch_alone(name):
    enc = ENCODINGS[name]
    doc = _check(enc, f"2.7.1{enc.label}", f"2.7.0{enc.label}")
    assert doc["verdict"] in ("unsupported", "experimental")  # exact pins refuse it, an exception admits it
    first = doc["fixes"][0]
    assert first["changes"] == ["torch"] and first["manual"] == [], first["summary"]
    assert first["cell"]["torch"] == f"2.7.0{enc.label}" and first["cell"]["release"] == f"2.7.0{enc.label}"
    assert first["cell"]["status"] == "supported"
    # the exact patch: a range (torch>=2.7,<2.8) would install 2.7.1 again
    assert first["commands"] == [f"pip install 'torch==2.7.0{enc.label}'{enc.index}"]
    # no listed fix replaces IPEX too for a status no better
    assert [
        f["summary"] for f in doc["fixes"] if "adapter" in f["changes"] and f["cell"]["status"] == "supported"
    ] == []


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_paired_patch_is_supported_and_needs_no_fix(name):
    enc = ENCODINGS[name]
    doc = _check(enc, f"2.7.0{enc.label}", f"2.7.0{enc.label}")
    assert doc["verdict"] == "supported" and doc["fixes"] == []


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_full_plan_runs_ipex_2_5_0_with_torch_2_5_0_on_linux(name):
    enc = ENCODINGS[name]
    res = cli(
        "plan", "--matrix", str(MATRICES / enc.path), "--strategy", "full", "--format", "json", "--today", TODAY
    )  # fmt: skip
    assert res.code == 0, res.err
    rows = [r for r in json.loads(res.out) if r["release"] == f"2.5.0{enc.label}"]
    paired = [r for r in rows if r["torch"] == "2.5.0" and r["dimensions"].get("os") == enc.os]
    assert sorted(r["python"] for r in paired) == ["3.10", "3.11", "3.12", "3.13", "3.9"]
    assert {r["status"] for r in paired} == {"supported"}
    assert len({r["id"] for r in json.loads(res.out)}) == len(json.loads(res.out))  # ids stay unique


def test_an_exception_written_with_the_variants_label_is_named_with_the_spelling_that_matches(tmp_path):
    # `==2.7.1+cpu` matches no cell (the cells are torch's public versions; +cpu comes from
    # torch-variant), so the exception would silently leave 2.7.1 supported.
    text = (MATRICES / "ipex-rule/range-exception.yaml").read_text()
    labelled = tmp_path / "compat.yaml"
    labelled.write_text(text.replace('torch: "==2.7.1", status', 'torch: "==2.7.1+cpu", status'))
    res = cli("validate", "--matrix", str(labelled))
    assert res.code == 0
    assert "exception for torch ==2.7.1+cpu matches no torch that release 2.7.0+cpu claims" in res.err
    assert "write `==2.7.1`: the build (+cpu) comes from the release's torch-variant" in res.err
