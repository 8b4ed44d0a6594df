"""How a package of the stack was installed decides what its fix acts on and how it is said:
an editable install from a clone is moved in its clone (never replaced by pip's wheel), and a
distribution whose metadata cannot be read is said so on every surface (`check`, its
``--json``, `env`). Environments are made here as in test_stack_as_installed.py (no network)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import List

from .test_stack_as_installed import _DEVICE_ARGS, _run
from .test_stack_installs import ADAPTER, _check, _clone, _device_check, _device_env, _editable, _git, _prefix

_VLLM_ARGS = list(_DEVICE_ARGS)


def _editable_past_tag(tmp_path: Path, compiled: bool = False, tagged: bool = True) -> Path:
    """vllm-ascend installed editable from a clone 3 commits past v0.23.0 (as pip -e records it)."""
    clone = tmp_path / "src" / "vllm-ascend"
    commits = _clone(clone, "vllm_ascend", 4, tag=(0, "v0.23.0") if tagged else None)
    if compiled:
        (clone / "CMakeLists.txt").write_text("project(vllm_ascend_C)\n")
        _git(clone, "add", "-A")
        _git(clone, "commit", "-q", "-m", "kernels")
    env = tmp_path / "env"
    built = f"0.23.1.dev3+g{commits[-1][:9]}"
    installed = {"torch": "2.10.0", "torch_npu": "2.10.0.post4", "vllm": "0.23.0", "triton_ascend": "3.2.2"}
    _prefix(env, python="3.11", **installed, vllm_ascend=(built, _editable(clone), {}))
    return env


def _fix_commands(env: Path) -> List[str]:
    code, doc, _err = _check(env, *_VLLM_ARGS)
    answer = doc["checks"][0]
    assert code == 1 and answer["fixes"], answer["reasons"]
    return list(answer["fixes"][0]["commands"])


def test_an_editable_install_past_its_tag_is_checked_out_at_the_tag_not_replaced_by_a_wheel(tmp_path):
    env = _editable_past_tag(tmp_path)
    clone = tmp_path / "src" / "vllm-ascend"
    commands = _fix_commands(env)
    assert [shlex.split(c) for c in commands] == [["git", "-C", str(clone), "checkout", "v0.23.0"]]
    assert not any("pip install" in c for c in commands)  # a pure-Python editable follows its files
    text = _run(env, "check", *_VLLM_ARGS)
    assert f"fix: check out vllm-ascend v0.23.0 in {clone} (supported:" in text
    assert "vllm-ascend==0.23.0'" not in text
    report = _run(env, "env", *_VLLM_ARGS)
    assert f"**Fix:** check out vllm-ascend v0.23.0 in {clone} (supported:" in report
    for fmt in ("requirements", "uv"):  # --emit pins no wheel in the clone's place, and says so
        emitted = _run(env, "check", "--emit", fmt, *_VLLM_ARGS, ADAPTER_MATRIX_INDEX_URL=(tmp_path / "none").as_uri())
        assert "vllm-ascend==" not in emitted and "vllm==0.23.0" in emitted
        assert emitted.splitlines()[1] == (
            "# not pinned here: vllm-ascend, installed from a clone, which the fix checks out there (check's fix says how)"
        )
    for command in commands:  # run as printed, it is the supported stack, still editable
        subprocess.run(shlex.split(command), check=True, capture_output=True)
    code, doc, _err = _check(env, *_VLLM_ARGS)
    answer = doc["checks"][0]
    assert (code, answer["verdict"]) == (0, "supported"), answer["reasons"]
    assert answer["stack"]["layers"][0]["provenance"]["kind"] == "editable"


def test_an_editable_install_with_compiled_extensions_is_rebuilt_in_place_after_the_checkout(tmp_path):
    env = _editable_past_tag(tmp_path, compiled=True)
    clone = tmp_path / "src" / "vllm-ascend"
    assert [shlex.split(c) for c in _fix_commands(env)] == [
        ["git", "-C", str(clone), "checkout", "v0.23.0"],
        ["pip", "install", "--no-deps", "--no-build-isolation", "-e", str(clone)],
    ]


def test_a_clone_without_the_releases_tag_gets_a_step_by_hand_naming_the_version_not_a_pip_line(tmp_path):
    env = _editable_past_tag(tmp_path, tagged=False)
    clone = tmp_path / "src" / "vllm-ascend"
    _code, doc, _err = _check(env, *_VLLM_ARGS)
    fix = doc["checks"][0]["fixes"][0]
    assert fix["commands"] == [], fix
    assert fix["manual"] == [
        f"check out vllm-ascend 0.23.0 in {clone} (its clone holds no tag v0.23.0 or 0.23.0; "
        "keep it installed from the clone: a wheel from pip would replace it)"
    ]
    assert f"    by hand: check out vllm-ascend 0.23.0 in {clone}" in _run(env, "check", *_VLLM_ARGS)


def test_a_malformed_direct_url_json_is_an_unknown_source_in_check_and_env(tmp_path):
    env = tmp_path / "env"
    installed = {"torch": "2.10.0", "torch_npu": "2.10.0.post4", "vllm": "0.23.0", "triton_ascend": "3.2.2"}
    site = _prefix(env, python="3.11", **installed, vllm_ascend="0.23.0")
    folder = site / "vllm_ascend-0.23.0.dist-info"
    (folder / "direct_url.json").write_text("{not json")
    said = f"unknown source: {folder / 'direct_url.json'} is not valid JSON"
    _code, doc, _err = _check(env, *_VLLM_ARGS)
    provenance = doc["checks"][0]["stack"]["layers"][0]["provenance"]
    assert (provenance["kind"], provenance["error"]) == ("unknown", said)
    assert f"vllm-ascend  0.23.0  ({said})" in _run(env, "check", *_VLLM_ARGS)
    report = _run(env, "env", *_VLLM_ARGS)
    assert f"| vllm-ascend | 0.23.0 | layer | {said} |" in report
    assert "| vllm-ascend | 0.23.0 | layer | wheel from an index |" not in report
    document = json.loads(_run(env, "env", "--json", *_VLLM_ARGS))
    (row,) = [p for p in document["adapters"][0]["packages"] if p["name"] == "vllm-ascend"]
    assert row["source"]["kind"] == "unknown" and row["source"]["path"] == str(folder)


def test_a_device_build_on_a_machine_whose_generation_is_undetected_says_what_it_assumed(tmp_path):
    # the A2 wheel with no ASCEND_DEVICE_TYPE nor ASCEND_SOC_VERSION was "supported", nothing said
    env = _device_env(tmp_path, "A2")
    said = (
        "device_type could not be detected ($ASCEND_DEVICE_TYPE is not set; $ASCEND_SOC_VERSION is not set); "
        "assumed A2, which the build of vllm-ascend 0.23.0 is made for (file vllm_ascend/_build_info.py)"
    )
    code, doc, _err = _device_check(env)
    answer = doc["checks"][0]
    assert (code, answer["verdict"]) == (0, "supported") and said in answer["assumptions"]
    assert f"assumed: {said}" in _run(env, "check", *_DEVICE_ARGS).splitlines()
    assert f"- assumed: {said}" in _run(env, "env", *_DEVICE_ARGS).splitlines()
    document = json.loads(_run(env, "env", "--json", *_DEVICE_ARGS))
    assert said in document["adapters"][0]["assumptions"]
    # detected, nothing is assumed
    _code, doc, _err = _device_check(env, ASCEND_DEVICE_TYPE="A2")
    assert not any(a.startswith("device_type") for a in doc["checks"][0]["assumptions"])


def test_a_torch_whose_metadata_has_no_version_is_said_installed_and_unreadable_with_a_reinstall(tmp_path):
    # check said "torch not installed" while env's row read "not installed | wheel from an index"
    env = tmp_path / "env"
    site = _prefix(env, python="3.11", torch="2.10.0", torch_npu="2.10.0.post4")
    metadata = site / "torch-2.10.0.dist-info" / "METADATA"
    metadata.write_text("Metadata-Version: 2.1\nName: torch\n")
    said = f"installed, but its metadata is unreadable ({metadata} has no Version)"
    args = ["--matrix", str(ADAPTER), "--set", "cann=9.1.0", "--set", "arch=aarch64", "--set", "soc=Ascend910B"]
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert code == 1 and answer["environment"]["torch_error"] == said
    assert answer["reasons"] == [f"torch is {said}: reinstall it"]
    fix = answer["fixes"][0]
    assert fix["summary"].startswith("reinstall torch 2.10.0 (supported")
    assert fix["commands"] == ["pip install --force-reinstall 'torch==2.10.0'"]
    text = _run(env, "check", *args).splitlines()
    assert f"torch        {said}" in text and f"unsupported: torch is {said}: reinstall it" in text
    assert not any("not installed" in line for line in text)
    report = _run(env, "env", *args)
    assert f"- torch: {said}" in report.splitlines()
    assert f"| torch | {said} | torch |" in report and "not installed" not in report
    document = json.loads(_run(env, "env", "--json", *args))
    assert document["torch_error"] == said and document["adapters"][0]["reasons"] == [f"torch is {said}: reinstall it"]
    # a readable torch writes no torch_error key
    metadata.write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n")
    _code, doc, _err = _check(env, *args)
    assert "torch_error" not in doc["checks"][0]["environment"]


def test_a_release_pinned_by_commit_is_checked_out_at_that_commit_in_the_editable_clone(tmp_path):
    # rl 0.9.0 is broken; its fix, rl 1.0.0, pins mindspeed by commit: the editable clone of
    # mindspeed is moved to it (not `pip install 'mindspeed @ git+URL@COMMIT'`, which replaces it)
    clone = tmp_path / "src" / "MindSpeed"
    commits = _clone(clone, "mindspeed", 3, tag=(0, "v0.11.0"))
    _git(clone, "checkout", "-q", "v0.11.0")
    url = "https://gitcode.com/Ascend/MindSpeed.git"
    layer = tmp_path / "rl.yaml"
    layer.write_text(
        "schema-version: 2\nlayer: {distribution: rl, adapter: torch-npu}\nreleases:\n"
        "  - version: 1.0.0\n    status: supported\n    torch: 2.10.0\n"
        f"    requires: {{mindspeed: {{git: {url!r}, ref: {commits[1]}, version: 0.12.1}}}}\n"
        "  - version: 0.9.0\n    status: broken\n    reason: broken\n    torch: 2.10.0\n"
        "    requires: {mindspeed: 0.11.0}\n"
    )
    env = tmp_path / "env"
    installed = {"torch": "2.10.0", "torch_npu": "2.10.0.post4", "rl": "0.9.0"}
    _prefix(env, python="3.11", **installed, mindspeed=("0.11.0", _editable(clone), {}))
    args = ["--matrix", str(ADAPTER), "--matrix", str(layer), "--set", "cann=9.1.0", "--set", "arch=aarch64"]
    _code, doc, _err = _check(env, *args, "--set", "soc=Ascend910B")
    fix = doc["checks"][0]["fixes"][0]
    assert [shlex.split(c) for c in fix["commands"]] == [
        ["git", "-C", str(clone), "checkout", commits[1]],
        ["pip", "install", "rl==1.0.0"],
    ]
    assert f"and check out mindspeed {commits[1]} in {clone} (supported" in fix["summary"]
