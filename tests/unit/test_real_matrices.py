"""Real adapter matrices: torch_npu's published table and IPEX's CPU and XPU pairings.

The fixtures (tests/fixtures/matrices/) encode the tables of ../shared/research/vendors.md
section 3; these tests ask what a maintainer and a user of those adapters would ask:
validate, check (what-ifs), the tables, and the test plan.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Dict, List

import pytest

from adapter_matrix.ci.plan import plan
from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load, load_text
from adapter_matrix.matrix.queries import cells, maintained
from adapter_matrix.tables import views

from .helpers import FIXTURES, cli, github_rows

MATRICES = FIXTURES / "matrices"
NPU = str((MATRICES / "torch_npu.yaml").relative_to(FIXTURES.parent.parent))
IPEX = str((MATRICES / "ipex.yaml").relative_to(FIXTURES.parent.parent))
TODAY = "2026-12-01"
IPEX_TODAY = "2026-01-15"  # IPEX is archived: fixes until 2026-03-31

# torch_npu's COMPATIBILITY table (vendors.md section 3) for CANN 8.0.RC1 ... 9.1.0:
# CANN version -> {torch version: torch-npu package}.
PUBLISHED = {
    "9.1.0": {
        "2.12.0": "2.12.0",
        "2.11.0": "2.11.0",
        "2.10.0": "2.10.0.post4",
        "2.9.0": "2.9.0.post6",
        "2.7.1": "2.7.1.post8",
    },
    "9.0.0": {"2.9.0": "2.9.0.post2", "2.8.0": "2.8.0.post4", "2.7.1": "2.7.1.post4"},
    "8.5.0": {"2.9.0": "2.9.0", "2.8.0": "2.8.0.post2", "2.7.1": "2.7.1.post2", "2.6.0": "2.6.0.post5"},
    "8.3.RC1": {"2.8.0": "2.8.0", "2.7.1": "2.7.1", "2.6.0": "2.6.0.post3", "2.1.0": "2.1.0.post17"},
    "8.2.RC1": {"2.6.0": "2.6.0", "2.5.1": "2.5.1.post1", "2.1.0": "2.1.0.post13"},
    "8.1.RC1": {"2.5.1": "2.5.1", "2.4.0": "2.4.0.post4", "2.3.1": "2.3.1.post6", "2.1.0": "2.1.0.post12"},
    "8.0.0": {"2.4.0": "2.4.0.post2", "2.3.1": "2.3.1.post4", "2.1.0": "2.1.0.post10"},
    "8.0.RC3": {"2.4.0": "2.4.0", "2.3.1": "2.3.1.post2", "2.1.0": "2.1.0.post8"},
    "8.0.RC2": {"2.3.1": "2.3.1", "2.2.0": "2.2.0.post2", "2.1.0": "2.1.0.post6", "1.11.0": "1.11.0.post14"},
    "8.0.RC1": {"2.2.0": "2.2.0", "2.1.0": "2.1.0.post4", "1.11.0": "1.11.0.post11"},
}
# Packages torch_npu publishes outside that table, both for torch 2.10.0 on CANN 9.0.0 (line
# 26.0.0): 2.10.0 (its 26.0.0 release notes) and 2.10.0.post2 (its README); newest first.
ELSEWHERE = {"9.0.0": {"2.10.0": ["2.10.0.post2", "2.10.0"]}}


def check(*args: str, matrix: str = NPU, today: str = TODAY, arch: str = "aarch64") -> Dict:
    """check's answer; torch_npu's on ``arch`` (aarch64: PyPI's torch, as the table's rows say it)."""
    on = ("--set", f"arch={arch}") if matrix == NPU else ()
    res = cli("check", "--json", "--matrix", matrix, "--today", today, *on, *args)
    doc = json.loads(res.out)
    (one,) = doc["checks"]
    assert one["exit_code"] == res.code == doc["exit_code"], res.err
    return one


# -- validate --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["torch_npu", "ipex", "minimal"])
def test_the_real_matrices_validate_clean(name):
    res = cli("validate", "--matrix", str(MATRICES / f"{name}.yaml"))
    assert res.code == 0, res.err
    # not a warning but the one a vendor's table cannot answer: which CI runners have each arch
    assert all("but no runner label" in line for line in res.err.splitlines()), res.err
    assert "valid" in res.out


def test_the_torch_npu_fixture_says_what_the_table_says():
    matrix = load(MATRICES / "torch_npu.yaml").matrix
    elsewhere = sum(len(packages) for row in ELSEWHERE.values() for packages in row.values())
    # every package twice: on aarch64 with PyPI's torch, on x86_64 with torch's +cpu build (README)
    assert len(matrix.releases) == 2 * (sum(len(row) for row in PUBLISHED.values()) + elsewhere)
    for rel in matrix.releases:
        (cann,) = [str(c) for name, c in rel.dimensions if name == "cann"]
        (arch,) = [str(c) for name, c in rel.dimensions if name == "arch"]
        assert rel.variant == {"aarch64": None, "x86_64": "cpu"}[arch], rel.label
        (pin,) = rel.pins
        if str(rel.version) in ELSEWHERE.get(cann, {}).get(str(pin), []):
            continue
        assert PUBLISHED[cann][str(pin)] == str(rel.version)


# -- check: what-ifs from the published table --------------------------------------------
#
# Each case: a user's torch, Python, CANN (and installed torch-npu), what the table says
# about it, and what check must answer. A fix must work with the user's CANN: it either
# keeps it (its cell's cann is the user's) or says, as a manual step, which CANN to
# install; no fix changes the SoC. On aarch64, where torch-npu pairs with PyPI's torch (the
# x86_64 answers, with torch's +cpu build, follow the table).

WHAT_IFS = [
    # 26.1.0 ships 2.9.0.post6 for torch 2.9.0 on CANN 9.1.0
    (["--torch", "2.9.0", "--python", "3.10", "--set", "cann=9.1.0", "--adapter", "2.9.0.post6"], "supported", None),
    # 2.9.0 is the 7.3.0 package (CANN 8.5.0); on CANN 9.1.0 the doctor's answer is 2.9.0.post6
    (
        ["--torch", "2.9.0", "--python", "3.10", "--set", "cann=9.1.0", "--adapter", "2.9.0"],
        "unsupported",
        "pip install 'torch-npu==2.9.0.post6'",
    ),
    # the case: 2.4.0.post4 needs CANN 8.1.RC1; on 9.1.0 only the 26.1.0 packages work
    (
        ["--torch", "2.4.0", "--python", "3.10", "--set", "cann=9.1.0", "--adapter", "2.4.0.post4"],
        "unsupported",
        "pip install 'torch-npu==2.7.1.post8' 'torch==2.7.1'",
    ),
    # 6.0.0 ships 2.4.0.post2 for CANN 8.0.0
    (["--torch", "2.4.0", "--python", "3.10", "--set", "cann=8.0.0", "--adapter", "2.4.0.post2"], "supported", None),
    # 6.0.rc1 is end of life here: the way out needs CANN 8.0.RC2, said as a manual step
    (
        ["--torch", "2.2.0", "--python", "3.10", "--set", "cann=8.0.RC1", "--adapter", "2.2.0"],
        "eol",
        "pip install 'torch-npu==2.2.0.post2'",
    ),
    # torch 2.2 has Python 3.8-3.10 only
    (
        ["--torch", "2.2.0", "--python", "3.11", "--set", "cann=8.0.RC2", "--adapter", "2.2.0.post2"],
        "unsupported",
        "pip install 'torch-npu==2.3.1' 'torch==2.3.1'",
    ),
    # 2.11-2.13 support Python 3.14
    (["--torch", "2.12.0", "--python", "3.14", "--set", "cann=9.1.0", "--adapter", "2.12.0"], "supported", None),
    # 2.9-2.10 stop at 3.13: keep CANN, move to torch 2.11
    (
        ["--torch", "2.10.0", "--python", "3.14", "--set", "cann=9.1.0", "--adapter", "2.10.0.post4"],
        "unsupported",
        "pip install 'torch-npu==2.11.0' 'torch==2.11.0'",
    ),
    # 7.3.0's 2.8.0.post2 needs CANN 8.5.0; 7.2.0's 2.8.0 serves 8.3.RC1 with the same torch
    (
        ["--torch", "2.8.0", "--python", "3.11", "--set", "cann=8.3.RC1", "--adapter", "2.8.0.post2"],
        "unsupported",
        "pip install 'torch-npu==2.8.0'",
    ),
    # no 2.8 package for CANN 9.1.0: the nearest torch that has one
    (
        ["--torch", "2.8.0", "--python", "3.11", "--set", "cann=9.1.0", "--adapter", "2.8.0.post4"],
        "unsupported",
        "pip install 'torch-npu==2.9.0.post6' 'torch==2.9.0'",
    ),
    # torch-npu 2.6.0 on an Ascend950PR: "Unsupported soc version" (RLinf PR #1577)
    (
        [
            "--torch",
            "2.6.0",
            "--python",
            "3.10",
            "--set",
            "cann=8.2.RC1",
            "--set",
            "soc=Ascend950PR",
            "--adapter",
            "2.6.0",
        ],
        "broken",
        "pip install 'torch-npu==2.5.1.post1' 'torch==2.5.1'",
    ),
    # nothing installed yet: which package serves torch 2.1.0 on CANN 8.3.RC1
    (
        ["--torch", "2.1.0", "--python", "3.11", "--set", "cann=8.3.RC1"],
        "unsupported",
        "pip install 'torch-npu==2.1.0.post17'",
    ),
]


@pytest.mark.parametrize("args,verdict,first_command", WHAT_IFS, ids=[" ".join(a) for a, _v, _c in WHAT_IFS])
def test_what_ifs_from_the_published_table(args, verdict, first_command):
    doc = check(*args)
    assert doc["verdict"] == verdict, doc["reasons"]
    user_cann = next(a.split("=", 1)[1] for a in args if a.startswith("cann="))
    if first_command is None:
        assert doc["fixes"] == []
        return
    assert doc["fixes"][0]["commands"][-1] == first_command
    for fix in doc["fixes"]:
        cell_cann = fix["cell"]["dimensions"]["cann"]
        assert "soc" not in fix["changes"]
        if cell_cann == user_cann:
            assert "cann" not in fix["changes"] and not any("cann" in step for step in fix["manual"])
        else:
            assert "cann" in fix["changes"]
            assert any(
                step.endswith(f"to {cell_cann} (a system change, not a pip package: install it yourself)")
                for step in fix["manual"]
            )
            assert not any("cann" in command for command in fix["commands"])  # never inside a pip command
        # the package really is the table's package for that CANN and torch
        assert PUBLISHED[cell_cann][fix["cell"]["torch"]] == fix["cell"]["release"]
    keeps = [i for i, f in enumerate(doc["fixes"]) if "cann" not in f["changes"]]
    changes = [i for i, f in enumerate(doc["fixes"]) if "cann" in f["changes"]]
    assert not keeps or not changes or max(keeps) < min(changes)  # driver changes come last


# On x86_64 the same rows pair with torch's +cpu build from PyTorch's CPU index (README): the
# user's torch, the adapter, and what check answers.
X86_WHAT_IFS = [
    # the brief's pair: torch 2.9.0 on CANN 8.5.0 is 2.9.0, on 9.1.0 2.9.0.post6; PyPI's torch moves to +cpu
    (["--torch", "2.9.0", "--set", "cann=8.5.0"], "2.9.0"),
    (["--torch", "2.9.0", "--set", "cann=9.1.0"], "2.9.0.post6"),
    (["--torch", "2.9.0+cpu", "--set", "cann=9.0.0"], "2.9.0.post2"),
]


@pytest.mark.parametrize("args,build", X86_WHAT_IFS, ids=[" ".join(a) for a, _b in X86_WHAT_IFS])
def test_on_x86_64_the_fix_installs_the_cpu_torch_and_the_build_for_the_users_cann(args, build):
    doc = check(*args, "--python", "3.10", arch="x86_64")
    assert doc["verdict"] == "unsupported"  # torch-npu is not installed
    first = doc["fixes"][0]
    assert first["cell"]["release"] == build and first["manual"] == []
    assert first["cell"]["torch"] == "2.9.0+cpu"
    if args[1] == "2.9.0":  # PyPI's (CUDA) torch: torch-npu's x86_64 wheels want the +cpu build
        assert first["commands"] == [
            "pip install 'torch==2.9.0+cpu' --index-url https://download.pytorch.org/whl/cpu",
            f"pip install 'torch-npu=={build}'",
        ]
    else:
        assert first["commands"] == [f"pip install 'torch-npu=={build}'"]


@pytest.mark.parametrize("cann,build", [("8.5.0", "2.9.0"), ("9.1.0", "2.9.0.post6")])
def test_check_names_the_build_for_the_cann_on_the_machine_it_runs_on(cann, build):
    """The acceptance's command as a user types it: no --set arch, the machine's own."""
    res = cli("check", "--matrix", NPU, "--torch", "2.9.0", "--set", f"cann={cann}", "--today", TODAY)
    assert res.code == 1, res.err  # not installed
    fix = next(line for line in res.out.splitlines() if line.startswith("fix: "))
    assert f"install torch-npu {build} (supported: torch-npu {build}," in fix and f"cann {cann}" in fix
    assert f"pip install 'torch-npu=={build}'" in res.out


def test_a_driver_change_is_explicit_and_leaves_torch_and_python_alone():
    doc = check("--torch", "2.4.0", "--python", "3.10", "--set", "cann=9.1.0", "--adapter", "2.4.0.post4")
    driver = doc["fixes"][-1]
    assert driver["changes"] == ["cann"]
    assert driver["manual"] == [
        "downgrade cann from 9.1.0 to 8.1.RC1 (a system change, not a pip package: install it yourself)"
    ]
    assert driver["commands"] == []  # torch 2.4.0 and torch-npu 2.4.0.post4 stay as installed
    assert not any(f["changes"] == ["python"] or "python" in f["changes"] for f in doc["fixes"])  # the problem is CANN


def test_values_are_shown_as_written():
    res = cli(
        "check", "--matrix", NPU, "--torch", "2.4.0", "--python", "3.10", "--set", "cann=8.1.RC1", "--adapter", "2.5.1"
    )
    assert any(line.split(None, 1) == ["cann", "8.1.RC1  (from --set)"] for line in res.out.splitlines()), res.out
    assert (
        "needs cann 8.2.RC1" not in res.out
        and "torch-npu 2.5.1 (release 7.0.0) supports torch 2.5.1, not 2.4.0" in res.out
    )
    assert "8.1rc1" not in res.out.lower()
    table = views.render(load(MATRICES / "torch_npu.yaml").matrix, view="dimension", fmt="csv")
    assert "8.1.RC1,7.0.0," in table and "8.1rc1" not in table.lower()


def test_an_undetected_cann_is_said_in_each_fix():
    doc = check("--torch", "2.5.1", "--python", "3.9")
    assert doc["environment"]["dimensions"]["cann"]["value"] is None
    needs = [fix["manual"] for fix in doc["fixes"][:2]]
    assert needs == [
        ["make sure cann is 8.2.RC1 (cann could not be detected)"],
        ["make sure cann is 8.1.RC1 (cann could not be detected)"],
    ]


# -- tables ----------------------------------------------------------------------------


def test_the_grid_shows_every_torch_line_as_served():
    doc = json.loads(cli("table", "--matrix", NPU, "--format", "json", "--today", TODAY).out)
    served = {row[0]["text"] for row in doc["rows"] if any(c["state"] == "supported" for c in row[1:])}
    assert {f"2.{m}" for m in range(1, 13)} <= served
    (two_nine,) = [row for row in doc["rows"] if row[0]["text"] == "2.9"]
    cell = two_nine[doc["columns"].index({"key": "3.10", "label": "3.10"})]
    # the compact grid: the newest package serving the position; every package in its title
    assert cell["text"] == "supported (2.9.0.post6)"
    assert cell["title"].startswith("supported (2.9.0.post6, 2.9.0.post2, 2.9.0)")
    assert doc["release"] is None and "2.2.0" not in doc["releases_shown"]  # 6.0.rc1 is end of life


def test_release_narrows_the_grid_to_a_release_line():
    doc = json.loads(cli("table", "--matrix", NPU, "--format", "json", "--release", "7.3.0", "--today", TODAY).out)
    assert sorted(doc["releases_shown"]) == ["2.6.0.post5", "2.7.1.post2", "2.8.0.post2", "2.9.0"]
    one = json.loads(
        cli("table", "--matrix", NPU, "--format", "json", "--release", "2.9.0.post6", "--today", TODAY).out
    )
    assert one["release"] == "2.9.0.post6" and one["title"].startswith("torch-npu 2.9.0.post6: torch \u00d7 Python")


def test_the_dimension_grid_is_the_published_table():
    doc = json.loads(cli("table", "--matrix", NPU, "--view", "dimension", "--format", "json", "--today", TODAY).out)
    got: Dict[str, Dict[str, List[str]]] = {}
    for entry in doc["packages"]:
        got.setdefault(entry["value"], {}).setdefault(entry["torch"], []).append(entry["release"])
    published = {cann: {torch: [package] for torch, package in row.items()} for cann, row in PUBLISHED.items()}
    for cann, row in ELSEWHERE.items():
        for torch, packages in row.items():
            published[cann][torch] = packages
    assert got == published
    assert [row[0]["text"] for row in doc["rows"]] == list(PUBLISHED)  # newest CANN first, as published
    assert [c["text"] for c in doc["rows"][0][:3]] == ["9.1.0", "26.1.0", "2.12.0"]


def test_the_releases_view_groups_packages_by_release_line():
    doc = json.loads(cli("table", "--matrix", NPU, "--view", "releases", "--format", "json", "--today", TODAY).out)
    lines = [row[0]["text"] for row in doc["rows"]]
    assert lines == sorted(
        lines,
        key=lambda line: [
            "26.1.0",
            "26.0.0",
            "7.3.0",
            "7.2.0",
            "7.1.0",
            "7.0.0",
            "6.0.0",
            "6.0.rc3",
            "6.0.rc2",
            "6.0.rc1",
        ].index(line),
    )
    assert doc["columns"][0] == {"key": "line", "label": "release line"}
    for arch, variant in (("aarch64", None), ("x86_64", "cpu")):  # each package once per arch
        here = [r for r in doc["releases"] if r["release_line"] == "7.3.0" and r["dimensions"]["arch"] == arch]
        assert [r["version"] for r in here] == ["2.9.0", "2.8.0.post2", "2.7.1.post2", "2.6.0.post5"]
        assert {r["torch_variant"] for r in here} == {variant}


# -- plans -----------------------------------------------------------------------------


def test_the_full_plan_is_every_package_torch_python_cell_of_maintained_releases():
    matrix = load(MATRICES / "torch_npu.yaml").matrix
    today = _dt.date.fromisoformat(TODAY)
    expected = {
        (str(c.release.version), str(c.torch), str(c.python)) for c in cells(matrix, maintained(matrix, today), today)
    }
    rows = json.loads(cli("plan", "--matrix", NPU, "--format", "json", "--today", TODAY).out)
    assert {(r["release"], r["torch"], r["python"]) for r in rows} == expected
    # 146 cells less the 11 of the end-of-life 6.0.rc1, plus 2.10.0 and 2.10.0.post2 on Python 3.10-3.13,
    # on each arch (the builds differ: torch's +cpu build on x86_64, PyPI's on aarch64)
    assert len(expected) == 143 and len(rows) == 2 * 143
    assert len({r["session"] for r in rows}) == len(rows)
    assert not any(r["release"] in ("2.2.0", "2.1.0.post4", "1.11.0.post11") for r in rows)


def test_plan_ids_are_stable_and_name_the_runner_they_need():
    rows = json.loads(cli("plan", "--matrix", NPU, "--format", "json", "--release", "26.1.0", "--today", TODAY).out)
    row = next(r for r in rows if r["release"] == "2.9.0.post6" and r["python"] == "3.10")
    assert row["id"] == "py3.10-torch2.9-cann9.1.0-v2.9.0.post6"
    assert row["requires"] == {"cann": "9.1.0"} and row["runs_on"] == ["self-hosted", "ascend", "cann-9.1.0"]
    assert {"torch2.9", "py3.10", "cann9.1.0", "v2.9.0.post6", "line26.1.0", "full"} <= set(row["tags"])
    github = github_rows(
        cli("plan", "--matrix", NPU, "--format", "github", "--release", "26.1.0", "--today", TODAY).out
    )
    assert {tuple(i["runs-on"]) for i in github} == {("self-hosted", "ascend", "cann-9.1.0")}
    text = cli("plan", "--matrix", NPU, "--release", "2.9.0.post6", "--today", TODAY).out
    assert "requires cann 9.1.0" in text


@pytest.mark.parametrize("strategy", ["edges", "latest"])
def test_edges_and_latest_cover_every_maintained_release(strategy):
    matrix = load(MATRICES / "torch_npu.yaml").matrix
    today = _dt.date.fromisoformat(TODAY)
    rows = plan(matrix, strategy, today=today)
    assert {r.cell.release.version for r in rows} == {r.version for r in maintained(matrix, today)}
    per_release: Dict[str, List[str]] = {}  # per build: the package on one arch
    for r in rows:
        arch = dict(r.cell.dimensions)["arch"]
        per_release.setdefault(f"{r.cell.release.version} {arch}", []).append(str(r.cell.python))
    for arch in ("aarch64", "x86_64"):
        assert per_release[f"2.9.0.post6 {arch}"] == (["3.10", "3.13"] if strategy == "edges" else ["3.13"])


# -- IPEX: variants, an OS, a nightly pin -------------------------------------------------


def test_a_cuda_torch_with_the_cpu_ipex_keeps_ipex_and_installs_the_cpu_torch():
    args = ("--torch", "2.8.0", "--python", "3.11", "--adapter", "2.8.0+cpu", "--set", "os=linux")
    doc = check(*args, matrix=IPEX, today=IPEX_TODAY)
    assert doc["verdict"] == "unsupported" and doc["exit_code"] == 1
    assert doc["reasons"] == [
        "intel-extension-for-pytorch 2.8.0+cpu needs torch's cpu build, found torch 2.8.0 "
        "(no variant label: PyPI's default build, CUDA on Linux x86_64)"
    ]
    # the installed CPU IPEX says which build the user wants: its torch, from PyTorch's CPU
    # index; the installed IPEX stays (issue 44: this used to get no fix)
    fix = doc["fixes"][0]
    assert fix["changes"] == ["torch"]
    assert fix["commands"] == ["pip install 'torch==2.8.0+cpu' --index-url https://download.pytorch.org/whl/cpu"]
    assert fix["cell"]["torch"] == "2.8.0+cpu"  # the JSON keeps the local label
    # no other family: never an XPU build the machine may not run
    assert all(f["cell"]["torch"].endswith("+cpu") for f in doc["fixes"])


def test_the_linux_and_windows_pins_of_one_release():
    args = ("--torch", "2.9.0+xpu", "--python", "3.11", "--adapter", "2.9.10+xpu")
    linux = check(*args, "--set", "os=linux", matrix=IPEX, today=IPEX_TODAY)
    assert linux["verdict"] == "supported"
    windows = check(*args, "--set", "os=windows", matrix=IPEX, today=IPEX_TODAY)
    assert windows["verdict"] == "unsupported"
    assert "supports torch 2.9.0.dev20250906, not 2.9.0+xpu" in windows["reasons"][0]
    # the nightly pin, as the user's +xpu build (the nightly XPU index labels its wheels so)
    assert windows["fixes"][0]["commands"] == [  # for cmd.exe: no single quotes
        "pip install torch==2.9.0.dev20250906+xpu --index-url https://download.pytorch.org/whl/nightly/xpu"
    ]
    # the CPU build is Linux only: on Windows no fix proposes it
    cpu = check(
        "--torch",
        "2.8.0",
        "--python",
        "3.11",
        "--adapter",
        "2.8.0+cpu",
        "--set",
        "os=windows",
        matrix=IPEX,
        today=IPEX_TODAY,
    )
    assert cpu["reasons"] == ["intel-extension-for-pytorch 2.8.0+cpu (release cpu) needs os linux, found windows"]
    assert all("+cpu" not in f["cell"]["release"] for f in cpu["fixes"]) and cpu["fixes"]


def test_a_pinned_nightly_is_its_release_claim_and_an_unpinned_one_is_experimental():
    pinned = check(
        "--torch",
        "2.10.0.dev20251205+xpu",
        "--python",
        "3.11",
        "--adapter",
        "2.10.10+xpu",
        matrix=IPEX,
        today=IPEX_TODAY,
    )
    assert pinned["verdict"] == "supported"
    res = cli("check", "--json", "--torch", "2.13.0.dev20260101", "--python", "3.11", "--adapter", "0.1.0")
    (nightly,) = json.loads(res.out)["checks"]
    assert res.code == 3 and nightly["verdict"] == "experimental"
    assert nightly["reasons"][0].startswith("torch 2.13.0.dev20260101 (a nightly build before 2.13.0) is a pre-release")
    assert nightly["fixes"][0]["commands"] == ["pip install 'torch>=2.13,<2.14'"]


def test_ipex_support_ended_with_the_project():
    doc = check(
        "--torch",
        "2.8.0+cpu",
        "--python",
        "3.11",
        "--adapter",
        "2.8.0+cpu",
        "--set",
        "os=linux",
        matrix=IPEX,
        today="2026-04-01",
    )
    assert doc["verdict"] == "eol" and doc["reasons"] == ["support for 2.8.0+cpu ended on 2026-03-31"]


def test_an_enumeration_value_must_be_one_the_matrix_knows():
    res = cli("check", "--matrix", IPEX, "--set", "os=solaris")
    assert res.code == 2 and "--set os='solaris' is not one of its values (linux, windows)" in res.err


# -- the model: schema versions and the new rules --------------------------------------------

V1 = (FIXTURES / "minimal.yaml").read_text()


def test_a_version_1_file_loads_as_before_and_refuses_version_2_keys():
    assert load_text(V1, "v1.yaml").matrix.schema_version == 1
    with pytest.raises(MatrixError) as exc:
        load_text(
            V1.replace("    status: supported\n", "    status: supported\n    torch-variant: cpu\n", 1), "v1.yaml"
        )
    assert "'torch-variant' in release needs schema-version 2 (this file says 1)" in str(exc.value)
    v2 = load_text(V1.replace("schema-version: 1", "schema-version: 2"), "v2.yaml").matrix
    assert v2.schema_version == 2 and len(cells(v2)) == len(cells(load_text(V1, "v1.yaml").matrix))


@pytest.mark.parametrize(
    "change,message",
    [
        (
            ("dimensions: {cann: 9.1.0, arch: aarch64}", "dimensions: {cann: 9.2.0, arch: aarch64}"),
            "release 2.12.0 needs cann 9.2.0, which matches none of its declared values",
        ),
        (
            ("      - {version: 2.11.0, torch: 2.11.0,", "      - {version: 2.12.0, torch: 2.11.0,"),
            "duplicate release 2.12.0",
        ),
        (
            ("    torch-variant: cpu\n", "    torch-variant: xpu\n"),
            "release 2.12.0 needs torch's xpu build, but no source installs it",
        ),
        (("    kind: enum # a name", "    kind: enumeration # a name"), "unknown dimension kind 'enumeration'"),
        (
            ("      - {version: 2.12.0, torch: 2.12.0,", "      - {version: 2.12.0, torch: '>=2.12,!=2.12.1+cpu',"),
            "puts a local label (+...) in a range",
        ),
    ],
    ids=["undeclared value", "duplicate version", "variant without source", "bad kind", "label in a range"],
)
def test_rules_of_real_matrices(change, message):
    text = (MATRICES / "torch_npu.yaml").read_text()
    assert change[0] in text
    with pytest.raises(MatrixError) as exc:
        load_text(text.replace(change[0], change[1], 1), "npu.yaml")
    assert message in str(exc.value)


def test_os_and_arch_detect_themselves(tmp_path):
    import platform
    import sys

    text = (
        (MATRICES / "minimal.yaml")
        .read_text()
        .replace(
            "releases:",
            "dimensions:\n  os: {kind: enum, values: [linux, windows, macos]}\n  arch: {kind: enum, values: [x86_64, aarch64]}\nreleases:",
        )
    )
    path = tmp_path / "compat.yaml"
    path.write_text(text)
    res = cli("check", "--json", "--matrix", str(path), "--torch", "2.13.0", "--python", "3.11")
    env = json.loads(res.out)["checks"][0]["environment"]["dimensions"]
    expected_os = {"linux": "linux", "darwin": "macos", "win32": "windows"}[sys.platform]
    assert env["os"] == {"value": expected_os, "source": "builtin os", "error": None}
    machine = platform.machine().lower()
    assert env["arch"]["value"] == {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    assert env["arch"]["source"] == "builtin arch"
