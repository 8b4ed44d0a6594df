"""Companion packages in the matrix and in `check`: pairings, variants, fixes, the JSON entry.

The pairings of tests/fixtures/companions.yaml (minimal.yaml with companions): torchvision 0.16.N requires torch 2.1.N,
0.17.0/0.17.2 torch 2.2.0/2.2.2, 0.18.N torch 2.3.N; torchaudio 2.2.0 requires torch>=2.2
(open: it pairs with 2.3 too, for which the file says none); demo-vision is the adapter's own
companion, none for release 1.0.0 and >=2.0,<2.1 for 2.0.0.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from packaging.version import Version

from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load, load_text

from .helpers import FIXTURES, REPO, cli

COMPANIONS = str(FIXTURES / "companions.yaml")
COMPANIONS_TEXT = (FIXTURES / "companions.yaml").read_text()
COMPAT = (REPO / "compat.yaml").read_text()


def check(*args: str):
    return cli("check", "--matrix", COMPANIONS, *args)


def check_json(*args: str) -> dict:
    res = cli("check", "--json", "--matrix", COMPANIONS, *args)
    (doc,) = json.loads(res.out)["checks"]
    assert doc["exit_code"] == res.code
    return doc


def companion(doc: dict, name: str) -> dict:
    return next(c for c in doc["companions"] if c["name"] == name)


# -- the model -------------------------------------------------------------------------------


def test_the_model_answers_which_release_pairs_with_a_torch():
    matrix = load(COMPANIONS).matrix
    vision = matrix.companion("TorchVision")  # names compare as PEP 503 normalizes them
    assert [str(r.version) for r in vision.pairing(Version("2.1.1+cpu"))] == ["0.16.1"]
    assert str(vision.choose(Version("2.2.2")).version) == "0.17.2"
    assert vision.choose(Version("2.2.1")) is None  # no 0.17.1 in this file: nothing pairs
    audio = matrix.companion("torchaudio")
    assert audio.line(Version("2.3.1")).releases == ()  # `none`
    assert str(audio.choose(Version("2.3.1")).version) == "2.2.0"  # ... but the open one admits it
    assert audio.release(Version("2.2.0")).open and not vision.release(Version("0.17.0")).open
    assert matrix.companion("demo-vision").pin(Version("1.0.0")).spec is None


def _errors(text: str, filename: str = "c.yaml") -> List[str]:
    with pytest.raises(MatrixError) as info:
        load_text(text, filename, check_modules=False)
    return [str(d) for d in info.value.diagnostics if d.severity == "error"]


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    "old,new,needle,message",
    [
        (
            "0.17.2: 2.2.2}",
            "0.17.2: 2.3.0}",
            "2.3.0}",
            "torchvision 0.17.2 requires torch==2.3.0: built for torch 2.3, not 2.2",
        ),
        ("demo-vision:", "demo vision:", "demo vision", "companion 'demo vision' is not a distribution name"),
        (
            "1.0.0: none",
            "1.5.0: none",
            "none\n      2.0.0",
            "demo-vision is pinned for adapter release 1.5.0, which this file does not list",
        ),
        (
            '"2.3": none',
            '"2.3":',
            '"2.3":\n  demo',
            "torchaudio for torch 2.3 must map its releases to the torch they require, or say none",
        ),
        (
            '"2.3": none',
            '"2.3.1": none',
            '"2.3.1"',
            "the torch facts of torchaudio: '2.3.1' is not a minor release line",
        ),
    ],
)
def test_a_wrong_companion_fact_is_an_error_at_its_position(old, new, needle, message):
    text = COMPANIONS_TEXT.replace(old, new)
    assert text != COMPANIONS_TEXT
    errors = _errors(text)
    assert any(e.startswith(f"c.yaml:{_line_of(text, needle)}:") and message in e for e in errors), errors


def test_companions_need_schema_version_2():
    errors = _errors(COMPANIONS_TEXT.replace("schema-version: 2", "schema-version: 1"))
    assert any("'companions' in compat.yaml needs schema-version 2 (this file says 1)" in e for e in errors), errors


def test_ci_can_only_install_a_declared_companion_with_torch_facts():
    text = COMPANIONS_TEXT + "ci:\n  companions: [torchvision, demo-vision, nope]\n"
    errors = _errors(text)
    assert any("ci installs companion nope, which companions: does not declare" in e for e in errors)
    assert any("ci installs companion demo-vision, but it has no torch facts" in e for e in errors)
    assert not any("torchvision" in e for e in errors)


def test_torch_lines_a_companion_leaves_unstated_are_one_warning():
    text = COMPANIONS_TEXT.replace('      "2.3": none\n', "")
    warnings = [str(w) for w in load_text(text, "c.yaml", check_modules=False).warnings]
    assert any("torchaudio says nothing about torch 2.3" in w for w in warnings), warnings


def test_the_repository_matrix_states_every_torch_line_for_both_companions():
    from adapter_matrix.matrix.cache import load_matrix

    matrix = load_matrix(REPO / "compat.yaml", use_cache=False).matrix
    for name in ("torchvision", "torchaudio"):
        comp = matrix.companion(name)
        assert [str(entry.minor) for entry in comp.lines] == [str(line.minor) for line in matrix.torch]
    # torchaudio has no release built for the newest lines: the file says none
    audio = matrix.companion("torchaudio")
    assert [str(e.minor) for e in audio.lines if not e.releases] == ["2.12", "2.13", "2.14", "2.15"]
    assert [c.name for c in matrix.ci_companions] == ["torchvision"]


# -- check -------------------------------------------------------------------------------------


def test_a_companion_for_another_torch_is_unsupported_with_one_command_that_keeps_torch():
    res = check("--adapter", "2.0.0", "--torch", "2.2.2", "--python", "3.11", "--companion", "torchvision=0.18.1")
    assert res.code == 1, res.out
    assert re.search(r"torchvision +0\.18\.1  \(requires torch==2\.3\.1: does not pair with this torch\)", res.out)
    assert "unsupported: torchvision 0.18.1 requires torch==2.3.1, but torch 2.2.2 is installed" in res.out
    assert "fix: keep torch 2.2.2; install torchvision 0.17.2" in res.out
    assert "    pip install 'torchvision==0.17.2'\n" in res.out


def test_the_paired_release_is_supported():
    res = check("--adapter", "2.0.0", "--torch", "2.2.2", "--python", "3.11", "--companion", "torchvision=0.17.2")
    assert res.code == 0, res.out
    assert re.search(r"torchvision +0\.17\.2  \(requires torch==2\.2\.2: pairs with this torch\)", res.out)


def test_a_pypi_build_beside_a_cpu_torch_is_a_variant_mismatch_fixed_from_the_matching_index():
    doc = check_json(
        "--adapter", "2.0.0", "--torch", "2.2.2+cpu", "--python", "3.11", "--companion", "torchvision=0.17.2"
    )
    assert doc["verdict"] == "unsupported"
    entry = companion(doc, "torchvision")
    assert entry["state"] == "variant" and entry["variant"] is None
    assert "PyPI's (CUDA) build, but torch 2.2.2+cpu is the +cpu build" in entry["reason"]
    # the matrix's source for the cpu variant names the index
    assert entry["fix"]["commands"] == [
        "pip install 'torchvision==0.17.2+cpu' --index-url https://download.pytorch.org/whl/cpu"
    ]
    assert doc["fixes"][0]["changes"] == ["torchvision"]
    ok = check_json(
        "--adapter", "2.0.0", "--torch", "2.2.2+cpu", "--python", "3.11", "--companion", "torchvision=0.17.2+cpu"
    )
    assert ok["verdict"] == "supported" and companion(ok, "torchvision")["state"] == "paired"


def test_a_source_build_label_is_not_judged_as_a_variant():
    doc = check_json(
        "--adapter", "2.0.0", "--torch", "2.2.2+cpu", "--python", "3.11", "--companion", "torchvision=0.17.2+git1a2b3c"
    )
    assert doc["verdict"] == "supported" and companion(doc, "torchvision")["state"] == "paired"


def test_an_open_requirement_pairs_with_a_later_line():
    doc = check_json("--adapter", "2.0.0", "--torch", "2.3.1", "--python", "3.11", "--companion", "torchaudio=2.2.0")
    assert doc["verdict"] == "supported", doc["reasons"]
    assert companion(doc, "torchaudio")["requires"] == "torch>=2.2"


def test_without_a_paired_release_the_fix_is_the_torch_that_pairs():
    # torch 2.2.1 has no torchvision in this file; 0.17.0 pairs with 2.2.0, within release 2.0.0
    doc = check_json("--adapter", "2.0.0", "--torch", "2.2.1", "--python", "3.11", "--companion", "torchvision=0.17.0")
    assert doc["exit_code"] == 1
    assert doc["fixes"][0]["commands"] == ["pip install 'torch==2.2.0'"]
    assert "keep torchvision 0.17.0 and install torch 2.2.0" in doc["fixes"][0]["summary"]


def test_a_fix_that_changes_torch_takes_the_companions_along():
    # release 2.0.0 does not support torch 2.1: its fix moves torch, and torchvision with it
    doc = check_json("--adapter", "2.0.0", "--torch", "2.1.2", "--python", "3.11", "--companion", "torchvision=0.16.2")
    assert doc["verdict"] == "unsupported" and companion(doc, "torchvision")["state"] == "paired"
    first = doc["fixes"][0]
    assert first["commands"] == ["pip install 'torch>=2.2,<2.3' 'torchvision==0.17.2'"]
    assert first["changes"] == ["torch", "torchvision"]


def test_a_fix_that_changes_the_adapter_takes_its_own_companion_along():
    doc = check_json("--adapter", "1.0.0", "--torch", "2.3.1", "--python", "3.11", "--companion", "demo-vision=0.5.0")
    to_two = next(f for f in doc["fixes"] if f["cell"]["release"] == "2.0.0")
    assert to_two["commands"][0].endswith(" 'demo-vision>=2.0,<2.1'")


def test_an_unlisted_release_is_an_assumption_not_a_verdict():
    doc = check_json("--adapter", "2.0.0", "--torch", "2.2.2", "--python", "3.11", "--companion", "torchvision=0.99.0")
    assert doc["verdict"] == "supported" and companion(doc, "torchvision")["state"] == "unknown"
    assert any("torchvision 0.99.0 is not a release this matrix lists" in a for a in doc["assumptions"])


def test_the_adapter_pins_its_own_companion():
    base = ("--adapter", "2.0.0", "--torch", "2.2.2", "--python", "3.11")
    assert check_json(*base, "--companion", "demo-vision=2.0.3")["verdict"] == "supported"
    doc = check_json(*base, "--companion", "demo-vision=1.4.0")
    assert doc["verdict"] == "unsupported"
    assert "demo-adapter 2.0.0 pairs with demo-vision>=2.0,<2.1, not 1.4.0" in doc["reasons"]
    assert doc["fixes"][0]["commands"] == ["pip install 'demo-vision>=2.0,<2.1'"]
    old = check_json("--adapter", "1.0.0", "--torch", "2.2.2", "--python", "3.11", "--companion", "demo-vision=2.0.3")
    assert "demo-adapter 1.0.0 pairs with no demo-vision release" in old["reasons"][-1]
    assert ["pip uninstall -y demo-vision"] in [f["commands"] for f in old["fixes"]]


def test_companion_what_ifs_are_checked():
    for args in (["--companion", "torchvision"], ["--companion", "nope=1.0"], ["--companion", "torchvision=latest"]):
        res = check(*args)
        assert res.code == 2, args
        assert "error:" in res.err and "Traceback" not in res.err
    absent = check_json("--companion", "torchvision=none")
    assert companion(absent, "torchvision")["state"] == "absent"


def test_the_json_entry_lists_every_declared_companion():
    doc = check_json("--adapter", "2.0.0", "--torch", "2.2.2", "--python", "3.11")
    assert [c["name"] for c in doc["companions"]] == ["torchvision", "torchaudio", "demo-vision"]
    assert set(doc["companions"][0]) == {
        "name",
        "installed",
        "variant",
        "source",
        "state",
        "requires",
        "reason",
        "decided_by",
        "fix",
    }


# -- a real environment: wheels installed with --no-deps, read from their metadata --------------


def _install_no_deps(target: Path, requirement: str) -> None:
    """Install one wheel without dependencies into ``target``; skip when no wheel is at hand
    offline (the development machines keep torchvision 0.28.0-0.29.1 for Python 3.11)."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--quiet", "--target", str(target), requirement],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PIP_NO_INPUT="1"),
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"cannot install {requirement} here: {proc.stderr.strip().splitlines()[-1:]}")


def _check_with(site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "check", "--matrix", str(REPO / "compat.yaml")],
        cwd=REPO, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


@pytest.mark.slow  # pip installs a real torchvision wheel
def test_a_torchvision_for_another_torch_installed_without_deps_is_refused(tmp_path):
    from adapter_matrix.check.facts import distribution_version

    torch = distribution_version("torch")
    if torch is None or not torch.startswith("2.13."):
        pytest.skip(f"needs the development torch 2.13 (found {torch})")
    _install_no_deps(tmp_path, "torchvision==0.29.1")
    proc = _check_with(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"torchvision 0.29.1 requires torch>=2.14.0, but torch {torch} is installed" in proc.stdout
    assert "pip install 'torchvision==0.28.0" in proc.stdout
