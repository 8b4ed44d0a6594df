"""What-if questions a user asks `check` and gets a misleading answer to: a layer release that is
end of life (held with ``--companion`` or installed), which no fix keeps; and what-if options
given the wrong way (``--companion torch=2.6.0``, a version that is not one, another command's
option), each refused in one line with exit code 2 (docs/check.md, "What-if questions")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import List

import pytest

from .helpers import FIXTURES, REPO
from .test_stack import _applied, _check, _environment

ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
STACKS = FIXTURES / "stacks"
MINDSPEED = STACKS / "mindspeed-llm.yaml"
VLLM_ASCEND = STACKS / "vllm-ascend.yaml"
ON_910B = ("--set", "arch=aarch64", "--set", "soc=Ascend910B")
# MindSpeed-LLM 2.1.0's row, end of life since 2025-12-30 (tests/fixtures/stacks/mindspeed-llm.yaml)
EOL_2_1_0 = "mindspeed-llm 2.1.0 is end of life (EOL since 2025-12-30 (README maintenance table)): no fix keeps it"
# the fixes' diff line for MindSpeed-LLM 26.1.0, built from its tag (no index serves it)
_MOVED_26_1_0 = "+ mindspeed-llm==26.1.0 (from git+https://gitcode.com/Ascend/MindSpeed-LLM.git@v26.1.0)"
INSTALLED_2_1_0 = {"torch": "2.6.0", "torch-npu": "2.6.0", "mindspeed-llm": "2.1.0", "megatron-core": "0.8.0"}


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1"}
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *args], capture_output=True, text=True, cwd=REPO, env=env
    )


def _mindspeed(cann: str, *extra: str) -> List[str]:
    """check of MindSpeed-LLM 2.1.0 held with --companion, on torch 2.6.0 (one it names)."""
    return [
        "check",
        "--matrix",
        str(ADAPTER),
        "--matrix",
        str(MINDSPEED),
        *ON_910B,
        "--python",
        "3.10",
        "--set",
        f"cann={cann}",
        "--companion",
        "mindspeed-llm=2.1.0",
        "--companion",
        "megatron-core=0.8.0",
        "--torch",
        "2.6.0",
        "--adapter",
        "2.6.0",
        *extra,
    ]


# -- an end-of-life layer release is not a conflict of pins --------------------------------------


def test_an_end_of_life_release_held_on_its_cann_is_said_so_and_the_fixes_move_to_a_maintained_one():
    """On CANN 8.2.RC1 (held), no maintained MindSpeed-LLM runs: the answer says 2.1.0 is end of
    life, names the CANN each maintained release needs, and offers both ways out: the maintained
    release on its CANN (a system change), or without MindSpeed-LLM. It said "no release of
    mindspeed-llm is a stack torch-npu's matrix supports here" and offered only the uninstall."""
    proc = _run(*_mindspeed("8.2.RC1"))
    assert proc.returncode == 3, proc.stderr  # eol: the stack works, the fixes are better ones
    lines = proc.stdout.splitlines()
    assert (
        "not kept: " + EOL_2_1_0 + ", and no maintained release of mindspeed-llm keeps what you hold"
        " (the conflict below)"
    ) in lines
    assert "conflict: mindspeed-llm 26.1.0 needs cann 9.1.0, 26.0.0 needs cann 9.0.0; you hold cann 8.2.RC1" in lines
    assert "no release" not in proc.stdout
    fixes = [line for line in lines if line.startswith(("fix: ", "or: "))]
    assert fixes[0].startswith("fix: without cann 8.2.RC1: upgrade cann from 8.2.RC1 to 9.1.0, then "), fixes
    assert "upgrade mindspeed-llm from 2.1.0 to 26.1.0" in fixes[0]
    assert fixes[1] == "or: without mindspeed-llm: uninstall it, the rest stays as installed (supported)"

    doc = json.loads(_run(*_mindspeed("8.2.RC1", "--json")).stdout)
    stack = doc["checks"][0]["stack"]
    assert stack["not_kept"] == lines[lines.index(next(x for x in lines if x.startswith("not kept: ")))][10:]
    assert stack["conflict"] == "mindspeed-llm 26.1.0 needs cann 9.1.0, 26.0.0 needs cann 9.0.0; you hold cann 8.2.RC1"
    first, second = doc["checks"][0]["fixes"]
    assert first["cell"]["dimensions"]["cann"] == "9.1.0" and _MOVED_26_1_0 in first["diff"]
    assert second["commands"] == ["pip uninstall -y mindspeed-llm"]


def test_an_end_of_life_release_held_where_a_maintained_one_runs_gets_fixes_to_it_and_no_conflict():
    proc = _run(*_mindspeed("9.1.0"))
    assert proc.returncode == 1, proc.stderr  # 2.1.0 needs CANN 8.2.RC1
    assert (
        "not kept: " + EOL_2_1_0 + "; the fixes move it to a maintained release of mindspeed-llm"
    ) in proc.stdout.splitlines()
    doc = json.loads(_run(*_mindspeed("9.1.0", "--json")).stdout)["checks"][0]
    assert doc["stack"]["conflict"] is None and doc["stack"]["no_fix"] is None
    assert doc["fixes"] and all(_MOVED_26_1_0 in fix["diff"] for fix in doc["fixes"])
    assert all(fix["cell"]["dimensions"]["cann"] == "9.1.0" for fix in doc["fixes"])  # the CANN held stays


def test_an_installed_end_of_life_release_gets_both_ways_out_and_each_is_supported_when_applied(tmp_path):
    """Installed (not asked): the same answer, and each way out, installed, is supported."""
    env = _environment(tmp_path / "env", python="3.10", **INSTALLED_2_1_0)
    code, doc = _check(env, "--set", "cann=8.2.RC1")
    answer = doc["checks"][0]
    assert code == 3 and answer["stack"]["not_kept"].startswith(EOL_2_1_0), answer["stack"]
    assert answer["stack"]["conflict"].endswith("; you hold cann 8.2.RC1")
    assert len(answer["fixes"]) == 2, [f["summary"] for f in answer["fixes"]]
    for fix in answer["fixes"]:
        after, sets = _applied(tmp_path, INSTALLED_2_1_0, fix)
        again_code, again = _check(after, *sets)
        assert again_code == 0, (fix["summary"], again["checks"][0]["reasons"])


def test_a_layer_with_no_maintained_release_is_said_so_and_the_way_out_is_without_it(tmp_path):
    layer = tmp_path / "gone-layer.yaml"
    layer.write_text(
        "schema-version: 2\nlayer: {distribution: gone-layer, adapter: torch-npu}\nreleases:\n"
        "  - {version: 1.0.0, status: eol, reason: no longer maintained, torch: 2.10.0, adapter: 2.10.0.post4,"
        " dimensions: {cann: 9.1.0}}\n"
    )
    args = ["--matrix", str(ADAPTER), "--matrix", str(layer), *ON_910B, "--set", "cann=9.1.0", "--python", "3.11"]
    args += ["--torch", "2.10.0", "--adapter", "2.10.0.post4", "--companion", "gone-layer=1.0.0", "--json"]
    answer = json.loads(_run("check", *args).stdout)["checks"][0]
    assert answer["stack"]["not_kept"] == (
        "gone-layer 1.0.0 is end of life (no longer maintained): no fix keeps it, and gone-layer has no maintained"
        " release (supported, experimental or deprecated)"
    )
    assert [f["commands"] for f in answer["fixes"]] == [["pip uninstall -y gone-layer"]]


def test_a_held_version_that_is_no_release_of_its_layer_is_said_so_and_moved_to_one():
    args = ["--matrix", str(ADAPTER), "--matrix", str(VLLM_ASCEND), *ON_910B, "--set", "cann=9.1.0", "--python"]
    args += ["3.11", "--torch", "2.10.0", "--adapter", "2.10.0.post4", "--companion", "vllm-ascend=9.9.9", "--json"]
    answer = json.loads(_run("check", *args).stdout)["checks"][0]
    assert answer["stack"]["not_kept"] == (
        "vllm-ascend 9.9.9 is not a release its matrix describes: no fix keeps it;"
        " the fixes move it to a maintained release of vllm-ascend"
    )
    assert answer["stack"]["conflict"] is None
    assert "+ vllm-ascend==0.23.0" in answer["fixes"][0]["diff"]


def test_a_held_build_of_a_release_is_that_release_and_stays_as_installed():
    """``0.23.0+cpu`` is release 0.23.0 (as its verdict says): held, the fix keeps it, no conflict."""
    args = ["--matrix", str(ADAPTER), "--matrix", str(VLLM_ASCEND), *ON_910B, "--set", "cann=9.1.0", "--python"]
    args += ["3.11", "--torch", "2.10.0", "--adapter", "2.10.0.post4", "--companion", "vllm-ascend=0.23.0+cpu"]
    answer = json.loads(_run("check", *args, "--json").stdout)["checks"][0]
    assert answer["stack"]["conflict"] is None and answer["stack"]["not_kept"] is None
    (fix,) = answer["fixes"]
    assert fix["diff"] == ["+ vllm==0.23.0", "+ triton-ascend==3.2.2"], fix["summary"]


def test_an_installed_build_of_several_releases_is_said_so_and_the_fix_installs_one_by_its_version(tmp_path):
    # tags v0.20.1-7.0.0 and v0.20.1-7.1.0 of torchvision_npu both build a wheel that says 0.20.1
    installed = {"torch": "2.5.1", "torch-npu": "2.5.1.post1", "torchvision-npu": "0.20.1", "torchvision": "0.20.1"}
    env = _environment(tmp_path / "env", **installed)
    code, doc = _check(env, "--set", "cann=8.2.RC1", "--set", "ascend_driver=25.2.0")
    answer = doc["checks"][0]
    assert code == 1
    assert answer["stack"]["not_kept"] == (
        "torchvision-npu 0.20.1 is a build of 2 releases and its version does not say which: no fix keeps it;"
        " the fixes move it to a maintained release of torchvision-npu"
    )
    assert answer["stack"]["conflict"] is None
    assert answer["fixes"] and all("torchvision-npu" in fix["changes"] for fix in answer["fixes"])


# -- what-if options given the wrong way: one line, exit code 2 ----------------------------------

_STACK = ["--matrix", str(ADAPTER), "--matrix", str(VLLM_ASCEND), *ON_910B, "--set", "cann=9.1.0"]
_STACK += ["--torch", "2.10.0", "--adapter", "2.10.0.post4", "--python", "3.11"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--companion", "torch=2.6.0"], "--companion torch=2.6.0: torch is asked with --torch 2.6.0, not --companion"),
        (["--companion", "Torch=2.6.0"], "--companion Torch=2.6.0: torch is asked with --torch 2.6.0, not --companion"),
        (
            ["--companion", "python=3.10"],
            "--companion python=3.10: Python is asked with --python 3.10, not --companion",
        ),
        (
            ["--companion", "torch_npu=2.10.0.post2"],
            "--companion torch_npu=2.10.0.post2: torch-npu (the adapter) is asked with --adapter 2.10.0.post2,"
            " not --companion",
        ),
        (["--companion", "cann=9.0.0"], "--companion cann=9.0.0: cann is a dimension, set with --set cann=9.0.0"),
        (
            ["--companion", "device_type=A3"],
            "--companion device_type=A3: device_type is a dimension, set with --set device_type=A3",
        ),
        (["--companion", "vllm-ascend=latest"], "--companion vllm-ascend='latest' is not a PEP 440 version (or none)"),
        (
            ["--companion", "vllm-ascend=0.23.0", "--companion", "vllm=0.23"],
            None,  # a version that is one: answered
        ),
        (
            ["--companion", "vllm-ascend=0.23.0", "--companion", "vllm_ascend=0.22.0"],
            "--companion names vllm-ascend twice (vllm-ascend=0.23.0, vllm_ascend=0.22.0): give one version",
        ),
        (
            ["--companion", "vllm"],
            "--companion 'vllm': write NAME=VALUE, e.g. --companion torchvision=0.19.1 (or NAME=none: not installed)",
        ),
        (
            ["--companion", "vllm="],
            "--companion 'vllm=': write NAME=VALUE, e.g. --companion torchvision=0.19.1 (or NAME=none: not installed)",
        ),
        (["--set", "device_type=A9"], "--set device_type='A9' is not one of its values (A2, A3, 310P)"),
        # a dimension set twice: the last value won unsaid (_STACK sets cann=9.1.0)
        (["--set", "cann=8.1.RC1"], "--set names cann twice (cann=9.1.0, cann=8.1.RC1): give one value"),
        (["--set", "cann=9.1.0"], None),  # the same value twice is one
        (
            ["--companion", "vllm-ascend=0.23.0", "--companion", "vllm-ascend=0.22.0"],
            "--companion names vllm-ascend twice (vllm-ascend=0.23.0, vllm-ascend=0.22.0): give one version",
        ),
        (["--companion", "vllm-ascend=0.23.0+cpu", "--companion", "vllm-ascend=0.23.0+CPU"], None),  # one version
        (
            ["--adapter", ""],
            "--adapter '': give a version (2.10.0.post4) or an installed adapter's distribution name",
        ),
        (
            ["--adapter", "latest"],
            "--adapter 'latest' is neither a version nor the adapter --matrix describes (torch-npu)",
        ),
        (
            ["--dimension", "cann=9.1.0"],
            "--dimension: check takes a dimension's value with --set NAME=VALUE (--dimension is table's)",
        ),
    ],
)
def test_a_what_if_given_the_wrong_way_is_refused_in_one_line_with_the_usage_exit_code(args, error):
    proc = _run("check", *_STACK, *args)
    if error is None:
        assert proc.returncode in (0, 1), proc.stderr
        return
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stdout
    assert proc.stderr.splitlines() == [f"error: {error}"]
    doc = json.loads(_run("check", *_STACK, *args, "--json").stdout)
    assert (doc["exit_code"], doc["error"]) == (2, error)


def test_companion_torch_is_refused_without_a_layer_too():
    proc = _run("check", "--matrix", str(ADAPTER), *ON_910B, "--companion", "torch=2.6.0")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --companion torch=2.6.0: torch is asked with --torch 2.6.0, not --companion"


def test_a_companion_of_no_matrix_says_how_a_layers_package_becomes_known():
    proc = _run("check", "--matrix", str(ADAPTER), *ON_910B, "--companion", "vllm=0.23.0")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: --companion names unknown companion(s) vllm; the matrix declares: none (a package of a layer above"
        " the adapter is known when the layer's matrix is installed or given with --matrix)"
    )


def test_table_refuses_a_dimension_value_no_layer_release_admits():
    proc = _run("table", "--matrix", str(MINDSPEED), "--dimension", "cann=1.0")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.strip() == (
        f"error: --dimension cann=1.0: no release of {MINDSPEED.relative_to(REPO)} admits cann 1.0"
        " (they name: 9.1.0, 9.0.0, 8.5.0, 8.3.RC1, 8.2.RC1)"
    )


# -- what-ifs that were right, kept so ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        # a torch with its variant label is that build (torch-npu's x86_64 wheels pair with +cpu)
        (
            ["--set", "arch=x86_64", "--torch", "2.6.0+cpu", "--set", "cann=8.5.0", "--adapter", "2.6.0.post5"],
            0,
            "supported",
        ),
        (
            ["--set", "arch=x86_64", "--torch", "2.6.0", "--set", "cann=8.5.0", "--adapter", "2.6.0.post5"],
            1,
            "fix: reinstall torch from 2.6.0 to 2.6.0+cpu",
        ),
        # a free-threaded Python torch has no wheel for: the fix is the GIL build, its own interpreter
        (
            [
                "--set",
                "arch=aarch64",
                "--python",
                "3.13t",
                "--torch",
                "2.12.0",
                "--adapter",
                "2.12.0",
                "--set",
                "cann=9.1.0",
            ],
            1,
            "    python3.13 -m pip install 'torch-npu==2.12.0' 'torch==2.12.0'",
        ),
    ],
)
def test_what_ifs_with_a_variant_label_or_a_free_threaded_python_are_answered(args, code, said):
    proc = _run("check", "--matrix", str(ADAPTER), "--set", "soc=Ascend910B", *args)
    assert proc.returncode == code, proc.stderr
    assert any(line.startswith(said) for line in proc.stdout.splitlines()), proc.stdout


def test_the_same_dimension_set_twice_with_two_values_is_refused_without_a_layer_too():
    args = ["check", "--matrix", str(ADAPTER), *ON_910B, "--set", "cann=8.1.RC1", "--set", "cann=9.1.0"]
    proc = _run(*args)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == ["error: --set names cann twice (cann=8.1.RC1, cann=9.1.0): give one value"]


# -- a what-if version is shown as PEP 440 writes it, the version judged ---------------------------


def test_a_what_if_version_is_shown_normalised_in_the_report_and_the_document():
    """``--torch 2.6.0+CPU`` is judged as 2.6.0+cpu (PEP 440 lower-cases a local label): the report
    and the document show that version, not the spelling typed; so --adapter's and --companion's."""
    args = ["check", "--matrix", str(ADAPTER), "--set", "soc=Ascend910B", "--set", "arch=x86_64"]
    args += ["--set", "cann=8.5.0", "--torch", "2.6.0+CPU", "--adapter", "2.6.0.POST5", "--python", "3.11"]
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    rows = dict(line.split(None, 1) for line in proc.stdout.splitlines()[1:4])
    assert rows == {"Python": "3.11 (cpython)", "torch": "2.6.0+cpu", "torch-npu": "2.6.0.post5"}
    assert "CPU" not in proc.stdout and "POST" not in proc.stdout
    env = json.loads(_run(*args, "--json").stdout)["checks"][0]["environment"]
    assert (env["torch"], env["torch_variant"], env["adapter"]) == ("2.6.0+cpu", "cpu", "2.6.0.post5")


def test_a_what_if_torch_is_normalised_in_the_fixes_that_change_it():
    args = ["check", "--matrix", str(ADAPTER), "--set", "soc=Ascend910B", "--set", "arch=x86_64"]
    args += ["--set", "cann=9.1.0", "--torch", "2.6.0+CPU", "--adapter", "2.6.0.post5", "--python", "3.11"]
    proc = _run(*args)
    assert proc.returncode == 1, proc.stderr
    fixes = [line for line in proc.stdout.splitlines() if line.startswith(("fix: ", "or: "))]
    assert fixes and any("from 2.6.0+cpu to " in line for line in fixes), fixes
    assert "CPU" not in proc.stdout


def test_a_companion_version_is_shown_normalised():
    args = ["check", "--matrix", str(FIXTURES / "companions.yaml"), "--adapter", "2.0.0", "--python", "3.11"]
    args += ["--torch", "2.2.2+CPU", "--companion", "torchvision=0.17.2+CPU"]
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    assert "torchvision   0.17.2+cpu  (requires torch==2.2.2: pairs with this torch)" in proc.stdout.splitlines()
    assert "CPU" not in proc.stdout
    seen = json.loads(_run(*args, "--json").stdout)["checks"][0]["companions"]
    assert [(c["name"], c["installed"]) for c in seen if c["installed"]] == [("torchvision", "0.17.2+cpu")]


def test_a_layer_held_with_a_capitalised_local_label_is_shown_as_the_release_judged():
    args = ["check", *_STACK, "--companion", "vllm-ascend=0.23.0+CPU"]
    proc = _run(*args)
    assert proc.returncode in (0, 1), proc.stderr
    assert "vllm-ascend  0.23.0+cpu" in proc.stdout.splitlines() and "CPU" not in proc.stdout
    stack = json.loads(_run(*args, "--json").stdout)["checks"][0]["stack"]
    assert [(layer["name"], layer["installed"]) for layer in stack["layers"]] == [("vllm-ascend", "0.23.0+cpu")]


# -- a system change is said so by every fix ---------------------------------------------------


def test_a_stack_fix_says_its_cann_step_is_a_system_change_as_the_adapters_fix_does():
    """The same step, the same words: a stack's fix (MindSpeed-LLM's, to CANN 9.1.0) and the
    adapter's alone (torch-npu 2.7.1.post8 needs CANN 9.1.0) both say "a system change"."""
    step = "upgrade cann from 8.2.RC1 to 9.1.0 (a system change, not a pip package: install it yourself)"
    stack = json.loads(_run(*_mindspeed("8.2.RC1", "--json")).stdout)["checks"][0]
    assert stack["fixes"][0]["manual"] == [step]
    assert f"    by hand: {step}" in _run(*_mindspeed("8.2.RC1")).stdout.splitlines()
    alone = ["check", "--matrix", str(ADAPTER), *ON_910B, "--python", "3.10", "--set", "cann=8.2.RC1"]
    alone += ["--torch", "2.7.1", "--adapter", "2.7.1.post8", "--json"]
    adapter = json.loads(_run(*alone).stdout)["checks"][0]
    assert step in [m for fix in adapter["fixes"] for m in fix["manual"]], [f["manual"] for f in adapter["fixes"]]


# -- adapter-matrix env says what check says ---------------------------------------------------


def _env(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "env", "--env", str(env), "--no-binary", *args],
        capture_output=True,
        text=True,
        cwd=env.parent,
        timeout=120,
    )


def test_env_reports_the_layer_release_no_fix_keeps_as_check_does(tmp_path):
    """An installed MindSpeed-LLM 2.1.0 (end of life) on CANN 8.2.RC1: the bug report carries
    check's "not kept:" line (text and --json), before the conflict, as check prints it."""
    from adapter_matrix.check.env_report import read_report

    env = _environment(tmp_path / "env", python="3.10", **INSTALLED_2_1_0)
    _code, checked = _check(env, "--set", "cann=8.2.RC1")
    not_kept = checked["checks"][0]["stack"]["not_kept"]
    assert not_kept.startswith(EOL_2_1_0)

    proc = _env(env, "--set", "arch=aarch64", "--set", "cann=8.2.RC1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert f"- not kept: {not_kept}" in lines
    assert lines.index(f"- not kept: {not_kept}") + 1 == lines.index(
        "- conflict: mindspeed-llm 26.1.0 needs cann 9.1.0, 26.0.0 needs cann 9.0.0; you hold cann 8.2.RC1"
    )

    data = json.loads(_env(env, "--set", "arch=aarch64", "--set", "cann=8.2.RC1", "--json").stdout)
    (seen,) = data["adapters"]
    assert seen["not_kept"] == not_kept
    assert read_report(data).to_json() == data
    # a document written before the key (by an older adapter-matrix) still reads: the key is optional
    del seen["not_kept"]
    assert read_report(data).adapters[0].not_kept is None


def test_env_of_a_stack_every_fix_keeps_says_nothing_is_not_kept(tmp_path):
    from .test_stack import V023

    env = _environment(tmp_path / "env", **V023)
    proc = _env(env, "--set", "arch=aarch64", "--set", "cann=9.1.0")
    assert proc.returncode == 0 and "not kept" not in proc.stdout, proc.stdout
    data = json.loads(_env(env, "--set", "arch=aarch64", "--set", "cann=9.1.0", "--json").stdout)
    assert data["adapters"][0]["not_kept"] is None


# -- a narrow terminal: prose wrapped between words, a command between its arguments ------------


def _words(text: str) -> List[str]:
    """The words of a report, a command's continuations (`` \\`` and a new line) taken out."""
    return text.replace(" \\\n", " ").split()


def test_on_an_80_column_terminal_a_stack_answer_is_wrapped_between_words_and_its_command_between_arguments():
    """The end-of-life answer (not kept, a conflict, two fixes) read on 80 columns: no line is
    wider, no word is cut (the terminal cut "maint|enance" and "torc|h"), a wrapped line goes on
    under its text (not 2 columns in, where a layer's status is), and the pip command is one
    command to copy (`` \\`` at each line's end); word for word, the report a pipe gets."""
    import re
    import shlex

    from adapter_matrix.answer import read_check
    from adapter_matrix.check.report import render_check

    (answer,) = read_check(json.loads(_run(*_mindspeed("8.2.RC1", "--json")).stdout)).checks
    piped = render_check(answer)
    wrapped = render_check(answer, width=80)
    # wider only where one argument alone is (a git URL: an argument is never cut)
    assert all(len(line) <= 80 or len(shlex.split(line.removesuffix(" \\"))) == 1 for line in wrapped.splitlines()), (
        wrapped
    )
    assert max(len(line) for line in piped.splitlines()) > 200  # what the terminal cut mid-word before
    assert _words(wrapped) == _words(piped)  # no word cut, none lost, none added
    lines = wrapped.splitlines()
    for said in piped.splitlines():  # each line begins a line; what it wraps is indented under its text
        assert any(said.startswith(line.removesuffix(" \\")) for line in lines), said
    assert (
        "not kept: mindspeed-llm 2.1.0 is end of life (EOL since 2025-12-30 (README\n"
        "          maintenance table)): no fix keeps it, and no maintained release of\n"
    ) in wrapped
    assert "conflict: mindspeed-llm 26.1.0 needs cann 9.1.0, 26.0.0 needs cann 9.0.0; you\n          hold" in wrapped
    assert "\n  layer mindspeed-llm 2.1.0: eol\n" in wrapped  # a line of its own, not a continuation
    assert (
        "\n    by hand: upgrade cann from 8.2.RC1 to 9.1.0 (a system change, not a pip\n             package" in wrapped
    )
    (command,) = [line.strip() for line in piped.splitlines() if line.startswith("    pip install ")]
    start = wrapped.index("    pip install ")
    continued = wrapped[start : wrapped.index("\nor: ", start)]
    assert continued.count(" \\\n        '") >= 1
    # the shell drops each backslash-newline (POSIX line continuation): one command, the same
    assert shlex.split(continued.replace("\\\n", "")) == shlex.split(command)
    colored = render_check(answer, color=True, width=80)
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == wrapped  # colors change no break


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="a pseudo-terminal is POSIX's")
def test_check_on_a_terminal_wraps_to_its_width_and_a_pipe_keeps_one_line_each():
    import shlex

    master, slave = os.openpty()
    env = {**os.environ, "ADAPTER_MATRIX_NO_MEMO": "1", "COLUMNS": "80", "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "adapter_matrix", *_mindspeed("8.2.RC1")], stdout=slave, cwd=REPO, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal's other end closed: the command is done
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) == 3
    shown = b"".join(chunks).decode().replace("\r\n", "\n")
    # wider only where one argument alone is (a git URL: an argument is never cut)
    assert all(len(line) <= 80 or len(shlex.split(line.removesuffix(" \\"))) == 1 for line in shown.splitlines()), shown
    assert "    pip install 'torch==2.7.1' 'torch-npu==2.7.1.post8' \\\n" in shown
    piped = _run(*_mindspeed("8.2.RC1")).stdout
    assert _words(shown) == _words(piped) and max(len(line) for line in piped.splitlines()) > 80
    assert "\n" + piped.splitlines()[0] + "\n" in "\n" + shown  # a short line is as a pipe gets it
