"""Detector presets (issue 48 item 7): each vendor toolkit's version read from fixture trees
laid out as its installers lay them out, in every layout a preset knows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import pytest

from adapter_matrix.check.presets import PRESETS, run_preset
from adapter_matrix.matrix.model import PRESET_NAMES

INFO = "package_name=Ascend-cann-toolkit\nversion={v}\ninnerversion=V100R001C19SPC001B001\narch=x86_64\nos=linux\npath=/usr/local/Ascend/ascend-toolkit/{v}\n"


def tree(root: Path, files: Dict[str, str], links: Dict[str, str] = {}) -> Path:  # noqa: B006 (read only)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel, target in links.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / rel)
    return root


def preset(name: str, root: Path, **environ: str):
    return run_preset(name, str(root), environ)


BEFORE_8_5 = {
    "usr/local/Ascend/ascend-toolkit/8.0.RC3/x86_64-linux/ascend_toolkit_install.info": INFO.format(v="8.0.RC3"),
    "usr/local/Ascend/ascend-toolkit/8.0.RC3/version.cfg": "# version: 1.0\nruntime_running_version=[7.5.0.1.129:8.0.RC3]\n",
    "usr/local/Ascend/ascend-toolkit/set_env.sh": "export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest\n",
}
LAYOUT_8_5 = {
    "usr/local/Ascend/cann-8.5.0/x86_64-linux/ascend_toolkit_install.info": INFO.format(v="8.5.0"),
    "usr/local/Ascend/cann-8.5.0/set_env.sh": "export ASCEND_HOME_PATH=/usr/local/Ascend/cann-8.5.0\n",
}


def test_cann_before_8_5_is_read_through_ascend_toolkit_latest(tmp_path):
    root = tree(tmp_path, BEFORE_8_5, {"usr/local/Ascend/ascend-toolkit/latest": "8.0.RC3"})
    version, where, error = preset("cann", root)
    assert (version, error) == ("8.0.RC3", None)
    assert where == "/usr/local/Ascend/ascend-toolkit/8.0.RC3/x86_64-linux/ascend_toolkit_install.info"


def test_cann_8_5_is_read_in_its_cann_version_folder(tmp_path):
    root = tree(tmp_path, LAYOUT_8_5, {"usr/local/Ascend/cann": "cann-8.5.0"})
    assert preset("cann", root)[:1] == ("8.5.0",)
    (root / "usr/local/Ascend/cann").unlink()  # no link: the folder itself
    version, where, _ = preset("cann", root)
    assert version == "8.5.0" and where.startswith("/usr/local/Ascend/cann-8.5.0/")


def test_cann_names_the_toolkit_set_env_selected_when_both_layouts_are_installed(tmp_path):
    root = tree(tmp_path, {**BEFORE_8_5, **LAYOUT_8_5}, {"usr/local/Ascend/ascend-toolkit/latest": "8.0.RC3"})
    assert preset("cann", root)[0] == "8.5.0"  # nothing sourced: the newer layout
    version, where, _ = preset("cann", root, ASCEND_HOME_PATH="/usr/local/Ascend/ascend-toolkit/latest")
    assert version == "8.0.RC3" and where.startswith("$ASCEND_HOME_PATH (")


def test_cann_without_a_version_file_is_named_by_its_folder(tmp_path):
    root = tree(tmp_path, {"usr/local/Ascend/cann-9.0.0/set_env.sh": "", "usr/local/Ascend/cann-8.5.0/set_env.sh": ""})
    version, where, _ = preset("cann", root)
    assert version == "9.0.0" and where.endswith("; the newest of 2 installed")


def test_no_cann_says_where_it_looked(tmp_path):
    version, where, error = preset("cann", tmp_path)
    assert version is None and where is None
    assert "no CANN toolkit found" in error and "/usr/local/Ascend" in error and "set_env.sh" in error


def test_ascend_driver(tmp_path):
    info = "Version=24.1.rc2\nascendhal_version=7.35.19\naicpu_version=1.0\ntdt_version=1.0\nlog_version=1.0\nprof_version=2.0\ndvppkernels_version=1.1\ntsfw_version=1.0\nInnerversion=V100R001C19SPC002B107\ncompatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]\n"
    root = tree(tmp_path, {"usr/local/Ascend/driver/version.info": info})
    assert preset("ascend-driver", root) == ("24.1.rc2", "/usr/local/Ascend/driver/version.info", None)
    assert "no Ascend driver" in preset("ascend-driver", tmp_path / "empty")[2]


def test_musa_is_the_version_its_folder_links_to(tmp_path):
    root = tree(tmp_path, {"usr/local/musa-3.1.0/bin/mcc": ""}, {"usr/local/musa": "musa-3.1.0"})
    assert preset("musa", root) == ("3.1.0", "/usr/local/musa -> musa-3.1.0", None)
    assert preset("musa", root, MUSA_HOME="/opt/none")[0] is None


def test_oneapi_in_its_component_and_unified_layouts(tmp_path):
    component = tree(
        tmp_path / "a",
        {"opt/intel/oneapi/compiler/2025.0/env/vars.sh": "", "opt/intel/oneapi/setvars.sh": ""},
        {"opt/intel/oneapi/compiler/latest": "2025.0"},
    )
    assert preset("oneapi", component)[0] == "2025.0"
    unified = tree(
        tmp_path / "b", {"opt/intel/oneapi/2024.2/oneapi-vars.sh": "", "opt/intel/oneapi/2025.1/oneapi-vars.sh": ""}
    )
    assert preset("oneapi", unified)[:2] == ("2025.1", "/opt/intel/oneapi/2025.1")
    chosen = preset("oneapi", unified, CMPLR_ROOT="/opt/intel/oneapi/2024.2")
    assert chosen[0] == "2024.2" and chosen[1].startswith("$CMPLR_ROOT")


def test_neuware_reads_its_version_txt(tmp_path):
    root = tree(tmp_path, {"usr/local/neuware/version.txt": "Neuware Version 3.15.2\nCNToolkit Version 3.15.2\n"})
    assert preset("neuware", root) == ("3.15.2", "/usr/local/neuware/version.txt", None)
    assert "no Cambricon neuware" in preset("neuware", tmp_path / "none")[2]


def test_every_preset_the_schema_names_exists():
    assert tuple(PRESETS) == PRESET_NAMES


def test_a_matrix_names_a_preset_and_check_reads_it_in_an_image(tmp_path):
    """`detect: [{preset: cann}]` loads, a misspelt preset is an error at its line, and under
    `check --env IMAGE_ROOT` the preset reads the image's toolkit."""
    from adapter_matrix.check.detectors import detect
    from adapter_matrix.check.elsewhere import Target
    from adapter_matrix.matrix.diagnostics import MatrixError
    from adapter_matrix.matrix.loader import load_bytes

    text = """schema-version: 2
adapter: {distribution: demo, device: npu}
torch:
  "2.13": {released: 2026-07-08, patches: [2.13.0], python: ["3.11"]}
dimensions:
  cann:
    values: [8.0.RC3, 8.5.0]
    detect: [{preset: %s}]
releases:
  - {version: 1.0, torch: ">=2.13", python: ">=3.10", dimensions: {cann: ">=8.5.0"}, status: supported}
"""
    matrix = load_bytes((text % "cann").encode(), "compat.yaml").matrix
    with pytest.raises(MatrixError, match=r"compat.yaml:8:\d+: .*unknown detector preset 'can'.*did you mean cann"):
        load_bytes((text % "can").encode(), "compat.yaml")
    root = tree(tmp_path, LAYOUT_8_5, {"usr/local/Ascend/cann": "cann-8.5.0"})
    found = detect(matrix.dimension("cann"), Target((), str(root), "3.11", "3.11.7", f"image root {root}"))
    assert found.value == "8.5.0"
    assert found.source == "preset cann: /usr/local/Ascend/cann-8.5.0/x86_64-linux/ascend_toolkit_install.info"
