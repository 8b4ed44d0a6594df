"""The selector view and page agree with `check`, cell by cell, for this repository's
matrix and the real vendor fixtures (torch_npu with CANN, IPEX with its OS pins).

Every command the page publishes is checked three ways against check's own code:
- installing what it names gives the combination check judges to have the page's status;
- for a newcomer's environment (a Python, the machine's dimension values, nothing
  installed) check's first fix is the page's entry for the cell that fix lands in;
- the adapter and torch requirements it writes are the cell's exactly.
The page itself holds no URL a browser would fetch, is under 150 KB for this repository,
and its Chinese words are all Chinese.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import shlex
from pathlib import Path
from typing import Any, Dict

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from adapter_matrix.check.outcome import Environment
from adapter_matrix.check.verdict import verdict
from adapter_matrix.matrix.loader import load
from adapter_matrix.matrix.model import Matrix, PythonVersion, Status
from adapter_matrix.matrix.queries import cells
from adapter_matrix.tables import views as tables
from adapter_matrix.tables.selector_page import PAGE_WORDS
from adapter_matrix.tables.words import WORDS

from .helpers import FIXTURES, REPO, cli

MATRICES = {
    "this repository": (REPO / "compat.yaml", _dt.date(2026, 12, 1)),
    "torch_npu": (FIXTURES / "matrices" / "torch_npu.yaml", _dt.date(2026, 12, 1)),
    "ipex": (FIXTURES / "matrices" / "ipex.yaml", _dt.date(2026, 1, 15)),  # archived 2026-03-31
}


def page_data(html: str) -> Dict[str, Any]:
    """The JSON document the page embeds (once)."""
    found = re.findall(r'<script type="application/json" id="matrix-data">(.*?)</script>', html, re.S)
    assert len(found) == 1
    return json.loads(found[0])


def _value(matrix: Matrix, name: str, text: str) -> Any:
    dim = matrix.dimension(name)
    assert dim is not None
    return next(v for v in dim.values if str(v) == text)


def _env(matrix: Matrix, entry: Dict[str, Any], torch: Any = None, adapter: Any = None) -> Environment:
    dims = tuple((name, _value(matrix, name, text)) for name, text in entry["dimensions"].items())
    return Environment(PythonVersion.parse(entry["python"]), torch=torch, adapter=adapter, dimensions=dims)


@pytest.fixture(scope="module", params=list(MATRICES))
def generated(request):
    path, today = MATRICES[request.param]
    matrix = load(path).matrix
    html = tables.render(matrix, "selector", "html", today=today)
    return matrix, today, page_data(html), html


def test_every_usable_cell_has_a_command_and_no_other_has(generated):
    matrix, today, data, _html = generated
    usable = {Status.SUPPORTED.value, Status.EXPERIMENTAL.value, Status.DEPRECATED.value}
    assert len(data["combinations"]) == len(cells(matrix, None, today))
    for entry in data["combinations"]:
        assert bool(entry["commands"]) == (entry["status"] in usable), entry


def test_installing_the_commands_gives_the_status_check_gives(generated):
    """Each published command installs the adapter release and a torch of the cell's line,
    and check, asked about the result, answers the status the page shows."""
    matrix, today, data, _html = generated
    dist = matrix.adapter.distribution
    checked = 0
    for entry in data["combinations"]:
        if not entry["commands"]:
            continue
        # the words a shell passes to pip (a row for Windows quotes for cmd.exe: check/shell.py)
        words = [word for command in entry["commands"] for word in shlex.split(command)]
        assert f"{dist}=={entry['release']}" in words
        (torch_req,) = [w[len("torch") :] for w in words if re.match(r"torch[=<>!~]", w)]
        torch = Version(entry["torch"])
        assert torch in SpecifierSet(torch_req, prereleases=True) or torch_req == f"=={torch}", (torch_req, torch)
        assert Version(entry["torch_line"]).release == torch.release[:2]
        env = _env(matrix, entry, torch=torch, adapter=Version(entry["release"]))
        assert verdict(matrix, env, today).outcome is Status(entry["status"]), entry
        checked += 1
    assert checked > 0


def test_checks_first_fix_for_a_newcomer_is_the_pages_command(generated):
    """A newcomer (this Python, this machine, nothing installed) asks check; its first fix
    lands in a cell whose page entry publishes exactly that fix's commands."""
    matrix, today, data, _html = generated
    by_cell = {}
    for entry in data["combinations"]:
        key = (entry["release"], entry["torch_line"], entry["python"], tuple(sorted(entry["dimensions"].items())))
        by_cell.setdefault(key, entry)
    compared = 0
    for entry in data["combinations"]:
        answer = verdict(matrix, _env(matrix, entry), today)
        assert answer.outcome is Status.UNSUPPORTED  # nothing installed
        for fix in answer.fixes[:1]:
            cell = fix.cell
            key = (
                str(cell.release.version),
                str(cell.line.minor),
                str(cell.python),
                tuple(sorted((n, str(v)) for n, v in cell.dimensions)),
            )
            assert list(fix.commands) == by_cell[key]["commands"], key
            compared += 1
    assert compared > 0


def test_the_acceptance_cells_match_check_on_the_command_line():
    data = page_data(
        tables.render(load(REPO / "compat.yaml").matrix, "selector", "html", today=MATRICES["this repository"][1])
    )
    for torch_line, python in (("2.13", "3.11"), ("2.1", "3.8")):
        entry = next(e for e in data["combinations"] if e["torch_line"] == torch_line and e["python"] == python)
        assert entry["release"] == "0.2.1" and entry["status"] == "supported"
        res = cli(
            "check",
            "--json",
            "--today",
            "2026-12-01",
            "--python",
            python,
            "--torch",
            entry["torch"],
            "--adapter",
            entry["release"],
        )
        assert res.code == 0 and json.loads(res.out)["checks"][0]["verdict"] == "supported", res.out


def test_the_page_requests_nothing_and_is_small():
    html = tables.render(load(REPO / "compat.yaml").matrix, "selector", "html", today=_dt.date(2026, 12, 1))
    assert len(html.encode()) < 150_000
    # no attribute a browser would load, no scripting API that requests anything
    assert not re.search(r"""\s(src|href|srcset|action|poster|data)\s*=""", html, re.I)
    assert not re.search(r"@import|url\(|fetch\(|XMLHttpRequest|import\(|WebSocket|EventSource|sendBeacon", html)
    assert html.count('id="matrix-data"') == 1


def test_the_embedded_document_is_the_json_format():
    matrix = load(REPO / "compat.yaml").matrix
    today = _dt.date(2026, 12, 1)
    embedded = page_data(tables.render(matrix, "selector", "html", today=today))
    assert embedded == json.loads(tables.render(matrix, "selector", "json", today=today))
    assert embedded["schema_version"] == 1 and embedded["view"] == "selector"


def test_every_page_word_has_a_chinese_text():
    for key in PAGE_WORDS:
        zh = WORDS[key][1]
        plain = re.sub(
            r"\{\w+\}|adapter-matrix table --view selector --format markdown|JavaScript|pip|torch|Python|wheel", "", zh
        )
        assert not re.search(r"[A-Za-z]{2,}", plain), (key, zh)
        assert re.search(r"[\u4e00-\u9fff]", zh), (key, zh)


def test_markdown_rows_group_the_pythons_of_one_command(tmp_path: Path):
    text = tables.render(
        load(FIXTURES / "matrices" / "torch_npu.yaml").matrix, "selector", "markdown", today=_dt.date(2026, 12, 1)
    )
    row = next(line for line in text.splitlines() if "| 9.1.0" in line and "| 2.11 " in line)
    assert "3.10, 3.11, 3.12, 3.13, 3.14" in row and "`pip install 'torch-npu==2.11.0' 'torch==2.11.0'`" in row
