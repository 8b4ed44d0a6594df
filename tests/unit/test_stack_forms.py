"""What a layer's matrix can say (issue 65): any-of pins (a YAML list: PEP 440 has no OR),
optional requirements (``requires-if-installed:``) and compatible series of a toolkit
(``cann: {min: 9.1.0, compatible: ["8.5.*", "9.0.*"]}``), on the tables the Ascend layers
publish (tests/fixtures/stacks/) and torch_npu 26.1.0's statement of compatible CANN series."""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest
from packaging.version import Version

from adapter_matrix.check.judgment import Environment
from adapter_matrix.check.presets import run_preset
from adapter_matrix.check.stack.judge import installed_stack, judge_stack
from adapter_matrix.check.stack.search import Held, stack_fixes
from adapter_matrix.matrix.cache import load_any
from adapter_matrix.matrix.model import Layer, Matrix, PythonVersion, Status
from adapter_matrix.matrix.schema import json_schema

from .helpers import FIXTURES, REPO

ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
SERIES = FIXTURES / "matrices" / "torch_npu_26_1_series.yaml"
STACKS = FIXTURES / "stacks"
MINDSPEED = STACKS / "mindspeed-llm.yaml"
VLLM_ASCEND = STACKS / "vllm-ascend.yaml"
TODAY = _dt.date(2026, 12, 7)
ON_910B = ("--set", "arch=aarch64", "--set", "soc=Ascend910B")


def _run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    env = {"ADAPTER_MATRIX_NO_MEMO": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


def _check(*args: str) -> Tuple[int, dict]:
    proc = _run("check", "--json", "--python", "3.10", *args)
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)["checks"][0]


def _matrix(path: Path = ADAPTER) -> Matrix:
    found = load_any(str(path), use_cache=False)
    assert isinstance(found, type(load_any(str(ADAPTER), use_cache=False)))
    return found.matrix  # type: ignore[union-attr]


def _layer(path: Path) -> Layer:
    return load_any(str(path), use_cache=False).layer  # type: ignore[union-attr]


def _stack(
    matrix: Matrix, layers, python: str, torch: str, adapter: str, cann: str, packages: Dict[str, Optional[str]]
):
    env = Environment(
        python=PythonVersion.parse(python),
        torch=Version(torch),
        adapter=Version(adapter),
        dimensions=(("cann", matrix.dimension("cann").value(cann)), ("arch", matrix.dimension("arch").value("aarch64")))
        if matrix.dimension("arch")
        else (("cann", matrix.dimension("cann").value(cann)),),
    )
    return installed_stack(env, layers, packages)


# -- any-of pins -------------------------------------------------------------------------------


def _mindspeed_2_1_0(torch: str, adapter: str) -> Tuple[int, dict]:
    return _check(
        "--matrix",
        str(ADAPTER),
        "--matrix",
        str(MINDSPEED),
        *ON_910B,
        "--set",
        "cann=8.2.RC1",
        "--companion",
        "mindspeed-llm=2.1.0",
        "--companion",
        "megatron-core=0.8.0",
        "--torch",
        torch,
        "--adapter",
        adapter,
    )


@pytest.mark.parametrize(("torch", "adapter"), [("2.1.0", "2.1.0.post13"), ("2.6.0", "2.6.0")])
def test_mindspeed_llm_2_1_0_takes_either_torch_it_names(torch, adapter):
    code, answer = _mindspeed_2_1_0(torch, adapter)
    (layer,) = answer["stack"]["layers"]
    assert layer["problems"] == [], layer
    # as published, 2.1.0 is end of life (its README's maintenance table): supported, with that warning
    assert (code, answer["verdict"], layer["status"]) == (3, "eol", "eol")
    # were it maintained, the same row is a supported stack: the pin is not what refuses it
    matrix, mindspeed = _matrix(), _layer(MINDSPEED)
    release = mindspeed.release(Version("2.1.0"))
    maintained = mindspeed._replace(releases=(release._replace(status=Status.SUPPORTED),))
    stack = _stack(
        matrix, [maintained], "3.10", torch, adapter, "8.2.RC1", {"mindspeed-llm": "2.1.0", "megatron-core": "0.8.0"}
    )
    assert judge_stack(matrix, [maintained], stack, TODAY).status is Status.SUPPORTED


def test_mindspeed_llm_2_1_0_refuses_the_torch_between_the_two_it_names():
    code, answer = _mindspeed_2_1_0("2.5.1", "2.5.1.post1")
    assert code == 1
    assert "mindspeed-llm 2.1.0 pins torch ==2.1.0 | ==2.6.0, found 2.5.1" in answer["reasons"]
    assert "tests/fixtures/stacks/mindspeed-llm.yaml" in " ".join(answer["decided_by"])


def test_the_fix_search_takes_any_of_the_versions_a_list_names():
    """The resolver's candidates for a list are the union of its versions: from torch 2.5.1,
    either torch of MindSpeed-LLM 2.1.0 is a fix (on the adapter's builds for it)."""
    matrix, mindspeed = _matrix(), _layer(MINDSPEED)
    release = mindspeed.release(Version("2.1.0"))
    maintained = mindspeed._replace(releases=(release._replace(status=Status.SUPPORTED),))
    stack = _stack(
        matrix,
        [maintained],
        "3.10",
        "2.5.1",
        "2.5.1.post1",
        "8.2.RC1",
        {"mindspeed-llm": "2.1.0", "megatron-core": "0.8.0"},
    )
    found = stack_fixes(matrix, [maintained], stack, Held(), TODAY, limit=5)
    torches = {str(after.env.torch) for after in found.stacks}
    assert torches and torches <= {"2.1.0", "2.6.0"}, [f.summary for f in found.fixes]
    for fix, after in zip(found.fixes, found.stacks):
        assert judge_stack(matrix, [maintained], after, TODAY).status is fix.cell.status, fix.summary


def test_vllm_ascend_0_10_1rc1_takes_either_vllm_and_not_a_version_a_range_would_admit():
    matrix, vllm_ascend = _matrix(), _layer(VLLM_ASCEND)
    base = {"vllm-ascend": "0.10.1rc1", "vllm": None}
    for vllm, broken in (("0.10.1", False), ("0.10.1.1", False), ("0.10.1.post1", True)):
        stack = _stack(matrix, [vllm_ascend], "3.10", "2.7.1", "2.7.1.dev20250724", "8.2.RC1", dict(base, vllm=vllm))
        (layer,) = judge_stack(matrix, [vllm_ascend], stack, TODAY).layers
        problems = [p for p in layer.problems if "vllm " in p]
        assert bool(problems) is broken, (vllm, layer.problems)
    assert "vllm-ascend 0.10.1rc1 pins vllm ==0.10.1 | ==0.10.1.1, found 0.10.1.post1" in problems


def test_the_stack_table_shows_the_alternatives_as_written():
    out = _run("table", "--matrix", str(MINDSPEED)).stdout
    row = next(line for line in out.splitlines() if line.startswith("| 2.1.0 "))
    assert "`2.1.0 \\| 2.6.0`" in row and "`3.8 \\| 3.10`" in row
    data = json.loads(_run("table", "--matrix", str(MINDSPEED), "--format", "json").stdout)
    (entry,) = [r for r in data["releases"] if r["release"] == "2.1.0"]
    assert entry["packages"]["torch"] == "2.1.0 | 2.6.0"


# -- optional requirements ---------------------------------------------------------------------


@pytest.fixture()
def optional_layer() -> Path:
    """vllm-ascend 0.23.0 with an illustrative requires-if-installed: pin of Mooncake (the
    docs' example): [0.3.7, 0.3.7.post2]."""
    return STACKS / "examples" / "vllm-ascend-mooncake.yaml"


def _with_mooncake(layer: Path, *more: str) -> Tuple[int, dict]:
    return _check(
        "--matrix",
        str(ADAPTER),
        "--matrix",
        str(layer),
        *ON_910B,
        "--set",
        "cann=9.1.0",
        "--companion",
        "vllm-ascend=0.23.0",
        "--companion",
        "vllm=0.23.0",
        "--companion",
        "triton-ascend=3.2.2",
        "--torch",
        "2.10.0",
        *more,
    )


def test_an_optional_requirement_is_ignored_when_absent_and_checked_when_present(optional_layer):
    code, answer = _with_mooncake(
        optional_layer, "--adapter", "2.10.0.post4", "--companion", "mooncake-transfer-engine=none"
    )
    assert code == 0, answer["reasons"]
    code, answer = _with_mooncake(
        optional_layer, "--adapter", "2.10.0.post4", "--companion", "mooncake-transfer-engine=0.3.7.post2"
    )
    assert code == 0, answer["reasons"]
    code, answer = _with_mooncake(
        optional_layer, "--adapter", "2.10.0.post4", "--companion", "mooncake-transfer-engine=0.3.6"
    )
    assert code == 1
    assert (
        "vllm-ascend 0.23.0 pins mooncake-transfer-engine ==0.3.7 | ==0.3.7.post2 (if installed), found 0.3.6"
        in answer["reasons"]
    )
    assert answer["fixes"][0]["commands"] == ["pip install 'mooncake-transfer-engine==0.3.7.post2'"]


def test_a_fix_never_installs_an_optional_requirement_that_is_absent(optional_layer):
    code, answer = _with_mooncake(
        optional_layer, "--adapter", "2.10.0.post2", "--companion", "mooncake-transfer-engine=none"
    )
    assert code == 1 and answer["fixes"]
    for fix in answer["fixes"]:
        assert "mooncake" not in " ".join(fix["commands"]), fix["summary"]


def test_the_stack_table_says_which_pins_apply_only_when_installed(optional_layer):
    out = _run("table", "--matrix", str(optional_layer)).stdout
    assert "`0.3.7 \\| 0.3.7.post2 (if installed)`" in out


# -- compatible series ---------------------------------------------------------------------------


def _series_check(cann: str) -> Tuple[int, dict]:
    return _check(
        "--matrix", str(SERIES), "--python", "3.11", "--set", f"cann={cann}", "--torch", "2.12.0", "--adapter", "2.12.0"
    )


def test_torch_npu_2_12_0_works_on_a_cann_inside_the_series_its_line_states():
    code, answer = _series_check("9.0.0")
    assert (code, answer["verdict"]) == (0, "supported"), answer["reasons"]


def test_a_cann_outside_the_series_is_refused_naming_the_series_and_the_fix_says_any_will_do():
    code, answer = _series_check("8.3.RC1")
    assert code == 1
    assert (
        "torch-npu 2.12.0 (release 26.1.0) needs cann >=9.1.0 (compatible series 8.5.*, 9.0.*), found 8.3.RC1"
        in answer["reasons"]
    )
    by_hand = [fix for fix in answer["fixes"] if fix["manual"]]
    assert by_hand and "compatible series 8.5.*, 9.0.*" in by_hand[0]["manual"][0]
    assert by_hand[0]["cell"]["dimensions"]["cann"] in ("8.5.0", "8.5.1", "9.0.0", "9.0.1", "9.1.0")


def test_the_releases_table_shows_the_series_not_one_value():
    out = _run("table", "--matrix", str(SERIES), "--view", "releases").stdout
    assert "`cann >=9.1.0 (compatible series 8.5.*, 9.0.*)`" in out
    assert "`cann 8.5.*, 9.0.*, 9.1.*`" in out  # 7.3.0: a list of series, any of them


def test_a_layer_states_compatible_series_of_the_adapters_dimension(tmp_path):
    """MindSpeed-LLM's words ("compatible with 8.3.RCX/8.5.X/9.0.X") in a layer's row."""
    layer = tmp_path / "layer.yaml"
    layer.write_text(
        "schema-version: 2\nlayer: {distribution: demo, adapter: torch-npu}\nreleases:\n"
        "  - {version: 1.0.0, status: supported, torch: 2.7.1, adapter-line: 26.1.0,\n"
        '     dimensions: {cann: {min: 9.1.0, compatible: ["8.3.*", "8.5.*", "9.0.*"]}}}\n'
    )
    matrix, demo = _matrix(SERIES), _layer(layer)

    def judged(cann: str):
        stack = _stack(matrix, [demo], "3.11", "2.7.1", "2.7.1.post8", cann, {"demo": "1.0.0"})
        return judge_stack(matrix, [demo], stack, TODAY)

    assert judged("9.0.0").status is Status.SUPPORTED
    on_8_3 = judged("8.3.RC1")  # the layer's series, not the adapter's
    assert on_8_3.layers[0].problems == () and on_8_3.status is Status.UNSUPPORTED
    assert (
        "demo 1.0.0 needs cann >=9.1.0 (compatible series 8.3.*, 8.5.*, 9.0.*), found 8.2.RC1"
        in judged("8.2.RC1").reasons
    )


def test_the_cann_preset_says_the_toolkits_own_compatible_versions(tmp_path):
    info = tmp_path / "usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux/ascend_toolkit_install.info"
    info.parent.mkdir(parents=True)
    # as vllm-ascend #4621 quotes a CANN 8.3.RC2 install
    info.write_text(
        "package_name=Ascend-cann-toolkit\nversion=8.3.RC2\ninnerversion=V100R001C23SPC002B210\n"
        "compatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]\n"
    )
    (tmp_path / "usr/local/Ascend/ascend-toolkit/latest").symlink_to("8.3.RC2")
    version, where, error = run_preset("cann", str(tmp_path), {})
    assert (version, error) == ("8.3.RC2", None)
    assert where.endswith(
        "; it states innerversion V100R001C23SPC002B210, compatible_version [V100R001C15],[V100R001C17],"
        "[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]"
    )


# -- every form validated, bad input refused at its place --------------------------------------


@pytest.mark.parametrize("name", sorted(str(p.relative_to(STACKS))[:-5] for p in STACKS.glob("**/*.yaml")))
def test_every_stack_fixture_validates_and_the_json_schema_accepts_it(name):
    proc = _run("validate", str(STACKS / f"{name}.yaml"), str(ADAPTER))
    assert proc.returncode == 0, proc.stderr
    jsonschema = pytest.importorskip("jsonschema")
    yaml = pytest.importorskip("yaml")
    data = json.loads(json.dumps(yaml.safe_load((STACKS / f"{name}.yaml").read_text()), default=str))
    jsonschema.validate(data, json_schema())


def test_the_series_fixture_validates_and_the_json_schema_knows_each_form():
    assert _run("validate", "--matrix", str(SERIES)).returncode == 0
    jsonschema = pytest.importorskip("jsonschema")
    yaml = pytest.importorskip("yaml")
    data = json.loads(json.dumps(yaml.safe_load(SERIES.read_text()), default=str))
    jsonschema.validate(data, json_schema())
    data["releases"][0]["dimensions"]["cann"]["compatibel"] = data["releases"][0]["dimensions"]["cann"].pop(
        "compatible"
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, json_schema())
    layer = json.loads(json.dumps(yaml.safe_load(MINDSPEED.read_text()), default=str))
    layer["releases"][-1]["torch"] = []
    with pytest.raises(jsonschema.ValidationError):  # an empty list says nothing
        jsonschema.validate(layer, json_schema())


BAD = [
    ("    torch: []\n", "5:12: the torch specifier list is empty"),
    ("    torch: [2.1.0, '>=2.x']\n", "5:20: bad torch specifier '>=2.x'"),
    ("    adapter-line: [7.1.0, 7.2.0]\n", "5:19: adapter release line must be a single value, found a list"),
    ("    requires: {vllm: []}\n", "5:22: the vllm specifier list is empty"),
    ("    requires: {vllm: 1.0}\n    requires-if-installed: {vllm: 1.0}\n", "6:29: vllm is pinned twice"),
    ("    dimensions: {cann: []}\n", "5:24: the cann list in layer release dimensions is empty"),
    (
        "    dimensions: {cann: {min: 9.1.0, compatible: [8.5.X]}}\n",
        "5:50: bad cann compatible series '8.5.X'",
    ),
    (
        "    dimensions: {cann: {min: 9.1.0, compatible: [8.5.0]}}\n",
        "5:50: bad cann compatible series '8.5.0': one version, not a series",
    ),
    ("    dimensions: {cann: {min: 9.1.0, compatible: []}}\n", "5:49: the cann compatible series list is empty"),
    ("    dimensions: {cann: [8.3.RC1, '>=x']}\n", "5:34: bad cann specifier in layer release dimensions '>=x'"),
    ("    dimensions: {cann: {min: 9.1.0, compatible: ['===8.5']}}\n", "5:50: bad cann compatible series '===8.5'"),
    (
        "    dimensions: {cann: {min: 9.1.0}}\n",
        "5:24: the cann series in layer release dimensions is missing the required key 'compatible'",
    ),
]


@pytest.mark.parametrize(("line", "expected"), BAD, ids=[e.split(": ", 1)[1][:40] for _l, e in BAD])
def test_bad_forms_are_errors_at_their_line_and_column_and_nothing_is_written(tmp_path, line, expected):
    bad = tmp_path / "layer.yaml"
    bad.write_text(
        "schema-version: 2\nlayer: {distribution: demo, adapter: torch-npu}\nreleases:\n"
        "  - version: 1.0.0\n" + line + "    status: supported\n"
    )
    proc = _run("validate", str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"layer.yaml:{expected}" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    out = tmp_path / "table.md"
    table = _run("table", "--matrix", str(bad), "--output", str(out), cwd=tmp_path)
    assert table.returncode == 2 and not out.exists()


def test_a_series_on_an_enumeration_is_an_error_at_its_place(tmp_path):
    bad = tmp_path / "compat.yaml"
    text = SERIES.read_text().replace(
        "    detect:\n      - env: ASCEND_CANN_VERSION\n",
        "    kind: enum\n    detect:\n      - env: ASCEND_CANN_VERSION\n",
        1,
    )
    bad.write_text(text)
    proc = _run("validate", "--matrix", str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    assert (
        "cann in package of release line 26.1.0 dimensions is an enumeration: it has no minimum or series"
        in proc.stderr
    )


def test_the_selector_says_which_compatible_series_a_value_belongs_to():
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(_run("table", "--matrix", str(SERIES), "--view", "selector", "--format", "json").stdout)
    jsonschema.validate(doc, json.loads((REPO / "docs" / "compatibility-table.schema.json").read_text()))
    on_9_0 = [c for c in doc["combinations"] if c["release"] == "2.12.0" and c["dimensions"]["cann"] == "9.0.0"]
    assert on_9_0 and on_9_0[0]["series"] == {"cann": ">=9.1.0 (compatible series 8.5.*, 9.0.*)"}
    assert on_9_0[0]["commands"] == ["pip install 'torch-npu==2.12.0' 'torch==2.12.0'"]
    assert all("series" not in c for c in doc["combinations"] if c["release"] == "2.9.0")  # 7.3.0: a list, no series


def test_validate_reads_a_list_and_names_the_rows_the_adapter_does_not_list():
    proc = _run("validate", str(STACKS / "mindspeed-core.yaml"), str(ADAPTER))
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stderr.splitlines() if "does not support" in line]
    # as published: 2.3.0_core_r0.12.1 and 2.2.0_core_r0.12.1 name torch_npu 7.2.0 with CANN 8.2.RC1
    assert len(rows) == 2 and all(
        "with torch 2.1.0 | 2.6.0 | 2.7.1, torch-npu of release line 7.2.0" in r for r in rows
    )
    assert all("it offers cann 8.3.RC1" in r for r in rows)
