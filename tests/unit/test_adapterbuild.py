"""A compiled adapter is built in its cell, against the cell's torch (issue 43): the build's
identity, its cache, its first error, the sdist check, and a real CppExtension build."""

from __future__ import annotations

import io
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from adapter_matrix.ci import adapterbuild

PYPROJECT = """[build-system]
requires = ["setuptools>=64", "torch"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-accel"
version = "0.0.1"
"""
SETUP_PY = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

setup(
    packages=["tiny_accel"],
    ext_modules=[CppExtension("tiny_accel._C", ["csrc/tiny.cpp"])],
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=False)},
)
"""
# torch/version.h only: the version the extension was compiled against, baked in, cheap to compile
TINY_CPP = """#include <Python.h>
#include <torch/version.h>

static PyObject* built_for(PyObject*, PyObject*) {
  return Py_BuildValue("(ii)", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
}
static PyMethodDef methods[] = {{"built_for", built_for, METH_NOARGS, nullptr}, {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_C", nullptr, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
"""


def _project(root: Path, cpp: str = TINY_CPP) -> Path:
    (root / "tiny_accel").mkdir(parents=True)
    (root / "tiny_accel" / "__init__.py").write_text("")
    (root / "csrc").mkdir()
    (root / "csrc" / "tiny.cpp").write_text(cpp)
    (root / "setup.py").write_text(SETUP_PY)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "MANIFEST.in").write_text("recursive-include csrc *.cpp\n")
    return root


def test_a_project_compiles_against_torch_when_torch_is_a_build_requirement(tmp_path):
    compiled = _project(tmp_path / "c")
    pure = tmp_path / "p"
    pure.mkdir()
    (pure / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n')
    assert adapterbuild.builds_against_torch(compiled) and not adapterbuild.builds_against_torch(pure)
    assert adapterbuild.build_requires(compiled) == ["setuptools>=64", "torch"]


def test_each_torch_build_python_and_source_is_its_own_cached_build(tmp_path):
    project = _project(tmp_path / "c")
    src = adapterbuild.source_digest(project)
    keys = {
        adapterbuild.cache_key(src, "2.13.0+cpu", "cpython-311", "linux-x86_64"),
        adapterbuild.cache_key(src, "2.13.0", "cpython-311", "linux-x86_64"),  # the CUDA build of the same version
        adapterbuild.cache_key(src, "2.13.0+cpu", "cpython-312", "linux-x86_64"),
        adapterbuild.cache_key(src, "2.14.0", "cpython-311", "linux-x86_64"),
    }
    assert len(keys) == 4
    (project / "build").mkdir()
    (project / "build" / "junk.o").write_text("left by an in-tree build")
    assert adapterbuild.source_digest(project) == src  # build outputs are not sources
    (project / "csrc" / "tiny.cpp").write_text(TINY_CPP + "// edited\n")
    assert adapterbuild.source_digest(project) != src  # an edited .cpp is another build


def test_the_first_compiler_linker_or_cmake_error_is_named():
    gcc = "running build_ext\nbuilding 'x' extension\ncsrc/tiny.cpp:4:3: error: 'nope' was not declared in this scope\n    4 |   nope();\nerror: command '/usr/bin/g++' failed with exit code 1\n"
    assert adapterbuild.first_error(gcc) == "csrc/tiny.cpp:4:3: error: 'nope' was not declared in this scope"
    cmake = (
        '-- Configuring incomplete\nCMake Error: The source directory "/x" does not appear to contain CMakeLists.txt.\n'
    )
    assert adapterbuild.first_error(cmake).startswith("CMake Error: The source directory")
    assert "undefined reference to `c10::foo()'" in adapterbuild.first_error(
        "ld stuff\nx.o: undefined reference to `c10::foo()'\n"
    )
    assert adapterbuild.first_error("all good\n") is None
    # a warning that mentions a missing module is no error; the backend's own import error is
    warned = "x.py:368: UserWarning: Failed to initialize NumPy: No module named 'numpy'\n"
    assert adapterbuild.first_error(warned) is None
    assert adapterbuild.first_error(warned + "ModuleNotFoundError: No module named 'torch'\n") == (
        "ModuleNotFoundError: No module named 'torch'"
    )


def test_an_sdist_without_the_build_files_is_named(tmp_path):
    project = _project(tmp_path / "c")
    (project / "CMakeLists.txt").write_text("project(tiny)\n")
    sdist = tmp_path / "tiny_accel-0.0.1.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        for name in ("setup.py", "pyproject.toml", "csrc/tiny.cpp"):
            data = (project / name).read_bytes()
            info = tarfile.TarInfo(f"tiny_accel-0.0.1/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert adapterbuild.sdist_missing(sdist, project) == ["CMakeLists.txt"]


def _identity():
    import importlib.metadata

    return importlib.metadata.version("torch"), sys.implementation.cache_tag, sysconfig.get_platform()


@pytest.fixture(scope="module")
def torch_build():
    pytest.importorskip("torch")
    pytest.importorskip("setuptools")
    return _identity()


def test_a_cppextension_is_built_from_its_sdist_against_this_torch_and_cached(tmp_path, torch_build):
    torch, tag, platform = torch_build
    project = _project(tmp_path / "c")
    cache = tmp_path / "cache"
    built = adapterbuild.build_in_cell(project, sys.executable, torch, tag, platform, cache, offline=True)
    assert built.compiled and built.wheel.name.startswith("tiny_accel-0.0.1-")
    assert not (project / "build").exists()  # built from the sdist, never in the source tree
    with zipfile.ZipFile(built.wheel) as whl:
        assert [n for n in whl.namelist() if n.startswith("tiny_accel/_C")]  # the compiled module is in it
        whl.extractall(tmp_path / "site")
    code = (
        "import torch, sys; sys.path.insert(0, sys.argv[1]); from tiny_accel import _C; "
        "print(_C.built_for() == tuple(int(x) for x in torch.__version__.split('.')[:2]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "site")], capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr  # compiled against the torch it runs on
    again = adapterbuild.build_in_cell(project, sys.executable, torch, tag, platform, cache, offline=True)
    assert not again.compiled and again.wheel == built.wheel  # a rerun installs the cached wheel


def test_a_compile_error_names_the_first_error_and_keeps_the_log(tmp_path, torch_build):
    torch, tag, platform = torch_build
    project = _project(tmp_path / "c", TINY_CPP.replace("return Py_BuildValue", "nope(); return Py_BuildValue"))
    with pytest.raises(adapterbuild.BuildFailed) as err:
        adapterbuild.build_in_cell(
            project, sys.executable, torch, tag, platform, tmp_path / "cache", sdist=False, offline=True
        )
    assert "csrc/tiny.cpp" in str(err.value) and "error:" in str(err.value) and "nope" in str(err.value)
    assert "Traceback" not in str(err.value) and "g++" in err.value.log  # the whole log kept for results/
    assert not list((tmp_path / "cache").glob("*/*.whl"))  # nothing cached from a failed build


def test_an_sdist_that_lacks_a_native_source_is_refused_with_the_fix(tmp_path, torch_build):
    torch, tag, platform = torch_build
    project = _project(tmp_path / "c", '#include "tiny.h"\n' + TINY_CPP)
    (project / "csrc" / "tiny.h").write_text("#pragma once\n")
    (project / "MANIFEST.in").unlink()  # setuptools' sdist takes the listed .cpp, never the header it includes
    with pytest.raises(adapterbuild.BuildFailed, match=r"csrc/tiny\.h is not in the sdist: add it to MANIFEST\.in"):
        adapterbuild.build_in_cell(project, sys.executable, torch, tag, platform, tmp_path / "cache", offline=True)


class _FakeSession:
    """Just enough of a nox session for a cell's build step: the probe of the cell's torch answers
    ``identity``; the cell's interpreter is this one (its real torch compiles the extension)."""

    posargs: tuple = ()

    def __init__(self, tmp: Path, identity: str) -> None:
        self.tmp, self.identity, self.logged = tmp, identity, []
        (tmp / "venv" / "bin").mkdir(parents=True)
        python = tmp / "venv" / "bin" / "python"
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
        self.virtualenv = type("Env", (), {"location": str(tmp / "venv")})()

    def create_tmp(self) -> str:
        return str(self.tmp)

    def run(self, *args, **kwargs):
        assert args[:2] == ("python", "-c"), args  # the probe of the cell's torch build
        return self.identity

    def install(self, *args, **kwargs) -> None:
        pass  # the build requirements: this environment has them

    def log(self, message: str) -> None:
        self.logged.append(message)

    warn = log

    def error(self, message: str) -> None:
        raise AssertionError(message)


def test_two_cells_of_one_nox_run_each_get_their_own_build(tmp_path, torch_build, monkeypatch):
    """Cells of two torch lines in one run: two builds, each keyed by its cell's torch; the first
    cell's torch again is the cached wheel. The torch build identity is faked at the cell's probe
    (``2.14.0+cpu``): the compile itself uses this environment's torch, so no second torch is needed."""
    from adapter_matrix import nox as cells_api
    from adapter_matrix.nox.cellinstall import adapter_wheels

    _, tag, platform = torch_build
    project = _project(tmp_path / "adapter")
    matrix = (Path(__file__).parents[2] / "examples" / "cpp-adapter" / "compat.yaml").read_text()
    (project / "compat.yaml").write_text(matrix)
    monkeypatch.setenv("ADAPTER_MATRIX_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("ADAPTER_MATRIX_WHEELS", "/nonexistent")  # offline: the build asks no index
    declared = cells_api.Cells(cells_api.Adapter(root=str(project)))

    def build(cell_id: str, torch: str) -> dict:
        session = _FakeSession(tmp_path / f"{cell_id}-{len(list(tmp_path.iterdir()))}", f"{torch} {tag} {platform}")
        cell = cells_api.CellRun(session, declared.rows[cell_id], declared)  # type: ignore[arg-type]
        (wheel,) = adapter_wheels(cell, [])
        return dict(cell.build or {}, wheel=wheel, log=session.logged)

    first = build("py3.11-torch2.13", "2.13.0+cpu")
    other = build("py3.11-torch2.14", "2.14.0+cpu")
    again = build("py3.11-torch2.13", "2.13.0+cpu")
    assert first["compiled"] and other["compiled"] and not again["compiled"]
    assert Path(first["wheel"]).parent != Path(other["wheel"]).parent  # one cache entry per torch build
    assert "torch2.14.0+cpu" in Path(other["wheel"]).parent.name and again["wheel"] == first["wheel"]
    assert any("against torch 2.14.0+cpu" in line for line in other["log"])
    assert first["source_hash"] == other["source_hash"]  # the same sources, built twice


SKBUILD_PYPROJECT = """[build-system]
requires = ["scikit-build-core>=0.8", "torch"]
build-backend = "scikit_build_core.build"

[project]
name = "tiny-skbuild"
version = "0.0.1"
"""
# torch's headers from the torch installed where the build runs (no find_package(Torch): no CUDA toolkit needed)
SKBUILD_CMAKE = """cmake_minimum_required(VERSION 3.18)
project(tiny_skbuild LANGUAGES CXX)
find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)
execute_process(
  COMMAND "${Python_EXECUTABLE}" -c "import torch.utils.cpp_extension as c; print(';'.join(c.include_paths()))"
  OUTPUT_VARIABLE TORCH_INCLUDES OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
python_add_library(_C MODULE csrc/tiny.cpp WITH_SOABI)
target_include_directories(_C PRIVATE ${TORCH_INCLUDES})
install(TARGETS _C DESTINATION tiny_skbuild)
"""


def test_a_scikit_build_core_project_is_built_against_this_torch(tmp_path, torch_build):
    pytest.importorskip("scikit_build_core")
    torch, tag, platform = torch_build
    root = tmp_path / "s"
    (root / "src" / "tiny_skbuild").mkdir(parents=True)
    (root / "src" / "tiny_skbuild" / "__init__.py").write_text("")
    (root / "csrc").mkdir()
    (root / "csrc" / "tiny.cpp").write_text(TINY_CPP)
    (root / "CMakeLists.txt").write_text(SKBUILD_CMAKE)
    (root / "pyproject.toml").write_text(SKBUILD_PYPROJECT)
    assert adapterbuild.builds_against_torch(root)
    built = adapterbuild.build_in_cell(root, sys.executable, torch, tag, platform, tmp_path / "cache", offline=True)
    with zipfile.ZipFile(built.wheel) as whl:
        assert [n for n in whl.namelist() if n.startswith("tiny_skbuild/_C.")]
        whl.extractall(tmp_path / "site")
    code = (
        "import torch, sys; sys.path.insert(0, sys.argv[1]); from tiny_skbuild import _C; "
        "print(_C.built_for() == tuple(int(x) for x in torch.__version__.split('.')[:2]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "site")], capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr
    assert not (root / "build").exists()


def test_an_adapters_own_build_command_runs_in_a_copy_and_leaves_the_wheel(tmp_path, torch_build):
    """``Adapter(build_command=...)``: the adapter's own build instead of ``uv build --wheel``,
    ``python`` being the cell's and ``{out}`` where its one wheel goes."""
    torch, tag, platform = torch_build
    project = _project(tmp_path / "c")
    command = ("python", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q", "-w", "{out}", ".")
    built = adapterbuild.build_in_cell(
        project, sys.executable, torch, tag, platform, tmp_path / "cache", sdist=False, command=command
    )
    assert built.compiled and built.wheel.name.startswith("tiny_accel-0.0.1-")
    assert not (project / "build").exists() and not list(project.glob("*.egg-info"))
    plain = adapterbuild.build_in_cell(project, sys.executable, torch, tag, platform, tmp_path / "cache", sdist=False)
    assert plain.key != built.key  # another command is another build of the same sources
    with pytest.raises(adapterbuild.BuildFailed, match="the build left 0 wheels"):
        adapterbuild.build_in_cell(
            project, sys.executable, torch, tag, platform, tmp_path / "c2", sdist=False, command=("true",)
        )
