"""How the layers of a stack are installed (issue 65, items 2, 3 and 5): git pins judged by the
commit a VCS install recorded (PEP 610 direct_url.json) or a clone's HEAD, source checkouts on
the import path, a package importable twice, and a dimension a layer owns (vllm-ascend's device
generation). Every environment is a prefix of dist-info folders made here, and every clone a
small real git repository made here."""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from packaging.version import Version

from adapter_matrix.check.judgment import Environment
from adapter_matrix.check.provenance import Provenance, distribution_provenance, survey
from adapter_matrix.check.stack.judge import OwnedReading, installed_stack, judge_stack
from adapter_matrix.check.stack.search import Held, stack_fixes
from adapter_matrix.matrix.cache import load_any
from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load_any_bytes
from adapter_matrix.matrix.model import PythonVersion, Status

from .helpers import FIXTURES

ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
STACKS = FIXTURES / "stacks"
RL = STACKS / "mindspeed-rl-installs.yaml"
VLLM_ASCEND = STACKS / "vllm-ascend.yaml"
TODAY = _dt.date(2026, 12, 7)
_GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=_GIT_ENV, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _clone(
    path: Path, package: str, commits: int = 1, tag: Optional[Tuple[int, str]] = None, origin: str = ""
) -> List[str]:
    """A clone holding ``package`` with ``commits`` commits (``tag``: (index, name) tags one); its commits."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    if origin:
        _git(path, "remote", "add", "origin", origin)
    (path / package).mkdir()
    (path / package / "__init__.py").write_text("raise SystemExit('check must never import a checkout')\n")
    out = []
    for i in range(commits):
        (path / "CHANGES").write_text(f"{i}\n")
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", f"change {i}")
        out.append(_git(path, "rev-parse", "HEAD"))
        if tag is not None and tag[0] == i:
            _git(path, "tag", tag[1])
    return out


def _prefix(root: Path, python: str = "3.10", **dists: object) -> Path:
    """A prefix whose site-packages holds a dist-info per distribution: ``name=version`` or
    ``name=(version, direct_url dict, files)``; torch-npu registers its matrix."""
    (root / "pyvenv.cfg").parent.mkdir(parents=True, exist_ok=True)
    (root / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {python}.12\n")
    site = root / "lib" / f"python{python}" / "site-packages"
    site.mkdir(parents=True, exist_ok=True)
    for key, spec in dists.items():
        name = key.replace("_", "-")
        version, direct, files = spec if isinstance(spec, tuple) else (spec, None, {})
        module = name.replace("-", "_")
        info = site / f"{module}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        (info / "RECORD").write_text(f"{info.name}/METADATA,,\n")
        if direct is not None:
            (info / "direct_url.json").write_text(json.dumps(direct))
        for relative, text in dict(files).items():
            (site / relative).parent.mkdir(parents=True, exist_ok=True)
            (site / relative).write_text(text)
        if name == "torch-npu":
            (site / module).mkdir(exist_ok=True)
            shutil.copy(ADAPTER, site / module / "compat.yaml")
            (info / "entry_points.txt").write_text(f"[adapter_matrix.matrices]\n{name} = {module}:compat.yaml\n")
    return site


def _vcs(url: str, commit: str, requested: Optional[str] = None) -> dict:
    return {"url": url, "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": requested or commit}}


def _editable(folder: Path) -> dict:
    return {"url": folder.as_uri(), "dir_info": {"editable": True}}


def _check(env: Path, *args: str, variables: Optional[Dict[str, str]] = None) -> Tuple[int, dict, str]:
    """``check --json --env ENV ARGS`` with no ASCEND_ variable but ``variables``."""
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--json", "--no-binary", "--env", str(env), *args],
        capture_output=True,
        text=True,
        cwd=env,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")},
            "ADAPTER_MATRIX_NO_MEMO": "1",
            **(variables or {}),
        },
    )
    assert proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _layer(path: Path, name: str, version: str, body: str) -> Path:
    path.write_text(
        f"schema-version: 2\nlayer: {{distribution: {name}, adapter: torch-npu}}\n"
        f"releases:\n  - version: {version}\n    status: supported\n{body}"
    )
    return path


# -- MindSpeed-RL's published stack ---------------------------------------------------------------


def _mindspeed_rl(tmp: Path, ahead: int = 0) -> Tuple[Path, List[str], Dict[str, str]]:
    """MindSpeed-RL as its install guide builds it: vllm and MindSpeed by pip's VCS install,
    vllm-ascend editable from its clone, MindSpeed-LLM a clone on PYTHONPATH (``ahead`` commits past
    its pin), torch, torch_npu, apex and megatron-core by version. Returns the prefix, the check's
    arguments (5 layers: MindSpeed-RL, MindSpeed-LLM from its clone's compat.yaml, vllm-ascend,
    MindSpeed, apex) and the commits the pins name."""
    src = tmp / "src"
    vllm = _clone(src / "vllm", "vllm")[-1]
    ascend = _clone(src / "vllm-ascend", "vllm_ascend", 2)[-1]
    mindspeed = _clone(src / "MindSpeed", "mindspeed")[-1]
    llm_commits = _clone(src / "MindSpeed-LLM", "mindspeed_llm", 2 + ahead)
    llm = llm_commits[1]
    _layer(src / "MindSpeed-LLM" / "compat.yaml", "mindspeed-llm", "2.1.0", "    torch: 2.5.1\n")
    pins = {"vllm": vllm, "vllm-ascend": ascend[:7], "mindspeed": mindspeed, "mindspeed-llm": llm}
    text = RL.read_text()
    for old, new in (
        ("b6553be1bc75f046b00046a4ad7576364d03c835", pins["vllm"]),
        ("8c7bc45", pins["vllm-ascend"]),
        ("89f4632d2cbb1e583a69b2bf3a08d75222f1173d", pins["mindspeed"]),
        ("887c2d8682021befd675bb03965dbdee4de24516", pins["mindspeed-llm"]),
    ):
        text = text.replace(old, new)
    layers = tmp / "layers"
    layers.mkdir()
    (layers / "mindspeed-rl.yaml").write_text(text)
    _layer(layers / "vllm-ascend.yaml", "vllm-ascend", "0.9.1", "    torch: 2.5.1\n    requires: {vllm: 0.9.1}\n")
    _layer(layers / "mindspeed.yaml", "mindspeed", "0.12.1", "    torch: 2.5.1\n")
    _layer(layers / "apex.yaml", "apex", "0.1", "    torch: 2.5.1\n    adapter: 2.5.1\n")
    env = tmp / "env"
    _prefix(
        env,
        torch="2.5.1",
        torch_npu="2.5.1",
        apex="0.1",
        megatron_core="0.12.1",
        mindspeed_rl="2.0.0",
        vllm=("0.9.1", _vcs("https://github.com/vllm-project/vllm.git", vllm), {}),
        vllm_ascend=("0.9.2.dev2+g" + ascend[:9], _editable(src / "vllm-ascend"), {}),
        mindspeed=("0.12.1", _vcs("https://gitcode.com/Ascend/MindSpeed.git", mindspeed), {}),
    )
    args = [
        "--matrix", str(ADAPTER),
        *[arg for name in ("mindspeed-rl", "vllm-ascend", "mindspeed", "apex") for arg in ("--matrix", str(layers / f"{name}.yaml"))],
        "--pythonpath", str(src / "MindSpeed-LLM"),
        "--set", "cann=8.1.RC1", "--set", "arch=aarch64",
    ]  # fmt: skip
    return env, args, pins


def test_mindspeed_rl_with_every_commit_as_pinned_is_a_supported_stack_of_five_layers(tmp_path):
    env, args, pins = _mindspeed_rl(tmp_path)
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert (code, answer["verdict"]) == (0, "supported"), answer["reasons"]
    layers = {layer["name"]: layer for layer in answer["stack"]["layers"]}
    assert sorted(layers) == ["apex", "mindspeed", "mindspeed-llm", "mindspeed-rl", "vllm-ascend"]
    assert all(layer["status"] == "supported" for layer in layers.values())
    # the editable vllm-ascend calls itself 0.9.2.dev2+g...: judged by its commit, it is the pinned 0.9.1
    assert layers["vllm-ascend"]["release"] == "0.9.1"
    kinds = {p["name"]: (p["kind"], p["commit"]) for p in answer["stack"]["provenance"]}
    assert kinds["vllm"] == ("vcs", pins["vllm"])
    assert kinds["mindspeed"] == ("vcs", pins["mindspeed"])
    assert kinds["vllm-ascend"][0] == "editable" and kinds["vllm-ascend"][1].startswith(pins["vllm-ascend"])
    assert kinds["mindspeed-llm"] == ("checkout", pins["mindspeed-llm"])
    assert kinds["torch-npu"] == ("wheel", None) and kinds["apex"] == ("wheel", None)


def test_a_checkout_three_commits_past_its_pin_is_refused_with_both_commits_and_the_checkout_that_fixes_it(
    tmp_path,
):
    env, args, pins = _mindspeed_rl(tmp_path, ahead=3)
    head = _git(tmp_path / "src" / "MindSpeed-LLM", "rev-parse", "HEAD")
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert (code, answer["verdict"]) == (1, "unsupported")
    (reason,) = [r for r in answer["reasons"] if "mindspeed-llm" in r]
    assert pins["mindspeed-llm"] in reason and head[:12] in reason and "3 commits past" in reason
    assert str(tmp_path / "src" / "MindSpeed-LLM") in reason
    (fix,) = answer["fixes"]
    (command,) = fix["commands"]
    assert shlex.split(command) == [
        "git",
        "-C",
        str(tmp_path / "src" / "MindSpeed-LLM"),
        "checkout",
        pins["mindspeed-llm"],
    ]
    # the fix, done, is the supported stack
    _git(tmp_path / "src" / "MindSpeed-LLM", "checkout", "-q", pins["mindspeed-llm"])
    code, doc, _err = _check(env, *args)
    assert (code, doc["checks"][0]["verdict"]) == (0, "supported"), doc["checks"][0]["reasons"]


def test_a_vcs_install_of_another_commit_gets_pips_vcs_install_of_the_pinned_one(tmp_path):
    env, args, pins = _mindspeed_rl(tmp_path)
    other = "0123456789abcdef0123456789abcdef01234567"
    info = next((env / "lib" / "python3.10" / "site-packages").glob("vllm-*.dist-info"))
    (info / "direct_url.json").write_text(json.dumps(_vcs("https://github.com/vllm-project/vllm.git", other)))
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert code == 1
    assert any(pins["vllm"] in r and other[:12] in r for r in answer["reasons"]), answer["reasons"]
    (command,) = answer["fixes"][0]["commands"]
    assert shlex.split(command) == [
        "pip",
        "install",
        "--no-deps",
        f"vllm @ git+https://github.com/vllm-project/vllm.git@{pins['vllm']}",
    ]


def test_an_editable_build_of_tag_v0_23_0_that_calls_itself_0_23_1_dev0_is_judged_as_0_23_0(tmp_path):
    commits = _clone(tmp_path / "src" / "vllm-ascend", "vllm_ascend", 2, tag=(1, "v0.23.0"))
    built = f"0.23.1.dev0+g{commits[-1][:9]}"
    env = tmp_path / "env"
    _prefix(
        env,
        python="3.11",
        torch="2.10.0",
        torch_npu="2.10.0.post4",
        vllm="0.23.0",
        triton_ascend="3.2.2",
        vllm_ascend=(built, _editable(tmp_path / "src" / "vllm-ascend"), {}),
    )
    args = ["--matrix", str(ADAPTER), "--matrix", str(VLLM_ASCEND), "--set", "cann=9.1.0", "--set", "arch=aarch64"]
    args += ["--set", "soc=Ascend910B"]
    code, doc, _err = _check(env, *args)
    answer = doc["checks"][0]
    assert (code, answer["verdict"]) == (0, "supported"), answer["reasons"]
    (layer,) = answer["stack"]["layers"]
    assert (layer["installed"], layer["release"]) == ("0.23.0", "0.23.0")
    assert layer["provenance"]["past"] == "at v0.23.0"
    # the same version string from a wheel (no clone behind it) is no release the table names
    (env / "lib" / "python3.11" / "site-packages" / f"vllm_ascend-{built}.dist-info" / "direct_url.json").unlink()
    code, doc, _err = _check(env, *args)
    assert code == 1 and any("is not a release its matrix describes" in r for r in doc["checks"][0]["reasons"])


def test_megatron_importable_from_a_checkout_and_from_site_packages_is_a_warning_naming_both(tmp_path):
    _clone(tmp_path / "src" / "Megatron-LM", "megatron", origin="https://github.com/NVIDIA/Megatron-LM.git")
    env = tmp_path / "env"
    site = _prefix(
        env,
        torch="2.5.1",
        torch_npu="2.5.1",
        megatron_core=(
            "0.16.1",
            None,
            {"megatron/__init__.py": "", "megatron_core-0.16.1.dist-info/top_level.txt": "megatron\n"},
        ),
    )
    args = ["--pythonpath", str(tmp_path / "src" / "Megatron-LM"), "--set", "cann=8.1.RC1", "--set", "arch=aarch64"]
    code, doc, err = _check(env, *args)
    checkout, installed = tmp_path / "src" / "Megatron-LM" / "megatron", site / "megatron"
    (warning,) = doc["shadowed"]
    assert warning == (
        f"megatron is importable from 2 places: Python imports {checkout}, "
        f"which hides {installed} (megatron-core 0.16.1)"
    )
    assert warning in err and code == 0


def test_unreadable_git_metadata_is_an_unknown_commit_never_a_traceback(tmp_path):
    clone = tmp_path / "MindSpeed-LLM"
    _clone(clone, "mindspeed_llm")
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/gone\n")
    (found,) = survey([str(clone)]).checkouts
    assert found.commit is None and found.error and found.error.startswith("unknown commit")
    (clone / ".git" / "HEAD").unlink()
    (clone / ".git" / "HEAD").mkdir()
    (found,) = survey([str(clone)]).checkouts
    assert found.commit is None and "unknown commit" in (found.error or "")
    info = tmp_path / "site" / "x-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "direct_url.json").write_text("{not json")
    found = distribution_provenance("x", str(info), "1.0")  # no wheel from an index is known either
    assert (found.kind, found.error) == ("unknown", f"unknown source: {info / 'direct_url.json'} is not valid JSON")


# -- a dimension the layer owns ---------------------------------------------------------------------

# the vllm-ascend fixture's own block (the property test below gives MindSpeed-RL the same dimension)
_FIXTURE = VLLM_ASCEND.read_text()
DEVICE_TYPE = _FIXTURE[_FIXTURE.index("  dimensions:\n") : _FIXTURE.index("\nreleases:\n") + 1]


def _device_env(tmp: Path, built: str) -> Path:
    env = tmp / "env"
    _prefix(
        env,
        python="3.11",
        torch="2.10.0",
        torch_npu="2.10.0.post4",
        vllm="0.23.0",
        triton_ascend="3.2.2",
        vllm_ascend=("0.23.0", None, {"vllm_ascend/_build_info.py": f"__device_type__ = '{built}'\n"}),
    )
    return env


def _device_check(env: Path, *sets: str, **variables: str) -> Tuple[int, dict, str]:
    args = ["--matrix", str(ADAPTER), "--matrix", str(VLLM_ASCEND)]
    args += ["--set", "cann=9.1.0", "--set", "arch=aarch64", "--set", "soc=Ascend910B"]
    return _check(env, *args, *sets, variables=variables)


def test_a_wheel_built_for_a2_on_a_machine_whose_override_says_a3_is_refused_naming_both(tmp_path):
    env = _device_env(tmp_path, "A2")
    code, doc, _err = _device_check(env, ASCEND_DEVICE_TYPE="A3", ASCEND_SOC_VERSION="Ascend910B1")
    assert code == 1
    (reason,) = doc["checks"][0]["reasons"]
    assert reason == (
        "vllm-ascend 0.23.0 was built for device_type A2 (file vllm_ascend/_build_info.py), "
        "but this machine is device_type A3 (env ASCEND_DEVICE_TYPE): install a build of vllm-ascend made for A3"
    )
    code, doc, _err = _device_check(env, "--set", "device_type=A2")  # --set holds it too
    assert code == 0, doc["checks"][0]["reasons"]


def test_the_soc_name_names_the_generation_when_no_override_is_set(tmp_path):
    env = _device_env(tmp_path, "A3")
    code, doc, _err = _device_check(env, ASCEND_SOC_VERSION="Ascend910B1")
    assert code == 1
    assert "this machine is device_type A2 (env ASCEND_SOC_VERSION)" in doc["checks"][0]["reasons"][0]
    code, doc, _err = _device_check(env, ASCEND_SOC_VERSION="Ascend910_9392")  # an A3
    assert code == 0, doc["checks"][0]["reasons"]


def test_a_layer_dimension_that_clashes_with_the_adapters_is_an_error_at_its_line(tmp_path):
    layer = tmp_path / "layer.yaml"
    layer.write_text(
        "schema-version: 2\nlayer:\n  distribution: demo\n  adapter: torch-npu\n  dimensions:\n"
        "    cann: {kind: version, detect: [{env: DEMO_CANN}]}\nreleases:\n  - {version: 1.0, status: supported}\n"
    )
    env = tmp_path / "env"
    _prefix(env, torch="2.5.1", torch_npu="2.5.1", demo="1.0")
    code, doc, _err = _check(env, "--matrix", str(ADAPTER), "--matrix", str(layer), "--set", "cann=8.1.RC1")
    assert code == 2
    (diag,) = doc["diagnostics"]
    assert (diag["line"], diag["column"]) == (6, 5) and "clashes with torch-npu's dimension cann" in diag["message"]


@pytest.mark.parametrize(
    "body, message",
    [
        ("    requires: {vllm: {git: 'https://x/vllm.git', version: 0.9.1}}\n", "missing the required key 'ref'"),
        (
            "    requires: {vllm: {git: 'https://x/vllm.git', ref: '', version: 0.9.1}}\n",
            "git ref must be a single value",
        ),
        (
            "    requires: {vllm: {git: 'https://x/vllm.git', ref: --upload-pack=x, version: 0.9.1}}\n",
            "is not a commit or a tag",
        ),
        ("    requires: {vllm: {git: 'https://x/vllm.git', ref: abc1234, version: nope}}\n", "bad git pin version"),
        (
            "    requires: {vllm: {git: 'https://x/vllm.git', ref: abc1234, version: 1.0, branch: x}}\n",
            "unknown key 'branch'",
        ),
    ],
)
def test_a_bad_git_pin_is_an_error_at_its_line(body, message):
    text = (
        "schema-version: 2\nlayer: {distribution: demo, adapter: torch-npu}\nreleases:\n  - version: 1.0\n    status: supported\n"
        + body
    )
    with pytest.raises(MatrixError) as raised:
        load_any_bytes(text.encode(), "demo.yaml")
    (diag,) = [d for d in raised.value.diagnostics if d.severity == "error"]
    assert diag.mark.line == 6 and message in diag.message, diag


# -- the fix search, as a property: git pins and a layer's own dimension -----------------------------


_MATRIX = load_any(ADAPTER).matrix
# MindSpeed-RL with a dimension of its own (the device generation its rollout's vllm-ascend needs)
_RL = load_any_bytes(
    RL.read_bytes()
    .replace(b"vLLM rollout)\n", b"vLLM rollout)\n" + DEVICE_TYPE.replace("vllm_ascend/", "mindspeed_rl/").encode())
    .replace(b"dimensions: {cann: 8.1.RC1}", b"dimensions: {cann: 8.1.RC1, device_type: A2}"),
    "mindspeed-rl.yaml",
).layer


def _origin(name: str, kind: str, commit: str) -> Provenance:
    return Provenance(name, kind, f"/site/{name}", commit=commit, source=f"/nowhere/{name}" if kind != "vcs" else None)


@pytest.mark.parametrize("seed", range(60))
def test_every_fix_of_a_stack_with_git_pins_and_a_layer_dimension_asked_again_is_what_it_says(seed):
    """Random commits for the git-pinned packages (as pinned or not, a VCS install, an editable or a
    checkout), at most one other package at a version no pin names, and the layer's device generation
    on the machine and in its build: every fix, applied, is judged as the fix says; where the stack
    can be repaired (the machine is the generation the release needs), some fix is offered."""
    rnd = random.Random(seed)
    release = _RL.releases[0]
    pins = {p.name: p for p in release.packages}
    packages: Dict[str, Optional[str]] = {"mindspeed-rl": "2.0.0"}
    origins: List[Provenance] = []
    wrong = rnd.choice([None, "apex", "vllm", "mindspeed-llm"])
    for name, pin in pins.items():
        if name in ("torch", "torch-npu"):
            continue
        packages[name] = "9.9.9" if name == wrong else str(pin.spec).lstrip("=")
        if pin.git is not None and rnd.random() < 0.7:
            right = pin.git.ref if len(pin.git.ref) == 40 else pin.git.ref + "0" * (40 - len(pin.git.ref))
            commit = right if rnd.random() < 0.5 else "0" * 40
            origins.append(_origin(name, rnd.choice(["vcs", "editable", "checkout"]), commit))
    machine, built = rnd.choice(["A2", "A3"]), rnd.choice(["A2", "A3", None])
    dim = _RL.dimension("device_type")
    assert dim is not None and not dim.changeable
    env = Environment(
        python=PythonVersion.parse("3.10"),
        torch=Version("2.5.1"),
        adapter=Version(rnd.choice(["2.5.1", "2.5.1", "2.4.0.post4"])),
        dimensions=(
            ("cann", _MATRIX.dimension("cann").value("8.1.RC1")),
            ("arch", _MATRIX.dimension("arch").value("aarch64")),
            ("device_type", dim.value(machine)),
        ),
    )
    readings = [
        OwnedReading(
            "mindspeed-rl",
            "device_type",
            dim.value(built) if built else None,
            "file",
            dim.value(machine),
            "env",
            dim.mark,
        )
    ]
    stack = installed_stack(env, [_RL], packages, origins, readings)
    if judge_stack(_MATRIX, [_RL], stack, TODAY).status is Status.SUPPORTED:
        assert machine == "A2" and built in ("A2", None)
        return
    found = stack_fixes(_MATRIX, [_RL], stack, Held(), TODAY)
    if machine == "A2" and built in ("A2", None):
        assert found.fixes, judge_stack(_MATRIX, [_RL], stack, TODAY).reasons
    for fix, after in zip(found.fixes, found.stacks):
        kept = [_RL] if after.version(_RL.name) is not None else []  # a way out may be the stack without it
        again = judge_stack(_MATRIX, kept, after, TODAY)
        assert again.status is fix.cell.status, (fix.summary, again.reasons)
        assert after.env.dimension("device_type") == env.dimension("device_type")  # hardware: never changed


def test_the_json_schema_documents_git_pins_and_layer_dimensions(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    yaml = pytest.importorskip("yaml")
    from adapter_matrix.matrix.schema import json_schema

    schema = json_schema()
    data = json.loads(json.dumps(yaml.safe_load(RL.read_text()), default=str))
    jsonschema.validate(data, schema)
    owned = json.loads(json.dumps(yaml.safe_load(VLLM_ASCEND.read_text()), default=str))
    jsonschema.validate(owned, schema)
    del data["releases"][0]["requires"]["vllm"]["ref"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_torchvision_npu_owns_the_hdk_driver_and_a_fix_upgrades_it_by_hand(tmp_path):
    """The driver moved out of torch_npu's matrix (its tables name none) into the layer that names it."""
    assert _MATRIX.dimension("ascend_driver") is None
    env = tmp_path / "env"
    _prefix(env, python="3.11", torch="2.6.0", torch_npu="2.6.0", torchvision="0.21.0", torchvision_npu="0.21.0+7.1.0")
    args = ["--matrix", str(ADAPTER), "--matrix", str(STACKS / "torchvision-npu.yaml"), "--set", "cann=8.2.RC1"]
    args += ["--set", "arch=aarch64", "--set", "soc=Ascend910B"]
    code, doc, _err = _check(env, *args, "--set", "ascend_driver=25.2.0")
    assert code == 0, doc["checks"][0]["reasons"]
    code, doc, _err = _check(env, *args, variables={"PATH": os.environ["PATH"]})  # no driver found: assumed
    assert code == 0 and any("ascend_driver could not be detected" in a for a in doc["checks"][0]["assumptions"])
    code, doc, _err = _check(env, *args, "--set", "ascend_driver=25.0.RC1")
    answer = doc["checks"][0]
    assert code == 1 and "torchvision-npu 0.21.0+7.1.0 needs ascend_driver 25.2.0, found 25.0.RC1" in answer["reasons"]
    # --set holds the driver: the first way out gives it up, by hand; the other is without the layer
    fix, *others = answer["fixes"]
    assert fix["manual"] == [
        "upgrade ascend_driver from 25.0.RC1 to 25.2.0 (a system change, not a pip package: install it yourself)"
    ]
    assert fix["commands"] == []
    assert [o["summary"].split(":")[0] for o in others] == ["without torchvision-npu"]


def test_validate_names_a_layer_dimension_that_clashes_with_the_adapters_at_its_line(tmp_path):
    layer = tmp_path / "layer.yaml"
    layer.write_text(
        "schema-version: 2\nlayer:\n  distribution: demo\n  adapter: torch-npu\n  dimensions:\n"
        "    soc: {kind: enum, detect: [{env: DEMO_SOC}]}\nreleases:\n  - {version: 1.0, status: supported}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "validate", str(layer), str(ADAPTER)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert f"{layer}:6:5: layer dimension soc clashes with torch-npu's dimension soc" in proc.stdout + proc.stderr


def test_a_clone_a_pth_file_puts_on_the_path_is_a_checkout_too(tmp_path):
    commits = _clone(tmp_path / "src" / "MindSpeed-LLM", "mindspeed_llm", 2, tag=(1, "v2.1.0"))
    env = tmp_path / "env"
    site = _prefix(env, torch="2.5.1", torch_npu="2.5.1")
    (site / "mindspeed-llm.pth").write_text(f"{tmp_path / 'src' / 'MindSpeed-LLM'}\n")
    from adapter_matrix.check.elsewhere import locate

    (found,) = survey(locate(str(env)).paths).checkouts
    assert (found.name, found.kind, found.commit, found.version, found.past) == (
        "mindspeed-llm",
        "checkout",
        commits[-1],
        "2.1.0",
        "at v2.1.0",
    )
    # and its compat.yaml makes it a layer check judges, with no --matrix for it
    _layer(tmp_path / "src" / "MindSpeed-LLM" / "compat.yaml", "mindspeed-llm", "2.1.0", "    torch: 2.6.0\n")
    code, doc, _err = _check(env, "--set", "cann=8.1.RC1", "--set", "arch=aarch64")
    (layer,) = doc["checks"][0]["stack"]["layers"]
    assert (code, layer["name"], layer["installed"]) == (1, "mindspeed-llm", "2.1.0")
    assert layer["problems"] == ["mindspeed-llm 2.1.0 pins torch ==2.6.0, found 2.5.1"]
