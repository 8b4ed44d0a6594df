"""`adapter-matrix init`: a first compat.yaml that validates as written (offline, from the
recorded PyPI answer)."""

from __future__ import annotations

import os

from .helpers import FIXTURES, cli

RECORDED = str(FIXTURES / "pypi" / "2026-12-01" / "torch.json")


def test_init_writes_a_matrix_that_validates_clean_and_answers(tmp_path):
    out = tmp_path / "compat.yaml"
    res = cli(
        "init",
        "--distribution",
        "my-adapter",
        "--device",
        "npu",
        "--torch",
        ">=2.12",
        "--upstream",
        RECORDED,
        "-o",
        str(out),
    )
    assert res.code == 0, res.err
    assert "written" in res.out
    res = cli("validate", "--matrix", str(out))
    assert res.code == 0 and res.err == "", res.err  # not even a warning
    assert "4 torch lines" in res.out  # >=2.12 is 2.12-2.15 in the recorded answer
    text = out.read_text()
    assert '"2.12": {released: 2026-05-13, patches: [2.12.0, 2.12.1]' in text
    assert "schema-version: 2" in text and "shims" not in text
    # the torch facts are PyPI's: validate --upstream has nothing to correct
    res = cli("validate", "--matrix", str(out), "--upstream", RECORDED)
    assert res.code == 0 and "error" not in res.err
    # and the tools work on it at once
    res = cli("check", "--matrix", str(out), "--torch", "2.13.0", "--python", "3.12", "--adapter", "0.1.0")
    assert res.code == 3 and "experimental: not tested yet" in res.out
    assert cli("plan", "--matrix", str(out)).code == 0
    assert cli("table", "--matrix", str(out)).code == 0


def test_lines_between_the_chosen_ones_are_covered(tmp_path):
    out = tmp_path / "compat.yaml"
    res = cli(
        "init",
        "--distribution",
        "x",
        "--device",
        "xpu",
        "--torch",
        "2.9",
        "--torch",
        "2.11",
        "--upstream",
        RECORDED,
        "-o",
        str(out),
    )
    assert res.code == 0, res.err
    text = out.read_text()
    assert all(f'"{line}":' in text for line in ("2.9", "2.10", "2.11")) and '"2.12":' not in text
    assert 'torch: ">=2.9,<2.12"' in text and 'python: ">=3.10"' in text


def test_init_refuses_to_overwrite_and_bad_choices_are_usage_errors(tmp_path):
    out = tmp_path / "compat.yaml"
    out.write_text("# mine\n")
    res = cli("init", "--distribution", "x", "--device", "npu", "--upstream", RECORDED, "-o", str(out), "--matrix-only")
    assert res.code == 2 and "exists; give --force" in res.err and out.read_text() == "# mine\n"
    res = cli("init", "--distribution", "x", "--device", "npu", "--upstream", RECORDED, "-o", str(out))
    assert (
        res.code == 0 and "compat.yaml: kept (exists)" in res.out and out.read_text() == "# mine\n"
    )  # the rest is scaffolded around it
    for args, message in (
        (["--device", "npu", "--torch", "3.0"], "has no torch 3.0"),
        (["--device", "npu", "--torch", "~~"], "give a torch line such as 2.12"),
        (["--device", "n-p-u"], "is not an identifier"),
        (["--device", "npu", "--version", "one"], "--version 'one' is not a PEP 440 version"),
    ):
        res = cli("init", "--distribution", "x", *args, "--upstream", RECORDED, "-o", str(tmp_path / "new.yaml"))
        assert res.code == 2, args
        assert message in res.err and "Traceback" not in res.err, res.err
        assert not (tmp_path / "new.yaml").exists()


def test_an_empty_matrix_points_at_init(tmp_path):
    empty = tmp_path / "compat.yaml"
    empty.write_text("")
    res = cli("validate", "--matrix", str(empty))
    assert res.code == 2
    assert "write a first one with `adapter-matrix init --distribution NAME --device NAME`" in res.err


PYPROJECT = """# my adapter
[project]
name = "my-adapter"  # keep this comment
version = "0.1.0"

[tool.setuptools.package-data]
# data files
my_adapter = ["kernels/*.so"]
"""


def test_init_scaffolds_each_file_only_if_absent_and_edits_pyproject_in_place(tmp_path):
    (tmp_path / "my_adapter").mkdir()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "README.md").write_text("# mine\n")
    args = [
        "init",
        "--distribution",
        "my-adapter",
        "--device",
        "mydev",
        "--torch",
        "2.13",
        "--upstream",
        RECORDED,
        "-o",
        str(tmp_path / "compat.yaml"),
    ]
    dry = cli(*args, "--dry-run")
    assert dry.code == 0, dry.err
    assert (
        f"{tmp_path / 'noxfile.py'}: would write" in dry.out
        and f"{tmp_path / 'README.md'}: edited (the table block added at its end)" in dry.out
    )
    assert f"{tmp_path / 'pyproject.toml'}: would edit" in dry.out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "README.md",
        "my_adapter",
        "pyproject.toml",
    ]  # nothing written
    res = cli(*args)
    assert res.code == 0, res.err
    assert "from adapter_matrix import require" in res.out and "support = require(__name__)" in res.out
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith("# mine\n\n## Compatibility\n")  # the owner's text first, then the block
    assert "| torch 2.13 |" in readme or "2.13" in readme.split("<!-- adapter-matrix:table view=grid -->")[1]
    assert cli("table", "--check", str(tmp_path / "README.md"), "--matrix", str(tmp_path / "compat.yaml")).code == 0
    assert os.readlink(tmp_path / "my_adapter" / "compat.yaml") == "../compat.yaml"
    text = (tmp_path / "pyproject.toml").read_text()
    head = PYPROJECT.split("[tool.setuptools.package-data]")[0]
    assert text.startswith(head.replace("[project]\n", '[project]\ndependencies = ["adapter-matrix"]\n'))
    # comments and order kept; require() needs the tool at the adapter's import, so the wheel pulls it in
    assert (
        '# data files\nmy_adapter = ["compat.yaml", "kernels/*.so"]\n' in text
    )  # into the existing list: a second key is invalid TOML
    assert '[project.entry-points."adapter_matrix.matrices"]\nmy-adapter = "my_adapter:compat.yaml"\n' in text
    for name in ("noxfile.py", ".pre-commit-config.yaml", ".github/workflows/matrix.yml"):
        assert (tmp_path / name).exists(), name
    again = cli(*args)
    assert (
        again.code == 0 and "noxfile.py: kept (exists)" in again.out and "pyproject.toml: kept (exists)" in again.out
    )  # nothing left to add


COMPILED_SETUP_PY = """from setuptools import setup

setup(
    name="tiny-accel",
    version="0.0.1",
    packages=["tiny_accel"],
    package_data={"tiny_accel": ["lib/*.so"]},
)
"""
COMPILED_PYPROJECT = """[build-system]
requires = ["setuptools>=64", "torch"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-accel"
version = "0.0.1"
requires-python = ">=3.10,<3.14"
dependencies = ["numpy"]
"""


def _compiled_project(root):
    """A setup.py adapter shaped like OpenReg: lib/*.so shipped as package data, native sources in csrc/."""
    (root / "tiny_accel" / "lib").mkdir(parents=True)
    (root / "tiny_accel" / "__init__.py").write_text("")
    (root / "tiny_accel" / "lib" / "libtiny.so").write_bytes(b"\x7fELF not really")
    (root / "csrc").mkdir()
    (root / "csrc" / "tiny.cpp").write_text("int tiny() { return 1; }\n")
    (root / "docs").mkdir()
    (root / "docs" / "x.cpp").write_text("// an example in the docs, not a source\n")
    (root / "setup.py").write_text(COMPILED_SETUP_PY)
    (root / "pyproject.toml").write_text(COMPILED_PYPROJECT)


def _wheel_files(root, out):
    import subprocess
    import sys
    import zipfile

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(root)],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    names = {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}
    wheel.unlink()
    return names


def test_init_respects_an_existing_compiled_project(tmp_path):
    """Its version and requires-python are the first release's, its setup.py package data stays in
    the wheel, and the evidence ages with its native sources (issue 43)."""
    import pytest

    pytest.importorskip("setuptools")
    root = tmp_path / "repo"
    root.mkdir()
    _compiled_project(root)
    before = _wheel_files(root, tmp_path / "w1")
    assert "tiny_accel/lib/libtiny.so" in before
    res = cli(
        "init",
        "--distribution",
        "tiny-accel",
        "--device",
        "tiny",
        "--torch",
        ">=2.13",
        "--upstream",
        RECORDED,
        "-o",
        str(root / "compat.yaml"),
    )
    assert res.code == 0, res.err
    assert 'add "compat.yaml" to package_data' in res.out  # said, not done behind setup.py's back
    text = (root / "compat.yaml").read_text()
    assert "  - version: 0.0.1\n" in text and '    python: ">=3.10,<3.14"\n' in text
    assert "  sources: [csrc, setup.py, tiny_accel]\n" in text  # not docs/: no example ages a record
    pyproject = (root / "pyproject.toml").read_text()
    assert "tool.setuptools.package-data" not in pyproject
    assert 'dependencies = ["adapter-matrix", "numpy"]' in pyproject  # added to the existing list
    after = _wheel_files(root, tmp_path / "w2")
    assert before <= after  # nothing the project shipped was dropped
    plan = cli("plan", "--matrix", str(root / "compat.yaml"))
    assert plan.code == 0 and "py3.14" not in plan.out and "py3.10" in plan.out


def test_a_dynamic_version_is_named_and_version_taken_instead(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "dyn"\ndynamic = ["version"]\n\n[tool.setuptools.dynamic]\nversion = {attr = "dyn.V"}\n'
    )
    args = ("init", "--distribution", "dyn", "--device", "dyn", "--upstream", RECORDED, "-o", str(root / "compat.yaml"))
    res = cli(*args)
    assert res.code == 2 and "the project's version is dynamic" in res.err and "--version" in res.err
    assert not (root / "compat.yaml").exists()
    res = cli(*args, "--version", "3.1.0")
    assert res.code == 0, res.err
    assert "  - version: 3.1.0\n" in (root / "compat.yaml").read_text()
