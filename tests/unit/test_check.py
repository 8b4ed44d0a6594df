"""`adapter-matrix check`: answers, exit codes, the JSON document, and no torch import."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adapter_matrix.check.report import CHECK_KEYS

from .helpers import REPO, cli
from .helpers import quick_check as _quick

COMMANDS_DOC = (REPO / "docs" / "commands.md").read_text()  # the reference of `check --json`


def test_dev_environment_is_supported_and_names_the_shim():
    res = cli("check", "--torch", "2.13.0+cpu", "--python", "3.11", "--adapter", "0.1.0")
    assert res.code == 0, res.out + res.err
    assert "supported" in res.out
    assert re.search(r"shim\s+shims\.torch_2_\d+", res.out)


def test_old_torch_is_unsupported_with_a_pasteable_fix():
    res = cli("check", "--torch", "2.0.1", "--python", "3.11", "--adapter", "0.1.0")
    assert res.code == 1
    assert "unsupported: torch 2.0.1 is not a torch release this matrix describes" in res.out
    commands = [line.strip() for line in res.out.splitlines() if line.startswith("    pip ")]
    assert commands and commands[0].startswith("pip install 'torch>=2.")
    # pasteable: the requirement is a valid PEP 508 string inside single quotes
    from packaging.requirements import Requirement

    Requirement(commands[0].split("'")[1])


def test_python_without_a_torch_wheel_is_unsupported():
    res = cli("check", "--torch", "2.6", "--python", "3.8", "--adapter", "0.1.0")
    assert res.code == 1
    assert "torch 2.6 has no wheel for Python 3.8" in res.out


def test_experimental_cell_exits_3():
    res = cli(
        "check", "--matrix", "tests/fixtures/minimal.yaml", "--torch", "2.3.1", "--python", "3.12", "--adapter", "2.0.0"
    )
    assert res.code == 3
    assert "experimental: not tested on 3.12 yet" in res.out


def test_json_document_has_the_documented_keys():
    res = cli("check", "--json", "--torch", "2.13.0+cpu", "--python", "3.11", "--adapter", "0.1.0")
    assert res.code == 0
    doc = json.loads(res.out)
    assert doc["schema"] == 1 and doc["exit_code"] == 0
    (one,) = doc["checks"]
    assert tuple(one) == CHECK_KEYS
    assert one["verdict"] == "supported" and one["environment"]["torch_variant"] == "cpu"
    # every key is documented in docs/commands.md (`check --json`)
    for key in CHECK_KEYS:
        assert f"`{key}`" in COMMANDS_DOC, key


def test_bad_what_if_values_are_usage_errors():
    for args in (["--torch", "two"], ["--python", "3"], ["--set", "cann"], ["--set", "nope=1.0"]):
        res = cli("check", *args)
        assert res.code == 2, args
        assert "error:" in res.err and "Traceback" not in res.err


def _site_without_torch(tmp_path: Path) -> Path:
    """A copy of this interpreter's site-packages (symlinks) without torch in it."""
    import site

    site_dir = next(p for p in site.getsitepackages() if Path(p, "typer").exists() or Path(p, "yaml").exists())
    clean = tmp_path / "site"
    clean.mkdir()
    for entry in Path(site_dir).iterdir():
        name = entry.name.lower()
        if name.startswith(("torch", "functorch", "torchgen", "__editable__", "_distutils")) or name.endswith(".pth"):
            continue
        (clean / entry.name).symlink_to(entry)
    return clean


def test_environment_without_torch_gets_a_clear_answer(tmp_path):
    clean = _site_without_torch(tmp_path)
    code = (
        f"import sys; sys.path[:0] = [{str(REPO)!r}, {str(clean)!r}]; sys.argv = ['adapter-matrix', 'check']\n"
        "from adapter_matrix.cli import main; main()"
    )
    proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"^torch +not installed$", proc.stdout, re.MULTILINE), proc.stdout
    assert "unsupported: adapter-matrix-npu is not installed" in proc.stdout or "torch is not installed" in proc.stdout
    assert "pip install 'torch>=2." in proc.stdout
    assert "Traceback" not in proc.stderr


def test_check_never_imports_torch():
    code = (
        "import sys; sys.argv = ['adapter-matrix', 'check', '--json']\n"
        "from adapter_matrix.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
        "assert not bad, bad\n"
        "print('no torch')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="1"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("no torch")


def test_a_plain_check_never_imports_typer_or_click_and_anything_else_goes_to_typer():
    code = (
        "import sys\n"
        "from adapter_matrix.cli import main\n"
        "sys.argv = ['adapter-matrix'] + sys.argv[1:]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('loaded:', sorted(m for m in ('typer', 'click', 'rich', 'dataclasses', 'hashlib') if m in sys.modules))"
    )

    def loaded(*args):
        proc = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO, capture_output=True, text=True, timeout=60)
        return proc.stdout.strip().splitlines()[-1]

    # the start-up path of `check`: no typer, no click, no rich off a terminal, nothing heavy,
    # once the compiled-matrix cache is warm (a first run after an edit compiles the matrix)
    loaded("check")
    assert loaded("check") == "loaded: []"
    assert loaded("check", "--json", "-m", "compat.yaml", "--torch=2.4.1", "--adapter", "0.1.0") == "loaded: []"
    assert "'typer'" in loaded("check", "--help")
    assert "'typer'" in loaded("check", "--no-such-option")
    assert "'typer'" in loaded("validate")


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--json",),
        ("--torch", "2.4.1", "--python", "3.9"),
        ("--torch=2.4.1", "--python=3.8", "--json"),
        ("-m", "tests/fixtures/minimal.yaml", "--torch", "2.3.1", "--python", "3.12", "--adapter", "2.0.0"),
        ("-mtests/fixtures/minimal.yaml", "--adapter", "9.9"),
        ("--torch", "2.2.0", "--torch", "2.13.0"),  # the last value wins, as in click
        ("--set", "cann"),  # a usage error: exit 2 with the message
        ("--python", "three"),
    ],
)
def test_the_typer_free_check_answers_exactly_as_the_typer_command(args):
    code, out, err = _quick(*args)
    res = cli("check", *args)
    assert (code, out) == (res.code, res.out)
    assert err.strip().splitlines()[-1:] == res.err.strip().splitlines()[-1:]


@pytest.mark.parametrize("args", [("--help",), ("-h",), ("--jsn",), ("extra",), ("--json=yes",), ("--torch",)])
def test_command_lines_the_quick_path_does_not_know_go_to_typer(args):
    from adapter_matrix.cli import quick

    assert quick.parse_check(list(args)) is None


def test_the_typer_command_takes_exactly_the_quick_parser_s_options():
    import typer.main

    from adapter_matrix.check.pipeline import CheckRequest
    from adapter_matrix.cli import app, quick

    command = typer.main.get_command(app).commands["check"]
    declared = {
        param.name: (tuple(sorted(param.opts)), "flag" if param.is_flag else "multiple" if param.multiple else "value")
        for param in command.params
    }
    assert declared == {o.dest: (tuple(sorted(o.flags)), o.kind) for o in quick.CHECK_OPTIONS}
    # one option per field of the pipeline's request, and the probes the command line passes
    assert set(CheckRequest._fields) == set(declared) | {"probes"}


def test_the_check_pipeline_answers_a_request_with_a_typed_result_and_refuses_by_field():
    from adapter_matrix.answer import Answer, CheckDocument
    from adapter_matrix.check.pipeline import CheckRefused, CheckRequest, run
    from adapter_matrix.cli.quick import _probes
    from adapter_matrix.matrix.status import Status

    asked = CheckRequest(
        _probes(), matrix=("tests/fixtures/minimal.yaml",), torch="2.13.0", python="3.11", adapter="1.0.0"
    )
    result = run(asked)
    assert isinstance(result.document, CheckDocument) and result.exit_code == result.document.exit_code
    (answer,) = result.document.checks
    assert isinstance(answer, Answer) and isinstance(answer.verdict, Status)
    assert not result.memorable  # a what-if adapter is never remembered
    with pytest.raises(CheckRefused) as refused:
        run(asked._replace(python="three"))
    assert refused.value.field == "python" and refused.value.exit_code == 2
    assert refused.value.problem.startswith(": 'three' is not a Python feature release")


def test_check_finds_the_installed_adapter_without_a_local_matrix(tmp_path):
    res = cli("check", "--json", "--torch", "2.13.0", "--python", "3.11", "--adapter", "0.1.0", cwd=tmp_path)
    assert res.code == 0, res.err
    (one,) = json.loads(res.out)["checks"]
    assert one["origin"].startswith("entry point adapter-matrix")
    assert one["matrix"].endswith("compat.yaml")


def test_json_of_an_invalid_matrix_holds_its_diagnostics():
    """`check --json` on an invalid matrix: the document says where and what (issue 61), not
    only how many; stderr keeps the same lines for a person."""
    from adapter_matrix.answer import read_check

    code, out, err = _quick("-m", "tests/fixtures/invalid/bad_status.yaml", "--json")
    doc = json.loads(out)
    assert code == doc["exit_code"] == 2 and doc["checks"] == []
    assert doc["error"] == "tests/fixtures/invalid/bad_status.yaml: 1 error in the matrix"
    assert doc["diagnostics"] == [
        {
            "file": "tests/fixtures/invalid/bad_status.yaml",
            "line": 36,
            "column": 13,
            "severity": "error",
            "message": "unknown status 'suported'",
            "hint": "did you mean 'supported'? use one of supported, experimental, deprecated, eol, broken",
        }
    ]
    assert "tests/fixtures/invalid/bad_status.yaml:36:13: unknown status 'suported'" in err
    assert read_check(doc).diagnostics[0].line == 36  # the declared type reads it back
    # every key of a diagnostic is documented in docs/commands.md (`check --json`)
    for key in ("diagnostics", *doc["diagnostics"][0]):
        assert f"`{key}`" in COMMANDS_DOC, key


def test_json_of_an_unreadable_matrix_has_a_diagnostic_without_a_position(tmp_path):
    code, out, _err = _quick("-m", str(tmp_path / "missing.yaml"), "--json")
    (one,) = json.loads(out)["diagnostics"]
    assert code == 2 and one["line"] is None and one["column"] is None
    assert one["message"].startswith("cannot read the matrix") and one["hint"] == "pass --matrix PATH"


def test_json_of_a_usage_error_has_no_diagnostics():
    code, out, _err = _quick("-m", "tests/fixtures/minimal.yaml", "--python", "three", "--json")
    assert code == 2 and "diagnostics" not in json.loads(out)
