"""The two documents other programs read stay byte-identical: the result record and ``check --json``.

The cell's result record (``results/<cell>.json``, and its evidence form committed under
``evidence/``) and the ``check --json`` document are interfaces: CI artifacts, committed
evidence and users' scripts read them. A refactor of the code that writes them must not
move a byte. The goldens under ``tests/fixtures/golden/`` were written by the code before
the record and the document got their declared types; ``GOLDEN_UPDATE=1`` rewrites them
(only for a deliberate, documented format change).

Three contracts:

* every record this repository holds (the committed evidence, the table fixtures) reads
  back and writes out to the very bytes of its file;
* a record written from a fixed cell run (the check document of a real ``check --json``,
  suites, build, phases) is the golden record, and its evidence form the golden evidence;
* ``check --json`` and the terminal report of a set of command lines on the fixture
  matrices are the golden outputs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import List, Tuple

import pytest

from adapter_matrix.ci import evidence
from adapter_matrix.ci.plan import plan
from adapter_matrix.ci.record import ResultRecord, read_records, write_record
from adapter_matrix.ci.suites import TestCounts
from adapter_matrix.matrix.loader import load

from .helpers import FIXTURES, REPO
from .helpers import quick_check as _check

GOLDEN = FIXTURES / "golden"
UPDATE = bool(os.environ.get("GOLDEN_UPDATE"))


def _same_as_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert text == path.read_bytes().decode("utf-8"), f"{name} differs from its golden"


# -- the records this repository holds ----------------------------------------------------


def _evidence_text(record) -> str:
    """The bytes :func:`~adapter_matrix.ci.evidence.write_evidence` writes for ``record``."""
    return json.dumps(record.evidence_json(), indent=2, ensure_ascii=False) + "\n"


def _full_text(record) -> str:
    """The bytes :func:`~adapter_matrix.ci.record.write_record` wrote for ``record``."""
    return json.dumps(record.to_json(), indent=2) + "\n"


def _path_of(record) -> str:
    return record.path


@pytest.mark.parametrize(
    "folder, text_of",
    [(REPO / "evidence", _evidence_text), (FIXTURES / "tables" / "results", _full_text)],
    ids=["evidence", "table-results"],
)
def test_every_record_of_the_repository_reads_back_to_the_bytes_of_its_file(folder, text_of):
    records = read_records(str(folder))
    assert len(records) >= 9
    for record in records:
        path = _path_of(record)
        assert text_of(record) == Path(path).read_text(encoding="utf-8"), path


# -- a record written by a cell ------------------------------------------------------------

_CHECK_ARGS = (
    "--matrix",
    "tests/fixtures/companions.yaml",
    "--torch",
    "2.2.2+cpu",
    "--python",
    "3.11",
    "--adapter",
    "2.0.0",
)
_TODAY = ("--today", "2026-12-01")  # the verdict of a release with an end date depends on the day
_PAIRED = (
    "--companion",
    "torchvision=0.17.2+cpu",
    "--companion",
    "torchaudio=2.2.0+cpu",
    "--companion",
    "demo-vision=2.0.0",
)


def _stable(text: str) -> str:
    """A written record with what depends on the clock and the machine replaced."""
    text = re.sub(r'"timestamp": "[^"]*"', '"timestamp": "2026-12-01T12:00:00+00:00"', text)
    return re.sub(r'"platform": "[^"]*"', '"platform": "Linux-x86_64"', text)


def test_a_cell_writes_the_golden_record_and_evidence(tmp_path):
    code, out, _err = _check(*_CHECK_ARGS, *_PAIRED, *_TODAY, "--json")
    assert code == 0, out
    check = json.loads(out)
    matrix = load(str(FIXTURES / "companions.yaml")).matrix
    row = next(r for r in plan(matrix, "full") if r.id == "py3.11-torch2.2-v2.0.0")
    suites = {
        "conformance": TestCounts(70, 0, 2, 0, ("a.b: absent",)),
        "ops": TestCounts(500, 1, 10, 0),
    }
    tree = {"commit": "0123456789abcdef", "dirty": False, "sources": {"hash": "feedc0ffee000000", "paths": ["adapter"]}}
    ops = {"mode": "full", "tasks": {"passed": 10}, "record": "results/ops.json"}
    refusals = [{"installed": "0.16.0", "exit_code": 1, "reason": "paired with torch 2.1", "fix": "pip install x"}]
    record = ResultRecord.planned(row).seen(check).tested(suites).on_sources(tree)
    record = record.built({"source_hash": "c0ffee" * 4, "build_seconds": 61.25, "compiled": True})
    record = dataclasses.replace(
        record,
        ops=ops,
        companion_refusals=refusals,
        companions_unavailable={"torchaudio": "no build for Python 3.11 — the index"},
    )
    record = write_record(
        str(tmp_path / "results"),
        record.finished("failed", "ops: 1 failed, 0 errors", {"install": 3.0, "tests": 40.004}),
    )
    written = (tmp_path / "results" / "py3.11-torch2.2-v2.0.0.json").read_text(encoding="utf-8")
    _same_as_golden("record/result.json", _stable(written))
    path = evidence.write_evidence(str(tmp_path / "evidence"), record)
    _same_as_golden("record/evidence.json", _stable(Path(path).read_text(encoding="utf-8")))
    (back,) = read_records(str(tmp_path / "results"))
    assert _full_text(back) == written


# -- check --json and the terminal report ---------------------------------------------------


_NPU = (
    "--set",
    "cann=8.2.RC1",
    "--set",
    "soc=Ascend910B",
    "--set",
    "arch=aarch64",
)  # none read from the host
_MINIMAL = ("-m", "tests/fixtures/minimal.yaml")
_IPEX = ("-m", "tests/fixtures/matrices/ipex.yaml", "--set", "os=linux")
COMMAND_LINES: List[Tuple[str, Tuple[str, ...]]] = [
    ("supported", (*_MINIMAL, "--torch", "2.2.2", "--python", "3.10", "--adapter", "2.0.0")),
    ("old-torch", (*_MINIMAL, "--torch", "2.0.1", "--python", "3.11", "--adapter", "2.0.0")),
    ("no-wheel", (*_MINIMAL, "--torch", "2.3.1", "--python", "3.13", "--adapter", "2.0.0")),
    ("experimental", (*_MINIMAL, "--torch", "2.3.1", "--python", "3.12", "--adapter", "2.0.0")),
    ("deprecated", (*_MINIMAL, "--torch", "2.1.2", "--python", "3.9", "--adapter", "1.0.0")),
    ("no-adapter", (*_MINIMAL, "--torch", "2.2.2", "--python", "3.10", "--adapter", "9.9")),
    ("free-threaded", ("-m", "tests/fixtures/matrices/torch_npu.yaml", "--torch", "2.8.0", "--python", "3.13t", *_NPU)),
    ("npu", ("-m", "tests/fixtures/matrices/torch_npu.yaml", "--torch", "2.4.0", "--python", "3.10", *_NPU)),
    (
        "ipex-cxx11",
        (
            *_IPEX,
            "--torch",
            "2.5.1+cxx11.abi",
            "--python",
            "3.11",
            "--adapter",
            "2.5.10+xpu",
            "--set",
            "oneapi=2025.0.4",
        ),
    ),
    (
        "ipex-variant",
        (*_IPEX, "--torch", "2.8.0", "--python", "3.11", "--adapter", "2.8.0+cpu", "--set", "oneapi=absent"),
    ),
    ("companion-paired", (*_CHECK_ARGS, *_PAIRED)),
    ("companion-absent", (*_CHECK_ARGS, "--companion", "torchvision=none", "--companion", "torchaudio=none")),
    (
        "companion-unpaired",
        (*_CHECK_ARGS, "--companion", "torchvision=0.16.0+cpu", "--companion", "torchaudio=2.2.0"),
    ),
    ("usage-error", (*_MINIMAL, "--python", "three")),
    ("bad-set", (*_MINIMAL, "--set", "cann")),
    ("unknown-set", (*_MINIMAL, "--set", "nope=1.0")),
]


@pytest.mark.parametrize("name, args", COMMAND_LINES, ids=[n for n, _ in COMMAND_LINES])
def test_check_prints_the_golden_document_and_report(name, args):
    code, out, err = _check(*args, *_TODAY, "--json")
    document = json.loads(out)
    # the autoload section reads this machine's installed entry points, not the fixture's
    # (test_autoload covers it); the rest of the document is the golden's byte for byte
    document.pop("autoload", None)
    out = json.dumps(document, indent=2) + "\n"
    _same_as_golden(f"check/{name}.json", f"exit {code}\n{out}-- stderr\n{err}")
    code, out, err = _check(*args, *_TODAY)
    _same_as_golden(f"check/{name}.txt", f"exit {code}\n{out}-- stderr\n{err}")
