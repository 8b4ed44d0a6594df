"""The stack's fix search without holes (issue 66, item 1): layers that require layers, the
conflict that decides, every way out of it ranked by one rule, one assumption per dimension
that could not be detected, fixes only better than what is installed, a reason when there is
none; and reading an environment that never ends in a traceback."""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.version import Version

from adapter_matrix.check.judgment import Environment, Fix
from adapter_matrix.check.stack.judge import Stack, installed_stack, judge_stack, stack_packages
from adapter_matrix.check.stack.search import Held, stack_fixes
from adapter_matrix.matrix.cache import load_any
from adapter_matrix.matrix.loader import load_any_bytes
from adapter_matrix.matrix.model import Layer, PythonVersion, Status

from .helpers import compared_changes
from .test_stack import ADAPTER, MINDSPEED, TORCHVISION_NPU, V023, VLLM_ASCEND, _applied, _check, _environment

TODAY = _dt.date(2026, 12, 6)
USABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)

# MindSpeed (Core) as a layer of its own, and MindSpeed-LLM 26.1.0 requiring it: the minimal
# files this test needs (tests/fixtures/stacks/ has no MindSpeed Core matrix)
MINDSPEED_CORE = """\
schema-version: 2
layer: {distribution: mindspeed, adapter: torch-npu}
releases:
  - version: 26.1.0
    status: supported
    python: ">=3.10,<3.11"
    torch: 2.7.1
    adapter-line: 26.1.0
    dimensions: {cann: 9.1.0}
  - version: 26.0.0
    status: supported
    python: ">=3.10,<3.11"
    torch: 2.7.1
    adapter-line: 26.0.0
    dimensions: {cann: 9.0.0}
"""
MINDSPEED_LLM = """\
schema-version: 2
layer: {distribution: mindspeed-llm, adapter: torch-npu}
releases:
  - version: 26.1.0
    status: supported
    python: ">=3.10,<3.11"
    torch: 2.7.1
    adapter-line: 26.1.0
    requires: {megatron-core: 0.12.1, mindspeed: 26.1.0}
    dimensions: {cann: 9.1.0}
  - version: 26.0.0
    status: supported
    python: ">=3.10,<3.11"
    torch: 2.7.1
    adapter-line: 26.0.0
    requires: {megatron-core: 0.12.1, mindspeed: 26.0.0}
    dimensions: {cann: 9.0.0}
"""
# a plugin of vllm-ascend: a layer requiring a layer of another family
ASCEND_PLUGIN = """\
schema-version: 2
layer: {distribution: ascend-plugin, adapter: torch-npu}
releases:
  - {version: 1.0.0, status: supported, torch: 2.10.0, requires: {vllm-ascend: 0.23.0}}
  - {version: 0.9.0, status: experimental, torch: 2.10.0, requires: {vllm-ascend: 0.23.0rc1}}
"""
# a layer pinning torch-npu 2.5.1, a build for CANN 8.1.RC1 only
OLD_LAYER = """\
schema-version: 2
layer: {distribution: old-layer, adapter: torch-npu}
releases:
  - {version: 1.0.0, status: supported, torch: 2.5.1, adapter: 2.5.1}
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(text)
    return path


def _uninstalled(fix: dict) -> List[str]:
    return [name for c in fix["commands"] if c.startswith("pip uninstall") for name in c.split()[3:]]


def _no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode != 5, proc.stderr


# -- the acceptance cases -------------------------------------------------------------------------


def test_a_layer_that_requires_a_layer_gets_fixes_and_each_is_what_it_says(tmp_path):
    layers = tmp_path / "layers"
    matrices = [
        "--matrix",
        str(ADAPTER),
        "--matrix",
        str(_write(layers, "mindspeed-llm", MINDSPEED_LLM)),
        "--matrix",
        str(_write(layers, "mindspeed", MINDSPEED_CORE)),
    ]
    installed = {
        "torch": "2.9.0",  # the layers pin 2.7.1: a fix is needed
        "torch-npu": "2.9.0.post6",
        "mindspeed-llm": "26.1.0",
        "mindspeed": "26.1.0",
        "megatron-core": "0.12.1",
    }
    env = _environment(tmp_path / "env", python="3.11", **installed)
    code, doc = _check(env, *matrices, "--set", "cann=9.1.0")
    answer = doc["checks"][0]
    assert code == 1, answer["reasons"]
    assert "mindspeed-llm 26.1.0 pins torch ==2.7.1, found 2.9.0" in answer["reasons"]
    assert answer["fixes"], answer["stack"]
    for fix in answer["fixes"]:  # asked again, each fix is what it says (a new Python is a new environment)
        after, sets = _applied(tmp_path, installed, fix)
        again_code, again = _check(after, *matrices, *sets)
        assert again["checks"][0]["verdict"] == fix["cell"]["status"], (fix["summary"], again["checks"][0]["reasons"])
        assert again_code in (0, 3)


def test_a_held_layer_on_another_cann_names_the_cann_and_every_way_out_is_supported_again(tmp_path):
    old = str(_write(tmp_path / "layers", "old-layer", OLD_LAYER))
    matrices = ["--matrix", str(ADAPTER), "--matrix", old]
    installed = {"torch": "2.5.1", "torch-npu": "2.5.1", "old-layer": "1.0.0"}
    env = _environment(tmp_path / "env", python="3.11", **installed)
    code, doc = _check(env, *matrices, "--set", "cann=8.5.0", "--companion", "old-layer=1.0.0")
    answer = doc["checks"][0]
    assert code == 1
    conflict = answer["stack"]["conflict"]
    assert "cann 8.1.RC1" in conflict and "cann 8.5.0" in conflict and "python" not in conflict.lower(), conflict
    fixes = answer["fixes"]
    gave_up_cann = [f for f in fixes if f["cell"]["dimensions"]["cann"] != "8.5.0"]
    gave_up_layer = [f for f in fixes if "old-layer" in _uninstalled(f)]
    assert gave_up_cann and gave_up_layer and len(gave_up_cann) + len(gave_up_layer) == len(fixes)
    for fix in fixes:
        after, sets = _applied(tmp_path, installed, fix)
        # a way out without the layer is a stack without it: its matrix is no longer asked about
        kept = ["--matrix", old, "--companion", "old-layer=1.0.0"] if "old-layer" not in _uninstalled(fix) else []
        again_code, again = _check(after, "--matrix", str(ADAPTER), *sets, *kept)
        assert again_code == 0 and again["checks"][0]["verdict"] == "supported", (fix["summary"], again["checks"][0])


def test_two_layers_that_need_two_torches_get_a_way_out_without_each_in_one_order_whatever_torch_is_installed(
    tmp_path,
):
    orders = []
    for torch, adapter in (("2.10.0", "2.10.0.post4"), ("2.7.1", "2.7.1.post8")):
        installed = dict(V023, **{"mindspeed-llm": "26.1.0", "megatron-core": "0.12.1", "mindspeed": "0.12.1"})
        installed.update({"torch": torch, "torch-npu": adapter})
        env = _environment(tmp_path / f"env-{torch}", python="3.10", **installed)
        code, doc = _check(env, "--set", "cann=9.1.0")
        answer = doc["checks"][0]
        assert code == 1
        assert "torch ==2.10.0" in answer["stack"]["conflict"] and "torch ==2.7.1" in answer["stack"]["conflict"]
        orders.append([tuple(_uninstalled(f)) for f in answer["fixes"]])
    assert orders[0] == orders[1], orders
    # the rule (docs/stacks.md): as good a status, one layer given up each, the newest stack first
    assert orders[0] == [("mindspeed-llm",), ("vllm-ascend",)]


def test_a_cann_that_could_not_be_detected_is_assumed_once_and_the_need_it_leaves_unsatisfied_is_said(tmp_path):
    env = _environment(tmp_path / "env", **dict(V023, **{"torch-npu": "2.10.0.post2"}))
    code, doc = _check(env)  # no --set cann: this machine has no CANN to detect
    answer = doc["checks"][0]
    if answer["environment"]["dimensions"]["cann"]["value"] is not None:
        return  # a machine with CANN installed: nothing to assume
    assert code == 1
    assumed = [a for a in answer["assumptions"] if a.startswith("cann ")]
    assert assumed == [
        "cann could not be detected; assumed 9.1.0, which vllm-ascend 0.23.0 needs "
        "(torch-npu 2.10.0.post2 (release 26.0.0) needs 9.0.0: not satisfied)"
    ]
    assert any(
        "torch-npu 2.10.0.post2 (release 26.0.0) needs cann 9.0.0 while vllm-ascend 0.23.0 needs 9.1.0" in r
        for r in answer["reasons"]
    ), answer["reasons"]
    assert answer["fixes"][0]["commands"] == ["pip install 'torch-npu==2.10.0.post4'"]


def test_an_experimental_stack_gets_no_experimental_fix_but_says_there_is_no_better_combination():
    layer = _layer(
        "schema-version: 2\nlayer: {distribution: my-layer, adapter: torch-npu}\nreleases:\n"
        "  - {version: 0.4.0, status: experimental, torch: 2.10.0, adapter: 2.10.0.post4}\n"
    )
    stack = _stack("3.11", "2.10.0", "2.10.0.post4", "9.1.0", [layer], {"my-layer": "0.4.0"})
    assert judge_stack(_MATRIX, [layer], stack, TODAY).status is Status.EXPERIMENTAL
    found = stack_fixes(_MATRIX, [layer], stack, Held(), TODAY)
    assert found.fixes == ()
    assert found.reason is not None and found.reason.startswith("no better combination: ")


def test_a_layer_the_adapter_supports_nowhere_is_named_and_given_up():
    layer = _layer(
        "schema-version: 2\nlayer: {distribution: fast-layer, adapter: torch-npu}\nreleases:\n"
        "  - {version: 1.0.0, status: supported, torch: 2.13.0, adapter-line: 26.1.0, dimensions: {cann: 9.1.0}}\n"
    )
    stack = _stack("3.11", "2.13.0", "2.12.0", "9.1.0", [layer], {"fast-layer": "1.0.0"})
    found = stack_fixes(_MATRIX, [layer], stack, Held(), TODAY)
    assert found.conflict is not None and found.conflict.startswith("fast-layer 1.0.0 needs torch 2.13.0")
    assert [f.summary.split(":")[0] for f in found.fixes] == ["without fast-layer"]
    # holding a CANN no release supports as well: no way out at all, and a sentence that says why
    cann = _MATRIX.dimension("cann").value("7.7.7")
    stack = stack._replace(env=stack.env._replace(dimensions=(("cann", cann), ("arch", _arch("aarch64")))))
    found = stack_fixes(_MATRIX, [layer], stack, Held((("cann", cann),)), TODAY)
    assert found.fixes == ()
    assert found.conflict == "no torch-npu release supports cann 7.7.7"
    assert found.reason is not None and found.reason.startswith("no fix: ") and "it would take" in found.reason


# -- layers requiring layers, cycles, and environments that cannot be read ------------------------


def test_a_chain_of_twenty_layers_a_cycle_and_a_self_require_never_end_in_a_traceback(tmp_path):
    folder = tmp_path / "layers"
    chain = []
    for i in range(1, 21):
        below = f"requires: {{chain-{i + 1}: 1.0.0}}, " if i < 20 else ""
        chain.append(
            _write(
                folder,
                f"chain-{i}",
                f"schema-version: 2\nlayer: {{distribution: chain-{i}, adapter: torch-npu}}\nreleases:\n"
                f"  - {{version: 1.0.0, status: supported, torch: 2.10.0, adapter: 2.10.0.post4, {below}"
                "dimensions: {cann: 9.1.0}}\n",
            )
        )
    installed = {f"chain-{i}": "1.0.0" for i in range(1, 21)}
    env = _environment(tmp_path / "env", torch="2.9.0", **{"torch-npu": "2.9.0.post6"}, **installed)
    matrices = [a for path in [ADAPTER, *chain] for a in ("--matrix", str(path))]
    code, doc = _check(env, *matrices, "--set", "cann=9.1.0")
    assert code == 1 and doc["checks"][0]["fixes"][0]["commands"] == [
        "pip install 'torch==2.10.0' 'torch-npu==2.10.0.post4'"
    ]
    cycle = [
        _write(
            folder,
            name,
            f"schema-version: 2\nlayer: {{distribution: {name}, adapter: torch-npu}}\nreleases:\n"
            f"  - version: 1.0.0\n    status: supported\n    requires: {{{other}: 1.0.0}}\n",
        )
        for name, other in (("cyc-a", "cyc-b"), ("cyc-b", "cyc-a"), ("selfish", "selfish"))
    ]
    for files in ([cycle[0], cycle[1]], [cycle[2]]):
        proc = _cli("validate", *map(str, files), str(ADAPTER))
        _no_traceback(proc)
        assert proc.returncode == 2
        # refused at the pin that closes the cycle: line 6, the requires: of the release
        assert f"{files[-1].name}:6:" in proc.stderr and ("cycle" in proc.stderr or "requires itself" in proc.stderr)
        checked = _cli(
            "check", "--json", "--no-binary", "--env", str(env), "--set", "arch=aarch64", "--matrix", str(ADAPTER),
            *[a for f in files for a in ("--matrix", str(f))],
        )  # fmt: skip
        _no_traceback(checked)
        assert checked.returncode == 2 and json.loads(checked.stdout)["diagnostics"]


def test_metadata_that_is_not_utf8_and_a_looping_dist_info_are_reported_and_skipped(tmp_path):
    env = _environment(tmp_path / "env", **V023)
    site = env / "lib" / "python3.11" / "site-packages"
    bad = site / "bad_name-1.0.dist-info"
    bad.mkdir()
    (bad / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: b\xe9d\xff\nVersion: 1.0\n")
    (bad / "entry_points.txt").write_bytes(b"[adapter_matrix.matrices]\nb\xff = bad:compat.yaml\n")
    (site / "vllm-0.23.0.dist-info" / "METADATA").write_bytes(
        b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.23.0\nSummary: \xff\xfe\n"
    )
    loop = site / "loop-1.0.dist-info"
    os.symlink(loop, loop)
    shutil.rmtree(site / "triton_ascend-3.2.2.dist-info")
    os.symlink(site / "triton_ascend-3.2.2.dist-info", site / "triton_ascend-3.2.2.dist-info")
    for extra in ((), ("--json",)):
        proc = _cli("check", "--no-binary", "--env", str(env), "--set", "arch=aarch64", "--set", "cann=9.1.0", *extra)
        _no_traceback(proc)
        assert "bad_name-1.0.dist-info: skipped" in proc.stderr, proc.stderr
        assert "loop-1.0.dist-info: skipped" in proc.stderr
        assert proc.returncode in (0, 1), proc.stderr


def test_an_internal_error_has_its_own_exit_code_and_a_json_document_that_says_so(tmp_path, capsys, monkeypatch):
    from adapter_matrix.check.stack import search as module
    from adapter_matrix.cli.quick import main
    from adapter_matrix.errors import EXIT_INTERNAL

    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(module, "_search", broken)
    old = str(_write(tmp_path, "old-layer", OLD_LAYER))
    argv = ["check", "--json", "--no-binary", "--matrix", str(ADAPTER), "--matrix", old, "--python", "3.11"]
    argv += ["--torch", "2.5.1", "--adapter", "2.5.1", "--set", "arch=aarch64", "--set", "cann=8.5.0"]
    assert main(argv + ["--companion", "old-layer=1.0.0"]) == EXIT_INTERNAL == 5
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["internal"] is True and document["exit_code"] == 5
    assert document["error"].startswith("internal error: RuntimeError: a bug")
    assert "Traceback" not in err


# -- the fix search as a property: random stacks of the fixtures, layers requiring layers --------

_MATRIX = load_any(ADAPTER).matrix


def _layer(text: str, name: str = "layer.yaml") -> Layer:
    result = load_any_bytes(text.encode(), name)
    return result.layer  # type: ignore[union-attr]  # a layer's text


_LAYERS = {
    "vllm-ascend": load_any(VLLM_ASCEND).layer,
    "torchvision-npu": load_any(TORCHVISION_NPU).layer,
    "mindspeed-llm": _layer(MINDSPEED_LLM, "mindspeed-llm.yaml"),
    "mindspeed": _layer(MINDSPEED_CORE, "mindspeed.yaml"),
    "ascend-plugin": _layer(ASCEND_PLUGIN, "ascend-plugin.yaml"),
    "old-layer": _layer(OLD_LAYER, "old-layer.yaml"),
}
assert MINDSPEED.exists()  # the fixture this test's MindSpeed-LLM is shortened from


def _stack(
    python: str,
    torch: str,
    adapter: str,
    cann: Optional[str],
    layers: List[Layer],
    packages: Dict[str, Optional[str]],
    arch: str = "aarch64",
) -> Stack:
    dims = (("cann", _MATRIX.dimension("cann").value(cann) if cann else None), ("arch", _arch(arch)))
    env = Environment(
        python=PythonVersion.parse(python), torch=Version(torch), adapter=Version(adapter), dimensions=dims
    )
    return installed_stack(env, layers, packages)


def _arch(value: str):
    return _MATRIX.dimension("arch").value(value)


@st.composite
def _stacks(draw):
    """A random stack: 1 to 4 layers (MindSpeed-LLM on MindSpeed, a plugin on vllm-ascend among
    them) at any release or none, anything below them, a CANN or none, held values or not."""
    names = draw(st.lists(st.sampled_from(sorted(_LAYERS)), min_size=1, max_size=4, unique=True))
    layers = [_LAYERS[n] for n in names]
    packages: Dict[str, Optional[str]] = {}
    for layer in layers:
        packages[layer.name] = draw(st.sampled_from([None, *(str(r.version) for r in layer.releases)]))
    for name in stack_packages(layers):
        if name not in packages:
            named = sorted(
                {str(v) for lay in layers for r in lay.releases for p in r.packages if p.name == name for v in p.exact}
            )
            packages[name] = draw(st.sampled_from([None, *named])) if named else None
    torch = draw(st.sampled_from([str(p) for line in _MATRIX.torch for p in line.patches if p >= Version("2.5")]))
    adapter = draw(st.sampled_from(sorted({str(r.version) for r in _MATRIX.releases})))
    cann = draw(st.sampled_from([None, *(str(v) for v in _MATRIX.dimension("cann").values)]))
    python = draw(st.sampled_from(["3.9", "3.10", "3.11"]))
    # on x86_64 torch-npu pairs with torch's +cpu build: PyPI's plain torch needs a fix there
    arch = draw(st.sampled_from(["aarch64", "x86_64"]))
    stack = _stack(python, torch, adapter, cann, layers, packages, arch)
    held_dims = (("cann", stack.env.dimension("cann")),) if cann and draw(st.booleans()) else ()
    held_layers = tuple(
        (layer.name, stack.version(layer.name))
        for layer in layers
        if stack.version(layer.name) is not None and draw(st.booleans())
    )
    return layers, stack, Held(held_dims, held_layers)  # type: ignore[arg-type]  # versions are set


def _worse(a: Fix, b: Fix, changed_a: frozenset, changed_b: frozenset) -> bool:
    """``a`` is worse than ``b``: a worse status, or as good a one for a strict superset of changes
    (``changed_a``, ``changed_b``: as the ways out compare them, an uninstalled layer apart)."""
    ra, rb = USABLE.index(a.cell.status), USABLE.index(b.cell.status)
    return ra > rb or (ra == rb and changed_a > changed_b)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(_stacks())
def test_every_refusal_has_a_fix_or_a_reason_no_fix_is_worse_than_one_it_outranks_and_each_is_what_it_says(drawn):
    layers, stack, held = drawn
    now = judge_stack(_MATRIX, layers, stack, TODAY).status
    if now is Status.SUPPORTED:
        return
    found = stack_fixes(_MATRIX, layers, stack, held, TODAY, now=now)
    assert found.fixes or found.reason, (found, stack)
    if found.reason is not None:
        assert found.reason.startswith(("no fix: ", "no better combination: ")) and not found.reason.endswith(" ")
    if found.conflict is not None:
        assert not found.conflict.endswith((" ", ":", "on")), found.conflict
    changed = [compared_changes(fix, stack, after, layers) for fix, after in zip(found.fixes, found.stacks)]
    for i, earlier in enumerate(found.fixes):
        for j, later in enumerate(found.fixes[i + 1 :], i + 1):
            assert not _worse(earlier, later, changed[i], changed[j]), (earlier.summary, later.summary)
    for fix, after in zip(found.fixes, found.stacks):
        kept = [layer for layer in layers if after.version(layer.name) is not None]
        again = judge_stack(_MATRIX, kept, after, TODAY)
        assert again.status is fix.cell.status, (fix.summary, again.reasons)
        assert again.status.rank < now.rank, (fix.summary, now)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,  # not the repository: its ./compat.yaml would be judged
        env={**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1"},
    )


def test_two_layers_that_agree_on_another_cann_get_that_way_out_first_then_each_without():
    a = _layer(
        "schema-version: 2\nlayer: {distribution: layer-a, adapter: torch-npu}\nreleases:\n"
        "  - {version: 1.0.0, status: supported, torch: 2.10.0, adapter: 2.10.0.post4, dimensions: {cann: 9.1.0}}\n"
        "  - {version: 0.9.0, status: supported, torch: 2.7.1, adapter: 2.7.1.post4, dimensions: {cann: 9.0.0}}\n",
        "layer-a.yaml",
    )
    b = _layer(
        "schema-version: 2\nlayer: {distribution: layer-b, adapter: torch-npu}\nreleases:\n"
        "  - {version: 1.0.0, status: supported, torch: 2.7.1, adapter: 2.7.1.post4, dimensions: {cann: 9.0.0}}\n",
        "layer-b.yaml",
    )
    stack = _stack("3.11", "2.10.0", "2.10.0.post4", "9.1.0", [a, b], {"layer-a": "1.0.0", "layer-b": "1.0.0"})
    cann = stack.env.dimension("cann")
    found = stack_fixes(_MATRIX, [a, b], stack, Held((("cann", cann),), (("layer-b", Version("1.0.0")),)), TODAY)
    assert found.conflict == "layer-b 1.0.0 needs cann 9.0.0; you hold cann 9.1.0", found.conflict
    ways = [f.summary.split(":")[0] for f in found.fixes]
    # a held value before a layer: the stack on CANN 9.0.0 keeps both layers (layer-a at 0.9.0)
    assert ways[0] == "without cann 9.1.0" and "without layer-b" in ways, ways
    first = found.stacks[0]
    assert str(first.env.dimension("cann")) == "9.0.0" and str(first.version("layer-a")) == "0.9.0"


def test_on_x86_64_pypis_plain_torch_is_moved_to_its_cpu_build_and_nothing_else_changes(tmp_path):
    # torch-npu pairs with torch's +cpu build on x86_64: PyPI's 2.10.0 must change in every fix.
    # Trying to keep it, subset by subset, spent the search before it reached the nearest way out
    # and gave "use Python 3.12" instead
    installed = dict(V023, **{"torchvision-npu": "0.21.0", "torchvision": "0.21.0"})
    env = _environment(tmp_path / "env", **installed)
    code, doc = _check(env, "--set", "arch=x86_64", "--set", "cann=9.1.0")
    answer = doc["checks"][0]
    assert code == 1
    assert answer["stack"]["conflict"] == "torchvision-npu 0.21.0+7.1.0 needs cann 8.2.RC1; you hold cann 9.1.0"
    first = answer["fixes"][0]
    assert first["commands"] == [
        "pip uninstall -y torchvision-npu",
        "pip install 'torch==2.10.0+cpu' --index-url https://download.pytorch.org/whl/cpu",
    ], first["summary"]
    assert first["cell"]["python"] == "3.11"
    # uv's words, as the adapter's own fixes say them: the same version, another build
    assert "reinstall torch from 2.10.0 to 2.10.0+cpu" in first["summary"], first["summary"]
    assert first["diff"] == ["- torch==2.10.0", "+ torch==2.10.0+cpu"], first["diff"]
    after, sets = _applied(tmp_path, installed, first)
    again_code, again = _check(after, *sets)
    assert again_code == 0, again["checks"][0]["reasons"]


def test_a_conflict_only_through_a_required_layer_is_named_by_the_dimension_that_decides(tmp_path):
    # MindSpeed-LLM says nothing of CANN itself: it requires MindSpeed, whose release needs 9.1.0
    llm = """\
schema-version: 2
layer: {distribution: mindspeed-llm, adapter: torch-npu}
releases:
  - {version: 26.1.0, status: supported, torch: 2.7.1, requires: {mindspeed: 26.1.0}}
"""
    layers = tmp_path / "layers"
    matrices = ["--matrix", str(ADAPTER)]
    matrices += ["--matrix", str(_write(layers, "mindspeed-llm", llm))]
    matrices += ["--matrix", str(_write(layers, "mindspeed", MINDSPEED_CORE))]
    installed = {"torch": "2.7.1", "torch-npu": "2.7.1.post8", "mindspeed-llm": "26.1.0", "mindspeed": "26.1.0"}
    env = _environment(tmp_path / "env", python="3.10", **installed)
    code, doc = _check(env, *matrices, "--set", "cann=9.0.0", "--companion", "mindspeed-llm=26.1.0")
    answer = doc["checks"][0]
    assert code == 1
    assert answer["stack"]["conflict"] == (
        "mindspeed-llm 26.1.0 requires mindspeed ==26.1.0, which needs cann 9.1.0; you hold cann 9.0.0"
    )
