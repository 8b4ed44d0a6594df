"""`validate --upstream`: torch's Python claims against real wheel tags, and `--write`.

Every test reads the answer PyPI gave on 2026-11-29 (tests/fixtures/pypi/2026-12-01/torch.json); none touches
the network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from adapter_matrix.matrix.loader import load_text
from adapter_matrix.matrix.model import PythonVersion
from adapter_matrix.upstream import index as up
from adapter_matrix.upstream import metadata as md
from adapter_matrix.upstream import write as upstream_write

from .helpers import FIXTURES, REPO, cli

RECORDED_DIR = FIXTURES / "pypi" / "2026-12-01"
RECORDED = RECORDED_DIR / "torch.json"
RECORDED_ARG = str(RECORDED.relative_to(REPO))
# The one warning the recorded folder leaves: a fact the index cannot show (compat.yaml says why).
UNDECLARED = "torchaudio 2.11.0 declares no torch requirement"
COMPAT = (REPO / "compat.yaml").read_text()


def _pythons(text: str) -> Tuple[PythonVersion, ...]:
    """'3.9-3.13, 3.13t' -> the Python versions it names (the notation of matrixtools.md)."""
    out: List[PythonVersion] = []
    for part in text.split(", "):
        if "-" in part:
            low, high = (PythonVersion.parse(p) for p in part.split("-"))
            out += [PythonVersion.parse(f"3.{m}") for m in range(low.version.minor, high.version.minor + 1)]
        else:
            out.append(PythonVersion.parse(part))
    return tuple(sorted(out, key=up.python_order))


# The torch <-> CPython table of shared/research/matrixtools.md (PyPI, 2026-11-29).
RESEARCH_TABLE = {
    "2.1": ("3.8-3.11", ">=3.8"),
    "2.2": ("3.8-3.12", ">=3.8"),
    "2.3": ("3.8-3.12", ">=3.8"),
    "2.4": ("3.8-3.12", ">=3.8"),
    "2.5": ("3.9-3.13", ">=3.8"),
    "2.6": ("3.9-3.13", ">=3.9"),
    "2.7": ("3.9-3.13, 3.13t", ">=3.9"),
    "2.8": ("3.9-3.13, 3.13t", ">=3.9"),
    "2.9": ("3.10-3.14, 3.13t, 3.14t", ">=3.10"),
    "2.10": ("3.10-3.14, 3.13t, 3.14t", ">=3.10"),
    "2.11": ("3.10-3.14, 3.13t, 3.14t", ">=3.10"),
    "2.12": ("3.10-3.14, 3.14t", ">=3.10"),
    "2.13": ("3.10-3.14, 3.14t", ">=3.10"),
    "2.14": ("3.10-3.14, 3.14t", ">=3.10"),
    "2.15": ("3.11-3.15, 3.14t, 3.15t", ">=3.11"),
}


@pytest.fixture(scope="module")
def index() -> up.Upstream:
    return up.read_upstream(str(RECORDED))


def test_recorded_answer_reproduces_the_research_table(index):
    lines = index.lines()
    table = {
        str(m): (line.python, SpecifierSet(line.newest.requires_python or ""))
        for m, line in lines.items()
        if m >= Version("2.1")
    }
    expected = {m: (_pythons(py), SpecifierSet(rp)) for m, (py, rp) in RESEARCH_TABLE.items()}
    assert table == expected


def test_requires_python_is_not_evidence(index):
    line = index.lines()[Version("2.5")]
    assert SpecifierSet(line.newest.requires_python).contains("3.8")
    assert PythonVersion.parse("3.8") not in line.python


def test_claims_are_checked_against_the_newest_patch(index):
    """torch 2.12.0 shipped cp313t wheels, 2.12.1 did not: the line has no 3.13t."""
    line = index.lines()[Version("2.12")]
    assert [str(p.version) for p in line.patches] == ["2.12.0", "2.12.1"]
    assert PythonVersion.parse("3.13t") in line.patches[0].python
    assert PythonVersion.parse("3.13t") not in line.python


def test_release_date_is_the_first_upload_of_x_y_0(index):
    lines = index.lines()
    assert lines[Version("2.1")].released.isoformat() == "2023-10-04"
    assert lines[Version("2.15")].released.isoformat() == "2026-10-28"


def _document(files: List[Dict[str, object]], **extra: object) -> Dict[str, object]:
    doc: Dict[str, object] = {"meta": {"api-version": "1.1"}, "name": "torch", "files": files}
    doc.update(extra)
    return doc


def _wheel(name: str, day: str = "2030-01-02", yanked: object = False) -> Dict[str, object]:
    return {"filename": name, "upload-time": f"{day}T10:00:00.000000Z", "requires-python": ">=3.9", "yanked": yanked}


def test_only_unyanked_linux_x86_64_cpython_wheels_count():
    index = up.parse_index(
        _document(
            [
                _wheel("torch-9.0.0-cp39-cp39-manylinux1_x86_64.whl", "2030-01-03"),
                _wheel("torch-9.0.0-3-cp312-cp312-manylinux_2_28_x86_64.whl"),  # a build tag
                _wheel("torch-9.0.0-cp313-cp313t-manylinux2014_x86_64.whl"),  # free-threaded
                _wheel("torch-9.0.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
                _wheel("torch-9.0.0-cp314-cp314-manylinux_2_28_aarch64.whl"),
                _wheel("torch-9.0.0-cp315-cp315-win_amd64.whl"),
                _wheel("torch-9.0.0-cp311-none-macosx_11_0_arm64.whl", "2030-01-01"),
                _wheel("torch-9.0.0-cp316-cp316-manylinux_2_28_x86_64.whl", yanked="broken build"),
                _wheel("torch-9.0.1-cp39-cp39-manylinux_2_28_x86_64.whl", yanked=True),
                _wheel("torch-9.1.0rc1-cp39-cp39-manylinux_2_28_x86_64.whl"),
                _wheel("torch-9.0.0.tar.gz"),
                _wheel("not-a-wheel.txt"),
            ]
        ),
        "test",
    )
    (line,) = index.lines().values()
    assert [str(p) for p in line.python] == ["3.9", "3.10", "3.12", "3.13t"]
    assert [str(p.version) for p in line.patches] == ["9.0.0"]
    assert str(line.released) == "2030-01-01"  # the earliest file, whatever its platform
    assert index.yanked == {Version("9.0.1")}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"<html>", "is not a PEP 691 JSON answer"),
        (b"[]", "the answer is not a JSON object"),
        (json.dumps(_document([], meta={"api-version": "2.0"})).encode(), "unsupported api-version '2.0'"),
        (json.dumps(_document([], name="numpy")).encode(), "lists the files of 'numpy', not torch"),
        (json.dumps(_document([{"size": 1}])).encode(), "file #1 has no filename"),
        (json.dumps(_document([_wheel("torch-9.0.0.tar.gz", day="soon")])).encode(), "malformed upload-time"),
    ],
)
def test_unusable_answers_are_one_clear_error(tmp_path, content, message):
    path = tmp_path / "answer.json"
    path.write_bytes(content)
    with pytest.raises(up.UpstreamError, match=message):
        up.read_upstream(str(path))
    res = cli("validate", "--upstream", str(path))
    assert res.code == 2
    assert message.split("'")[0] in res.err and "Traceback" not in res.err


def test_missing_recording_is_exit_2(tmp_path):
    res = cli("validate", "--upstream", str(tmp_path / "nope.json"))
    assert res.code == 2
    assert f"cannot read {tmp_path / 'nope.json'}: No such file or directory" in res.err


# -- the 'pypi' source, with the network replaced ---------------------------------------


def test_pypi_asks_the_simple_json_api_with_a_timeout(monkeypatch):
    seen = {}

    def http_get(url, headers, timeout):
        seen.update(url=url, accept=headers.get("Accept"), timeout=timeout)
        return RECORDED.read_bytes(), {}

    monkeypatch.setattr(md, "http_get", http_get)
    index = up.read_upstream("pypi")
    assert seen == {
        "url": "https://pypi.org/simple/torch/",
        "accept": "application/vnd.pypi.simple.v1+json",
        "timeout": up.TIMEOUT,
    }
    assert index.source == "pypi" and Version("2.15") in index.lines()


def test_network_failure_is_exit_2_with_the_way_out(monkeypatch):
    def http_get(url, headers, timeout):  # what http_get raises once its retries are spent
        raise md.MetadataError(f"{url}: Failed to resolve 'pypi.org' ([Errno -3] Temporary failure in name resolution)")

    monkeypatch.setattr(md, "http_get", http_get)
    res = cli("validate", "--upstream", "pypi")
    assert res.code == 2
    assert "cannot read https://pypi.org/simple/torch/: Failed to resolve 'pypi.org'" in res.err
    assert "--upstream FILE" in res.err and "Traceback" not in res.err


def test_validate_upstream_pypi_uses_the_fetched_answer(monkeypatch):
    from adapter_matrix.upstream import companion_index as companions

    monkeypatch.setattr(up, "_fetch", lambda url, timeout: RECORDED.read_bytes())

    def answer(name, floor, **_options):
        path = RECORDED_DIR / f"{name}.json"
        if not path.exists():  # the adapter itself: not published (PyPI answers 404)
            raise companions.NotOnIndex(f"the index has no project {name}")
        return json.loads(path.read_bytes())

    monkeypatch.setattr(companions, "fetch_document", answer)
    res = cli("validate", "--upstream", "pypi")
    assert res.code == 0, res.err
    assert [line for line in res.err.splitlines() if "warning" in line] == [
        line for line in res.err.splitlines() if UNDECLARED in line
    ]


# -- verification of a matrix -----------------------------------------------------------


def test_repository_matrix_matches_pypi():
    res = cli("validate", "--upstream", str(RECORDED_DIR.relative_to(REPO)))
    assert res.code == 0, res.err
    # not a warning but the one about a release that declares nothing: every fact agrees with the recording
    assert len(res.err.strip().splitlines()) == 1 and UNDECLARED in res.err
    assert "compat.yaml: valid" in res.out


def _torch_findings(err: str) -> List[str]:
    """The diagnostics about torch facts: torch's answer alone cannot verify the companions
    (and says so), and a torch fact planted out of the file also shows in their pairings."""
    return [
        line
        for line in err.splitlines()
        if not re.search(r": (warning: )?(torchvision|torchaudio|the torch facts of) ", line)
    ]


def _planted(tmp_path: Path, old: str, new: str, *, text: str = COMPAT) -> Tuple[Path, str]:
    assert text.count(old) == 1, old
    path = tmp_path / "compat.yaml"
    path.write_text(text.replace(old, new))
    return path, text.replace(old, new)


def _position(text: str, entry: str, needle: str) -> str:
    """'LINE:COL' of the first ``needle`` after the line ``entry`` (e.g. '  "2.5":')."""
    lines = text.splitlines()
    start = lines.index(entry)
    number = next(i for i in range(start, len(lines)) if needle in lines[i])
    return f"{number + 1}:{lines[number].index(needle) + 1}"


FIX = f"or run `adapter-matrix validate --upstream {RECORDED_ARG} --write`"
PY25 = 'python: ["3.9", "3.10", "3.11", "3.12", "3.13"]\n  "2.6"'
PY212 = 'patches: [2.12.0, 2.12.1]\n    python: ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]'


@pytest.mark.parametrize(
    "old, new, entry, needle, message",
    [
        (
            PY25,
            PY25.replace('["3.9"', '["3.8", "3.9"'),
            '  "2.5":',
            '"3.8"',
            "torch 2.5 has no cp38 wheel for Linux x86_64 on PyPI (newest patch 2.5.1; its requires-python '>=3.8.0' is no "
            'evidence of a wheel) \u2014 remove "3.8" from its python list (PyPI: 3.9, 3.10, 3.11, 3.12, 3.13), ' + FIX,
        ),
        (
            PY212,
            PY212.replace('"3.14t"', '"3.13t", "3.14t"'),
            '  "2.12":',
            '"3.13t"',
            "torch 2.12 has no cp313t wheel for Linux x86_64 on PyPI (newest patch 2.12.1; 2.12.0 had one, but pip installs "
            '2.12.1) \u2014 remove "3.13t" from its python list (PyPI: 3.10, 3.11, 3.12, 3.13, 3.14, 3.14t), ' + FIX,
        ),
        (
            "released: 2024-07-24",
            "released: 2024-07-25",
            '  "2.4":',
            "2024-07-25",
            "torch 2.4 was released on 2024-07-24 (upload of 2.4.0 on PyPI), not 2024-07-25 \u2014 write released: 2024-07-24, "
            + FIX,
        ),
        (
            "patches: [2.3.0, 2.3.1]",
            "patches: [2.3.0, 2.3.1, 2.3.2]",
            '  "2.3":',
            "2.3.2",
            "torch 2.3.2 has no Linux x86_64 wheel on PyPI \u2014 remove it from patches (PyPI: 2.3.0, 2.3.1), " + FIX,
        ),
    ],
    ids=["python-3.8-for-2.5", "python-3.13t-for-2.12", "release-date", "unknown-patch"],
)
def test_a_planted_false_claim_fails_at_its_position(tmp_path, old, new, entry, needle, message):
    path, text = _planted(tmp_path, old, new)
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG)
    assert res.code == 2
    assert _torch_findings(res.err) == [f"{path}:{_position(text, entry, needle)}: {message}"]
    assert "1 error(s)" in res.out


def test_facts_the_file_lacks_are_warnings(tmp_path):
    path, text = _planted(tmp_path, PY212, PY212.replace(', "3.14t"]', "]").replace("2.12.0, 2.12.1", "2.12.0"))
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG)
    assert res.code == 0, res.err
    patches = text.splitlines().index("    patches: [2.12.0]") + 1
    assert _torch_findings(res.err) == [
        f"{path}:{patches + 1}:13: warning: torch 2.12.1 also has Linux x86_64 wheels for Python 3.14t, which its python list "
        f"leaves out \u2014 add '3.14t', {FIX}",
        f"{path}:{patches}:14: warning: torch 2.12.1 is on PyPI but not in the patches of torch 2.12 \u2014 add 2.12.1 "
        f"(cells install the newest listed patch), {FIX}",
    ]


def test_an_older_patch_without_a_wheel_the_newest_has_is_a_warning(tmp_path):
    recording = json.loads(RECORDED.read_text())
    recording["files"] = [
        f for f in recording["files"] if f["filename"] != "torch-2.9.0-cp314-cp314-manylinux_2_28_x86_64.whl"
    ]
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(recording))
    res = cli("validate", "--upstream", str(answer))
    assert res.code == 0, res.err
    where = _position(COMPAT, '  "2.9":', "2.9.0")
    assert _torch_findings(res.err) == [
        f"compat.yaml:{where}: warning: torch 2.9.0 has no Linux x86_64 wheel for Python 3.14 (2.9.1 has) \u2014 "
        "a release pinning torch 2.9.0 cannot run there; claim 2.9.1"
    ]


# release 0.3.0's claim on a torch 2.15 cell: gone with torch 2.15 (an exception for a torch no
# release claims is a warning of its own)
CLAIM_2_15 = '      - {torch: "==2.15.*", python: "==3.11", status: supported}\n'


def _without_2_15(text: str = COMPAT) -> str:
    """compat.yaml as if torch 2.15 did not exist yet (its entry gone, ranges end at 2.14)."""
    entry = '  "2.15":\n    released: 2026-10-28\n    patches: [2.15.0]\n    python: ["3.11", "3.12", "3.13", "3.14", "3.15", "3.14t", "3.15t"]\n'
    assert text.count(entry) == 1 and text.count("<2.16") >= 2  # the newest shim and every release
    assert text.count(CLAIM_2_15) == 1
    return text.replace(entry, "").replace("<2.16", "<2.15").replace(CLAIM_2_15, "")


def test_a_newer_torch_on_pypi_is_a_warning_at_the_torch_section(tmp_path):
    path = tmp_path / "compat.yaml"
    path.write_text(_without_2_15())
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG)
    assert res.code == 0, res.err
    line = _without_2_15().splitlines().index("torch:") + 1
    assert _torch_findings(res.err) == [
        f"{path}:{line}:1: warning: torch 2.15 is on PyPI (2.15.0, released 2026-10-28; Python 3.11, 3.12, 3.13, 3.14, 3.15, "
        f'3.14t, 3.15t) but this file does not describe it \u2014 add a "2.15" entry under torch: and decide which releases '
        f"support it, {FIX}"
    ]


def test_a_yanked_patch_is_an_error(tmp_path):
    recording = json.loads(RECORDED.read_text())
    for entry in recording["files"]:
        if entry["filename"].startswith("torch-2.3.1-"):
            entry["yanked"] = "broken wheels"
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(recording))
    res = cli("validate", "--upstream", str(answer))
    assert res.code == 2
    where = _position(COMPAT, '  "2.3":', "2.3.1")
    fix = f"or run `adapter-matrix validate --upstream {answer} --write`"
    assert _torch_findings(res.err) == [
        f"compat.yaml:{where}: torch 2.3.1 was yanked from PyPI \u2014 remove it from patches (PyPI: 2.3.0), {fix}"
    ]


def test_a_line_pypi_does_not_have_is_an_error(tmp_path):
    recording = json.loads(RECORDED.read_text())
    recording["files"] = [f for f in recording["files"] if not f["filename"].startswith("torch-2.1.")]
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps(recording))
    res = cli("validate", "--upstream", str(answer))
    assert res.code == 2
    line = COMPAT.splitlines().index('  "2.1":') + 1
    assert (
        f"compat.yaml:{line}:3: torch 2.1 has no Linux x86_64 wheel on PyPI \u2014 check the minor, or remove its entry"
        in res.err
    )


# -- --write ---------------------------------------------------------------------------------


def test_write_restores_the_facts_and_keeps_every_comment(tmp_path):
    damaged = _without_2_15()
    damaged = damaged.replace(
        '"3.9", "3.10", "3.11", "3.12", "3.13"]\n  "2.6"', '"3.9", "3.10", "3.12", "3.13"]\n  "2.6"'
    )
    damaged = damaged.replace("released: 2024-04-24", "released: 2024-04-01").replace(
        "[2.9.0, 2.9.1]", "[2.9.0, 2.9.7]"
    )
    damaged = damaged.replace('"3.13", "3.14", "3.13t", "3.14t"]\n  "2.11"', '"3.13", "3.13t"]\n  "2.11"')
    path = tmp_path / "compat.yaml"
    path.write_text(damaged)
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG, "--write")
    assert f"{path}: updated the torch facts" in res.out
    # Byte for byte the repository's file (every comment, blank line and quote), apart from
    # the ranges this test narrowed to hide torch 2.15.
    assert path.read_text() == COMPAT.replace("<2.16", "<2.15").replace(CLAIM_2_15, "")
    again = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG, "--write")
    assert again.code == 0 and _torch_findings(again.err) == []
    assert f"{path}: torch and companion facts already up to date" in again.out


def test_a_failed_write_leaves_the_file_whole(tmp_path, monkeypatch, index):
    path = tmp_path / "compat.yaml"
    path.write_text(_without_2_15())
    matrix = load_text(path.read_text(), str(path), check_modules=False).matrix

    def replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("adapter_matrix.files.os.replace", replace)
    with pytest.raises(OSError):
        upstream_write.write(str(path), matrix, index)
    assert path.read_text() == _without_2_15()
    assert [p.name for p in tmp_path.iterdir()] == ["compat.yaml"]  # no temporary file left behind


def test_write_leaves_an_up_to_date_file_untouched(tmp_path, index):
    path = tmp_path / "compat.yaml"
    path.write_text(COMPAT)
    before = path.stat().st_mtime_ns
    assert upstream_write.write(str(path), load_text(COMPAT, str(path), check_modules=False).matrix, index) is False
    assert path.stat().st_mtime_ns == before and path.read_text() == COMPAT


HEAD = "schema-version: 1\nadapter: {distribution: d, device: npu, shims: shims}\n"
TAIL = 'shims:\n  - {module: shims.torch_2_4, torch: ">=2.4,<2.5"}\nreleases:\n  - {version: 1.0.0, torch: ">=2.4,<2.5", python: ">=3.9", status: supported}\n'
PY26 = '["3.9", "3.10", "3.11", "3.12", "3.13"]'


def _rewrite(torch: str, index: up.Upstream) -> str:
    """The torch section after a rewrite against PyPI as it was before torch 2.7."""
    index = up.Upstream(index.source, tuple(p for p in index.patches if p.version < Version("2.7")), index.yanked)
    text = HEAD + torch + TAIL
    new = upstream_write.rewrite(text, load_text(text, "c.yaml", check_modules=False).matrix, index, "c.yaml")
    assert new.startswith(HEAD) and new.endswith(TAIL)
    return new[len(HEAD) : -len(TAIL)]


def test_write_edits_block_lists_item_by_item(index):
    torch = (
        "torch:\n"
        "  2.4:  # plain keys\n"
        "    released: '2024-07-24'\n"
        "    patches:\n"
        "      - 2.4.0  # first\n"
        "      - 2.4.9  # never existed\n"
        "    python:\n"
        '      - "3.7"\n'
        '      - "3.9"\n'
        '      - "3.12"\n'
        f'  "2.6": {{released: 2025-01-29, patches: [2.6.0], python: {PY26}}}\n'
    )
    assert _rewrite(torch, index) == (
        "torch:\n"
        "  2.4:  # plain keys\n"
        "    released: '2024-07-24'\n"
        "    patches:\n"
        "      - 2.4.0  # first\n"
        "      # never existed\n"
        "      - 2.4.1\n"
        "    python:\n"
        '      - "3.8"\n'
        '      - "3.9"\n'
        '      - "3.10"\n'
        '      - "3.11"\n'
        '      - "3.12"\n'
        "  2.5:\n"
        "    released: 2024-10-17\n"
        "    patches:\n"
        "      - 2.5.0\n"
        "      - 2.5.1\n"
        "    python:\n"
        + "".join(f'      - "3.{m}"\n' for m in range(9, 14))
        + f'  "2.6": {{released: 2025-01-29, patches: [2.6.0], python: {PY26}}}\n'
    )


def test_write_keeps_one_line_entries_on_one_line(index):
    torch = (
        "torch:\n"
        '  "2.4": {released: 2024-07-24, patches: [2.4.0], python: ["3.8", "3.9", "3.10", "3.11", "3.12"], install: pypi}\n'
        f'  "2.6": {{released: 2025-01-29, patches: [2.6.0], python: {PY26}}}\n'
    )
    assert _rewrite(torch, index) == (
        "torch:\n"
        '  "2.4": {released: 2024-07-24, patches: [2.4.0, 2.4.1], python: ["3.8", "3.9", "3.10", "3.11", "3.12"], install: pypi}\n'
        f'  "2.5": {{released: 2024-10-17, patches: [2.5.0, 2.5.1], python: {PY26}}}\n'
        f'  "2.6": {{released: 2025-01-29, patches: [2.6.0], python: {PY26}}}\n'
    )


def test_write_replaces_an_alias_and_fills_in_a_merged_key(index):
    torch = (
        "torch:\n"
        '  "2.4": &base\n'
        "    released: 2024-07-24\n"
        "    patches: [2.4.0, 2.4.1]\n"
        '    python: &old ["3.8", "3.9", "3.10", "3.11", "3.12"]\n'
        '  "2.5":\n'
        "    <<: *base\n"
        "    released: 2024-10-17\n"
        "    patches: [2.5.0, 2.5.1]\n"
        '  "2.6":\n'
        "    released: 2025-01-29\n"
        "    patches: [2.6.0]\n"
        "    python: *old  # same as 2.4?\n"
    )
    assert _rewrite(torch, index) == (
        torch.replace("patches: [2.5.0, 2.5.1]\n", f"patches: [2.5.0, 2.5.1]\n    python: {PY26}\n").replace(
            "*old", PY26
        )
    )


def test_write_refuses_to_change_an_anchor_other_sections_use(tmp_path, index):
    text = (
        HEAD
        + 'torch:\n  "2.4": {released: 2024-07-24, patches: [2.4.0, 2.4.1], python: &py ["3.8", "3.9", "3.10", "3.11"]}\n'
        + 'shims:\n  - {module: shims.torch_2_4, torch: ">=2.4,<2.5"}\n'
        + 'releases:\n  - {version: 1.0.0, torch: ">=2.4,<2.5", python: *py, status: supported}\n'
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    matrix = load_text(text, str(path), check_modules=False).matrix
    with pytest.raises(
        up.UpstreamError, match=r"would change 'releases' \(a shared YAML anchor\); edit the file by hand"
    ):
        upstream_write.write(str(path), matrix, index)
    assert path.read_text() == text


def test_cli_write_repairs_the_file_and_then_reports_it_valid(tmp_path):
    run_cli = cli
    broken = tmp_path / "compat.yaml"
    original = (REPO / "compat.yaml").read_text()
    broken.write_text(original.replace("patches: [2.4.0, 2.4.1]", "patches: [2.4.0]", 1))
    assert (
        run_cli("validate", "--matrix", str(broken), "--upstream", str(RECORDED)).code == 0
    )  # a missing patch only warns
    broken.write_text(
        original.replace(
            'python: ["3.9", "3.10", "3.11", "3.12", "3.13"]',
            'python: ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]',
            1,
        )
    )
    assert run_cli("validate", "--matrix", str(broken), "--upstream", str(RECORDED)).code == 2
    res = run_cli("validate", "--matrix", str(broken), "--upstream", str(RECORDED), "--write")
    assert res.code == 0, res.err
    assert "updated the torch facts" in res.out
    assert broken.read_text() == original
