"""Layers no index serves (docs/stacks.md, "Layers no index serves"): a layer's ``source: {git:
URL}`` and each release's ``ref:`` say where a release comes from, and every surface that installs
such a release says how: ``check``'s fixes (pip's direct reference, built without isolation after
torch, or the installed clone checked out), ``check --emit uv|requirements`` and the stack table;
never ``NAME==V``, which no index serves. torchvision_npu (Ascend/vision: every tag of one
torchvision minor builds the same version) is the real case; its fixture declares its source."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load_any_bytes

from .helpers import FIXTURES
from .test_stack import _check, _environment
from .test_stack_installs import _clone, _git

ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
TORCHVISION_NPU = FIXTURES / "stacks" / "torchvision-npu.yaml"
VISION = "https://gitcode.com/Ascend/vision.git"
# torchvision-npu 0.20.1 installed: a build of tags v0.20.1-7.0.0 and v0.20.1-7.1.0 alike
INSTALLED = {"torch": "2.5.1", "torch-npu": "2.5.1.post1", "torchvision-npu": "0.20.1", "torchvision": "0.20.1"}
ON_8_2 = ("--set", "cann=8.2.RC1", "--set", "ascend_driver=25.2.0")
BUILD_7_1 = f"pip install --no-build-isolation 'torchvision-npu @ git+{VISION}@v0.20.1-7.1.0'"


def _bash_n(command: str) -> None:
    done = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
    assert done.returncode == 0, (command, done.stderr)


def _layer(text: str) -> List[str]:
    """The one-line errors loading a layer's file gives (``[]`` when it loads)."""
    head = "schema-version: 2\nlayer:\n  distribution: demo\n  adapter: torch-npu\n"
    try:
        load_any_bytes((head + text).encode(), "compat.yaml")
    except MatrixError as exc:
        return [str(d) for d in exc.diagnostics if d.severity == "error"]
    return []


# -- the schema: source and ref, validated at their lines -----------------------------------------


def test_a_ref_without_a_source_a_bad_url_a_bad_ref_and_a_ref_named_twice_are_refused_at_their_lines():
    release = "  - {version: 1.0.0, status: supported, torch: 2.10.0, ref: v1.0.0}\n"
    assert _layer(f"releases:\n{release}") == [
        "compat.yaml:6:61: demo 1.0.0 names ref 'v1.0.0' but the layer names no source"
        " — add `source: {git: URL}` under layer: (the repository the ref is in)"
    ]
    assert _layer(f"  source: {{git: gitcode.com/Ascend/vision}}\nreleases:\n{release}") == [
        "compat.yaml:5:17: source git URL 'gitcode.com/Ascend/vision' is not a URL pip can clone"
        " — give the repository's URL, e.g. git: https://gitcode.com/Ascend/vision.git"
    ]
    source = f"  source: {{git: '{VISION}'}}\nreleases:\n"
    assert _layer(source + release.replace("v1.0.0", "--upload-pack=x")) == [
        "compat.yaml:7:61: git ref '--upload-pack=x' is not a commit or a tag — e.g. ref: 1b16c01 or ref: v0.11.0"
    ]
    twice = release + release.replace("1.0.0, status", "1.0.1, status")
    assert _layer(source + twice) == [
        "compat.yaml:8:61: demo 1.0.1 names ref 'v1.0.0', as 1.0.0 does — each release is built from its own tag or commit"
    ]
    assert _layer(source + release) == []


def test_a_release_with_no_ref_where_no_index_serves_the_layer_is_a_warning_naming_it():
    text = (
        f"schema-version: 2\nlayer: {{distribution: demo, adapter: torch-npu, source: {{git: '{VISION}'}}}}\n"
        "releases:\n  - {version: 1.0.0, status: supported, torch: 2.10.0}\n"
    )
    (warning,) = load_any_bytes(text.encode(), "compat.yaml").warnings
    assert str(warning) == (
        "compat.yaml:4:5: warning: demo 1.0.0 names no ref: and no index serves demo (its source is git only)"
        " — add ref: with the tag or commit it is built from, so fixes and tables can install it"
    )


def test_the_torchvision_npu_fixture_names_its_repository_and_each_release_its_tag():
    layer = load_any_bytes(TORCHVISION_NPU.read_bytes(), str(TORCHVISION_NPU)).layer
    assert layer.source is not None and layer.source.url == VISION and not layer.source.build_isolation
    tags = {str(r.version): r.ref for r in layer.releases}
    assert tags["0.20.1+7.1.0"] == "v0.20.1-7.1.0" and tags["0.16.0+6.0.rc3"] == "v0.16.0-6.0.rc3"
    assert all(tags.values()), tags


# -- check's fixes ----------------------------------------------------------------------------------


def test_the_fix_that_moves_a_build_of_several_releases_builds_the_one_it_names_from_its_tag(tmp_path):
    """It printed ``pip install 'torchvision-npu==0.20.1+7.1.0'``: a version no index serves."""
    env = _environment(tmp_path / "env", **INSTALLED)
    code, doc = _check(env, *ON_8_2)
    assert code == 1
    (fix,) = doc["checks"][0]["fixes"]
    assert fix["commands"] == [BUILD_7_1]
    assert fix["diff"] == [
        "- torchvision-npu==0.20.1",
        f"+ torchvision-npu==0.20.1+7.1.0 (from git+{VISION}@v0.20.1-7.1.0)",  # as uv says a git install
    ]
    for command in fix["commands"]:
        _bash_n(command)
        assert "==0.20.1+7.1.0" not in command


def test_an_installed_pip_build_of_a_tag_is_the_release_of_that_tag_and_supported(tmp_path):
    """What the fix installs is what it said: pip records the tag it built (PEP 610)."""
    env = _environment(tmp_path / "env", **INSTALLED)
    info = next(env.glob("lib/python3.11/site-packages/torchvision_npu-*.dist-info"))
    direct = {"url": VISION, "vcs_info": {"vcs": "git", "commit_id": "ab" * 20, "requested_revision": "v0.20.1-7.1.0"}}
    (info / "direct_url.json").write_text(json.dumps(direct))
    code, doc = _check(env, *ON_8_2)
    answer = doc["checks"][0]
    assert (code, answer["verdict"]) == (0, "supported"), answer["reasons"]
    (layer,) = answer["stack"]["layers"]
    assert (layer["name"], layer["release"]) == ("torchvision-npu", "0.20.1+7.1.0")


def test_constraints_hold_a_pip_build_of_a_tag_at_the_version_pip_sees(tmp_path):
    """``check --constraints`` pinned ``torchvision-npu==0.20.1+7.1.0`` (the release), which the
    installed build, 0.20.1 to pip, does not satisfy: every later pip install would refuse it."""
    env = _environment(tmp_path / "env", **INSTALLED)
    info = next(env.glob("lib/python3.11/site-packages/torchvision_npu-*.dist-info"))
    direct = {"url": VISION, "vcs_info": {"vcs": "git", "commit_id": "ab" * 20, "requested_revision": "v0.20.1-7.1.0"}}
    (info / "direct_url.json").write_text(json.dumps(direct))
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--no-binary", "--env", str(env), "--set", "arch=aarch64"]
        + [*ON_8_2, "--constraints", "pip"],
        capture_output=True,
        text=True,
        cwd=env.parent,
    )
    assert proc.returncode == 0, proc.stderr
    assert "torchvision-npu==0.20.1" in proc.stdout.splitlines() and "+7.1.0\n" not in proc.stdout


def test_a_clone_on_the_import_path_is_checked_out_at_the_tag_and_then_is_that_release(tmp_path):
    clone = tmp_path / "src" / "vision"
    old, new = _clone(clone, "torchvision_npu", commits=2, tag=(0, "v0.20.1-7.0.0"), origin=VISION)
    _git(clone, "tag", "v0.20.1-7.1.0", new)
    _git(clone, "checkout", "-q", old)
    installed = {k: v for k, v in INSTALLED.items() if k != "torchvision-npu"}
    env = _environment(tmp_path / "env", **installed)
    args = ("--matrix", str(ADAPTER), "--matrix", str(TORCHVISION_NPU), "--pythonpath", str(clone), *ON_8_2)
    code, doc = _check(env, *args)
    answer = doc["checks"][0]
    assert code == 1 and answer["stack"]["layers"][0]["release"] == "0.20.1+7.0.0", answer["reasons"]
    (fix,) = answer["fixes"]
    assert [shlex.split(c) for c in fix["commands"]] == [["git", "-C", str(clone), "checkout", "v0.20.1-7.1.0"]]
    _git(clone, "checkout", "-q", "v0.20.1-7.1.0")  # the fix, done
    code, doc = _check(env, *args)
    assert (code, doc["checks"][0]["stack"]["layers"][0]["release"]) == (0, "0.20.1+7.1.0")


def test_a_release_with_no_ref_is_a_step_by_hand_and_no_command_names_its_version(tmp_path):
    layer = tmp_path / "torchvision-npu.yaml"
    text = TORCHVISION_NPU.read_text(encoding="utf-8").replace("    ref: v0.20.1-7.1.0\n", "")
    layer.write_text(text, encoding="utf-8")
    env = _environment(tmp_path / "env", **INSTALLED)
    _code, doc = _check(env, "--matrix", str(ADAPTER), "--matrix", str(layer), *ON_8_2)
    (fix,) = doc["checks"][0]["fixes"]
    assert fix["manual"] == [
        f"build torchvision-npu 0.20.1+7.1.0 from {VISION} yourself, once the rest is installed"
        " (no index serves it and its matrix names no tag or commit for it)"
    ]
    assert fix["summary"].startswith("reinstall torchvision-npu from 0.20.1 to 0.20.1+7.1.0 (supported: ")
    assert not any("torchvision-npu" in c for c in fix["commands"]), fix["commands"]
    emitted = _emit(env, "uv", "--matrix", str(ADAPTER), "--matrix", str(layer))  # nor does --emit pin it
    assert (
        "torchvision-npu==" not in emitted
        and (f"# torchvision-npu 0.20.1+7.1.0: no index serves it; build it from {VISION} yourself")
        in emitted.splitlines()
    )


# -- check --emit, and the stack table --------------------------------------------------------------


def _emit(env: Path, fmt: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--no-binary", "--env", str(env), "--set", "arch=aarch64"]
        + [*ON_8_2, *args, "--emit", fmt],
        capture_output=True,
        text=True,
        cwd=env.parent,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_emit_pins_the_layer_by_its_direct_reference_in_both_forms(tmp_path):
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    env = _environment(tmp_path / "env", **INSTALLED)
    direct = f"torchvision-npu @ git+{VISION}@v0.20.1-7.1.0"
    uv = tomllib.loads(_emit(env, "uv"))["tool"]["uv"]
    assert direct in uv["constraint-dependencies"] and "torch==2.5.1" in uv["constraint-dependencies"]
    assert uv["no-build-isolation-package"] == ["torchvision-npu"]
    requirements = _emit(env, "requirements").splitlines()
    assert direct in requirements and not any("0.20.1+7.1.0" in line for line in requirements if line[:1] != "#")
    assert (
        "# torchvision-npu builds against the installed torch: install torch first,"
        " then pip install --no-build-isolation -r THIS_FILE"
    ) in requirements


def test_emit_pins_a_package_a_layer_pins_by_commit_at_that_commit():
    """MindSpeed-LLM installed from another commit than MindSpeed-RL pins: the fix moves it to the
    pinned commit, and ``--emit`` said ``mindspeed-llm==1111…`` (the commit as a version)."""
    args = ["--env", str(FIXTURES / "stacks" / "installs" / "mindspeed-rl-moved"), "--no-binary", "--matrix"]
    args += [str(ADAPTER), "--matrix", str(FIXTURES / "stacks" / "mindspeed-rl-installs.yaml")]
    args += ["--set", "cann=8.1.RC1", "--set", "arch=aarch64", "--set", "soc=Ascend910B", "--emit", "requirements"]
    proc = subprocess.run([sys.executable, "-m", "adapter_matrix", "check", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    pinned = "887c2d8682021befd675bb03965dbdee4de24516"
    assert f"mindspeed-llm @ git+https://gitcode.com/Ascend/MindSpeed-LLM.git@{pinned}" in lines
    assert "megatron-core @ git+https://github.com/NVIDIA/Megatron-LM.git@core_v0.12.1" in lines
    assert not any(line.startswith(("mindspeed-llm==", "megatron-core==")) for line in lines)


@pytest.mark.parametrize("fmt", ["json", "markdown", "html", "csv"])
def test_the_stack_table_installs_each_release_from_its_tag(fmt):
    args = ["table", "--matrix", str(TORCHVISION_NPU), "--adapter-matrix", str(ADAPTER), "--format", fmt]
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *args, "--today", "2026-12-07"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "==0.20.1+7.1.0" not in proc.stdout and "torchvision-npu==" not in proc.stdout
    if fmt != "json":
        assert f"git+{VISION}@v0.20.1-7.1.0" in proc.stdout.replace("&#x27;", "'")
        return
    doc = json.loads(proc.stdout)
    (row,) = [r for r in doc["releases"] if r["release"] == "0.20.1+7.1.0"]
    assert (row["ref"], row["source"]) == ("v0.20.1-7.1.0", VISION)
    # built without isolation, it compiles against the torch installed: the command that installs
    # torch comes first, and the build is a command of its own
    (aarch64,) = [i for i in row["install"] if i["platform"] == {"arch": "aarch64"}]
    assert aarch64["commands"] == [
        "pip install 'torch==2.5.1' 'torch-npu==2.5.1.post1' 'torchvision==0.20.1'",
        BUILD_7_1,
    ]
    for install in row["install"]:
        assert install["commands"][-1] == BUILD_7_1
        for command in install["commands"]:
            _bash_n(command)


# -- the commands install: pip and uv build the ref from a local repository, offline -----------------


@pytest.mark.slow
def test_the_commands_and_the_emitted_files_build_the_tag_from_a_local_repository(tmp_path):
    """A ``git init`` repository with a tiny setup.py stands for Ascend/vision: tags v0.20.1-7.0.0
    and v0.20.1-7.1.0 both build 0.20.1. The fix's command and the emitted requirements, pointed at
    it, resolve in pip to that build from the 7.1.0 tag; uv resolves the emitted file too."""
    repo = tmp_path / "vision"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "setup.py").write_text("from setuptools import setup\nsetup(name='torchvision_npu', version='0.20.1')\n")
    for tag in ("v0.20.1-7.0.0", "v0.20.1-7.1.0"):
        (repo / "TAG").write_text(tag)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", tag)
        _git(repo, "tag", tag)
    tagged = _git(repo, "rev-parse", "v0.20.1-7.1.0")
    local = f"file://localhost{repo}"  # pip's parser wants a host in git+file URLs
    layer = tmp_path / "torchvision-npu.yaml"
    layer.write_text(TORCHVISION_NPU.read_text(encoding="utf-8").replace(VISION, local), encoding="utf-8")
    env = _environment(tmp_path / "env", **INSTALLED)
    for name in ("torch_npu", "torchvision_npu"):  # the registered matrices: the local one
        shutil.copy(
            ADAPTER if name == "torch_npu" else layer, env / "lib/python3.11/site-packages" / name / "compat.yaml"
        )
    _code, doc = _check(env, *ON_8_2)
    (command,) = doc["checks"][0]["fixes"][0]["commands"]
    words = shlex.split(command)
    assert words[:3] == ["pip", "install", "--no-build-isolation"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    clean.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", UV_CACHE_DIR=str(tmp_path / "uv"))
    clean.update(UV_PYTHON_DOWNLOADS="never", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--ignore-installed", "--quiet"]
    pip += ["--report", "-", "--disable-pip-version-check", "--no-cache-dir"]
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(
        "\n".join(line for line in _emit(env, "requirements").splitlines() if "torchvision-npu" in line) + "\n"
    )
    for args in (words[2:], ["--no-build-isolation", "-r", str(requirements)]):
        done = subprocess.run(pip + args, capture_output=True, text=True, env=clean, timeout=300)
        assert done.returncode == 0, done.stderr
        (item,) = json.loads(done.stdout)["install"]
        assert item["metadata"]["version"] == "0.20.1"
        assert item["download_info"]["vcs_info"]["commit_id"] == tagged
        assert item["download_info"]["vcs_info"]["requested_revision"] == "v0.20.1-7.1.0"
    uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
    if uv is not None:
        done = subprocess.run(
            [uv, "pip", "install", "--python", sys.executable, "--dry-run", "--offline", "--no-build-isolation"]
            + ["-r", str(requirements)],
            capture_output=True,
            text=True,
            env=clean,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert f"torchvision-npu @ git+file://{repo}@{tagged}" in done.stderr
