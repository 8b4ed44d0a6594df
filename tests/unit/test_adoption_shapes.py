"""Issue 57, item 2: adoption for every packaging shape, without nox (the cells: test_shapes_cells.py).

`init` ships compat.yaml in the wheel with the build backend's own setting (setuptools package data,
scikit-build-core's wheel.packages, meson-python's line named), makes a setuptools sdist carry what
CMake reads, says which pyproject lines disagree with the matrix and `validate --pyproject --write`
corrects them; the build configuration ages a cell's record, the project's metadata does not; and
adapter-matrix goes into a cell however the runner installed it."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from adapter_matrix.ci import adapterbuild, evidence, wheels
from adapter_matrix.ci.evidence import tree_state
from adapter_matrix.ci.plan import plan
from adapter_matrix.ci.record import ResultRecord, write_record
from adapter_matrix.ci.suites import TestCounts
from adapter_matrix.matrix.loader import load

from .freshvenv import UV
from .helpers import FIXTURES, cli
from .shapes import SHAPES

RECORDED = str(FIXTURES / "pypi" / "2026-12-01" / "torch.json")
CELL = "py3.11-torch2.13"


def _init(shape: str, repo: Path, *more: str):
    s = SHAPES[shape]
    s.make(repo)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return cli(
        "init",
        *("--distribution", s.distribution, "--device", s.device, "--upstream", RECORDED),
        *("--torch", "2.13", "--torch", "2.14", "-o", str(repo / "compat.yaml"), *more),
    )


def _validate_pyproject(repo: Path, *more: str):
    return cli("validate", "--pyproject", str(repo / "pyproject.toml"), *more, cwd=repo)


# -- what init writes, per shape ----------------------------------------------------------


def test_scikit_build_core_with_a_src_layout_gets_its_own_setting_and_the_link_in_src(tmp_path):
    repo = tmp_path / "tiny-sk"
    res = _init("skbuild-src", repo)
    assert res.code == 0, res.err
    assert (repo / "src" / "tiny_sk" / "compat.yaml").is_symlink()
    assert (repo / "src" / "tiny_sk" / "compat.yaml").read_text() == (repo / "compat.yaml").read_text()
    assert "src/tiny_sk/compat.yaml: linked to the matrix" in res.out
    assert "# src/tiny_sk/__init__.py, first lines:" in res.out
    pyproject = (repo / "pyproject.toml").read_text()
    # scikit-build-core's setting, in its existing table; no setuptools table it would ignore
    assert '[tool.scikit-build]\nwheel.packages = ["src/tiny_sk"]\ncmake.build-type = "Release"\n' in pyproject
    assert "tool.setuptools" not in pyproject and not (repo / "MANIFEST.in").exists()
    assert "  sources: [CMakeLists.txt, csrc, pyproject.toml, src, tests]\n" in (repo / "compat.yaml").read_text()
    checked = _validate_pyproject(repo)
    assert checked.code == 0 and "error" not in checked.out + checked.err, checked.out + checked.err
    again = cli("init", "--distribution", "tiny-sk", "--device", "tinysk", "--upstream", RECORDED, "-o",
                str(repo / "compat.yaml"))  # fmt: skip
    assert again.code == 0 and (repo / "pyproject.toml").read_text() == pyproject  # nothing left to add
    assert "src/tiny_sk/compat.yaml: kept (exists)" in again.out and "pyproject.toml: kept (exists)" in again.out


@pytest.mark.slow
def test_the_scikit_build_core_wheel_built_after_init_carries_the_matrix(tmp_path):
    """Built as a cell builds it: the sdist first, the wheel from it, without isolation (a C++
    module against this environment's torch headers: seconds)."""
    if UV is None or importlib.util.find_spec("scikit_build_core") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("needs uv, scikit-build-core and torch")
    repo = tmp_path / "tiny-sk"
    assert _init("skbuild-src", repo).code == 0
    out = tmp_path / "dist"
    subprocess.run(
        [UV, "build", "-q", "--python", sys.executable, "--no-build-isolation", "--offline", "--out-dir", str(out)]
        + [str(repo)],
        check=True,
        capture_output=True,
        env=dict(os.environ, MAX_JOBS="1"),
        timeout=600,
    )
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert z.read("tiny_sk/compat.yaml") == (repo / "compat.yaml").read_bytes()
        assert any(n.startswith("tiny_sk/_C.") for n in z.namelist())
    (sdist,) = out.glob("*.tar.gz")
    assert adapterbuild.sdist_missing(sdist, repo) == []


def test_an_openreg_shaped_project_gets_its_build_inputs_in_the_sdist_and_its_pyproject_fixes(tmp_path):
    repo = tmp_path / "tiny-openreg"
    res = _init("openreg-cmake", repo)
    assert res.code == 0, res.err
    # setup.py declares package_data: the matrix through MANIFEST.in, with what CMake reads
    assert (repo / "MANIFEST.in").read_text() == (
        "include tiny_openreg/compat.yaml\n"
        "include CMakeLists.txt\n"
        "recursive-include csrc *.cpp *.h\n"
        "recursive-include tiny_openreg *.c\n"
    )
    assert "what CMake and the compiler read" in res.out
    # requires-python >=3.9 while torch 2.13 has no 3.9 wheel: init says each line and its fix
    assert "pyproject.toml disagrees with compat.yaml on 3 line(s)" in res.out
    assert 'write requires-python = ">=3.10,<3.14"' in res.out  # the project's cap kept
    assert "classifier 'Programming Language :: Python :: 3.9' claims Python 3.9" in res.out
    assert "dependencies pins 'torch', but release 0.0.1" in res.out
    assert _validate_pyproject(repo).code == 2
    wrote = _validate_pyproject(repo, "--write")
    assert wrote.code == 0 and "error" not in wrote.out + wrote.err, wrote.out + wrote.err
    pyproject = (repo / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.10,<3.14"\n' in pyproject and "Python :: 3.9" not in pyproject
    assert '"Programming Language :: Python :: 3.10",\n' in pyproject  # the others untouched
    assert '    "torch>=2.13,<2.15",\n' in pyproject
    assert _validate_pyproject(repo, "--write").out.count("already agrees") == 1
    if UV is None or importlib.util.find_spec("setuptools") is None:
        pytest.skip("needs uv and setuptools to build the sdist")
    out = tmp_path / "dist"
    subprocess.run(
        [UV, "build", "-q", "--sdist", "--python", sys.executable, "--no-build-isolation", "--offline"]
        + ["--out-dir", str(out), str(repo)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = out.glob("*.tar.gz")
    assert adapterbuild.sdist_missing(sdist, repo) == []  # the cell builds from it
    with tarfile.open(sdist) as tar:
        assert any(n.endswith("/tiny_openreg/compat.yaml") for n in tar.getnames())


def test_a_cpp_extension_gets_package_data_and_its_headers_in_the_sdist(tmp_path):
    repo = tmp_path / "tiny-accel"
    res = _init("cpp-extension", repo)
    assert res.code == 0, res.err
    assert '[tool.setuptools.package-data]\ntiny_accel = ["compat.yaml"]\n' in (repo / "pyproject.toml").read_text()
    assert (repo / "MANIFEST.in").read_text() == "recursive-include csrc *.cpp\n"
    assert "pyproject.toml disagrees" not in res.out
    assert _validate_pyproject(repo).code == 0


def test_a_setuptools_src_layout_links_the_matrix_inside_src(tmp_path):
    (tmp_path / "src" / "plain_accel").mkdir(parents=True)
    (tmp_path / "src" / "plain_accel" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "plain-accel"\nversion = "1.0"\nrequires-python = ">=3.10"\n'
    )
    res = cli("init", "--distribution", "plain-accel", "--device", "plain", "--upstream", RECORDED, "--torch",
              "2.13", "-o", str(tmp_path / "compat.yaml"))  # fmt: skip
    assert res.code == 0, res.err
    assert (tmp_path / "src" / "plain_accel" / "compat.yaml").is_symlink()
    assert (
        '[tool.setuptools.package-data]\nplain_accel = ["compat.yaml"]\n' in (tmp_path / "pyproject.toml").read_text()
    )
    assert not (tmp_path / "MANIFEST.in").exists()  # nothing native to carry
    if importlib.util.find_spec("setuptools") is None:
        return
    out = tmp_path / "w"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    assert "plain_accel/compat.yaml" in zipfile.ZipFile(wheel).namelist()


def test_meson_python_is_told_the_line_to_add_to_meson_build(tmp_path):
    (tmp_path / "src" / "mesa").mkdir(parents=True)
    (tmp_path / "src" / "mesa" / "__init__.py").write_text("")
    (tmp_path / "meson.build").write_text("project('mesa', 'cpp')\n")
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["meson-python", "torch"]\nbuild-backend = "mesonpy"\n\n'
        '[project]\nname = "mesa"\nversion = "1.0"\nrequires-python = ">=3.10"\n'
    )
    res = cli("init", "--distribution", "mesa", "--device", "mesa", "--upstream", RECORDED, "--torch", "2.13",
              "-o", str(tmp_path / "compat.yaml"))  # fmt: skip
    assert res.code == 0, res.err
    assert "meson.build: add `py.install_sources('src/mesa/compat.yaml', subdir: 'mesa')`" in res.out
    assert (tmp_path / "meson.build").read_text() == "project('mesa', 'cpp')\n"  # the build is the author's
    pyproject = (tmp_path / "pyproject.toml").read_text()
    assert "tool.setuptools" not in pyproject and "tool.scikit-build" not in pyproject
    assert "meson.build" in (tmp_path / "compat.yaml").read_text().split("sources:")[1]


# -- validate --pyproject --write ----------------------------------------------------------


def test_write_corrects_each_line_and_keeps_the_rest_of_the_file(tmp_path):
    matrix = tmp_path / "compat.yaml"
    assert cli("init", "--distribution", "x", "--device", "x", "--upstream", RECORDED, "--torch", "2.13",
               "--python", ">=3.10", "-o", str(matrix), "--matrix-only").code == 0  # fmt: skip
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        "[project]  # the metadata\n"
        'name = "x"\n'
        "requires-python = '>=3.8,!=3.9.1'  # single quotes\n"
        'classifiers = ["Programming Language :: Python :: 3.8", "Programming Language :: Python :: 3.11"]\n'
        "[project.optional-dependencies]\ndevice = [\"torch>=2.0; sys_platform == 'linux'\"]\n"
    )
    wrote = cli("validate", "--matrix", str(matrix), "--pyproject", str(pyproject), "--write")
    assert wrote.code == 0, wrote.out + wrote.err
    text = pyproject.read_text()
    assert text.startswith(
        '[project]  # the metadata\nname = "x"\nrequires-python = ">=3.10,!=3.9.1"  # single quotes\n'
    )
    # inline arrays edited inline: 3.8 removed, the Pythons torch 2.13 serves added after 3.11
    assert "Python :: 3.8" not in text
    assert '["Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.10", ' in text
    assert 'device = ["torch>=2.13,<2.14; sys_platform == \\"linux\\""]\n' in text
    assert "error" not in cli("validate", "--matrix", str(matrix), "--pyproject", str(pyproject)).out


def test_write_without_upstream_or_pyproject_is_a_usage_error():
    res = cli("validate", "--write")
    assert res.code == 2 and "--write needs --upstream or --pyproject" in res.err


# -- the build configuration ages the evidence ---------------------------------------------


def _pass(matrix) -> None:
    """What a passing cell records, without nox (the functions the nox cell calls)."""
    row = next(r for r in plan(matrix, "full") if r.id == CELL)
    record = ResultRecord.planned(row).tested({"tests": TestCounts(2, 0, 0, 0)}).on_sources(tree_state(matrix))
    record = dataclasses.replace(record, python="3.11.9", torch="2.13.0+cpu", torch_variant="cpu", adapter="0.2.0")
    results = str(Path(matrix.path).parent / "results")
    record = write_record(results, record.finished("passed", None, {"tests": 1.0}))
    evidence.write_evidence(evidence.evidence_folder(matrix, environ={}), record)


def _cell_state(repo: Path) -> str:
    res = cli("tier", "full", "--matrix", str(repo / "compat.yaml"), "-p", "3.11", "-t", "torch2.13", "--dry-run")
    assert res.code == 0, res.err
    return res.out


@pytest.mark.parametrize(
    "edit, ages",
    [
        (("pyproject.toml", 'cmake.build-type = "Release"', 'cmake.build-type = "Debug"'), True),
        (("pyproject.toml", 'requires = ["scikit-build-core>=0.10"', 'requires = ["scikit-build-core>=0.11"'), True),
        (("CMakeLists.txt", "CXX_STANDARD 17", "CXX_STANDARD 20"), True),
        (("pyproject.toml", 'description = "An example', 'description = "A small example'), False),
        (("pyproject.toml", 'requires-python = ">=3.10,<3.14"', 'requires-python = ">=3.10"'), False),
    ],
    ids=["tool.scikit-build", "build-system", "CMakeLists.txt", "metadata", "requires-python"],
)
def test_a_build_setting_makes_the_cells_record_stale_and_the_metadata_does_not(tmp_path, edit, ages):
    repo = tmp_path / "tiny-sk"
    assert _init("skbuild-src", repo).code == 0
    _pass(load(repo / "compat.yaml").matrix)
    assert f"skip device({CELL}): verified" in _cell_state(repo)
    name, old, new = edit
    text = (repo / name).read_text()
    assert old in text
    (repo / name).write_text(text.replace(old, new))
    state = _cell_state(repo)
    if ages:
        assert f"run  device({CELL}): stale (the evidence sources changed" in state, state
    else:
        assert f"skip device({CELL}): verified" in state, state


# -- the tool goes into the cell however the runner installed it -----------------------------


def _installed_tool(site: Path, direct_url: object) -> metadata.Distribution:
    info = site / "adapter_matrix-9.2.dist-info"
    info.mkdir(parents=True)
    (site / "adapter_matrix").mkdir()
    (site / "adapter_matrix" / "__init__.py").write_text("VERSION = '9.2'\n")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: adapter-matrix\nVersion: 9.2\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nTag: py3-none-any\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    names = ["adapter_matrix/__init__.py", f"{info.name}/METADATA", f"{info.name}/WHEEL", f"{info.name}/RECORD"]
    (info / "RECORD").write_text("".join(f"{n},,\n" for n in names))
    return metadata.Distribution.at(info)


@pytest.mark.parametrize(
    "how, direct_url",
    [
        ("a local folder (pip install ./adapter-matrix)", {"url": "file:///gone/adapter-matrix", "dir_info": {}}),
        ("a git URL", {"url": "https://example.invalid/a.git", "vcs_info": {"vcs": "git", "commit_id": "0" * 40}}),
        ("a wheel", {"url": "file:///w/adapter_matrix-9.2-py3-none-any.whl", "archive_info": {}}),
        ("an index", None),
    ],
)
def test_an_installed_tool_is_packed_from_its_files_however_it_came(tmp_path, monkeypatch, how, direct_url):
    """Not rebuilt from a folder: the folder may be gone, and rebuilding it without isolation needs
    a backend the runner may lack (Python 3.11's venv has setuptools 65 without `wheel`)."""
    dist = _installed_tool(tmp_path / "site", direct_url)
    monkeypatch.setattr(wheels, "installed_tool", lambda: dist)
    monkeypatch.setattr(wheels, "build_wheels", lambda *a, **k: pytest.fail(f"{how}: rebuilt"))
    whl = wheels.tool_wheel(tmp_path / "out")
    assert zipfile.ZipFile(whl).read("adapter_matrix/__init__.py") == b"VERSION = '9.2'\n"


def test_an_editable_tool_is_built_from_its_folder_and_a_gone_one_is_named(tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    dist = _installed_tool(tmp_path / "site", {"url": checkout.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.setattr(wheels, "installed_tool", lambda: dist)
    with pytest.raises(wheels.WheelBuildError, match=r"is installed from .*checkout, which is gone"):
        wheels.tool_wheel(tmp_path / "out")
    checkout.mkdir()
    (checkout / "pyproject.toml").write_text("")
    built = []
    monkeypatch.setattr(wheels, "build_wheels", lambda projects, out, python: built.append(projects) or [Path("w")])
    assert wheels.tool_wheel(tmp_path / "out") == Path("w") and built == [[checkout]]


def test_a_layer_with_a_src_layout_gets_its_link_in_src(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "my-layer"\nversion = "0.4.0"\n')
    (tmp_path / "src" / "my_layer").mkdir(parents=True)
    res = cli("init", "--distribution", "my-layer", "--on", "torch-npu", "--torch", "2.10.0", "-o",
              str(tmp_path / "compat.yaml"))  # fmt: skip
    assert res.code == 0, res.err
    assert (tmp_path / "src" / "my_layer" / "compat.yaml").is_symlink()
    assert "src/my_layer/compat.yaml: linked to the matrix" in res.out
