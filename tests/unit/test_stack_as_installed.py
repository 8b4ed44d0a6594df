"""Stacks as users install them, checked from outside (exploratory testing of `check`, `check
--emit` and `env`): each test is a case that once answered wrongly. Environments are prefixes of
dist-info folders and clones are small git repositories, made here (no network)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

from .test_recall import MINIMAL, _dist
from .test_recall import _check as _warm_check
from .test_stack_installs import ADAPTER, VLLM_ASCEND, _check, _clone, _device_check, _device_env, _git, _layer, _prefix


def _check_in(cwd: Path, env: Path, *args: str) -> Tuple[int, dict, str]:
    """``check --json --env ENV ARGS`` run in the folder ``cwd`` (where a ./compat.yaml is found)."""
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--json", "--no-binary", "--env", str(env), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}, "ADAPTER_MATRIX_NO_MEMO": "1"},
    )
    document: Optional[dict] = json.loads(proc.stdout) if proc.stdout else None
    assert document is not None, proc.stderr
    return proc.returncode, document, proc.stderr


def test_a_layer_given_alone_is_judged_on_the_matrix_its_installed_adapter_registers(tmp_path):
    # `check --matrix LAYER.yaml`, or `check` in the layer's own clone (its ./compat.yaml): the
    # adapter below it is installed and registers its matrix, which was then "not found"
    env = tmp_path / "env"
    _prefix(env, python="3.11", torch="2.10.0", torch_npu="2.10.0.post4")
    clone = tmp_path / "MindSpeed-LLM"
    clone.mkdir()
    _layer(clone / "compat.yaml", "mindspeed-llm", "26.1.0", "    torch: 2.10.0\n    adapter: 2.10.0.post4\n")
    for args in (["--matrix", str(clone / "compat.yaml")], []):
        code, doc, err = _check_in(clone, env, *args, "--set", "cann=9.1.0", "--set", "arch=aarch64")
        assert "no matrix of torch-npu was found" not in err
        (answer,) = doc["checks"]
        assert answer["adapter"] == "torch-npu" and answer["matrix"].endswith("torch_npu/compat.yaml")
        (layer,) = answer["stack"]["layers"]
        # not installed, so judged as a layer that is absent; the adapter's own verdict stands
        assert layer["name"] == "mindspeed-llm" and code != 2, err


def _rl_on_mindspeed(tmp_path: Path, url: str, ref: str, clone: Path) -> Tuple[Path, List[str]]:
    """A layer ``rl`` pinning MindSpeed at ``ref`` of ``url``, installed in a prefix, and the
    check's arguments with ``clone`` on the import path."""
    layers = tmp_path / "rl.yaml"
    pin = f"{{git: {url!r}, ref: {ref}, version: 0.12.1}}"
    _layer(layers, "rl", "1.0.0", f"    torch: 2.10.0\n    requires: {{mindspeed: {pin}}}\n")
    env = tmp_path / "env"
    _prefix(env, python="3.11", torch="2.10.0", torch_npu="2.10.0.post4", rl="1.0.0")
    return env, ["--matrix", str(layers), "--pythonpath", str(clone), "--set", "cann=9.1.0", "--set", "arch=aarch64"]


def test_a_shallow_clone_without_the_pinned_commit_is_fetched_before_it_is_checked_out(tmp_path):
    # `git clone --depth 1` holds HEAD only: `git checkout PIN` fails ("reference is not a tree")
    upstream = tmp_path / "upstream" / "MindSpeed"
    commits = _clone(upstream, "mindspeed", 3)
    clone = tmp_path / "src" / "MindSpeed"
    clone.parent.mkdir()
    _git(clone.parent, "clone", "-q", "--depth", "1", upstream.as_uri(), "MindSpeed")
    env, args = _rl_on_mindspeed(tmp_path, upstream.as_uri(), commits[1], clone)
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert code == 1
    (reason,) = [r for r in answer["reasons"] if "mindspeed" in r]
    assert "the clone does not hold the pinned commit (a shallow clone)" in reason
    commands = answer["fixes"][0]["commands"]
    assert [shlex.split(c) for c in commands] == [
        ["git", "-C", str(clone), "fetch", "origin", commits[1]],
        ["git", "-C", str(clone), "checkout", commits[1]],
    ]
    for command in commands:  # the fix, run as printed, is the supported stack
        subprocess.run(shlex.split(command), check=True, capture_output=True)
    code, doc, _err = _check(env, *args)
    assert (code, doc["checks"][0]["verdict"]) == (0, "supported"), doc["checks"][0]["reasons"]


def test_a_clone_that_holds_the_pinned_commit_is_checked_out_without_a_fetch(tmp_path):
    commits = _clone(tmp_path / "src" / "MindSpeed", "mindspeed", 3)
    clone = tmp_path / "src" / "MindSpeed"
    env, args = _rl_on_mindspeed(tmp_path, "https://gitcode.com/Ascend/MindSpeed.git", commits[1], clone)
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert code == 1 and any("1 commit past the pin" in r for r in answer["reasons"]), answer["reasons"]
    assert [shlex.split(c) for c in answer["fixes"][0]["commands"]] == [
        ["git", "-C", str(clone), "checkout", commits[1]]
    ]


def test_a_build_for_another_device_says_why_no_fix_follows_in_check_its_json_and_env(tmp_path):
    # a refusal has a fix or says why none exists (issue 66): the A2 wheel on an A3 machine had
    # neither ("fixes": [], "no_fix": null, and env said nothing after the verdict)
    env = _device_env(tmp_path, "A2")
    code, doc, _err = _device_check(env, ASCEND_DEVICE_TYPE="A3")
    answer = doc["checks"][0]
    assert code == 1 and answer["fixes"] == []
    no_fix = answer["stack"]["no_fix"]
    assert no_fix.startswith("no fix: no version the matrices name is a build of vllm-ascend for device_type A3")
    text = _run(env, "check", *_DEVICE_ARGS, ASCEND_DEVICE_TYPE="A3")
    assert no_fix in text.splitlines()
    report = _run(env, "env", *_DEVICE_ARGS, ASCEND_DEVICE_TYPE="A3")
    assert "**No fix:** no version the matrices name is a build of vllm-ascend for device_type A3" in report
    document = json.loads(_run(env, "env", "--json", *_DEVICE_ARGS, ASCEND_DEVICE_TYPE="A3"))
    assert document["adapters"][0]["no_fix"] == no_fix


def test_a_layers_own_dimension_is_said_with_where_it_was_read_in_check_its_json_and_env(tmp_path):
    # the machine's device generation decides the verdict: it was in no header, JSON or report
    env = _device_env(tmp_path, "A2")
    _code, doc, _err = _device_check(env, ASCEND_SOC_VERSION="Ascend910_9382")
    seen = doc["checks"][0]["environment"]["dimensions"]["device_type"]
    assert (seen["value"], seen["source"]) == ("A3", "env ASCEND_SOC_VERSION")
    text = _run(env, "check", *_DEVICE_ARGS, ASCEND_SOC_VERSION="Ascend910_9382")
    assert "device_type  A3  (from env ASCEND_SOC_VERSION)" in text
    report = _run(env, "env", *_DEVICE_ARGS, ASCEND_SOC_VERSION="Ascend910_9382")
    assert "| device_type | A3 | env ASCEND_SOC_VERSION |" in report
    # not installed (a what-if) and not detected: nothing to say of it
    _code, doc, _err = _check(
        env, *_DEVICE_ARGS, "--companion", "vllm-ascend=0.23.0", "--torch", "2.10.0", "--adapter", "2.10.0.post4"
    )
    assert "device_type" not in doc["checks"][0]["environment"]["dimensions"]


_DEVICE_ARGS = (
    "--matrix", str(ADAPTER), "--matrix", str(VLLM_ASCEND),
    "--set", "cann=9.1.0", "--set", "arch=aarch64", "--set", "soc=Ascend910B",
)  # fmt: skip


def _run(env: Path, command: str, *args: str, **variables: str) -> str:
    """``adapter-matrix COMMAND --env ENV ARGS`` as text, with no ASCEND_ variable but ``variables``."""
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", command, "--env", str(env), "--no-binary", *args],
        capture_output=True,
        text=True,
        cwd=env,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")},
            "ADAPTER_MATRIX_NO_MEMO": "1",
            "NO_COLOR": "1",
            "COLUMNS": "400",
            **variables,
        },
    )
    assert proc.stdout, proc.stderr
    return proc.stdout


def _emitted(tmp_path: Path, fmt: str, cpu_index: str) -> str:
    """``check --emit FMT`` on Python 3.13 with vllm-ascend 0.23.0 (Python <3.13): the fix is
    another Python; torch_npu's CPU index is ``cpu_index`` (a folder: no network)."""
    adapter = tmp_path / "torch_npu.yaml"
    adapter.write_text(ADAPTER.read_text().replace("https://download.pytorch.org/whl/cpu", cpu_index))
    env = tmp_path / "env"
    if not env.exists():  # asked again in one test
        installed = {"torch": "2.10.0+cpu", "torch_npu": "2.10.0.post4", "vllm_ascend": "0.23.0", "vllm": "0.23.0"}
        _prefix(env, python="3.13", triton_ascend="3.2.2", **installed)
    args = ["--matrix", str(adapter), "--matrix", str(VLLM_ASCEND), "--set", "cann=9.1.0", "--set", "arch=x86_64"]
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--no-binary", "--env", str(env), "--emit", fmt, *args],
        capture_output=True,
        text=True,
        cwd=env,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")},
            "ADAPTER_MATRIX_NO_MEMO": "1",
            "ADAPTER_MATRIX_INDEX_URL": cpu_index,
        },
    )
    assert proc.returncode == 0, proc.stderr
    # reading hashes waits for each index (seconds when one does not answer): said as it starts
    assert ("reading each package's file hashes from its index" in proc.stderr) == (fmt == "requirements")
    return proc.stdout


def test_an_emitted_fix_onto_another_python_says_which_python_reads_it(tmp_path):
    # the fix is "use Python 3.12": `uv pip install -r FILE` in the 3.13 environment installs
    # nothing the fix means, and a [tool.uv] block cannot choose the interpreter
    missing = (tmp_path / "no-index").as_uri()
    text = _emitted(tmp_path, "requirements", missing)
    assert text.splitlines()[1] == (
        "# use, in an environment of Python 3.12: uv pip install --python 3.12 -r THIS_FILE, "
        "or python3.12 -m pip install -c THIS_FILE ... (-r THIS_FILE when it has hashes)"
    )
    block = _emitted(tmp_path, "uv", missing)
    assert "# on Python 3.12: uv python pin 3.12 (a [tool.uv] block cannot choose it)" in block.splitlines()


def test_an_index_that_cannot_be_read_is_not_said_to_give_no_hashes(tmp_path):
    missing = tmp_path / "no-index"
    text = _emitted(tmp_path, "requirements", missing.as_uri())
    assert (
        f"# no hashes: the index of torch ({missing.as_uri()}) could not be read, "
        "and pip's hash checking needs every one"
    ) in text.splitlines()
    # an index that answers without a sha256 for the release is said as before
    (missing / "torch").mkdir(parents=True)
    (missing / "torch" / "index.html").write_text(
        '<a href="torch-2.10.0+cpu-cp312-cp312-linux_x86_64.whl">torch-2.10.0+cpu-cp312-cp312-linux_x86_64.whl</a>\n'
    )
    text = _emitted(tmp_path, "requirements", missing.as_uri())
    assert "# no hashes: the index gave none for torch, and pip's hash checking needs every one" in text.splitlines()


def test_env_reads_a_pinned_package_whose_metadata_is_not_utf8_as_check_does(tmp_path):
    # a Summary in another encoding: check reads the version; env ended in an internal error
    env = _device_env(tmp_path, "A2")
    site = env / "lib" / "python3.11" / "site-packages"
    (site / "vllm-0.23.0.dist-info" / "METADATA").write_bytes(
        b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.23.0\nSummary: \xff\xfe\n"
    )
    report = _run(env, "env", *_DEVICE_ARGS, ASCEND_SOC_VERSION="Ascend910B1")
    assert "| vllm | 0.23.0 | pinned | wheel from an index |" in report


def test_a_venvs_lib64_link_is_read_once_and_env_says_what_check_skipped(tmp_path):
    env = _device_env(tmp_path, "A2")
    (env / "lib64").symlink_to("lib")  # as python -m venv makes it on Linux
    site = env / "lib" / "python3.11" / "site-packages"
    (site / "loop.dist-info").symlink_to("loop.dist-info")
    for command in ("check", "env"):
        proc = subprocess.run(
            [sys.executable, "-m", "adapter_matrix", command, "--env", str(env), "--no-binary", "--set", "cann=9.1.0"],
            capture_output=True,
            text=True,
            cwd=env,
            env={**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1", "ASCEND_SOC_VERSION": "Ascend910B1"},
        )
        warned = [line for line in proc.stderr.splitlines() if "loop.dist-info: skipped" in line]
        assert len(warned) == 1 and str(site / "loop.dist-info") in warned[0], (command, proc.stderr)


def test_a_dimension_a_layer_owns_is_read_every_time_not_remembered(tmp_path):
    # the memo was refused for an adapter's detected dimension but not for a layer's: a wheel
    # built for generation A stayed "supported" after MYGEN said the machine is B
    site, work, cache = tmp_path / "site", tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    (work / "compat.yaml").write_text(MINIMAL)
    _dist(site, "torch", "2.13.0")
    _dist(site, "tiny-adapter", "0.1.0")
    _dist(site, "lay", "1.0.0")
    (site / "lay").mkdir()
    (site / "lay" / "_build.py").write_text("gen = 'A'\n")
    (work / "layer.yaml").write_text(
        "schema-version: 2\n"
        "layer:\n  distribution: lay\n  adapter: tiny-adapter\n"
        "  dimensions:\n    gen:\n      kind: enum\n      values: [A, B]\n      detect: [{env: MYGEN}]\n"
        "      built: [{file: lay/_build.py, regex: 'gen = .(?P<version>[AB])'}]\n"
        "releases:\n  - {version: 1.0.0, status: supported, torch: 2.13.0, adapter: 0.1.0}\n"
    )
    project = (site, work, cache)
    args = ("--matrix", "compat.yaml", "--matrix", "layer.yaml", "--no-binary")
    on_a = _warm_check(project, *args, env={"MYGEN": "A"})
    on_b = _warm_check(project, *args, env={"MYGEN": "B"})
    assert on_a.returncode == 0, on_a.stdout + on_a.stderr
    assert on_b.returncode == 1 and "this machine is gen B (env MYGEN)" in on_b.stdout, on_b.stdout


def test_a_checkout_at_its_pin_with_edited_files_says_so(tmp_path):
    # `git checkout PIN` then an edit: the files Python imports are no longer the pinned commit
    commits = _clone(tmp_path / "src" / "MindSpeed", "mindspeed", 2, tag=(0, "v0.12.0"))
    clone = tmp_path / "src" / "MindSpeed"
    env, args = _rl_on_mindspeed(tmp_path, "https://gitcode.com/Ascend/MindSpeed.git", commits[1], clone)
    code, doc, _err = _check(env, *args)
    assert code == 0 and doc["checks"][0]["assumptions"] == []
    (clone / "mindspeed" / "__init__.py").write_text("patched = True\n")
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert (code, answer["verdict"]) == (0, "supported")  # judged by its commit, and said
    assert answer["assumptions"] == [
        f"mindspeed: checkout {clone} is at rl 1.0.0's pinned commit {commits[1][:12]} with uncommitted "
        "changes: judged by its commit, which its files no longer are"
    ]
    (found,) = [p for p in answer["stack"]["provenance"] if p["name"] == "mindspeed"]
    assert found["past"] == "1 commit past v0.12.0, with uncommitted changes"


def test_env_names_a_plugins_distribution_as_check_does(tmp_path):
    # the dist-info folder says torch_npu; check's report and docs/env.md say torch-npu
    env = _device_env(tmp_path, "A2")
    site = env / "lib" / "python3.11" / "site-packages"
    (site / "torch_npu" / "__init__.py").write_text("def _autoload():\n    pass\n")
    info = site / "torch_npu-2.10.0.post4.dist-info" / "entry_points.txt"
    info.write_text(info.read_text() + "\n[torch.backends]\ntorch_npu = torch_npu:_autoload\n")
    report = _run(env, "env", *_DEVICE_ARGS, ASCEND_SOC_VERSION="Ascend910B1")
    assert "- torch.backends: torch_npu = torch_npu:_autoload (torch-npu 2.10.0.post4)" in report.splitlines()


def test_a_layer_whose_registered_matrix_is_missing_is_said_not_silently_left_out(tmp_path):
    # vllm-ascend installed, registering vllm_ascend:compat.yaml, the file gone (a broken install):
    # check answered for the adapter alone, as if no layer were installed
    env = _device_env(tmp_path, "A2")
    site = env / "lib" / "python3.11" / "site-packages"
    (site / "vllm_ascend-0.23.0.dist-info" / "entry_points.txt").write_text(
        "[adapter_matrix.matrices]\nvllm-ascend = vllm_ascend:compat.yaml\n"
    )
    code, _doc, err = _check(env, "--set", "cann=9.1.0", "--set", "arch=aarch64")
    assert code == 0
    assert (
        "warning: vllm-ascend registers its matrix as vllm_ascend:compat.yaml (adapter_matrix.matrices), which is "
        "not found on the import path: it is not judged; reinstall vllm-ascend, or pass its compat.yaml with --matrix"
    ) in err.splitlines()


def test_a_checkout_on_the_path_that_hides_the_installed_copy_is_what_check_and_env_judge(tmp_path):
    # an image's PYTHONPATH Megatron-LM (at the pinned commit) before site-packages' megatron-core
    # 0.16.1 (ms-swift #9661): the warning said Python imports the checkout, the verdict judged the
    # wheel it hides ("pins megatron-core ==0.12.1, found 0.16.1"), and env listed the wheel only
    url = "https://github.com/NVIDIA/Megatron-LM.git"
    commits = _clone(tmp_path / "src" / "Megatron-LM", "megatron", 2, origin=url)
    clone = tmp_path / "src" / "Megatron-LM"
    layers = tmp_path / "rl.yaml"
    pin = f"{{git: {url!r}, ref: {commits[1]}, version: 0.12.1}}"
    _layer(layers, "rl", "1.0.0", f"    torch: 2.10.0\n    requires: {{megatron-core: {pin}}}\n")
    env = tmp_path / "env"
    wheel = ("0.16.1", None, {"megatron/__init__.py": "", "megatron_core-0.16.1.dist-info/top_level.txt": "megatron\n"})
    _prefix(env, python="3.11", torch="2.10.0", torch_npu="2.10.0.post4", rl="1.0.0", megatron_core=wheel)
    args = ["--matrix", str(layers), "--pythonpath", str(clone), "--set", "cann=9.1.0", "--set", "arch=aarch64"]
    code, doc, err = _check(env, *args)
    answer = doc["checks"][0]
    assert "Python imports " + str(clone / "megatron") in err
    assert (code, answer["verdict"]) == (0, "supported"), answer["reasons"]
    (found,) = [p for p in answer["stack"]["provenance"] if p["name"] == "megatron-core"]
    assert (found["kind"], found["commit"]) == ("checkout", commits[1])
    report = _run(env, "env", *args)
    assert f"| megatron-core | no version | pinned | checkout {clone}, commit {commits[1]} |" in report
    # on the path after site-packages (a .pth file), the installed copy is imported and judged
    (env / "lib" / "python3.11" / "site-packages" / "zz-megatron.pth").write_text(f"{clone}\n")
    code, doc, _err = _check(env, *args[:2], *args[4:])
    assert code == 1 and "rl 1.0.0 pins megatron-core ==0.12.1, found 0.16.1" in doc["checks"][0]["reasons"][0]


def test_set_takes_a_layers_own_dimension_as_it_takes_the_adapters(tmp_path):
    env = _device_env(tmp_path, "A2")

    def refused(value: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "adapter_matrix", "check", "--env", str(env), "--no-binary", *_DEVICE_ARGS]
            + ["--set", value],
            capture_output=True,
            text=True,
            env={**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1"},
        )
        assert proc.returncode == 2, proc.stdout
        return proc.stderr

    # a value the layer's enum does not hold was judged ("this machine is device_type A9")
    assert refused("device_type=A9") == "error: --set device_type='A9' is not one of its values (A2, A3, 310P)\n"
    # an unknown name: the refusal lists the layer's dimensions with the adapter's
    assert refused("device=A3").endswith("the matrices declare: cann, arch, soc, device_type\n")
    # an alias the layer's matrix gives (a SoC name) is its generation
    code, doc, _err = _check(env, *_DEVICE_ARGS, "--set", "device_type=Ascend910_9382")
    assert code == 1 and "this machine is device_type A3 (--set)" in doc["checks"][0]["reasons"][0]


def test_a_fix_that_changes_more_than_another_for_the_same_toolkit_step_is_left_out(tmp_path):
    # outside torch_npu 26.1.0's CANN series: "upgrade cann to 8.5.0" was followed by "upgrade cann
    # to 8.5.0, then downgrade torch and torch-npu", kept because its step's text named its own
    # release; docs/check.md rule 3 leaves out a fix that changes more for a status no better
    series = Path(__file__).parent.parent / "fixtures" / "matrices" / "torch_npu_26_1_series.yaml"
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--json", "--matrix", str(series), "--python", "3.11"]
        + ["--set", "cann=8.3.RC1", "--torch", "2.12.0", "--adapter", "2.12.0"],
        capture_output=True,
        text=True,
        env={**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1"},
    )
    fixes = json.loads(proc.stdout)["checks"][0]["fixes"]
    assert [(f["changes"], f["cell"]["dimensions"]["cann"]) for f in fixes] == [(["cann"], "8.5.0")]


def test_a_layer_whose_adapter_is_nowhere_ends_in_an_error_that_says_why(tmp_path):
    # exit 2 with a warning alone read as a verdict withheld for no reason; env said only
    # "no adapter's matrix", not that the layer's adapter is missing
    env = tmp_path / "env"
    _prefix(env, python="3.11", torch="2.10.0")
    layer = _layer(tmp_path / "rl.yaml", "rl", "1.0.0", "    torch: 2.10.0\n")
    why = "warning: rl.yaml (--matrix): layer rl sits on torch-npu, and no matrix of torch-npu was found"
    for command in ("check", "env"):
        proc = subprocess.run(
            [sys.executable, "-m", "adapter_matrix", command, "--env", str(env), "--matrix", layer.name],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1"},
        )
        lines = proc.stderr.splitlines()
        assert proc.returncode == 2 and lines[0].startswith(why), (command, proc.stderr)
        assert lines[-1].startswith("error: "), (command, proc.stderr)


def test_a_layer_checkout_past_its_tag_that_hides_the_installed_wheel_is_said(tmp_path):
    commits = _clone(tmp_path / "src" / "vllm-ascend", "vllm_ascend", 3, tag=(0, "v0.23.0"))
    env = _device_env(tmp_path, "A2")
    (env / "lib" / "python3.11" / "site-packages" / "vllm_ascend" / "__init__.py").write_text("")
    clone = tmp_path / "src" / "vllm-ascend"
    code, doc, err = _check(env, *_DEVICE_ARGS, "--pythonpath", str(clone))
    answer = doc["checks"][0]
    assert f"Python imports {clone / 'vllm_ascend'}" in err
    (found,) = [p for p in answer["stack"]["provenance"] if p["name"] == "vllm-ascend"]
    assert (found["kind"], found["commit"], found["past"]) == ("checkout", commits[-1], "2 commits past v0.23.0")
    assert (
        f"vllm-ascend: Python imports the checkout {clone} (2 commits past v0.23.0), which hides the installed "
        "vllm-ascend 0.23.0 and is at no release's tag: judged as 0.23.0"
    ) in answer["assumptions"]
    assert code == 0


def test_the_emitted_fix_that_moves_a_checkout_keeps_torchs_build_and_pins_the_commit(tmp_path):
    # a fix that moves a clone to its pinned commit emitted torch==2.10.0 (PyPI's CUDA build on
    # x86_64, not the +cpu build installed) and mindspeed==0.12.1 (a version, not the commit)
    commits = _clone(tmp_path / "src" / "MindSpeed", "mindspeed", 3)
    clone = tmp_path / "src" / "MindSpeed"
    url = "https://gitcode.com/Ascend/MindSpeed.git"
    cpu = (tmp_path / "no-index").as_uri()
    adapter = tmp_path / "torch_npu.yaml"
    adapter.write_text(ADAPTER.read_text().replace("https://download.pytorch.org/whl/cpu", cpu))
    layers = _layer(
        tmp_path / "rl.yaml",
        "rl",
        "1.0.0",
        f"    torch: 2.10.0\n    requires: {{mindspeed: {{git: {url!r}, ref: {commits[1]}, version: 0.12.1}}}}\n",
    )
    env = tmp_path / "env"
    _prefix(env, python="3.11", torch="2.10.0+cpu", torch_npu="2.10.0.post4", rl="1.0.0")
    args = ["--matrix", str(adapter), "--matrix", str(layers), "--pythonpath", str(clone)]
    args += ["--set", "cann=9.1.0", "--set", "arch=x86_64", "--no-binary", "--env", str(env)]

    def emitted(fmt: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "adapter_matrix", "check", "--emit", fmt, *args],
            capture_output=True,
            text=True,
            env={**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1", "ADAPTER_MATRIX_INDEX_URL": cpu},
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    block = emitted("uv")
    assert '    "torch==2.10.0+cpu",' in block.splitlines()
    assert any(line.startswith("torch = { index = ") for line in block.splitlines()), block  # the CPU index
    assert f'mindspeed = {{ git = "{url}", rev = "{commits[1]}" }}' in block.splitlines()
    lines = emitted("requirements").splitlines()
    assert "torch==2.10.0+cpu" in lines and f"mindspeed @ git+{url}@{commits[1]}" in lines
    assert lines[1] == "# use: pip install -r THIS_FILE, or uv pip install -r THIS_FILE (its commits are links: no -c)"
