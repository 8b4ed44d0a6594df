"""Every published command resolves (`table --resolve`): pip's resolver in --dry-run against
a recorded index, offline. A recorded index is generated here from recorded answers (the
PEP 691 JSON of tests/fixtures/pypi/), with one answer changed per test: a yanked pin, a
companion that pulls another torch."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from adapter_matrix.matrix.loader import load_text
from adapter_matrix.tables.resolve import PipPlatform, build_index, check_commands, published, resolve
from adapter_matrix.tables.views.selector import selector

from .helpers import FIXTURES, REPO, cli

pytestmark = pytest.mark.slow  # starts pip a few times
TODAY = _dt.date(2026, 12, 1)
RECORDED = FIXTURES / "pypi" / "2026-12-01"

# A small matrix: two torch lines, one release, two Pythons each (few pip runs).
MATRIX = """\
schema-version: 2
adapter: {distribution: tiny-adapter, device: npu}
torch:
  "2.5": {released: 2024-10-17, patches: [2.5.0, 2.5.1], python: ["3.11", "3.12"]}
  "2.6": {released: 2025-01-29, patches: [2.6.0], python: ["3.11", "3.12"]}
releases:
  - version: 1.0.0
    date: 2026-11-01
    torch: ">=2.5,<2.7"
    python: ">=3.11,<3.13"
    status: supported
"""


def _answer(name: str, versions: Dict[str, List[str]], yanked: str = "") -> Dict[str, Any]:
    """A recorded answer for a pure-Python project: version -> its Requires-Dist."""
    files = []
    for version, requires in versions.items():
        metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
        files.append(
            {
                "filename": f"{name.replace('-', '_')}-{version}-py3-none-any.whl",
                "requires-python": ">=3.8",
                "yanked": "a broken build" if version == yanked else False,
                "metadata": metadata,
            }
        )
    return {"meta": {"api-version": "1.1"}, "name": name, "versions": list(versions), "files": files}


def _record(tmp: Path, adapter: Dict[str, Any], torch_yanked: str = "") -> List[str]:
    """Folders of recorded answers: torch's (PyPI's, recorded) and the adapter's."""
    folder = tmp / "recorded"
    folder.mkdir()
    torch = json.loads((RECORDED / "torch.json").read_text())
    for entry in torch["files"]:
        if torch_yanked and entry["filename"].startswith(f"torch-{torch_yanked}-"):
            entry["yanked"] = "withdrawn"
    (folder / "torch.json").write_text(json.dumps(torch))
    shutil.copy(RECORDED / "torchvision.json", folder / "torchvision.json")
    (folder / "tiny-adapter.json").write_text(json.dumps(adapter))
    return [str(folder)]


def _combinations(text: str = MATRIX) -> List[Dict[str, Any]]:
    matrix = load_text(text, "compat.yaml", check_modules=False).matrix
    return selector(matrix, today=TODAY).data["combinations"]


def _check(tmp: Path, adapter: Dict[str, Any], torch_yanked: str = ""):
    url = build_index(_record(tmp, adapter, torch_yanked), str(tmp / "index"))
    return check_commands(_combinations(), url)


def test_every_command_resolves_against_a_sound_index(tmp_path):
    runs, problems, unreachable = _check(tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}))
    assert unreachable == []
    assert runs == 4  # two commands, each for its oldest and newest Python
    assert problems == []


def test_a_yanked_adapter_pin_fails_and_is_named(tmp_path):
    runs, problems, _unreachable = _check(
        tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}, yanked="1.0.0")
    )
    assert runs == 4 and len(problems) == 4
    assert {p.reason for p in problems} == {"pins a yanked release: tiny-adapter==1.0.0"}
    assert {p.command for p in problems} == {
        "pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'",
        "pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'",
    }


def test_a_yanked_torch_fails_the_commands_of_its_line(tmp_path):
    """torch 2.6.0 withdrawn: a range skips a yanked file, and no other 2.6 patch exists."""
    _runs, problems, _unreachable = _check(
        tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}), torch_yanked="2.6.0"
    )
    assert {p.command for p in problems} == {"pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'"}
    assert all(p.reason.startswith("does not resolve: Could not find a version that satisfies") for p in problems)


def test_a_companion_that_pulls_another_torch_is_named(tmp_path):
    """The adapter needs torchvision 0.20.0, built for torch 2.5.0: its torch 2.5 command
    installs 2.5.0, not the 2.5.1 the combination claims; its 2.6 command cannot resolve."""
    adapter = _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)", "torchvision (==0.20.0)"]})
    _runs, problems, _unreachable = _check(tmp_path, adapter)
    reasons = {(p.command, p.reason) for p in problems}
    assert (
        "pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'",
        "installs torch 2.5.0, not the torch 2.5.1 it claims",
    ) in reasons
    assert any(c.endswith("'torch>=2.6,<2.7'") and r.startswith("does not resolve") for c, r in reasons)


def test_published_resolves_each_command_for_its_oldest_and_newest_python():
    runs = published(_combinations())
    assert {r.platform for r in runs} == {PipPlatform("linux", "x86_64")}  # a matrix that names no platform
    assert sorted((r.commands[-1], r.python) for r in runs) == [
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'", "3.11"),
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6'", "3.12"),
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'", "3.11"),
        ("pip install 'tiny-adapter==1.0.0' 'torch>=2.6,<2.7'", "3.12"),
    ]


def test_the_cli_fails_on_a_yanked_pin_and_names_it(tmp_path):
    folders = _record(tmp_path, _answer("tiny-adapter", {"1.0.0": ["torch (>=2.5)"]}, yanked="1.0.0"))
    matrix = tmp_path / "compat.yaml"
    matrix.write_text(MATRIX)
    res = cli("table", "--matrix", str(matrix), "--resolve", "--recorded", folders[0], "--today", "2026-12-01")
    assert res.code == 1
    assert (
        "not installable: pip install 'tiny-adapter==1.0.0' 'torch>=2.5,<2.6' (Python 3.11, linux x86_64): "
        "pins a yanked release: tiny-adapter==1.0.0" in res.err
    )
    assert "4 resolutions of 2 published commands" in res.out and "4 problem(s)" in res.out


def test_this_repositorys_newest_commands_resolve_against_the_recorded_index():
    """What .ci/run checks for every release, here for the newest."""
    res = cli(
        "table", "--resolve", "--release", "0.2.1", "--today", "2026-12-05",
        "--recorded", str(RECORDED), "--recorded", str(REPO / "tests" / "fixtures" / "index"),
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "30 resolutions of 15 published commands" in res.out and ": 0 problem(s)" in res.out


# -- each command for its own platform (issue 61, item 3) ----------------------------------------

NPU_RECORDED = FIXTURES / "pypi" / "2026-12-05"


def _platform_answers(folder: Path) -> None:
    """A tiny torch_npu: its aarch64 wheel needs PyPI's torch 2.11.0, its x86_64 wheel the CPU
    build (torch==2.11.0+cpu); torch 2.11.0 has wheels for both, cp39 on aarch64 only."""
    folder.mkdir()
    tiny = []
    for arch, torch in (("aarch64", "2.11.0"), ("x86_64", "2.11.0+cpu")):
        metadata = f"Metadata-Version: 2.1\nName: tiny-npu\nVersion: 1.0\nRequires-Dist: torch=={torch}\n"
        tiny.append(
            {"filename": f"tiny_npu-1.0-py3-none-manylinux_2_28_{arch}.whl", "yanked": False, "metadata": metadata}
        )
    torch_files = [
        {"filename": f"torch-2.11.0-cp3{minor}-cp3{minor}-manylinux_2_28_{arch}.whl", "yanked": False}
        for arch in ("aarch64", "x86_64")
        for minor in ((9, 11) if arch == "aarch64" else (11,))
    ]
    for name, files in (("tiny-npu", tiny), ("torch", torch_files)):
        doc = {"meta": {"api-version": "1.1"}, "name": name, "files": files}
        (folder / f"{name}.json").write_text(json.dumps(doc))


@pytest.fixture
def served(tmp_path):
    """The tiny index served over HTTP from a temporary folder, as an index is (PEP 503)."""
    import functools
    import http.server
    import threading

    _platform_answers(tmp_path / "recorded")
    build_index([str(tmp_path / "recorded")], str(tmp_path / "index"))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # the test's output is pytest's
            pass

    handler = functools.partial(Quiet, directory=str(tmp_path / "index"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


def _entry(commands: List[str], python: str, arch: str, torch: str = "2.11.0") -> Dict[str, Any]:
    return {"commands": commands, "python": python, "torch": torch, "dimensions": {"arch": arch}}


def test_a_command_is_resolved_for_its_own_architecture(served):
    """The aarch64 command resolves on aarch64 and conflicts on x86_64 (the x86_64 wheel wants
    the +cpu build): resolved for its own platform it is no problem."""
    command = f"pip install 'tiny-npu==1.0' 'torch==2.11.0' --index-url {served}"
    assert "install" in resolve([command], "3.11", platform=PipPlatform("linux", "aarch64"))
    on_x86 = resolve([command], "3.11", platform=PipPlatform("linux", "x86_64"))
    assert "torch==2.11.0+cpu" in on_x86["error"] or "conflict" in on_x86["error"].lower(), on_x86
    found = check_commands([_entry([command], "3.11", "aarch64")])
    assert found == (1, [], [])


def test_a_command_is_resolved_for_its_own_python(served):
    """torch 2.11.0 has a cp39 wheel on aarch64 only: Python 3.9 resolves there, not on x86_64."""
    command = f"pip install 'torch==2.11.0' --index-url {served}"
    found = check_commands([_entry([command], "3.9", "aarch64"), _entry([command], "3.9", "x86_64")])
    assert found.runs == 2 and found.unreachable == []
    assert [(p.platform, p.python) for p in found.problems] == [(PipPlatform("linux", "x86_64"), "3.9")]
    assert found.problems[0].reason.startswith("does not resolve")


def test_an_index_that_does_not_answer_is_not_a_problem(served):
    """A connection refused (a port nobody listens on) is said apart: not checked, not a problem."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    entries = [
        _entry([f"pip install 'torch==2.11.0+cpu' --index-url http://127.0.0.1:{closed}/whl/cpu"], "3.11", "x86_64"),
        _entry([f"pip install 'torch==2.11.0' --index-url {served}"], "3.11", "aarch64"),
        _entry([f"pip install 'torch==2.12.0' --index-url {served}"], "3.11", "aarch64", torch="2.12.0"),
    ]
    found = check_commands(entries)
    assert found.runs == 3
    assert [u.platform.arch for u in found.unreachable] == ["x86_64"]
    assert found.unreachable[0].reason.startswith(f"index unreachable: http://127.0.0.1:{closed}/whl/cpu/")
    assert [p.command for p in found.problems] == [entries[2]["commands"][0]]  # a real problem stays one


def _imported_torch_npu(tmp: Path) -> Path:
    path = tmp / "compat.yaml"
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(NPU_RECORDED), "-o", str(path))
    assert res.code == 0, res.err
    return path


def test_torch_npus_imported_history_on_the_record_has_no_problem_for_aarch64(tmp_path):
    """Acceptance (issue 61): torch-npu 2.11.0.post3 with PyPI's torch==2.11.0 is right on
    aarch64; its x86_64 command needs PyTorch's CPU index, which the record does not hold."""
    matrix = _imported_torch_npu(tmp_path)
    res = cli(
        "table", "--matrix", str(matrix), "--resolve", "--release", "2.11.0.post3", "--today", "2026-12-05",
        "--recorded", str(NPU_RECORDED),
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "4 resolutions of 2 published commands" in res.out
    assert ": 0 problem(s), 2 not checked (an index unreachable)" in res.out
    assert "not installable" not in res.err
    skipped = [line for line in res.err.splitlines() if line.startswith("not checked:")]
    assert len(skipped) == 2 and all("linux x86_64" in line and "whl/cpu" in line for line in skipped)


def test_the_aarch64_command_of_torch_npu_conflicts_on_x86_64(tmp_path):
    """What the acceptance would report if the command were resolved on the wrong machine."""
    url = build_index([str(NPU_RECORDED)], str(tmp_path / "index"))
    command = ["pip install 'torch-npu==2.11.0.post3' 'torch==2.11.0'"]
    assert "install" in resolve(command, "3.11", url, platform=PipPlatform("linux", "aarch64"))
    assert "error" in resolve(command, "3.11", url, platform=PipPlatform("linux", "x86_64"))


def test_platform_tags_follow_the_os_and_arch():
    assert PipPlatform.of({}) == PipPlatform("linux", "x86_64")
    assert PipPlatform.of({"arch": "aarch64"}).tags()[-1] == "linux_aarch64"
    assert "manylinux_2_28_aarch64" in PipPlatform("linux", "aarch64").tags()
    assert PipPlatform.of({"os": "windows"}).tags() == ["win_amd64"]
    assert "macosx_11_0_arm64" in PipPlatform("macos", "aarch64").tags()


# -- a layer's stack table: each row's commands, each for its own platform ---------------------


def _stack_record(tmp: Path, vllm_ascend_requires: List[str]) -> Tuple[List[str], Path]:
    """A record of "PyPI" holding vllm-ascend 0.23.0's stack (PyPI's plain torch), a local "CPU
    index" holding torch 2.10.0+cpu, and torch_npu's matrix with its CPU source pointed there."""
    pypi = tmp / "pypi"
    pypi.mkdir()
    answers = {
        "torch": {"2.10.0": []},
        "torch-npu": {"2.10.0": ["torch==2.10.0"], "2.10.0.post4": ["torch==2.10.0"]},
        "vllm": {"0.23.0": ["torch==2.10.0"]},
        "triton-ascend": {"3.2.2": []},
        "vllm-ascend": {"0.23.0": vllm_ascend_requires},
    }
    for name, versions in answers.items():
        (pypi / f"{name}.json").write_text(json.dumps(_answer(name, versions)))
    cpu_record = tmp / "cpu-record"
    cpu_record.mkdir()
    (cpu_record / "torch.json").write_text(json.dumps(_answer("torch", {"2.10.0+cpu": []})))
    cpu = build_index([str(cpu_record)], str(tmp / "cpu"))
    adapter = tmp / "torch_npu.yaml"
    text = (FIXTURES / "matrices" / "torch_npu.yaml").read_text(encoding="utf-8")
    adapter.write_text(text.replace("https://download.pytorch.org/whl/cpu", cpu), encoding="utf-8")
    return [str(pypi)], adapter


def _resolve_stack(tmp: Path, recorded: List[str], adapter: Path):
    layer = FIXTURES / "stacks" / "vllm-ascend.yaml"
    return cli(
        "table", "--matrix", str(layer), "--adapter-matrix", str(adapter), "--release", "0.23.0",
        "--today", "2026-12-06", "--resolve", "--recorded", recorded[0], cwd=tmp,
    )  # fmt: skip


def test_table_resolve_resolves_each_stack_command_for_its_own_platform(tmp_path):
    recorded, adapter = _stack_record(tmp_path, ["vllm==0.23.0", "torch-npu==2.10.0.post4"])
    proc = _resolve_stack(tmp_path, recorded, adapter)
    assert proc.code == 0, proc.err
    # aarch64: PyPI's torch from the record; x86_64: torch 2.10.0+cpu from the CPU index, the rest from the record
    assert "2 resolutions of 2 published commands" in proc.out and "0 problem(s)" in proc.out


def test_table_resolve_names_a_stack_command_whose_wheels_disagree_with_the_table(tmp_path):
    recorded, adapter = _stack_record(tmp_path, ["vllm==0.23.0", "torch-npu==2.10.0"])  # the wheel pins another build
    proc = _resolve_stack(tmp_path, recorded, adapter)
    assert proc.code == 1
    assert proc.err.count("not installable:") == 2 and "torch-npu" in proc.err
    assert "linux aarch64" in proc.err and "linux x86_64" in proc.err
