"""What-ifs for Intel's two adapters, with answers read from the vendors' published tables.

tests/fixtures/matrices/ipex.yaml encodes IPEX's dependency_version.json pins (CPU X.Y.0+cpu
with torch X.Y.0+cpu; XPU X.Y.10+xpu with +xpu torch, two nightly pins, and the oneAPI each
XPU build names); tests/fixtures/matrices/gaudi.yaml encodes Intel Gaudi's Support Matrix
pages (one torch per software release, driver = release, a Python per OS). Each case says
what the table says and what check must answer; docs/real-matrices.md lists them.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Dict

import pytest
from packaging.version import Version

from adapter_matrix.check.detectors import run_detector
from adapter_matrix.check.judgment import Environment
from adapter_matrix.check.verdict import verdict
from adapter_matrix.matrix.loader import load
from adapter_matrix.matrix.model import PythonVersion, Value

from .helpers import FIXTURES, cli

MATRICES = FIXTURES / "matrices"
IPEX = str((MATRICES / "ipex.yaml").relative_to(FIXTURES.parent.parent))
GAUDI = str((MATRICES / "gaudi.yaml").relative_to(FIXTURES.parent.parent))
IPEX_TODAY = "2026-01-15"  # IPEX is archived: fixes until 2026-03-31
TODAY = "2026-12-01"
XPU_INDEX = "--index-url https://download.pytorch.org/whl/xpu"
CPU_INDEX = "--index-url https://download.pytorch.org/whl/cpu"


def check(*args: str, matrix: str, today: str) -> Dict:
    res = cli("check", "--json", "--matrix", matrix, "--today", today, *args)
    (one,) = json.loads(res.out)["checks"]
    assert one["exit_code"] == res.code, res.err
    return one


def ipex(*args: str) -> Dict:
    return check("--python", "3.11", *args, matrix=IPEX, today=IPEX_TODAY)


def gaudi(*args: str) -> Dict:
    return check(*args, matrix=GAUDI, today=TODAY)


@pytest.mark.parametrize("name", ["ipex", "gaudi"])
def test_the_intel_matrices_validate_clean(name):
    res = cli("validate", "--matrix", str(MATRICES / f"{name}.yaml"))
    assert res.code == 0, res.err
    # not a warning but the one a vendor's table cannot answer: which CI runners have each OS
    assert all("but no runner label" in line for line in res.err.splitlines()), res.err


# -- IPEX -------------------------------------------------------------------------------


def test_ipex_cpu_2_7_0_pins_torch_2_7_0_while_2_7_1_exists():
    # dependency_version.json v2.7.0: torch 2.7.0+cpu
    assert ipex("--torch", "2.7.0+cpu", "--adapter", "2.7.0+cpu", "--set", "os=linux")["verdict"] == "supported"
    wrong_patch = ipex("--torch", "2.7.1+cpu", "--adapter", "2.7.0+cpu", "--set", "os=linux")
    assert wrong_patch["verdict"] == "unsupported"
    first = wrong_patch["fixes"][0]  # one change (torch), pip only, to the pinned patch, +cpu kept
    assert first["changes"] == ["torch"] and first["manual"] == []
    assert first["commands"] == [f"pip install 'torch==2.7.0+cpu' {CPU_INDEX}"]
    assert first["cell"]["torch"] == "2.7.0+cpu"


def test_ipex_the_pinned_patch_is_a_grid_row_and_a_plan_row():
    doc = json.loads(cli("table", "--matrix", IPEX, "--format", "json", "--today", IPEX_TODAY).out)
    rows = {row[0]["text"]: row for row in doc["rows"]}
    # 2.9 is pinned twice (2.9.0+xpu on Linux, a nightly on Windows), 2.5 twice (2.5.0+cpu, 2.5.1+cxx11.abi)
    assert {"2.9.0", "2.9.0.dev20250906", "2.5.1", "2.5.0", "2.7"} <= set(rows)
    col = doc["columns"].index({"key": "3.11", "label": "3.11"})
    assert rows["2.5.0"][col]["text"] == "supported (2.5.0+cpu)"
    assert rows["2.5.1"][col]["text"] == "supported (2.5.10+xpu)"
    plan = json.loads(cli("plan", "--matrix", IPEX, "--format", "json", "--today", IPEX_TODAY).out)
    assert {(r["release"], r["torch"]) for r in plan} >= {
        ("2.7.0+cpu", "2.7.0"),
        ("2.5.0+cpu", "2.5.0"),
        ("2.9.10+xpu", "2.9.0.dev20250906"),
    }
    assert len({r["id"] for r in plan}) == len(plan)


def test_ipex_an_xpu_user_on_an_old_oneapi_keeps_the_xpu_build():
    # v2.8.10 needs oneAPI 2025.1; on 2025.0.4 the table's XPU builds that need no newer
    # oneAPI are 2.9.10 (names none) and 2.7.10/2.6.10 (2025.0.4): never a +cpu build
    doc = ipex("--torch", "2.8.0+xpu", "--adapter", "2.8.10+xpu", "--set", "os=linux", "--set", "oneapi=2025.0.4")
    assert doc["verdict"] == "unsupported"
    first = doc["fixes"][0]
    assert first["manual"] == [] and first["commands"] == [
        f"pip install 'torch==2.9.0+xpu' {XPU_INDEX}",
        "pip install 'intel-extension-for-pytorch==2.9.10+xpu' --extra-index-url https://pytorch-extension.intel.com/release-whl/stable/xpu/us/",
    ]
    assert all("+cpu" not in f["cell"]["release"] and f["cell"]["torch"].endswith("+xpu") for f in doc["fixes"])
    last = doc["fixes"][-1]  # the manual step comes last, and changes nothing else
    assert last["manual"] == [
        "upgrade oneapi from 2025.0.4 to 2025.1 (a system change, not a pip package: install it yourself)"
    ]
    assert last["changes"] == ["oneapi"] and last["commands"] == []


def test_ipex_windows_2_7_10_needs_oneapi_2025_0_5():
    # v2.7.10: oneAPI 2025.0.4 on Linux, 2025.0.5 on Windows
    args = ("--torch", "2.7.0+xpu", "--adapter", "2.7.10+xpu", "--set", "oneapi=2025.0.4")
    assert ipex(*args, "--set", "os=linux")["verdict"] == "supported"
    windows = ipex(*args, "--set", "os=windows")
    assert windows["verdict"] == "unsupported"
    assert windows["fixes"][-1]["manual"] == [
        "upgrade oneapi from 2025.0.4 to 2025.0.5 (a system change, not a pip package: install it yourself)"
    ]
    assert all("os" not in f["changes"] for f in windows["fixes"])


def test_ipex_the_windows_nightly_pin_keeps_the_users_xpu_build():
    # v2.9.10 on Windows pins torch 2.9.0.dev20250906
    doc = ipex("--torch", "2.9.0+xpu", "--adapter", "2.9.10+xpu", "--set", "os=windows")
    assert doc["verdict"] == "unsupported"
    assert (
        doc["fixes"][0]["commands"][0]
        == "pip install torch==2.9.0.dev20250906+xpu --index-url https://download.pytorch.org/whl/nightly/xpu"
    )  # for cmd.exe: no single quotes
    # v2.10.10 pins the nightly 2.10.0.dev20251205+xpu: that nightly is its claim
    assert (
        ipex("--torch", "2.10.0.dev20251205+xpu", "--adapter", "2.10.10+xpu", "--set", "os=linux")["verdict"]
        == "supported"
    )


def test_ipex_a_cpu_machine_without_oneapi_is_not_asked_about_oneapi():
    doc = ipex("--torch", "2.8.0+cpu", "--adapter", "2.8.0+cpu", "--set", "os=linux")
    assert doc["verdict"] == "supported"
    assert doc["environment"]["dimensions"]["oneapi"]["value"] == "absent"
    assert not any("oneapi" in a for a in doc["assumptions"])
    # the XPU package on a CPU torch: the CPU package of the same torch, one pip command
    wrong = ipex("--torch", "2.8.0+cpu", "--adapter", "2.8.10+xpu", "--set", "os=linux")
    assert wrong["fixes"][0]["commands"] == [
        "pip install 'intel-extension-for-pytorch==2.8.0+cpu' --extra-index-url https://pytorch-extension.intel.com/release-whl/stable/cpu/us/"
    ]
    assert all(not any("oneapi" in step for step in f["manual"]) for f in wrong["fixes"])


def test_ipex_an_xpu_build_without_oneapi_says_install_it():
    doc = ipex("--torch", "2.6.0+xpu", "--adapter", "2.6.10+xpu", "--set", "os=linux", "--set", "oneapi=absent")
    assert "needs oneapi 2025.0.4, found absent" in doc["reasons"][0]
    assert doc["fixes"][-1]["manual"] == [
        "install oneapi 2025.0.4 (a system change, not a pip package: install it yourself)"
    ]


def test_ipex_the_dimension_view_names_each_package_once():
    doc = json.loads(
        cli(
            "table",
            "--matrix",
            IPEX,
            "--view",
            "dimension",
            "--dimension",
            "os",
            "--format",
            "json",
            "--today",
            IPEX_TODAY,
        ).out
    )
    texts = [c["text"] for row in doc["rows"] for c in row[1:]]
    assert not any(len(t.split(", ")) != len(set(t.split(", "))) for t in texts), texts


# -- Gaudi ------------------------------------------------------------------------------

U2204 = ("--set", "distro=ubuntu22.04")


def test_gaudi_one_torch_per_release_and_driver_equals_release():
    matrix = load(MATRICES / "gaudi.yaml").matrix
    published = {"1.19.0": "2.5.1", "1.21.0": "2.6.0", "1.22.0": "2.7.1"}
    for rel in matrix.releases:
        assert [str(p) for p in rel.pins] == [published[str(rel.version)]]
        assert str(rel.constraint("driver")) == str(rel.version)


@pytest.mark.parametrize(
    "distro,pythons",
    [
        ("ubuntu22.04", {"3.10": "supported", "3.11": "experimental"}),
        ("ubuntu24.04", {"3.12": "supported"}),
        ("rhel9.4", {"3.11": "supported", "3.12": "experimental"}),
        ("rhel9.6", {"3.12": "supported"}),
        ("sles15.5", {"3.11": "supported"}),
        ("tencentos3.1", {"3.10": "supported"}),
        ("opencloudos9.2", {"3.11": "supported"}),
    ],
)
def test_gaudi_1_22_each_os_has_its_own_python(distro, pythons):
    for python in ("3.10", "3.11", "3.12"):
        doc = gaudi(
            "--python",
            python,
            "--torch",
            "2.7.1",
            "--adapter",
            "1.22.0",
            "--set",
            f"distro={distro}",
            "--set",
            "driver=1.22.0",
        )
        assert doc["verdict"] == pythons.get(python, "unsupported"), (python, doc["reasons"])


def test_gaudi_an_experimental_python_is_offered_only_a_supported_fix():
    doc = gaudi("--python", "3.11", "--torch", "2.7.1", "--adapter", "1.22.0", *U2204, "--set", "driver=1.22.0")
    assert doc["verdict"] == "experimental"
    assert doc["fixes"] and all(f["cell"]["status"] == "supported" for f in doc["fixes"])
    assert doc["fixes"][0]["commands"] == ["python3.10 -m pip install 'habana-torch-plugin==1.22.0' 'torch==2.7.1'"]


def test_gaudi_an_old_driver_gets_the_release_of_that_driver_first():
    doc = gaudi("--python", "3.10", "--torch", "2.7.1", "--adapter", "1.22.0", *U2204, "--set", "driver=1.21.0")
    assert doc["verdict"] == "unsupported"
    assert doc["fixes"][0]["commands"] == [
        "pip install 'habana-torch-plugin==1.21.0' 'torch==2.6.0'"
    ]  # 1.21.0 -> torch 2.6.0
    assert doc["fixes"][-1]["changes"] == ["driver"] and doc["fixes"][-1]["commands"] == []


def test_gaudi_an_os_a_release_lacks_needs_a_newer_driver_never_another_os():
    # OpenCloudOS 9.2 first appears in the 1.22.0 table
    doc = gaudi(
        "--python",
        "3.11",
        "--torch",
        "2.6.0",
        "--adapter",
        "1.21.0",
        "--set",
        "distro=opencloudos9.2",
        "--set",
        "driver=1.21.0",
    )
    assert doc["verdict"] == "unsupported"
    (fix,) = doc["fixes"]
    assert fix["changes"] == ["adapter", "torch", "driver"] and fix["cell"]["release"] == "1.22.0"
    assert fix["manual"] == [
        "upgrade driver from 1.21.0 to 1.22.0 (a system change, not a pip package: install it yourself)"
    ]


def test_gaudi_the_grid_names_the_os_that_makes_the_difference():
    doc = json.loads(cli("table", "--matrix", GAUDI, "--format", "json", "--today", TODAY).out)
    (row,) = [r for r in doc["rows"] if r[0]["text"] == "2.7"]
    col = doc["columns"].index({"key": "3.11", "label": "3.11"})
    assert (
        row[col]["text"]
        == "supported (1.22.0 with distro rhel9.4/sles15.5/opencloudos9.2); experimental (1.22.0 with distro ubuntu22.04)"
    )


def test_gaudi_the_dimension_view_names_1_22_0_once():
    doc = json.loads(
        cli(
            "table",
            "--matrix",
            GAUDI,
            "--view",
            "dimension",
            "--dimension",
            "driver",
            "--format",
            "json",
            "--today",
            TODAY,
        ).out
    )
    cells = {row[0]["text"]: [c["text"] for c in row[1:]] for row in doc["rows"]}
    # the table: driver 1.22.0 serves torch 2.7 (seven OS entries, one package), 1.21.0 2.6, 1.19.0 2.5
    assert cells == {
        "1.22.0": ["1.22.0", "1.22.0", "", ""],
        "1.21.0": ["1.21.0", "", "1.21.0", ""],
        "1.19.0": ["1.19.0", "", "", "1.19.0"],
    }


def test_gaudi_the_os_is_composed_from_os_release(tmp_path):
    (detector,) = load(MATRICES / "gaudi.yaml").matrix.dimension("distro").detectors
    for text, expected in [
        ('NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n', "ubuntu22.04"),  # VERSION_ID before ID
        ('NAME="Red Hat Enterprise Linux"\nID="rhel"\nVERSION_ID="9.4"\n', "rhel9.4"),
    ]:
        path = tmp_path / "os-release"
        path.write_text(text)
        assert run_detector(detector._replace(target=(str(path),))) == (expected, None)
    (tmp_path / "os-release").write_text("ID=ubuntu\n")
    value, why = run_detector(detector._replace(target=(str(tmp_path / "os-release"),)))
    assert value is None and "found no version_id" in why


# -- the schema additions these tables needed ------------------------------------------------

from adapter_matrix.matrix.diagnostics import MatrixError  # noqa: E402
from adapter_matrix.matrix.loader import load_text  # noqa: E402

BASE = """schema-version: 2
adapter: {distribution: tiny-adapter, device: tpu}
torch:
  "2.12": {released: 2026-05-13, patches: [2.12.0, 2.12.1], python: ["3.11", "3.12"]}
dimensions:
  oneapi: {values: [absent, "2025.1"], detect: [{env: TINY_ONEAPI}]}
releases:
"""


def _write(tmp_path, releases: str) -> str:
    path = tmp_path / "compat.yaml"
    path.write_text(BASE + releases)
    return str(path)


def test_a_release_can_require_absent_and_nothing_detected_is_absent(tmp_path, monkeypatch):
    monkeypatch.delenv("TINY_ONEAPI", raising=False)
    path = _write(
        tmp_path,
        '  - {version: 0.1.0, torch: ">=2.12,<2.13", python: ">=3.11", status: supported, dimensions: {oneapi: absent}}\n'
        '  - {version: 0.2.0, torch: ">=2.12,<2.13", python: ">=3.11", status: supported, dimensions: {oneapi: "2025.1"}}\n',
    )
    doc = check("--torch", "2.12.1", "--python", "3.11", "--adapter", "0.1.0", matrix=path, today=TODAY)
    assert doc["verdict"] == "supported" and doc["assumptions"] == []
    other = check("--torch", "2.12.1", "--python", "3.11", "--adapter", "0.2.0", matrix=path, today=TODAY)
    assert other["reasons"] == ["tiny-adapter 0.2.0 needs oneapi 2025.1, found absent"]
    assert other["fixes"][0]["commands"] == [
        "pip install 'tiny-adapter==0.1.0'"
    ]  # pip first: the release for no oneAPI


def test_an_exception_can_take_cells_out_as_unsupported(tmp_path):
    path = _write(
        tmp_path,
        '  - version: 0.1.0\n    torch: ">=2.12,<2.13"\n    python: ">=3.11"\n    status: supported\n'
        '    exceptions: [{python: "3.12", status: unsupported, reason: "no 3.12 wheel of our kernels"}]\n',
    )
    doc = check("--torch", "2.12.1", "--python", "3.12", "--adapter", "0.1.0", matrix=path, today=TODAY)
    assert (
        doc["verdict"] == "unsupported" and doc["exit_code"] == 1 and doc["reasons"] == ["no 3.12 wheel of our kernels"]
    )
    rows = json.loads(cli("plan", "--matrix", path, "--format", "json", "--today", TODAY).out)
    assert [r["python"] for r in rows] == ["3.11"]
    with pytest.raises(MatrixError) as exc:
        load_text(BASE + '  - {version: 0.1.0, torch: "2.12.1", python: ">=3.11", status: unsupported}\n', "x.yaml")
    assert "a release cannot be unsupported" in str(exc.value)


def test_a_bare_minor_in_a_releases_torch_is_warned_about(tmp_path):
    path = _write(tmp_path, '  - {version: 0.1.0, torch: "2.12", python: ">=3.11", status: supported}\n')
    res = cli("validate", "--matrix", path)
    assert res.code == 0
    assert (
        "torch 2.12 means 2.12.0 only (PEP 440 pads 2.12 with zeros), not the 2.12 line as `init --torch 2.12` does"
        in res.err
    )
    assert "'>=2.12,<2.13'" in res.err


def test_a_template_must_name_groups_the_regex_defines(tmp_path):
    text = BASE.replace(
        "detect: [{env: TINY_ONEAPI}]", "detect: [{file: /etc/x, regex: '^V=(?P<v>.+)$', template: '{v}-{w}'}]"
    )
    with pytest.raises(MatrixError) as exc:
        load_text(text + '  - {version: 0.1.0, torch: "2.12.1", python: ">=3.11", status: supported}\n', "x.yaml")
    assert "template '{v}-{w}' names w, which the regex does not define" in str(exc.value)


def test_the_variant_family_comes_from_the_label_or_the_metadata():
    from packaging.version import Version

    from adapter_matrix.check.environment import torch_family

    assert torch_family(Version("2.8.0+xpu"), ()) == "xpu"
    assert torch_family(Version("2.5.1+cxx11.abi"), ()) == "cxx11.abi"
    assert torch_family(Version("2.6.0+cu126"), ("nvidia-cublas-cu12==12.6.4.1",)) == "cu126"
    assert (
        torch_family(Version("2.8.0"), ("filelock", 'nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux"'))
        == "cuda"
    )
    assert torch_family(Version("2.8.0"), ("filelock",)) == "pypi"
    doc = ipex("--torch", "2.8.0+cpu", "--adapter", "2.8.0+cpu", "--set", "os=linux")
    assert doc["environment"]["torch_family"] == "cpu"


# -- the vendor shapes of issue 44, each as a user meets it -------------------------------------

INTEL_XPU = "https://pytorch-extension.intel.com/release-whl/stable/xpu/us/"


def test_pypi_torch_with_the_cpu_ipex_keeps_ipex_and_installs_torch_from_the_cpu_index():
    # PyPI's torch 2.8.0 is the CUDA build; IPEX 2.8.0+cpu pins torch 2.8.0+cpu
    doc = ipex("--torch", "2.8.0", "--adapter", "2.8.0+cpu", "--set", "os=linux")
    assert doc["verdict"] == "unsupported"
    first = doc["fixes"][0]
    assert first["changes"] == ["torch"] and first["manual"] == []
    assert first["commands"] == [f"pip install 'torch==2.8.0+cpu' {CPU_INDEX}"]


def test_a_patch_ipex_does_not_pin_goes_back_to_the_pinned_patch_before_any_upgrade():
    # IPEX's import rule only checks major.minor, so 2.7.1+cpu imports; Intel pairs 2.7.0+cpu
    doc = ipex("--torch", "2.7.1+cpu", "--adapter", "2.7.0+cpu", "--set", "os=linux")
    assert [f["changes"] for f in doc["fixes"]][0] == ["torch"]
    assert doc["fixes"][0]["cell"]["torch"] == "2.7.0+cpu"
    # no fix that also replaces IPEX comes first, nor is listed for a status no better
    assert all(f["cell"]["status"] == "supported" for f in doc["fixes"])
    assert [f for f in doc["fixes"] if "adapter" in f["changes"]] == []


@pytest.mark.parametrize("torch", ["2.9.0+xpu", "2.9.0.dev20250906+xpu", "2.8.0+xpu", "2.7.0+xpu", "2.3.0+cpu"])
def test_a_windows_user_is_offered_windows_combinations_only(torch):
    doc = ipex("--torch", torch, "--adapter", "2.9.10+xpu", "--set", "os=windows", "--set", "oneapi=2025.0.5")
    for fix in doc["fixes"]:
        cell = fix["cell"]
        assert cell["dimensions"].get("os", "windows") == "windows", fix["summary"]
        # what the fix lands in is supported on Windows, asked as the user would after it
        after = ipex(
            "--torch",
            cell["torch"],
            "--adapter",
            cell["release"],
            "--set",
            "os=windows",
            "--set",
            f"oneapi={cell['dimensions'].get('oneapi', '2025.0.5')}",
        )
        assert after["verdict"] == "supported", (fix["summary"], after["reasons"])
        # a nightly from the XPU nightly index is an +xpu build: never +cpu or +cxx11.abi
        if "nightly/xpu" in " ".join(fix["commands"]):
            assert cell["torch"].endswith("+xpu"), fix["summary"]
    if torch == "2.9.0+xpu":  # the Windows pin of 2.9.10, as the user's +xpu build
        assert doc["fixes"][0]["commands"] == [
            "pip install torch==2.9.0.dev20250906+xpu --index-url https://download.pytorch.org/whl/nightly/xpu"
        ]
    if torch == "2.3.0+cpu":  # a CPU torch on Windows: IPEX has no Windows CPU build
        assert doc["fixes"] == []


def test_a_linux_user_on_the_windows_pin_gets_the_linux_pin():
    # 2.9.10+xpu pins 2.9.0.dev20250906 on Windows (written without a label) and 2.9.0+xpu on Linux
    doc = ipex("--torch", "2.9.0.dev20250906", "--adapter", "2.9.10+xpu", "--set", "os=linux")
    assert doc["verdict"] == "unsupported"
    first = doc["fixes"][0]
    assert first["changes"] == ["torch"]
    assert first["commands"] == [f"pip install 'torch==2.9.0+xpu' {XPU_INDEX}"]


def test_pypi_torch_with_the_xpu_ipex_2_5_10_installs_the_cxx11_abi_build_from_intels_index():
    doc = ipex("--torch", "2.5.1", "--adapter", "2.5.10+xpu", "--set", "os=linux", "--set", "oneapi=2025.0.4")
    assert doc["verdict"] == "unsupported"
    first = doc["fixes"][0]
    assert first["changes"] == ["torch"] and first["manual"] == []
    # 2.5.10+xpu names no OS: its cell serves Linux and Windows, one command each shell takes (as the page)
    assert first["commands"] == [f"pip install torch==2.5.1+cxx11.abi --index-url {INTEL_XPU}"]


def _ipex_environments():
    matrix = load(MATRICES / "ipex.yaml").matrix
    torches = {p for line in matrix.torch for p in line.patches} | {p for r in matrix.releases for p in r.pins}
    labelled = {Version(f"{t.public}+{label}") for t in torches for label in ("cpu", "xpu", "cxx11.abi")}
    adapters = sorted({r.version for r in matrix.releases})
    for torch in sorted(torches | labelled):
        for adapter in adapters:
            for os_name in ("linux", "windows"):
                for oneapi in matrix.dimension("oneapi").values:
                    dims = (("os", Value(os_name)), ("oneapi", oneapi))
                    yield (
                        matrix,
                        Environment(PythonVersion.parse("3.11"), torch=torch, adapter=adapter, dimensions=dims),
                    )


def test_no_ipex_fix_changes_more_packages_than_another_for_a_status_no_better():
    # every environment the table's versions make: the rule holds for each list of fixes
    today = _dt.date.fromisoformat(IPEX_TODAY)
    order = ["supported", "experimental", "deprecated"]
    checked = 0
    for matrix, env in _ipex_environments():
        found = verdict(matrix, env, today).fixes
        for a in found:
            for b in found:
                assert not (
                    set(a.changes) > set(b.changes)
                    and set(a.manual) >= set(b.manual)
                    and order.index(a.cell.status.value) >= order.index(b.cell.status.value)
                ), (env, a.summary, b.summary)
        checked += bool(found)
    assert checked > 1000  # the grid has fixes to compare


def test_plan_full_runs_the_cpu_ipex_2_5_0_with_torch_2_5_0_on_linux():
    plan = json.loads(
        cli("plan", "--matrix", IPEX, "--strategy", "full", "--format", "json", "--today", IPEX_TODAY).out
    )
    rows = [r for r in plan if r["release"] == "2.5.0+cpu"]
    assert {(r["torch"], r["dimensions"].get("os")) for r in rows} == {("2.5.0", "linux")}
    assert sorted(r["python"] for r in rows) == ["3.10", "3.11", "3.12", "3.13", "3.9"]
