"""The stack above the adapter, judged as one (issue 56): layers such as vllm-ascend,
MindSpeed-LLM and torchvision_npu on torch_npu, each with its own matrix, installed in an
environment that `check --env` reads from its files."""

from __future__ import annotations

import datetime as _dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.version import Version

from adapter_matrix.check.judgment import Environment
from adapter_matrix.check.stack.judge import Stack, installed_stack, judge_stack, stack_packages
from adapter_matrix.check.stack.search import Held, stack_fixes
from adapter_matrix.matrix.cache import load_any
from adapter_matrix.matrix.model import PythonVersion, Status

from .helpers import FIXTURES, compared_changes

ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
STACKS = FIXTURES / "stacks"
VLLM_ASCEND = STACKS / "vllm-ascend.yaml"
MINDSPEED = STACKS / "mindspeed-llm.yaml"
TORCHVISION_NPU = STACKS / "torchvision-npu.yaml"
MATRICES = {
    "torch-npu": ADAPTER,
    "vllm-ascend": VLLM_ASCEND,
    "mindspeed-llm": MINDSPEED,
    "torchvision-npu": TORCHVISION_NPU,
}
TODAY = _dt.date(2026, 12, 6)

# vllm-ascend v0.23.0's row of its published table
V023 = {
    "vllm-ascend": "0.23.0",
    "vllm": "0.23.0",
    "torch": "2.10.0",
    "torch-npu": "2.10.0.post4",
    "triton-ascend": "3.2.2",
}


def _environment(root: Path, python: str = "3.11", **installed: str) -> Path:
    """A virtual environment's files: a dist-info per distribution, and for the adapter and
    each layer of the fixtures its matrix, registered as an installed adapter registers it."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {python}.7\n")
    site = root / "lib" / f"python{python}" / "site-packages"
    for name, version in installed.items():
        module = name.replace("-", "_")
        info = site / f"{module}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "RECORD").write_text(f"{info.name}/METADATA,,\n")
        if name in MATRICES:
            (site / module).mkdir()
            shutil.copy(MATRICES[name], site / module / "compat.yaml")
            (info / "entry_points.txt").write_text(f"[adapter_matrix.matrices]\n{name} = {module}:compat.yaml\n")
    return root


# The layers' tables pin PyPI's torch (torch 2.10.0, not 2.10.0+cpu): torch-npu's builds for it are
# its aarch64 ones (on x86_64 they pair with torch's +cpu build), so check judges as on aarch64.
ON_AARCH64 = ("--set", "arch=aarch64")


def _check(env: Path, *args: str) -> Tuple[int, dict]:
    on = () if any("arch=" in a for a in args) else ON_AARCH64
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--json", "--no-binary", "--env", str(env), *on, *args],
        capture_output=True,
        text=True,
        cwd=env.parent,
    )
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _installs(commands: List[str], diff: Sequence[str] = ()) -> Dict[str, str]:
    """What a fix's pip commands install: distribution -> version; a release built from git
    (``'NAME @ git+URL@REF'``) is the one the fix's diff names (``+ NAME==V``)."""
    out = dict(re.findall(r"'([A-Za-z0-9_.-]+)==([^']+)'", " ".join(commands)))
    added = dict(line[2:].split(" (from ")[0].split("==", 1) for line in diff if line.startswith("+ "))
    for name in re.findall(r"'([A-Za-z0-9_.-]+) @ git\+[^']+'", " ".join(commands)):
        out[name] = added[name]
    return out


def _uninstalls(commands: List[str]) -> List[str]:
    return [name for c in commands if c.startswith("pip uninstall") for name in c.split()[3:]]


def _applied(tmp_path: Path, installed: Dict[str, str], fix: dict) -> Tuple[Path, List[str]]:
    """The environment after a fix: its packages installed, its uninstalls done; and the --set
    of its dimensions (a driver toolkit is installed by hand)."""
    after = dict(installed)
    after.update(_installs(fix["commands"], fix["diff"]))
    for name in _uninstalls(fix["commands"]):
        after.pop(name, None)
    cell = fix["cell"]
    env = _environment(tmp_path / "after", python=cell["python"], **after)
    return env, [f"--set={name}={value}" for name, value in cell["dimensions"].items()]


def test_vllm_ascend_0_23_on_its_published_row_is_a_supported_stack(tmp_path):
    env = _environment(tmp_path / "env", **V023)
    code, doc = _check(env, "--set", "cann=9.1.0")
    answer = doc["checks"][0]
    assert code == 0, answer["reasons"]
    assert answer["verdict"] == "supported"
    assert [(layer["name"], layer["status"]) for layer in answer["stack"]["layers"]] == [("vllm-ascend", "supported")]


def test_an_older_post_release_breaks_the_layers_pin_and_the_fix_installs_the_pinned_build_alone(tmp_path):
    env = _environment(tmp_path / "env", **dict(V023, **{"torch-npu": "2.10.0.post2"}))
    code, doc = _check(env, "--set", "cann=9.1.0")
    answer = doc["checks"][0]
    assert code == 1
    assert "vllm-ascend 0.23.0 pins torch-npu ==2.10.0.post4, found 2.10.0.post2" in answer["reasons"]
    first = answer["fixes"][0]
    assert first["commands"] == ["pip install 'torch-npu==2.10.0.post4'"]
    assert first["changes"] == ["torch-npu"]


def test_every_fix_for_a_torch_the_layer_does_not_pin_is_a_stack_every_matrix_supports(tmp_path):
    installed = dict(V023, **{"torch": "2.9.0", "torch-npu": "2.9.0.post6"})
    env = _environment(tmp_path / "env", **installed)
    code, doc = _check(env, "--set", "cann=9.1.0")
    answer = doc["checks"][0]
    assert code == 1
    assert any("pins torch ==2.10.0, found 2.9.0" in reason for reason in answer["reasons"])
    assert answer["fixes"]
    for fix in answer["fixes"]:  # asked again, each is what it said
        after, sets = _applied(tmp_path, installed, fix)
        again_code, again = _check(after, *sets)
        assert again["checks"][0]["verdict"] == fix["cell"]["status"], (fix["summary"], again["checks"][0]["reasons"])
        assert again_code in (0, 3)


def test_two_layers_of_one_cann_that_need_two_torches_name_the_conflict_and_no_fix_keeps_both(tmp_path):
    installed = dict(V023, **{"mindspeed-llm": "26.1.0", "megatron-core": "0.12.1", "mindspeed": "0.12.1"})
    env = _environment(tmp_path / "env", python="3.10", **installed)
    code, doc = _check(env, "--set", "cann=9.1.0")
    answer = doc["checks"][0]
    assert code == 1
    conflict = answer["stack"]["conflict"]
    assert "torch ==2.7.1" in conflict and "torch ==2.10.0" in conflict, conflict
    assert "mindspeed-llm 26.1.0" in conflict and "vllm-ascend 0.23.0" in conflict
    for fix in answer["fixes"]:
        dropped = _uninstalls(fix["commands"])
        assert dropped or fix["cell"]["dimensions"].get("cann") != "9.1.0", fix["summary"]


def test_a_layer_without_its_adapters_matrix_is_no_verdict_but_says_what_to_install(tmp_path):
    env = _environment(tmp_path / "env", **{"vllm-ascend": "0.23.0", "vllm": "0.23.0"})
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--no-binary", "--env", str(env)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "sits on torch-npu" in proc.stderr + proc.stdout


def test_the_matrices_of_a_stack_can_be_given_with_matrix_more_than_once(tmp_path):
    env = _environment(tmp_path / "env", torch="2.10.0", **{"torch-npu": "2.10.0.post4"})
    code, doc = _check(env, "--matrix", str(ADAPTER), "--matrix", str(VLLM_ASCEND), "--set", "cann=9.1.0")
    answer = doc["checks"][0]
    assert code == 1  # vllm-ascend is wanted and not installed
    assert answer["stack"]["layers"][0]["problems"] == ["vllm-ascend is not installed"]
    assert _installs(answer["fixes"][0]["commands"]) == {
        "vllm-ascend": "0.23.0",
        "vllm": "0.23.0",
        "triton-ascend": "3.2.2",
    }


def test_a_what_if_reaches_every_package_of_the_stack(tmp_path):
    env = _environment(tmp_path / "env", **V023)
    code, doc = _check(env, "--set", "cann=9.1.0", "--companion", "vllm=0.22.0")
    assert code == 1
    assert "vllm-ascend 0.23.0 pins vllm ==0.23.0, found 0.22.0" in doc["checks"][0]["reasons"]


# -- the fix search, as a property -------------------------------------------------------------

_MATRIX = load_any(ADAPTER).matrix
_LAYERS = {path.stem: load_any(path).layer for path in (VLLM_ASCEND, MINDSPEED, TORCHVISION_NPU)}


def _stack(python: str, torch: str, adapter: str, cann: str, packages: Dict[str, Optional[str]]) -> Stack:
    env = Environment(
        python=PythonVersion.parse(python),
        torch=Version(torch),
        adapter=Version(adapter),
        dimensions=(("cann", _MATRIX.dimension("cann").value(cann)),),
    )
    layers = [layer for layer in _LAYERS.values() if layer.name in packages]
    return installed_stack(env, layers, packages)


@st.composite
def _stacks(draw):
    """A random stack of the fixtures: 1 to 3 layers at any release, anything below them."""
    names = draw(st.lists(st.sampled_from(sorted(_LAYERS)), min_size=1, max_size=3, unique=True))
    layers = [_LAYERS[n] for n in names]
    packages: Dict[str, Optional[str]] = {}
    for layer in layers:
        packages[layer.name] = str(draw(st.sampled_from([r.version for r in layer.releases])))
    for name in stack_packages(layers):
        if name not in packages:
            named = sorted(
                {str(v) for lay in layers for r in lay.releases for p in r.packages if p.name == name for v in p.exact}
            )
            packages[name] = draw(st.sampled_from([None, *named])) if named else None
    torch = draw(st.sampled_from([str(p) for line in _MATRIX.torch for p in line.patches if p >= Version("2.5")]))
    adapter = draw(st.sampled_from([str(r.version) for r in _MATRIX.releases]))
    cann = draw(st.sampled_from([str(v) for v in _MATRIX.dimension("cann").values]))
    python = draw(st.sampled_from(["3.9", "3.10", "3.11"]))
    return layers, _stack(python, torch, adapter, cann, packages)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_stacks())
def test_no_fix_changes_more_than_another_for_a_status_no_better_and_every_fix_is_supported_again(drawn):
    layers, stack = drawn
    if judge_stack(_MATRIX, layers, stack, TODAY).status is Status.SUPPORTED:
        return
    found = stack_fixes(_MATRIX, layers, stack, Held(), TODAY)
    order = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)
    if found.conflict is None:  # the nearest stacks: none changes more than another of a status as good
        for fix in found.fixes:
            for other in found.fixes:
                if order.index(fix.cell.status) >= order.index(other.cell.status):
                    assert len(fix.changes) <= len(other.changes), (fix.summary, other.summary)
    else:  # the ways out of a conflict (docs/stacks.md): none changes a superset of another's, for a status as good
        ways = list(zip(found.fixes, found.stacks))
        for fix, after in ways:
            for other, other_after in ways:
                if fix is not other and order.index(fix.cell.status) >= order.index(other.cell.status):
                    changed, other_changed = (
                        compared_changes(f, stack, a, layers) for f, a in ((fix, after), (other, other_after))
                    )
                    assert not changed > other_changed, (fix.summary, other.summary)
    for fix, after in zip(found.fixes, found.stacks):
        kept = [layer for layer in layers if after.version(layer.name) is not None]
        again = judge_stack(_MATRIX, kept, after, TODAY)
        assert again.status is fix.cell.status, (fix.summary, again.reasons)


# -- validate, table and init on a layer's matrix ------------------------------------------------


def _cli(*args: str, cwd: Path = Path(".")) -> subprocess.CompletedProcess:
    from .helpers import REPO

    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *args],
        capture_output=True,
        text=True,
        cwd=cwd if cwd != Path(".") else REPO,
    )


def test_validate_names_each_layer_row_the_adapters_matrix_does_not_support():
    proc = _cli("validate", str(VLLM_ASCEND), str(ADAPTER))
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stderr.splitlines() if "which torch-npu's matrix does not support" in line]
    assert len(rows) == 20  # the rows whose (CANN, torch_npu) torch_npu's own table does not list
    assert any("vllm-ascend 0.23.0rc1 needs cann 9.0.1" in line and "it offers cann 9.0.0" in line for line in rows)
    assert not any("vllm-ascend 0.23.0 " in line for line in rows)  # the published row torch_npu lists
    others = _cli("validate", str(MINDSPEED), str(TORCHVISION_NPU), str(ADAPTER))
    assert "does not support" not in others.stderr, others.stderr  # their rows are torch_npu's own


def test_validate_upstream_names_the_rows_whose_table_pin_the_wheel_does_not_admit():
    proc = _cli("validate", str(VLLM_ASCEND), "--upstream", str(FIXTURES / "pypi" / "2026-12-06"))
    assert proc.returncode == 0, proc.stderr
    disagree = sorted(set(re.findall(r"warning: vllm-ascend (\S+): the table pins torch-npu", proc.stderr)))
    assert disagree == ["0.11.0", "0.11.0rc3", "0.13.0rc2", "0.18.0"]
    assert "the table pins torch-npu ==2.7.1.post1, but its wheel requires torch-npu==2.7.1" in proc.stderr


def test_a_layers_own_mistakes_are_errors_at_their_line(tmp_path):
    bad = tmp_path / "layer.yaml"
    bad.write_text(
        "schema-version: 2\nlayer: {distribution: l, adapter: torch-npu}\nreleases:\n"
        "  - {version: 1.0, status: suported, adapter: 2.9.0, adapter-line: 26.1.0, requires: {torch: 2.9.0}}\n"
    )
    proc = _cli("validate", str(bad))
    assert proc.returncode == 2
    assert "layer.yaml:4:28: unknown status 'suported'" in proc.stderr
    assert "not both" in proc.stderr and "torch under requires:" in proc.stderr
    plan = _cli("plan", "--matrix", str(VLLM_ASCEND))
    assert plan.returncode == 2 and "this is a layer's matrix" in plan.stderr


def test_the_stack_table_is_the_layers_own_in_both_languages():
    en = _cli("table", "--matrix", str(MINDSPEED))
    assert en.returncode == 0, en.stderr
    head, _rule, first = en.stdout.splitlines()[:3]
    assert [c.strip() for c in head.strip("|").split("|")] == [
        "mindspeed-llm",
        "megatron-core",
        "mindspeed",
        "triton-ascend",
        "Python",
        "CANN",
        "torch",
        "torch-npu",
        "status",
    ]
    assert "26.1.0" in first and "release line 26.1.0" in first and "9.1.0" in first
    zh = _cli("table", "--matrix", str(MINDSPEED), "--lang", "zh", "--format", "json")
    data = json.loads(zh.stdout)
    assert data["view"] == "stack" and data["releases"][0]["adapter_line"] == "26.1.0"


def test_init_on_an_adapter_writes_a_layer_that_check_reads_with_its_adapter(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "my-layer"\nversion = "0.4.0"\n')
    (tmp_path / "my_layer").mkdir()
    proc = _cli("init", "--distribution", "my-layer", "--on", "torch-npu", "--torch", "2.10.0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "my_layer" / "compat.yaml").is_symlink()
    assert 'my-layer = "my_layer:compat.yaml"' in (tmp_path / "pyproject.toml").read_text()
    layer = load_any(tmp_path / "compat.yaml").layer
    assert (layer.distribution, layer.adapter, str(layer.releases[0].version)) == ("my-layer", "torch-npu", "0.4.0")
    env = _environment(tmp_path / "env", torch="2.10.0", **{"torch-npu": "2.10.0.post4", "my-layer": "0.4.0"})
    code, doc = _check(env, "--matrix", str(ADAPTER), "--matrix", str(tmp_path / "compat.yaml"), "--set", "cann=9.1.0")
    assert code == 3  # the layer's first release is experimental
    assert doc["checks"][0]["stack"]["layers"][0]["status"] == "experimental"


def test_each_command_of_the_stack_table_installs_a_stack_check_accepts(tmp_path):
    proc = _cli(
        "table",
        "--matrix",
        str(VLLM_ASCEND),
        "--adapter-matrix",
        str(ADAPTER),
        "--format",
        "json",
        "--today",
        "2026-12-06",
    )
    rows = json.loads(proc.stdout)["releases"]
    installable = [row for row in rows if row["install"]]
    assert len(installable) == 16 and len(rows) == 36  # the 20 others name a stack torch_npu's matrix does not support
    for row in installable[:6]:
        # one install per arch: PyPI's torch on aarch64, torch's +cpu build from its CPU index on x86_64
        assert [i["platform"] for i in row["install"]] == [{"arch": "aarch64"}, {"arch": "x86_64"}]
        for install in row["install"]:
            commands = install["commands"]
            assert install["prerequisites"] == [f"cann {row['dimensions']['cann']} first: not a pip package"]
            arch = install["platform"]["arch"]
            assert (
                _installs(commands)["torch"]
                == install["torch"]
                == (f"{row['packages']['torch']}+cpu" if arch == "x86_64" else row["packages"]["torch"])
            )
            env = _environment(tmp_path / f"{row['release']}-{arch}", python=install["python"], **_installs(commands))
            sets = [f"--set=cann={row['dimensions']['cann']}", f"--set=arch={arch}"]
            code, doc = _check(env, *sets, "--today", "2026-12-06")
            answer = doc["checks"][0]
            assert answer["stack"]["layers"][0]["status"] == row["status"], (row["release"], answer["reasons"])
            assert code in (0, 3), (row["release"], arch, answer["reasons"])


def test_the_stack_tables_options_filter_its_rows_and_name_the_release_lines_package():
    base = ("table", "--matrix", str(VLLM_ASCEND), "--adapter-matrix", str(ADAPTER), "--today", "2026-12-06")
    one = _cli(*base, "--release", "0.23.0", "--format", "json")
    assert one.returncode == 0, one.stderr
    assert [r["release"] for r in json.loads(one.stdout)["releases"]] == ["0.23.0"]
    unknown = _cli(*base, "--release", "9.9.9")
    assert unknown.returncode == 2 and "--release 9.9.9: no such release (0.23.0, 0.23.0rc1" in unknown.stderr
    on_cann = json.loads(_cli(*base, "--dimension", "cann=9.0.0", "--format", "json").stdout)["releases"]
    assert on_cann and all(r["dimensions"].get("cann", "9.0.0") == "9.0.0" for r in on_cann) and len(on_cann) < 36
    for bad in ("cann", "driver=1.0"):
        refused = _cli(*base, "--dimension", bad)
        assert refused.returncode == 2 and refused.stderr.startswith(f"error: --dimension {bad}:")
    assert _cli(*base, "--view", "stack", "--release", "0.23.0").returncode == 0
    listed = _cli("table", "--view", "nope")
    assert listed.returncode == 2 and "stack (a layer's matrix)" in listed.stderr
    help_words = " ".join(re.sub(r"[\u2500-\u257f]", " ", _cli("table", "--help").stdout).split())  # no box lines
    assert "stack (a layer's --matrix" in help_words
    # a release line is shown with the adapter's package for the row's torch, in JSON too
    mindspeed = _cli("table", "--matrix", str(MINDSPEED), "--adapter-matrix", str(ADAPTER), "--format", "json")
    data = json.loads(mindspeed.stdout)
    first = data["releases"][0]
    assert (first["release"], first["adapter_line"], first["adapter"]) == ("26.1.0", "26.1.0", "2.7.1.post8")
    column = [c["key"] for c in data["columns"]].index("adapter")
    assert data["rows"][0][column]["text"] == "26.1.0 (2.7.1.post8)"


# -- each trouble of issue 56, as the tool answers it ---------------------------------------------


def test_one_adapter_two_names_the_release_line_a_layer_names_is_the_package_for_its_torch():
    mindspeed = _LAYERS["mindspeed-llm"]
    packages = {"mindspeed-llm": "26.1.0", "megatron-core": "0.12.1", "mindspeed": "0.12.1", "triton-ascend": "3.2.2"}
    same_line = _stack("3.10", "2.7.1", "2.7.1.post8", "9.1.0", packages)
    assert judge_stack(_MATRIX, [mindspeed], same_line, TODAY).status is Status.SUPPORTED
    other_line = _stack("3.10", "2.7.1", "2.7.1.post4", "9.1.0", packages)
    judged = judge_stack(_MATRIX, [mindspeed], other_line, TODAY)
    assert (
        "mindspeed-llm 26.1.0 needs torch-npu of release line 26.1.0, found 2.7.1.post4 (release line 26.0.0)"
        in judged.layers[0].problems
    )
    fixes = stack_fixes(_MATRIX, [mindspeed], other_line, Held(), TODAY).fixes
    assert fixes[0].commands == ("pip install 'torch-npu==2.7.1.post8'",)


def test_a_layer_that_needs_a_torch_the_adapter_does_not_have_yet_is_named_by_validate(tmp_path):
    ahead = tmp_path / "ahead.yaml"
    ahead.write_text(
        "schema-version: 2\nlayer: {distribution: fast-layer, adapter: torch-npu}\nreleases:\n"
        "  - {version: 1.0.0, status: supported, torch: 2.13.0, adapter-line: 26.1.0, dimensions: {cann: 9.1.0}}\n"
    )
    proc = _cli("validate", str(ahead), str(ADAPTER))
    assert (
        "fast-layer 1.0.0 needs torch 2.13.0, which torch-npu's matrix does not support (it offers torch 1.11.0"
        in proc.stderr
    )
    layer = load_any(ahead).layer
    stack = installed_stack(
        Environment(
            python=PythonVersion.parse("3.11"),
            torch=Version("2.13.0"),
            adapter=Version("2.12.0"),
            dimensions=(("cann", _MATRIX.dimension("cann").value("9.1.0")),),
        ),
        [layer],
        {"fast-layer": "1.0.0"},
    )
    judged = judge_stack(_MATRIX, [layer], stack, TODAY)
    assert (
        judged.status is Status.UNSUPPORTED and judged.layers[0].status is Status.SUPPORTED
    )  # the adapter refuses torch 2.13
    found = stack_fixes(_MATRIX, [layer], stack, Held(), TODAY)
    # no stack has it until torch_npu supports torch 2.13: the only way out is without the layer
    assert found.conflict and [f.summary.split(":")[0] for f in found.fixes] == ["without fast-layer"]


def test_constraints_of_a_working_stack_pin_every_layer_and_what_it_pins(tmp_path):
    env = _environment(tmp_path / "env", **V023)
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--no-binary", "--env", str(env), "--set", "cann=9.1.0"]
        + [*ON_AARCH64, "--constraints", "pip"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    pins = [line for line in proc.stdout.splitlines() if not line.startswith("#")]
    assert pins == [
        "torch==2.10.0",
        "torch-npu==2.10.0.post4",
        "vllm-ascend==0.23.0",
        "vllm==0.23.0",
        "triton-ascend==3.2.2",
    ]


def test_the_report_promises_the_fixes_below_only_when_there_are_some():
    """A conflict with fixes says each gives up one choice; with none, it says that no whole
    stack was found instead of pointing at an empty list (issue 70)."""
    from adapter_matrix.answer import LayerSeen, StackSeen
    from adapter_matrix.check.report import stack_lines
    from adapter_matrix.matrix.status import Status

    layer = LayerSeen("vllm-ascend", "compat.yaml", "0.23.0", "0.23.0", Status.UNSUPPORTED, (), ())
    stack = StackSeen((layer,), "vllm-ascend 0.23.0 needs torch ==2.10.0; cann 9.1.0 has no torch 2.10.0")
    said = lambda fixes: "\n".join("".join(text for text, _ in line) for line in stack_lines(stack, fixes))
    assert "each fix below gives up one" in said(2)
    assert "each fix below" not in said(0) and "no whole stack was found" in said(0)


def test_an_installed_torchvision_npu_without_a_local_label_is_the_one_release_built_from_it(tmp_path):
    # torchvision_npu's setup.py builds tag v0.21.0-7.1.0 as version 0.21.0; its matrix writes
    # that release 0.21.0+7.1.0, the only build of 0.21.0 it describes
    installed = {"torch": "2.6.0", "torch-npu": "2.6.0", "torchvision-npu": "0.21.0", "torchvision": "0.21.0"}
    env = _environment(tmp_path / "env", **installed)
    code, doc = _check(env, "--set", "cann=8.2.RC1", "--set", "ascend_driver=25.2.0")
    answer = doc["checks"][0]
    assert code == 0, answer["reasons"]
    assert [(layer["name"], layer["status"]) for layer in answer["stack"]["layers"]] == [
        ("torchvision-npu", "supported")
    ]


def test_an_installed_version_several_releases_are_builds_of_names_them_instead_of_guessing(tmp_path):
    # tags v0.20.1-7.0.0 and v0.20.1-7.1.0 both build 0.20.1: the version does not say which
    installed = {"torch": "2.5.1", "torch-npu": "2.5.1.post1", "torchvision-npu": "0.20.1", "torchvision": "0.20.1"}
    env = _environment(tmp_path / "env", **installed)
    code, doc = _check(env, "--set", "cann=8.2.RC1", "--set", "ascend_driver=25.2.0")
    reasons = doc["checks"][0]["reasons"]
    assert code == 1
    named = "(0.20.1+7.0.0 from v0.20.1-7.0.0, 0.20.1+7.1.0 from v0.20.1-7.1.0)"  # each with its tag
    assert any(f"is a build of 2 releases its matrix describes {named}" in r for r in reasons), reasons


def test_the_stack_tables_command_on_each_platform_is_checks_first_fix_for_that_rows_pins():
    """One answer on every surface (issue 67): for each layer fixture's rows and each platform
    the adapter's matrix tells apart, the stack table's command is the first fix `check`
    gives on a fresh environment of that platform (the row's Python, nothing installed)
    asked with the row's pins held: the layer release and the values it names (its CANN)."""
    from adapter_matrix.check.stack.search import install_stack
    from adapter_matrix.tables.views.stack import platforms, shown_releases

    compared = 0
    for name, layer in _LAYERS.items():
        for k, release in enumerate(shown_releases(layer)):
            if k % 2:  # a sample: every other row of each fixture
                continue
            for platform in platforms(_MATRIX):
                fix = install_stack(_MATRIX, layer, release, TODAY, platform)
                if fix is None:
                    continue
                # the row pins one value of a dimension (CANN 9.1.0): the user holds it, as the platform
                pinned = tuple(
                    (n, v)
                    for n, c in release.dimensions
                    if (dim := _MATRIX.dimension(n)) is not None
                    for v in [x for x in dim.values if c.contains(x)][:1]
                    if len([x for x in dim.values if c.contains(x)]) == 1
                )
                dims = pinned + tuple(p for p in platform if p[0] not in dict(pinned))
                fresh = Stack(
                    Environment(python=fix.cell.python, dimensions=dims),
                    tuple((n, None) for n in stack_packages([layer])),
                )
                held = Held(dims, ((layer.name, release.version),))
                found = stack_fixes(_MATRIX, [layer], fresh, held, TODAY)
                assert found.fixes, (name, str(release.version), platform, found.reason)
                first = found.fixes[0]
                assert first.commands == fix.commands, (name, str(release.version), platform, first.summary)
                assert first.manual == fix.manual, (name, str(release.version), platform)
                compared += 1
    assert compared >= 10, compared
