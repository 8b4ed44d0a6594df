"""The selector view and page agree with `check`, cell by cell and pick by pick, for this
repository's matrix and the real vendor fixtures (torch_npu with CANN, IPEX with its OS pins).

Every command the page publishes is checked three ways against check's own code:
- installing what it names gives the combination check judges to have the page's status;
- for a newcomer's environment (a Python, the machine's dimension values, nothing
  installed) check's first fix is the page's entry for the cell that fix lands in;
- the adapter and torch requirements it writes are the cell's exactly.
And for every pick the page can express that is not a usable combination (issue 61), the
page's nearest combination is check's first fix for the same pick, its first command the
command that installs that fix, and its reason check's.
The page itself holds no URL a browser would fetch, is under 150 KB for this repository,
and its Chinese words are all Chinese.
"""

from __future__ import annotations

import datetime as _dt
import functools
import itertools
import json
import re
import shlex
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from adapter_matrix.check.fixes import install_fix
from adapter_matrix.check.judgment import Environment
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
    "gaudi": (FIXTURES / "matrices" / "gaudi.yaml", _dt.date(2026, 12, 1)),
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


@functools.lru_cache(maxsize=None)
def _generated(name: str) -> Tuple[Matrix, _dt.date, Dict[str, Any], str]:
    path, today = MATRICES[name]
    matrix = load(path).matrix
    html = tables.render(matrix, "selector", "html", today=today)
    return matrix, today, page_data(html), html


@pytest.fixture(scope="module", params=list(MATRICES))
def generated(request):
    return _generated(request.param)


# -- the page's picks, read as its script reads them ------------------------------------


def decoded(runs: str) -> List[int]:
    """A run-length encoded table of the page ("value,count,value,count,...")."""
    numbers = [int(n) for n in runs.split(",")] if runs else []
    return [value for value, count in zip(numbers[::2], numbers[1::2]) for _ in range(count)]


def _own(entry: Dict[str, Any], key: str) -> Any:
    return {"python": entry["python"], "torch": entry["torch_line"]}.get(key, entry["dimensions"].get(key))


def picks(data: Dict[str, Any]) -> Iterator[Tuple[int, Dict[str, str], List[int]]]:
    """Every pick of the page (a value of every axis but the release), numbered as the
    page numbers them, with the combinations that answer it."""
    keys = data["picks"]["axes"]
    values = {a["key"]: a["values"] for a in data["axes"]}
    for number, chosen in enumerate(itertools.product(*(values[k] for k in keys))):
        pick = dict(zip(keys, chosen))
        here = [i for i, e in enumerate(data["combinations"]) if all(_own(e, k) in (None, v) for k, v in pick.items())]
        yield number, pick, here


def pick_env(matrix: Matrix, pick: Dict[str, str], torch: str, adapter: Any = None) -> Environment:
    """What `check --python P --torch T --set DIM=V [--adapter R]` asks for a pick."""
    dims = tuple((k, _value(matrix, k, v)) for k, v in pick.items() if k not in ("python", "torch"))
    return Environment(PythonVersion.parse(pick["python"]), torch=Version(torch), adapter=adapter, dimensions=dims)


def identity(release: Any, line: Any, python: Any, dims: Dict[str, str]) -> Tuple[str, ...]:
    return (str(release), str(line), str(python)) + tuple(f"{k}={v}" for k, v in sorted(dims.items()))


def of_entry(entry: Dict[str, Any]) -> Tuple[str, ...]:
    return identity(entry["release"], entry["torch_line"], entry["python"], entry["dimensions"])


def of_fix(fix: Any) -> Tuple[str, ...]:
    cell = fix.cell
    return identity(cell.release.version, cell.line.minor, cell.python, {n: str(v) for n, v in cell.dimensions})


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
        # the newest release supported there: 0.3.0 on its era cells (an exception of its own)
        assert entry["release"] == "0.3.0" and entry["status"] == "supported"
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


# -- the page's nearest combination is check's first fix (issue 61) ----------------------


def _compare_unsupported_picks(name: str) -> int:
    """For every pick no combination describes: the page's nearest combination is check's
    first fix for the pick, its first command the one that installs that fix in a fresh
    environment, its reason check's (for the nearest's release). For every combination that
    is not usable, the same for the pick with its release. Returns how many were compared."""
    matrix, today, data, _html = _generated(name)
    combos = data["combinations"]
    reason, nearest = decoded(data["picks"]["reason"]), decoded(data["picks"]["nearest"])
    compared = 0
    for number, pick, here in picks(data):
        if here:
            assert reason[number] == -1 and nearest[number] == -1, pick
            for i in here:
                entry = combos[i]
                if entry["commands"]:
                    continue
                # a combination that is not usable: check's first fix with its release installed
                env = pick_env(matrix, pick, entry["torch"], Version(entry["release"]))
                answer = verdict(matrix, env, today)
                assert answer.outcome is Status(entry["status"]) and "; ".join(answer.reasons) == entry["reason"]
                page = combos[entry["nearest"][str(number)]]
                assert of_entry(page) == of_fix(answer.fixes[0]), (name, pick, entry)
                assert page["commands"][0] == install_fix(matrix, answer.fixes[0].cell, today).commands[0]
                compared += 1
            continue
        assert nearest[number] >= 0, (name, pick)
        page = combos[nearest[number]]
        # asked as check is asked; the torch of the line with the build the answer installs (a
        # matrix without torch variants: exactly --torch LINE; one whose variant is the
        # adapter's choice, not the machine's, as a user of PyPI's torch asks: torch_npu on x86_64)
        label = None if matrix.variants_changeable else Version(page["torch"]).local
        env = pick_env(matrix, pick, pick["torch"] + (f"+{label}" if label else ""))
        answer = verdict(matrix, env, today)
        assert answer.outcome is Status.UNSUPPORTED and answer.fixes, (name, pick)
        first = answer.fixes[0]
        assert of_entry(page) == of_fix(first), (name, pick, first.summary)
        assert page["commands"][0] == install_fix(matrix, first.cell, today).commands[0], (name, pick)
        said = verdict(matrix, pick_env(matrix, pick, pick["torch"], Version(page["release"])), today)
        assert data["picks"]["reasons"][reason[number]] == "; ".join(said.reasons), (name, pick)
        assert "does not describe" not in data["picks"]["reasons"][reason[number]]
        compared += 1
    return compared


def test_the_pages_nearest_combination_is_checks_first_fix_for_every_unsupported_pick():
    counts = {name: _compare_unsupported_picks(name) for name in MATRICES}
    # this repository: 24 picks; torch_npu: 890 picks and its 11 end-of-life combinations; IPEX: 108
    assert counts["this repository"] >= 20 and counts["torch_npu"] >= 800 and counts["ipex"] >= 100, counts
    assert sum(counts.values()) >= 500, counts


def _held_fix(answer: Any, matrix: Matrix) -> Any:
    """check's fix that changes a held value (an extra dimension: a system change), listed
    after its pip fixes; None when its first fix is one or it lists none."""
    dims = {d.name for d in matrix.dimensions}
    shown = [f for f in answer.fixes if dims & set(f.changes)]
    return shown[0] if shown and shown[0] is not answer.fixes[0] else None


def _page_answer(data: Dict[str, Any], table: str, number: int, release: Any = None) -> Any:
    """The page's answer for a pick (and a release chosen with it), as its script reads it."""
    picks_ = data["picks"]
    at = -2
    if release is not None:
        at = decoded(picks_["by_release"][release][table])[number]
    if at == -2:
        at = decoded(picks_[table])[number]
    return data["combinations"][at] if at >= 0 else None


def _compare_held_picks(name: str) -> Tuple[int, int]:
    """Issue 67: a value pip cannot change (a toolkit, a driver, the arch, the OS) is held by
    the page as `check --set` holds it. For a sample of picks with each release that serves
    none of the pick (`check --set DIM=V --torch T --python P --adapter R`) and for every
    pick no combination describes: the page's first answer is check's first fix, and its
    system change (a fix that changes a held value) is the one check lists after its pip
    fixes. Returns (picks compared, how many first answers agreed)."""
    matrix, today, data, _html = _generated(name)
    releases = next(a["values"] for a in data["axes"] if a["key"] == "release")
    compared = agreed = 0
    machine_family = not matrix.variants_changeable and any(r.variant for r in matrix.releases)
    every = [(number, pick, here) for number, pick, here in picks(data)]
    for k, (number, pick, here) in enumerate(every):
        served = {data["combinations"][i]["release"] for i in here}
        asked: List[Any] = [None] if not here else []
        asked += [r for j, r in enumerate(releases) if r not in served and (k * 7 + j) % 11 == 0]
        for release in asked:
            page = _page_answer(data, "nearest", number, release)
            assert page is not None, (name, pick, release)
            label = None if matrix.variants_changeable else Version(page["torch"]).local
            adapter = Version(release) if release is not None else None
            env = pick_env(matrix, pick, pick["torch"] + (f"+{label}" if label else ""), adapter)
            answer = verdict(matrix, env, today)
            assert answer.outcome is Status.UNSUPPORTED and answer.fixes, (name, pick, release)
            compared += 1
            agreed += of_entry(page) == of_fix(answer.fixes[0])
            assert of_entry(page) == of_fix(answer.fixes[0]), (name, pick, release, answer.fixes[0].summary)
            if machine_family:
                # IPEX: check keeps the installed torch's build family, and changes no held value
                # to leave it; the page asks for a torch, not one of a family (docs/selector.md)
                continue
            page_held = _page_answer(data, "held", number, release)
            held = _held_fix(answer, matrix)
            assert (of_entry(page_held) if page_held else None) == (of_fix(held) if held else None), (
                name,
                pick,
                release,
            )
    return compared, agreed


def test_a_held_value_is_held_by_the_page_as_by_check():
    """Issue 67: 4 of 4 picks of CANN 9.1.0 with a torch-npu built for another CANN disagreed."""
    counts = {name: _compare_held_picks(name) for name in MATRICES}
    assert all(agreed == compared for compared, agreed in counts.values()), counts
    assert all(compared >= 20 for compared, _agreed in counts.values()), counts
    assert sum(compared for compared, _agreed in counts.values()) >= 500, counts


def _pick_of(data: Dict[str, Any], **pick: str) -> Tuple[int, List[int]]:
    return next((number, here) for number, p, here in picks(data) if p == pick)


def test_torch_2_15_on_python_3_10_answers_as_check_does():
    """Issue 61: `selector.html?torch=2.15&python=3.10` offered 0.2.1 on Python 3.11, check
    three other fixes, the experimental one first. Now both: 0.2.1 with torch 2.14 on 3.10."""
    _matrix, _today, data, _html = _generated("this repository")
    number, here = _pick_of(data, python="3.10", torch="2.15")
    assert here == []
    page = data["combinations"][decoded(data["picks"]["nearest"])[number]]
    reason = data["picks"]["reasons"][decoded(data["picks"]["reason"])[number]]
    # check as the issue ran it, with the newest release installed
    res = cli("check", "--json", "--today", "2026-12-01", "--torch", "2.15", "--python", "3.10", "--adapter", "0.3.0")
    doc = json.loads(res.out)["checks"][0]
    first = doc["fixes"][0]
    assert (first["cell"]["release"], first["cell"]["torch"], first["cell"]["python"]) == ("0.2.1", "2.14.1", "3.10")
    assert first["cell"]["status"] == "supported"
    assert (page["release"], page["torch"], page["python"], page["status"]) == ("0.2.1", "2.14.1", "3.10", "supported")
    assert page["commands"] == first["commands"] == ["pip install 'adapter-matrix-npu==0.2.1' 'torch>=2.14,<2.15'"]
    assert reason == doc["reasons"][0] == "torch 2.15 has no wheel for Python 3.10 (it has 3.11\u20133.15)"


def test_torch_npu_cann_9_1_0_with_torch_2_4_answers_as_check_does():
    """Issue 61: `cann=9.1.0&torch=2.4` jumped eight torch lines to 2.12 (a release the user
    never picked counted); check says torch 2.7.1 with torch-npu 2.7.1.post8. The link leaves
    Python out: the page takes the newest Python torch 2.4 has a wheel for (3.12), and no release."""
    _matrix, _today, data, _html = _generated("torch_npu")
    (axis,) = [a for a in data["axes"] if a["key"] == "python"]
    python = next(p for p in axis["values"] if p in data["torch_lines"]["2.4"])
    assert python == "3.12"
    number, here = _pick_of(data, cann="9.1.0", arch="aarch64", python=python, torch="2.4")
    assert here == []
    page = data["combinations"][decoded(data["picks"]["nearest"])[number]]
    assert (page["release"], page["torch"], page["python"]) == ("2.7.1.post8", "2.7.1", "3.12")
    for py in ("3.11", python):  # the check ran on Python 3.11
        res = cli(
            "check", "--json", "--today", "2026-12-01", "--matrix", str(MATRICES["torch_npu"][0]),
            "--set", "cann=9.1.0", "--set", "arch=aarch64", "--torch", "2.4", "--python", py, "--no-binary",
        )  # fmt: skip
        first = json.loads(res.out)["checks"][0]["fixes"][0]
        assert (first["cell"]["release"], first["cell"]["torch"]) == ("2.7.1.post8", "2.7.1"), first
    assert page["commands"] == ["pip install 'torch-npu==2.7.1.post8' 'torch==2.7.1'"] == first["commands"]


def test_torch_npu_cann_9_1_0_with_a_build_for_cann_8_1_keeps_cann_as_check_does():
    """Issue 67: CANN 9.1.0 + torch 2.4 + torch-npu 2.4.0.post4 (a build for CANN 8.1.RC1): the
    page offered 2.4.0.post4 on CANN 8.1.RC1; check keeps CANN 9.1.0. Now both: torch 2.7.1 with
    torch-npu 2.7.1.post8 first, then the system change to CANN 8.1.RC1."""
    _matrix, _today, data, _html = _generated("torch_npu")
    number, _here = _pick_of(data, cann="9.1.0", arch="aarch64", python="3.11", torch="2.4")
    page = _page_answer(data, "nearest", number, "2.4.0.post4")
    held = _page_answer(data, "held", number, "2.4.0.post4")
    res = cli(
        "check", "--json", "--today", "2026-12-01", "--matrix", str(MATRICES["torch_npu"][0]),
        "--set", "cann=9.1.0", "--set", "arch=aarch64", "--torch", "2.4", "--python", "3.11",
        "--adapter", "2.4.0.post4", "--no-binary",
    )  # fmt: skip
    first, system = json.loads(res.out)["checks"][0]["fixes"]
    assert (page["release"], page["torch"], page["dimensions"]["cann"]) == ("2.7.1.post8", "2.7.1", "9.1.0")
    assert (first["cell"]["release"], first["cell"]["torch"]) == ("2.7.1.post8", "2.7.1")
    assert (
        (held["release"], held["dimensions"]["cann"])
        == ("2.4.0.post4", "8.1.RC1")
        == (
            system["cell"]["release"],
            system["cell"]["dimensions"]["cann"],
        )
    )


def test_page_generation_says_what_it_does_on_stderr_and_stdout_is_the_document():
    """Issue 67: the selector page took 14 s without output. Not a terminal: one line per step on
    stderr (a terminal gets a bar with elapsed time and ETA: cli/progress.py); stdout is the document."""
    path, today = MATRICES["gaudi"]
    res = cli("table", "--matrix", str(path), "--view", "selector", "--format", "json", "--today", str(today))
    assert res.code == 0
    assert json.loads(res.out)["picks"]["axes"] == ["driver", "distro", "python", "torch"]
    assert res.err.splitlines() == ["check's answers for the selector page's picks: 189 to do"]
