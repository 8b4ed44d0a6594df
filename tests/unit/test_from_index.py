"""An adapter's published releases become its matrix, and validate checks them (issue 44).

tests/fixtures/pypi/2026-12-05 records PyPI's answer for torch-npu (67 versions, 512 wheels,
no PEP 658 metadata: each wheel's METADATA was read out of the wheel with range requests)
and torch's, as tests/fixtures/pypi/README.md says. Expectations about a release's torch
and Pythons are read from the recording here, independently of the importer: the wheel
tags and the `torch` Requires-Dist of each wheel.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Dict, Set, Tuple

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from adapter_matrix.matrix.loader import load
from adapter_matrix.matrix.model import PythonVersion, Value
from adapter_matrix.upstream import metadata as md
from adapter_matrix.upstream.from_index import import_text
from adapter_matrix.upstream.history import fetch_history, parse_history
from adapter_matrix.upstream.index import read_upstream

from .helpers import FIXTURES, cli

RECORDED = FIXTURES / "pypi" / "2026-12-05"
NPU_ANSWER = RECORDED / "torch-npu.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("npu") / "compat.yaml"
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(RECORDED), "-o", str(path))
    assert res.code == 0, res.err
    return path


def _index_facts() -> Dict[Tuple[Version, str], Tuple[Set[str], Set[str]]]:
    """Per (release, arch): the torch requirements its wheels declare and their CPython tags."""
    facts: Dict[Tuple[Version, str], Tuple[Set[str], Set[str]]] = {}
    for entry in json.loads(NPU_ANSWER.read_text())["files"]:
        _name, version, _build, tags = parse_wheel_filename(entry["filename"])
        if version.is_prerelease or entry.get("yanked"):
            continue
        arch = "aarch64" if entry["filename"].endswith("aarch64.whl") else "x86_64"
        torch, pythons = facts.setdefault((version, arch), (set(), set()))
        pythons.update(f"{t.interpreter[2]}.{t.interpreter[3:]}" for t in tags)
        for line in re.findall(r"^Requires-Dist: (.*)$", entry["metadata"], re.M):
            torch.add(str(Requirement(line).specifier))
    return facts


def test_the_imported_history_validates_and_holds_every_release_with_its_torch_and_pythons(imported):
    res = cli("validate", "--matrix", str(imported))
    assert res.code == 0, res.err
    matrix = load(str(imported)).matrix
    facts = _index_facts()
    assert {v for v, _arch in facts} == {r.version for r in matrix.releases}
    assert len({v for v, _arch in facts}) == 53  # 67 versions, 14 of them release candidates
    for (version, arch), (declared, pythons) in facts.items():
        (entry,) = [
            r
            for r in matrix.releases_of(version)
            if r.constraint("arch") is None or r.constraint("arch").contains(Value(arch))
        ]
        claimed = set()
        for line in matrix.torch:
            if any(entry.torch.contains(p) for p in line.patches):
                claimed |= {str(p) for p in line.python if entry.python.admits(p)}
        assert claimed == pythons, (version, arch)  # the Pythons of its wheels, each one a torch wheel too
        if declared:  # what pip enforces: the same specifier, the variant label included
            (spec,) = declared
            written = f"=={entry.pins[0]}+{entry.variant}" if entry.variant else str(entry.torch.specifier)
            assert SpecifierSet(written) == SpecifierSet(spec), (version, arch)


def test_real_pins_across_eras(imported):
    matrix = load(str(imported)).matrix

    def torch_of(version: str, arch: str) -> str:
        (rel,) = [r for r in matrix.releases_of(Version(version)) if r.constraint("arch") is None
                  or r.constraint("arch").contains(Value(arch))]  # fmt: skip
        return rel.torch.text + (f"+{rel.variant}" if rel.variant and "+" not in rel.torch.text else "")

    # as read from the wheels on 2026-12-05: x86_64 wheels pin torch's +cpu build until 2.11
    assert torch_of("2.1.0.post17", "x86_64") == "2.1.0+cpu" and torch_of("2.1.0.post17", "aarch64") == "2.1.0"
    assert torch_of("2.9.0.post9", "x86_64") == "2.9.0+cpu" and torch_of("2.9.0.post9", "aarch64") == "2.9.0"
    assert torch_of("2.12.0.post3", "x86_64") == "2.12.0"
    assert torch_of("2.14.0", "x86_64") == torch_of("2.14.0", "aarch64") == "==2.14.0.*"
    text = imported.read_text()
    # 2.1.0's wheels declare nothing: the file says where its torch came from
    assert re.search(
        r"version: 2\.1\.0,.*# its wheels declare no torch requirement: torch 2\.1\.0\+cpu as 2\.1\.0\.post3", text
    )
    assert "Left out: 14 pre-releases" in text and "2.10.0rc1" not in {str(r.version) for r in matrix.releases}


def test_the_platforms_are_a_dimension_and_post_releases_are_releases_of_their_line(imported):
    matrix = load(str(imported)).matrix
    arch = matrix.dimension("arch")
    assert arch is not None and {v.text for v in arch.values} == {"x86_64", "aarch64"}
    assert [d.kind for d in arch.detectors] == ["builtin"]  # a machine reads its own
    line = [r for r in matrix.releases if r.release_line == "2.9.0"]
    assert {str(r.version) for r in line} == {
        f"2.9.0{p}" for p in ("", ".post2", ".post4", ".post6", ".post8", ".post9")
    }
    # each build may be the one for a user's CANN: none is deprecated for being older (issue 61, item 2)
    assert {r.status.value for r in line} == {"supported"}
    assert not any(r.status.value == "deprecated" for r in matrix.releases)
    text = imported.read_text()
    assert "deprecated" not in text.replace("no build is deprecated for being older", "")
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    assert "The index does not know the driver toolkit (CANN) each build is for" in header


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_check_names_the_newest_post_release(imported, arch):
    res = cli(
        "check", "--json", "--matrix", str(imported), "--torch", "2.9.0", "--python", "3.10", "--set", f"arch={arch}"
    )
    (doc,) = json.loads(res.out)["checks"]
    first = doc["fixes"][0]
    assert first["cell"]["release"] == "2.9.0.post9"
    assert "pip install 'torch-npu==2.9.0.post9'" in " ".join(first["commands"])
    if arch == "x86_64":  # its wheels require torch's +cpu build, from PyTorch's CPU index
        assert first["commands"][0] == "pip install 'torch==2.9.0+cpu' --index-url https://download.pytorch.org/whl/cpu"
    # an older post-release works as it is: it may be the build for this machine's CANN
    older = json.loads(
        cli("check", "--json", "--matrix", str(imported), "--torch", "2.9.0+cpu" if arch == "x86_64" else "2.9.0",
            "--python", "3.10", "--adapter", "2.9.0.post2", "--set", f"arch={arch}").out
    )["checks"][0]  # fmt: skip
    assert older["verdict"] == "supported" and older["fixes"] == []


# torch_npu's published table (Ascend/pytorch COMPATIBILITY) for torch 2.9.0: the CANN of each build
CANN_OF_2_9_0 = {"2.9.0": "8.5.0", "2.9.0.post2": "9.0.0", "2.9.0.post6": "9.1.0"}


def _with_cann_map(imported: Path, tmp_path: Path) -> Path:
    """The import as its maintainer completes it for line 2.9.0: a cann dimension and each
    build's CANN (the builds the table does not name are left out here)."""
    out = []
    for line in imported.read_text().splitlines(keepends=True):
        found = re.match(r"      - \{version: (2\.9\.0(?:\.post\d+)?),", line)
        if found and found.group(1) not in CANN_OF_2_9_0:
            continue
        if found:
            line = line.replace("dimensions: {", f"dimensions: {{cann: {CANN_OF_2_9_0[found.group(1)]}, ")
        out.append(line)
        if line == "dimensions:\n":
            out.append("  cann: {description: Ascend CANN toolkit, values: [8.5.0, 9.0.0, 9.1.0]}\n")
    path = tmp_path / "compat.yaml"
    path.write_text("".join(out))
    return path


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("cann", sorted(set(CANN_OF_2_9_0.values())))
def test_with_the_cann_map_added_check_names_the_build_for_the_users_cann(imported, tmp_path, arch, cann):
    path = _with_cann_map(imported, tmp_path)
    assert cli("validate", "--matrix", str(path)).code == 0
    res = cli("check", "--json", "--matrix", str(path), "--torch", "2.9.0", "--python", "3.10",
              "--set", f"cann={cann}", "--set", f"arch={arch}")  # fmt: skip
    first = json.loads(res.out)["checks"][0]["fixes"][0]
    (build,) = [v for v, c in CANN_OF_2_9_0.items() if c == cann]
    assert first["cell"]["release"] == build and first["manual"] == []
    assert first["commands"][-1] == f"pip install 'torch-npu=={build}'"


def test_a_changed_torch_is_an_error_at_its_line_and_write_puts_the_fact_back(imported, tmp_path):
    original = imported.read_text()
    lines = original.splitlines(keepends=True)
    (number,) = [i for i, line in enumerate(lines) if "version: 2.9.0.post9," in line and "x86_64" in line]
    lines[number] = lines[number].replace("torch: 2.9.0+cpu", "torch: 2.10.0+cpu")
    path = tmp_path / "compat.yaml"
    path.write_text("".join(lines))
    res = cli("validate", "--matrix", str(path), "--upstream", str(RECORDED))
    assert res.code == 2
    assert re.search(
        rf"compat\.yaml:{number + 1}:\d+: torch-npu 2\.9\.0\.post9 requires torch 2\.9\.0\+cpu on linux/x86_64 "
        r"\(its wheels declare Requires-Dist: torch ==2\.9\.0\+cpu", res.err
    ), res.err  # fmt: skip
    res = cli("validate", "--matrix", str(path), "--upstream", str(RECORDED), "--write")
    assert res.code == 0, res.err
    assert path.read_text() == original  # only that value changed back; comments and layout kept


def test_validate_upstream_of_the_import_finds_no_error(imported):
    res = cli("validate", "--matrix", str(imported), "--upstream", str(RECORDED))
    assert res.code == 0, res.err
    # what the index cannot verify is said: 2.1.0 and 2.2.0 declare no torch requirement
    assert res.err.count("declares no torch requirement") == 4 and "error" not in res.err.lower()


def test_a_release_the_index_lacks_or_does_not_list_is_reported(imported, tmp_path):
    text = imported.read_text()
    text = text.replace("{version: 2.14.0,", "{version: 2.14.1,")  # not on the index
    text = re.sub(r"\n      - \{version: 2\.12\.0\.post2,[^\n]*", "", text)  # on the index, left out
    path = tmp_path / "compat.yaml"
    path.write_text(text)
    res = cli("validate", "--matrix", str(path), "--upstream", str(RECORDED))
    assert res.code == 2
    assert "torch-npu 2.14.1 is not on the index" in res.err
    assert re.search(r"warning: torch-npu 2\.12\.0\.post2 is on the index .* but this file does not list it", res.err)


def test_a_platform_without_a_wheel_is_an_error(imported, tmp_path):
    # 2.10.0.post6 has x86_64 wheels for 3.10 and 3.11 only, aarch64 for 3.10-3.12
    text = imported.read_text()
    text = re.sub(
        r'(\{version: 2\.10\.0\.post6, date: 2026-09-02, torch: 2\.10\.0\+cpu, python: )">=3\.10,<3\.12"',
        r'\1">=3.10,<3.13"', text
    )  # fmt: skip
    path = tmp_path / "compat.yaml"
    path.write_text(text)
    res = cli("validate", "--matrix", str(path), "--upstream", str(RECORDED))
    assert res.code == 2
    assert "torch-npu 2.10.0.post6 has no wheel for Python 3.12 on linux/x86_64" in res.err


def _document(files):
    return {"meta": {"api-version": "1.1"}, "name": "demo-npu", "files": files}


def _file(name: str, torch: str, yanked=False, day="2026-01-02T00:00:00Z"):
    return {
        "filename": name,
        "upload-time": day,
        "yanked": yanked,
        "metadata": f"Name: demo-npu\nVersion: x\nRequires-Dist: torch=={torch}\n",
    }


def test_a_yanked_release_is_broken_and_pre_releases_are_left_out():
    history = parse_history(
        _document(
            [
                _file("demo_npu-2.12.0-cp311-cp311-manylinux_2_28_x86_64.whl", "2.12.0"),
                _file("demo_npu-2.12.0.post1-cp311-cp311-manylinux_2_28_x86_64.whl", "2.12.0", yanked="broken ABI"),
                _file("demo_npu-2.13.0rc1-cp311-cp311-manylinux_2_28_x86_64.whl", "2.13.0"),
            ]
        ),
        "demo-npu",
        "demo.json",
    )
    text = import_text(history, read_upstream(str(RECORDED)), "npu", "demo.json", "2026-12-05")
    assert 'status: broken, reason: "yanked from the index: broken ABI"' in text
    assert "# Left out: 1 pre-releases (2.13.0rc1)" in text
    assert "\ndimensions:" not in text  # one platform: no dimension (the header names one to add)
    from adapter_matrix.matrix.loader import load_text

    matrix = load_text(text, "demo.yaml").matrix
    assert [(str(r.version), r.status.value) for r in matrix.releases] == [
        ("2.12.0", "supported"),  # a yanked post-release supersedes nothing
        ("2.12.0.post1", "broken"),
    ]


def test_init_from_index_writes_nothing_else_and_keeps_an_existing_file(tmp_path):
    out = tmp_path / "compat.yaml"
    out.write_text("mine\n")
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(RECORDED), "-o", str(out))
    assert res.code == 2 and "exists; give --force" in res.err and out.read_text() == "mine\n"
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(RECORDED), "-o", str(out), "--dry-run", "--force")
    assert res.code == 0 and "would write" in res.out and out.read_text() == "mine\n"
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(RECORDED), "-o", str(out), "--force")
    assert res.code == 0 and sorted(os.listdir(tmp_path)) == ["compat.yaml"]  # no noxfile, workflow ...
    res = cli("init", "--from-index", "torch-other", "--upstream", str(RECORDED), "-o", str(tmp_path / "x.yaml"))
    assert res.code == 2 and "holds no recorded answer for torch-other" in res.err
    res = cli("init", "--from-index", "intel-extension-for-pytorch", "--upstream", str(RECORDED), "-o", "x.yaml")
    assert res.code == 2 and "give --device NAME" in res.err


def test_fetching_reads_each_wheel_by_range_and_keeps_the_torch_facts_only(monkeypatch):
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("demo_npu-2.12.0.dist-info/METADATA",
                         "Metadata-Version: 2.1\nName: demo_npu\nVersion: 2.12.0\nRequires-Dist: torch ==2.12.0\n"
                         "Requires-Dist: numpy\nRequires-Dist: pyyaml\n\nA long description.\n")  # fmt: skip
        archive.writestr("demo_npu/_C.so", os.urandom(200_000))
        archive.writestr("demo_npu-2.12.0.dist-info/RECORD", "")
    wheel = buffer.getvalue()
    simple = _document(
        [{"filename": "demo_npu-2.12.0-cp311-cp311-manylinux_2_28_aarch64.whl", "url": "https://files.example/a.whl",
          "hashes": {"sha256": "0"}, "yanked": False},
         {"filename": "demo_npu-2.13.0rc1-cp311-cp311-manylinux_2_28_aarch64.whl", "url": "https://files.example/rc.whl",
          "yanked": False}]
    )  # fmt: skip
    requests = []

    def server(url, headers, timeout=0):
        requests.append((url, dict(headers)))
        if url == "https://pypi.org/simple/demo-npu/":
            return json.dumps(simple).encode(), {}
        assert url == "https://files.example/a.whl" and "Range" in headers  # never the whole wheel, never the rc
        first, last = re.match(r"bytes=(\d*)-(\d*)", headers["Range"]).groups()
        start = len(wheel) - int(last) if not first else int(first)
        end = len(wheel) - 1 if not first else min(int(last), len(wheel) - 1)
        return wheel[start : end + 1], {"content-range": f"bytes {start}-{end}/{len(wheel)}"}

    monkeypatch.setattr(md, "http_get", server)
    document = fetch_history("demo-npu")
    (read,) = [f for f in document["files"] if "metadata" in f]
    assert read["metadata"] == "Name: demo_npu\nVersion: 2.12.0\nRequires-Dist: torch ==2.12.0\n"
    assert all("url" not in f and "hashes" not in f for f in document["files"])
    history = parse_history(document, "demo-npu", "x")
    assert [str(b.platform) for b in history.releases[0].builds] == ["linux/aarch64"]
    assert history.releases[0].builds[0].python == {PythonVersion.parse("3.11")}


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("ADAPTER_MATRIX_LIVE_INDEX"), reason="live PyPI: set ADAPTER_MATRIX_LIVE_INDEX=1"
)
def test_live_import_of_torch_npu_validates_against_pypi(tmp_path):
    path = tmp_path / "compat.yaml"
    start = time.perf_counter()
    res = cli("init", "--from-index", "torch-npu", "--upstream", "pypi", "-o", str(path))
    seconds = time.perf_counter() - start
    assert res.code == 0, res.err
    res = cli("validate", "--matrix", str(path), "--upstream", "pypi")
    assert res.code == 0, res.err
    print(f"live import: {seconds:.1f} s")  # the target (< 120 s) is measured by benchmarks/index_import.py


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_history_view_groups_post_releases_per_torch_line(imported, lang):
    doc = json.loads(
        cli("table", "--matrix", str(imported), "--view", "history", "--format", "json", "--lang", lang).out
    )
    facts = doc["history"]
    nine = [f for f in facts if f["torch_line"] == "2.9"]
    # torch 2.9 has two releases: 2.9.1, and 2.9.0 with its five post-releases in one row
    assert [(f["release"], f["newest"]) for f in nine] == [("2.9.1", "2.9.1"), ("2.9.0", "2.9.0.post9")]
    assert nine[1]["earlier"] == ["2.9.0.post8", "2.9.0.post6", "2.9.0.post4", "2.9.0.post2", "2.9.0"]
    assert nine[1]["torch"] == {"aarch64": "2.9.0", "x86_64": "2.9.0+cpu"}
    assert [f["torch_line"] for f in facts] == sorted((f["torch_line"] for f in facts), key=Version, reverse=True)
    assert len(facts) == 15  # one row per release, not per build (53 releases, 101 entries)
    headers = [c["label"] for c in doc["columns"]]
    assert headers[2] == {"en": "newest build", "zh": "最新构建"}[lang]
    markdown = cli("table", "--matrix", str(imported), "--view", "history", "--lang", lang).out
    row = next(line for line in markdown.splitlines() if "2.9.0.post9" in line)
    assert {"en": "supported", "zh": "支持"}[lang] in row and "3.10–3.14" in row


def test_the_published_table_is_checked_against_the_wheels():
    # tests/fixtures/matrices/torch_npu.yaml encodes Ascend's COMPATIBILITY table: the wheels disagree
    res = cli("validate", "--matrix", str(FIXTURES / "matrices" / "torch_npu.yaml"), "--upstream", str(RECORDED))
    assert res.code == 2
    errors = [line for line in res.err.splitlines() if ": warning: " not in line]
    # the table says 3.10-3.13 for torch-npu 2.9.0; its wheels have cp310-cp312
    assert any("torch-npu 2.9.0 has no wheel for Python 3.13" in line for line in errors)
    # the fixture pairs x86_64 with torch's +cpu build (the README's recipe), as the wheels do, but
    # for 2.12.0, whose x86_64 wheels require plain torch==2.12.0 (which the +cpu build satisfies)
    torch_errors = [line for line in errors if " requires torch " in line]
    assert len(torch_errors) == 1 and (
        "torch-npu 2.12.0 requires torch 2.12.0 on linux/x86_64" in torch_errors[0]
        and "not torch 2.12.0+cpu" in torch_errors[0]
    ), torch_errors
    assert any("torch-npu 2.1.0.post4 is not on the index" in line for line in errors)
    assert "warning: torch-npu 2.9.0.post9 is on the index" in res.err  # newer than the table


# -- imports from any index (issue 61, item 5) -----------------------------------------------

IPEX_PYPI = FIXTURES / "pypi" / "2026-12-06"  # PyPI's answer for IPEX: 19 of its 22 releases wholly yanked
INTEL_XPU = FIXTURES / "pypi" / "intel-xpu"  # a PEP 503 page of Intel's XPU index (built by the spec)
IPEX = "intel-extension-for-pytorch"


def _init_options() -> Set[str]:
    """Every option `init` takes, as its command line spells them."""
    import typer

    from adapter_matrix.cli import app

    command = typer.main.get_command(app).commands["init"]  # type: ignore[attr-defined]
    return {flag for param in command.params for flag in param.opts if flag.startswith("--")}


def _named_options(message: str) -> Set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", message))


def test_ipex_imports_from_pypi_with_its_wholly_yanked_releases(tmp_path):
    out = tmp_path / "compat.yaml"
    res = cli("init", "--from-index", IPEX, "--device", "xpu", "--upstream", str(IPEX_PYPI), "-o", str(out))
    assert res.code == 0, res.err
    assert "3 releases of intel-extension-for-pytorch" in res.out and "19 yanked releases left out" in res.out
    text = out.read_text()
    matrix = load(str(out)).matrix
    # the three releases still on the index, each for the torch of its version (their wheels declare none)
    assert sorted((str(r.version), r.torch.text, r.status.value) for r in matrix.releases) == [
        ("2.6.0", "2.6.0", "supported"),
        ("2.7.0", "2.7.0", "supported"),
        ("2.8.0", "2.8.0", "supported"),
    ]
    # the yanked ones require torch 1.10 to 2.5, older than any release still on it: named with why, not written
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    assert "# Left out: 19 releases yanked from the index (1.10.100, 1.11.0, 1.11.100 ... 2.4.0, 2.5.0;" in header
    assert "'for security.'" in header and "'functional issues'" in header
    assert [m.minor for m in matrix.torch][0] == Version("2.6")  # no torch line for a yanked release
    res = cli("validate", "--matrix", str(out), "--upstream", str(IPEX_PYPI))
    assert res.code == 0, res.err


def test_a_yanked_release_whose_metadata_was_not_recorded_is_kept_or_left_out_never_a_crash(tmp_path):
    # recordings made before yanked wheels' metadata was read hold none for them
    document = json.loads((IPEX_PYPI / f"{IPEX}.json").read_text())
    for entry in document["files"]:
        if entry.get("yanked"):
            entry.pop("metadata")
    # one yanked build of a live release line: it is kept, broken, and says its metadata is unknown
    live = next(f for f in document["files"] if "-2.8.0-" in f["filename"])
    document["files"].append(
        {**live, "filename": live["filename"].replace("-2.8.0-", "-2.8.0.post1-"), "yanked": "bad build"}
    )
    document["files"][-1].pop("metadata")
    folder = tmp_path / "recorded"
    folder.mkdir()
    (folder / f"{IPEX}.json").write_text(json.dumps(document))
    (folder / "torch.json").write_bytes((IPEX_PYPI / "torch.json").read_bytes())
    out = tmp_path / "compat.yaml"
    res = cli("init", "--from-index", IPEX, "--device", "xpu", "--upstream", str(folder), "-o", str(out))
    assert res.code == 0, res.err
    text = out.read_text()
    assert re.search(
        r'version: 2\.8\.0\.post1,.*status: broken, reason: "yanked from the index: bad build"\}'
        r" # its metadata was not recorded: torch 2\.8\.0 as 2\.8\.0 of its line declares|"
        r'version: 2\.8\.0\.post1,.*status: broken, reason: "yanked from the index: bad build"\}'
        r" # its metadata was not recorded: torch 2\.8\.0 by its version",
        text,
    ), text
    assert "# Left out: 19 releases yanked" in text
    # a live wheel without its metadata is an incomplete recording: an error naming a way to record that exists
    live.pop("metadata")
    (folder / f"{IPEX}.json").write_text(json.dumps(document))
    res = cli("init", "--from-index", IPEX, "--device", "xpu", "--upstream", str(folder), "-o", str(out), "--force")
    assert res.code == 2 and "carries no metadata" in res.err and "Traceback" not in res.err
    assert "--record DIR" in res.err and _named_options(res.err) <= _init_options(), res.err


def test_from_index_errors_name_only_options_that_exist(tmp_path):
    messages = []
    for args in (
        ("--upstream", str(IPEX_PYPI / "torch.json")),  # a file: not a folder, nor an index
        ("--upstream", str(tmp_path)),  # a folder without the adapter's answer
        ("--upstream", str(IPEX_PYPI), "--record", str(tmp_path / "r")),  # --record needs an index to read
    ):
        res = cli("init", "--from-index", IPEX, "--device", "xpu", *args, "-o", str(tmp_path / "x.yaml"))
        assert res.code == 2 and "Traceback" not in res.err, args
        messages.append(res.err)
    res = cli("init", "--from-index", IPEX, "--upstream", str(IPEX_PYPI), "-o", str(tmp_path / "x.yaml"))
    messages.append(res.err)  # no --device, and the name says none
    res = cli("init", "--distribution", "x", "--device", "npu", "--record", str(tmp_path / "r"))
    messages.append(res.err)  # --record without --from-index
    for message in messages:
        assert message and _named_options(message) <= _init_options(), message


_PAGE = """<!DOCTYPE html>
<html><head><meta name="pypi:repository-version" content="1.1"><title>Links for demo-npu</title></head>
<body>
<h1>Links for demo-npu</h1>
<a href="../../files/demo_npu-2.12.0-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=ab12"
   data-requires-python="&gt;=3.10" data-core-metadata="sha256=cd34">demo_npu-2.12.0-cp311-cp311-manylinux_2_28_x86_64.whl</a><br/>
<a href="https://files.example/demo_npu-2.12.0.post1-cp311-cp311-manylinux_2_28_x86_64.whl"
   data-yanked="broken ABI" data-dist-info-metadata="true">demo_npu-2.12.0.post1-cp311-cp311-manylinux_2_28_x86_64.whl</a>
<a href="demo_npu-2.12.0.post2-cp311-cp311-win_amd64.whl" data-yanked="">demo_npu-2.12.0.post2-cp311-cp311-win_amd64.whl</a>
</body></html>
"""


def test_a_pep_503_page_reads_as_the_pep_691_answer_it_stands_for():
    from adapter_matrix.upstream.simple_html import parse_page, render_page

    document = parse_page(_PAGE, "demo-npu", "https://index.example/simple/demo-npu/")
    assert document["meta"] == {"api-version": "1.1"} and document["name"] == "demo-npu"
    first, post, windows = document["files"]
    assert first == {
        "filename": "demo_npu-2.12.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        "url": "https://index.example/files/demo_npu-2.12.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        "hashes": {"sha256": "ab12"},
        "requires-python": ">=3.10",  # unescaped
        "yanked": False,
        "core-metadata": {"sha256": "cd34"},
    }
    assert post["yanked"] == "broken ABI" and post["core-metadata"] is True  # PEP 714's older attribute
    assert (
        windows["yanked"] is True
        and windows["url"] == "https://index.example/simple/demo-npu/demo_npu-2.12.0.post2-cp311-cp311-win_amd64.whl"
    )
    # what a recording of an HTML index keeps reads back to the same answer (links aside: no file is kept)
    again = parse_page(render_page(document), "demo-npu", "https://index.example/simple/demo-npu/")
    keys = ("filename", "requires-python", "yanked", "core-metadata")
    assert [{k: f.get(k) for k in keys} for f in again["files"]] == [
        {k: f.get(k) for k in keys} for f in document["files"]
    ]
    from adapter_matrix.upstream.index import UpstreamError

    with pytest.raises(UpstreamError, match=r"repository version 2\.0"):
        parse_page(_PAGE.replace('content="1.1"', 'content="2.0"'), "demo-npu", "https://index.example/")


def test_ipex_imports_from_a_recorded_pep_503_index(tmp_path):
    out = tmp_path / "compat.yaml"
    res = cli("init", "--from-index", IPEX, "--device", "xpu", "--upstream", str(INTEL_XPU), "-o", str(out))
    assert res.code == 0, res.err
    text = out.read_text()
    assert "from intel-xpu/intel-extension-for-pytorch/index.html" in text and "PEP 503 page" in text
    matrix = load(str(out)).matrix
    assert sorted(str(r.version) for r in matrix.releases) == ["2.6.10+xpu", "2.7.10+xpu", "2.8.10+xpu"]
    assert {v.text for v in matrix.dimension("os").values} == {"linux", "windows"}  # linux_x86_64, win_amd64
    # their wheels declare no torch: the torch line of their version, said so
    (newest,) = matrix.releases_of(Version("2.8.10+xpu"))
    assert newest.torch.text == "==2.8.*" and "by its version (torch 2.8)" in text
    assert all(r.date is None for r in matrix.releases)  # a PEP 503 page has no upload times
    assert 'python: ">=3.10,<3.12"' in text  # cp310 and cp311 wheels
    res = cli("validate", "--matrix", str(out), "--upstream", str(INTEL_XPU))  # validate reads the page too
    assert res.code == 0, res.err


def test_init_from_index_reads_an_html_index_live_and_records_it_as_it_answered(monkeypatch, tmp_path):
    from adapter_matrix.upstream import index as up

    page = _PAGE.replace("https://files.example/", "https://index.example/files/")
    served = {}  # url -> (body, content type)
    served["https://index.example/simple/demo-npu/"] = (page.encode(), "text/html; charset=utf-8")
    for version, torch in (("2.12.0", "2.12.0"), ("2.12.0.post1", "2.12.0"), ("2.12.0.post2", "2.12.0")):
        metadata = f"Metadata-Version: 2.1\nName: demo_npu\nVersion: {version}\nRequires-Dist: torch=={torch}\nRequires-Dist: numpy\n"
        for filename in re.findall(rf">(demo_npu-{re.escape(version)}-[^<]+)<", page):
            url = (
                "https://index.example/simple/demo-npu/" + filename
                if "win" in filename
                else "https://index.example/files/" + filename
            )
            served[url + ".metadata"] = (metadata.encode(), "text/plain")
    asked = []

    def server(url, headers, timeout=0):
        asked.append((url, headers.get("Accept") or headers.get("Range")))
        if url not in served:
            raise md.MetadataError(f"{url}: HTTP 404 Not Found", 404)
        body, kind = served[url]
        return body, {"content-type": kind}

    monkeypatch.setattr(md, "http_get", server)
    monkeypatch.setattr(up, "_fetch", lambda url, timeout: (IPEX_PYPI / "torch.json").read_bytes())
    record, out = tmp_path / "recorded", tmp_path / "compat.yaml"
    res = cli(
        "init", "--from-index", "demo-npu", "--device", "npu",
        "--upstream", "https://index.example/simple", "--record", str(record), "-o", str(out),
    )  # fmt: skip
    assert res.code == 0, res.err
    # PEP 691's negotiation: JSON preferred, the HTML forms accepted; PEP 658 metadata where announced,
    # else a range of the wheel (the yanked Windows wheel's is gone: recorded without it, no error)
    assert asked[0][0] == "https://index.example/simple/demo-npu/" and "text/html" in asked[0][1]
    assert sorted(asked[1:]) == [
        ("https://index.example/files/demo_npu-2.12.0-cp311-cp311-manylinux_2_28_x86_64.whl.metadata", None),
        ("https://index.example/files/demo_npu-2.12.0.post1-cp311-cp311-manylinux_2_28_x86_64.whl.metadata", None),
        ("https://index.example/simple/demo-npu/demo_npu-2.12.0.post2-cp311-cp311-win_amd64.whl", "bytes=-65536"),
    ]
    # recorded as the index answered: the page, and each wheel's metadata facts beside it
    assert sorted(os.listdir(record)) == ["demo-npu", "torch.json"]
    kept = sorted(os.listdir(record / "demo-npu"))
    assert kept == [
        "demo_npu-2.12.0-cp311-cp311-manylinux_2_28_x86_64.whl.metadata",
        "demo_npu-2.12.0.post1-cp311-cp311-manylinux_2_28_x86_64.whl.metadata",
        "index.html",
    ]
    assert (
        record / "demo-npu" / kept[0]
    ).read_text() == "Name: demo_npu\nVersion: 2.12.0\nRequires-Dist: torch==2.12.0\n"
    matrix = load(str(out)).matrix
    assert sorted((str(r.version), r.status.value) for r in matrix.releases) == [
        ("2.12.0", "supported"),
        ("2.12.0.post1", "broken"),  # data-yanked="broken ABI"
        ("2.12.0.post2", "broken"),  # data-yanked="": yanked without a reason
    ]
    text = out.read_text()
    assert 'reason: "yanked from the index: broken ABI"' in text
    assert re.search(
        r"version: 2\.12\.0\.post2,.*dimensions: \{os: windows\}.*# its metadata was not recorded", text
    ), text
    # the recording imports to the same file, offline
    again = tmp_path / "again.yaml"
    res = cli("init", "--from-index", "demo-npu", "--device", "npu", "--upstream", str(record), "-o", str(again))
    assert res.code == 0, res.err
    body = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert body == [line for line in again.read_text().splitlines() if not line.startswith("#")]
