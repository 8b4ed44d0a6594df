"""What adopting teams type, fed to every command but ``check`` and ``env``: each mistake ends
in one clear message with a documented exit code, never a traceback, and a failed command
leaves the repository as it was (docs/commands.md "Exit codes", docs/development.md).

Each test is a case exploratory testing found wrong (the CHANGELOG's lines of this change).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapter_matrix.device.opsweep.activation import ActivationError, activation_of
from adapter_matrix.device.opsweep.sweep_command import _unmatched
from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load_text

from .helpers import FIXTURES, REPO, cli

MINIMAL = (FIXTURES / "minimal.yaml").read_text()
RECORDED = str(FIXTURES / "pypi" / "2026-12-01")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))


def _errors(text: str) -> list:
    with pytest.raises(MatrixError) as caught:
        load_text(text, "compat.yaml", check_modules=False)
    return [str(d) for d in caught.value.diagnostics if d.severity == "error"]


def _read_only(monkeypatch) -> None:
    """Every file or folder created from now on fails as on a read-only file system (the tests
    run as root, whom a chmod does not stop)."""
    real_open, real_mkdir = os.open, os.mkdir

    def no_create(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_open(path, flags, *args, **kwargs)

    def no_mkdir(path, *args, **kwargs):
        if not os.path.isdir(path):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        return real_mkdir(path, *args, **kwargs)

    def no_symlink(src, dst, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), src, None, dst)

    monkeypatch.setattr(os, "open", no_create)
    monkeypatch.setattr(os, "mkdir", no_mkdir)
    monkeypatch.setattr(os, "symlink", no_symlink)


def _tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- compat.yaml as users write it -------------------------------------------------------------


def test_python_3_1_in_a_torch_line_is_3_10_read_as_a_number_and_an_error():
    """A YAML tool writes an unquoted 3.10 as 3.1: the torch line silently lost Python 3.10."""
    text = MINIMAL.replace('python: ["3.8", "3.9", "3.10", "3.11"]', "python: [3.8, 3.9, 3.1, 3.11]")
    (error,) = _errors(text)
    assert error.startswith("compat.yaml:16:24: Python 3.1 has no torch wheel")
    assert "did you mean '3.10'?" in error and '"3.10"' in error
    # 3.10 unquoted is read as written (the reader keeps the text), and stays valid
    load_text(MINIMAL.replace('python: ["3.8", "3.9", "3.10", "3.11"]', "python: [3.8, 3.9, 3.10, 3.11]"), "c.yaml")


@pytest.mark.parametrize(
    "written, hint",
    [
        ('"2"', "write it as a whole number without quotes: `schema-version: 2`"),
        ("2.0", "write it as a whole number without quotes: `schema-version: 2`"),
        ("abc", "this adapter-matrix reads schema-version 1 and 2: write `schema-version: 2`"),
        ("99", "upgrade adapter-matrix for newer files"),
    ],
)
def test_a_schema_version_in_quotes_is_told_to_drop_them(written, hint):
    """'unsupported schema-version '1' — this adapter-matrix reads schema-version 1 and 2' was a riddle."""
    (error,) = _errors(MINIMAL.replace("schema-version: 1", f"schema-version: {written}"))
    assert error.endswith(hint), error


def test_patches_written_as_one_value_is_one_error_and_each_patch_is_placed_at_itself():
    (error,) = _errors(MINIMAL.replace("patches: [2.1.0, 2.1.1, 2.1.2]", "patches: 2.1.0"))
    assert error.startswith("compat.yaml:15:14: patches must be a list")
    # a bad patch before another no longer shifts the next one's error onto its neighbour
    errors = _errors(MINIMAL.replace("patches: [2.1.0, 2.1.1, 2.1.2]", "patches: [2.1.x, 2.1.0, 2.2.0]"))
    assert errors == [
        "compat.yaml:15:15: bad patch version '2.1.x' \u2014 write a PEP 440 version such as 2.4.1",
        "compat.yaml:15:29: patch 2.2.0 does not belong to torch 2.1 \u2014 list 2.1.N versions only",
    ]


def test_a_matrix_that_cannot_be_read_is_named_without_a_0_0_position(tmp_path):
    res = cli("validate", "--matrix", str(tmp_path / "missing.yaml"))
    assert res.code == 2
    assert res.err.startswith(f"{tmp_path / 'missing.yaml'}: cannot read the matrix: No such file or directory")
    assert ":0:0" not in res.err
    res = cli("validate", "--matrix", str(tmp_path))
    assert res.code == 2 and f"{tmp_path}: cannot read the matrix: it is a folder, not a file" in res.err


# -- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_negative_max_parallel_is_refused_in_every_format(tmp_path, fmt):
    (tmp_path / "compat.yaml").write_text(MINIMAL)
    res = cli("plan", "--matrix", str(tmp_path / "compat.yaml"), "--format", fmt, "--max-parallel", "-3")
    assert res.code == 2
    assert res.err.strip() == "error: --max-parallel -3: a number of jobs, 0 for no cap"


@pytest.mark.parametrize("today", ["20300101", "2030-W01-1", "2030-1-1"])
def test_today_is_yyyy_mm_dd_on_every_python(tmp_path, today):
    """Python 3.11's date.fromisoformat reads 20300101; 3.9's does not: the answer was the Python's."""
    (tmp_path / "compat.yaml").write_text(MINIMAL)
    for command in ("plan", "table", "check"):
        res = cli(command, "--matrix", str(tmp_path / "compat.yaml"), "--today", today)
        assert res.code == 2 and f"--today '{today}': write a date as YYYY-MM-DD" in res.err


def test_an_op_sweep_that_would_time_out_every_task_is_refused(tmp_path):
    res = cli("ops", "sweep", "--timeout", "0", "--op", "add")
    assert res.code == 2 and "error: --timeout 0: the seconds one task may run, more than 0" in res.err


def test_an_op_the_sweep_ran_no_task_for_is_named():
    """`ops sweep --op nope` swept nothing and exited 0: a typo's green run."""
    sweep = SimpleNamespace(tasks=[SimpleNamespace(op="add"), SimpleNamespace(op="max.binary")])
    assert _unmatched(("add", "max", "nope", "ad"), [sweep]) == ["nope", "ad"]


def test_an_activation_module_that_is_not_importable_is_one_line_before_any_worker():
    """Not the worker's traceback, printed after torch was imported in it."""
    with pytest.raises(ActivationError, match=r"^nosuchmod:fn: no module 'nosuchmod' is importable here"):
        activation_of("adapter-matrix-npu", "shims", "nosuchmod:fn")
    res = cli("ops", "sweep", "--activate", "nosuchmod:fn", "--op", "add")
    assert res.code == 2 and res.err.startswith("error: --activate nosuchmod:fn: no module 'nosuchmod' is importable")
    assert activation_of("adapter-matrix-npu", "shims", "shims.torch_2_1").target == "shims.torch_2_1"


# -- init -----------------------------------------------------------------------------------------


def _project(root: Path, name: str = "foo-npu") -> Path:
    (root / "foo_npu").mkdir(parents=True)
    (root / "foo_npu" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{name}"\nversion = "0.3.1"\n'
    )
    return root


def test_init_refuses_a_distribution_the_project_is_not_named(tmp_path):
    """The matrix, the entry point and require() named a distribution pip never installs."""
    root = _project(tmp_path / "repo")
    before = _tree(root)
    res = cli("init", "--distribution", "flat-npu", "--device", "npu", "--upstream", RECORDED, cwd=root)
    assert res.code == 2
    assert res.err.strip() == (
        "error: --distribution 'flat-npu' is not this project's name: pyproject.toml [project] name is 'foo-npu', "
        "the name pip installs it by \u2014 give --distribution foo-npu"
    )
    assert _tree(root) == before
    # the project's name in another spelling is the same distribution
    res = cli("init", "--distribution", "Foo_NPU", "--device", "npu", "--upstream", RECORDED, cwd=root)
    assert res.code == 0, res.err


def test_init_in_a_read_only_repository_is_one_line(tmp_path, monkeypatch):
    """It said `error: None: cannot write: None`."""
    root = _project(tmp_path / "repo")
    before = _tree(root)
    _read_only(monkeypatch)
    res = cli("init", "--distribution", "foo-npu", "--device", "npu", "--upstream", RECORDED, cwd=root)
    assert res.code == 2
    assert res.err.strip() == f"error: cannot write {root.resolve() / 'compat.yaml'}: the file system is read-only"
    monkeypatch.undo()
    assert _tree(root) == before


# -- commands that write into the repository ----------------------------------------------------


def test_the_platform_entry_into_a_read_only_folder_is_one_line(tmp_path, monkeypatch):
    """It said `error: [Errno 30] Read-only file system: 'plat'`."""
    (tmp_path / "compat.yaml").write_text(MINIMAL)
    _read_only(monkeypatch)
    res = cli(
        "table", "--view", "platform", "--support-channel", "https://example.org", "--output", "plat", cwd=tmp_path
    )
    assert res.code == 2
    assert "cannot write plat: the file system is read-only" in res.err and "Errno" not in res.err


@pytest.fixture
def shim_repo(tmp_path: Path) -> Path:
    """The minimal matrix with its shims package beside it (new-shim writes there)."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "shims" / "src" / "shims", root / "shims", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "compat.yaml").write_text(MINIMAL)
    return root


def test_new_shim_in_a_read_only_checkout_is_one_line_and_writes_nothing(shim_repo, monkeypatch):
    """It was an internal error (exit 5): the module was written with a plain write_text."""
    before = _tree(shim_repo)
    _read_only(monkeypatch)
    res = cli("new-shim", "2.14", "--matrix", str(shim_repo / "compat.yaml"), cwd=shim_repo)
    monkeypatch.undo()
    assert res.code == 2, res.err
    assert "the file system is read-only" in res.err and "internal error" not in res.err
    assert _tree(shim_repo) == before


def test_new_shim_names_a_probe_it_cannot_read_and_a_version_that_is_no_minor(shim_repo, tmp_path):
    missing = tmp_path / "nope.json"
    res = cli("new-shim", "2.14", "--matrix", "compat.yaml", "--probe", str(missing), "--dry-run", cwd=shim_repo)
    assert res.code == 2
    assert res.err.strip() == f"error: {missing}: cannot read a probe: No such file or directory"
    (tmp_path / "list.json").write_text("[]")
    res = cli("new-shim", "2.14", "--matrix", "compat.yaml", "--probe", str(tmp_path / "list.json"), cwd=shim_repo)
    assert res.code == 2 and "not a JSON object" in res.err
    res = cli("new-shim", "2", "--matrix", "compat.yaml", "--dry-run", cwd=shim_repo)
    assert res.code == 2 and "'2' is not a torch minor: write MAJOR.MINOR, such as 2.16" in res.err


def test_migrate_with_a_body_into_a_missing_folder_writes_nothing(tmp_path):
    """docs/commands.md: "Exit 2, nothing written"; the matrix, the shim and MIGRATION.md were."""
    repo = tmp_path / "toy"
    shutil.copytree(REPO / "examples" / "toy-adapter", repo, symlinks=True)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "toy"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True)
    before = _tree(repo)
    body = tmp_path / "no" / "such" / "body.md"
    res = cli(
        "migrate", "torch", "2.16.0", "--upstream", str(FIXTURES / "pypi" / "torch-2.16"), "--body", str(body), cwd=repo
    )
    assert res.code == 2
    assert f"cannot write {body}: the folder {body.parent} does not exist" in res.err
    assert {k: v for k, v in _tree(repo).items() if not k.startswith(".git/")} == {
        k: v for k, v in before.items() if not k.startswith(".git/")
    }
    assert "Traceback" not in res.err


@pytest.mark.parametrize("given", ["missing", "a-file.json", "empty"])
def test_table_resolve_against_a_folder_without_recorded_answers_is_one_line(tmp_path, given):
    """It was an internal error (exit 5): the local index's page was never written."""
    (tmp_path / "compat.yaml").write_text(MINIMAL)
    (tmp_path / "a-file.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    res = cli("table", "--resolve", "--recorded", given, cwd=tmp_path)
    assert res.code == 2, res.err
    assert res.err.startswith(f"error: --recorded {given}: ") and "internal error" not in res.err


# -- files edited in place keep their line endings --------------------------------------------


def _crlf(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


def _all_crlf(path: Path) -> bool:
    data = path.read_bytes()
    return data.count(b"\n") > 0 and data.count(b"\n") == data.count(b"\r\n")


def test_init_keeps_a_crlf_projects_line_endings(tmp_path):
    """A Windows checkout's pyproject.toml, README and MANIFEST.in came back LF: every line changed."""
    root = _project(tmp_path / "repo")
    (root / "README.md").write_text("# foo\n\nIt is fast.\n")
    (root / "MANIFEST.in").write_text("include LICENSE\n")
    (root / "csrc").mkdir()
    (root / "csrc" / "a.cpp").write_text("int x;\n")
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        _crlf(root / name)
    before = {name: (root / name).read_bytes() for name in ("pyproject.toml", "README.md", "MANIFEST.in")}
    res = cli("init", "--distribution", "foo-npu", "--device", "npu", "--upstream", RECORDED, cwd=root)
    assert res.code == 0, res.err
    for name, old in before.items():
        assert _all_crlf(root / name), name
        new = (root / name).read_bytes()
        assert new != old and all(line in new for line in old.split(b"\r\n") if line), name  # only lines added


def test_validate_write_keeps_a_crlf_matrix_and_pyproject_unmixed(tmp_path):
    """--upstream --write added LF lines to a CRLF file, --pyproject --write made it all LF."""
    matrix = tmp_path / "compat.yaml"
    matrix.write_text(MINIMAL.replace("released: 2023-10-04", "released: 2023-10-05"))
    _crlf(matrix)
    res = cli("validate", "--matrix", str(matrix), "--upstream", RECORDED, "--write")
    assert res.code == 0, res.err
    assert b"released: 2023-10-04\r\n" in matrix.read_bytes() and _all_crlf(matrix)
    root = _project(tmp_path / "repo")
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'requires-python = ">=3.6"\n')
    _crlf(pyproject)
    res = cli("validate", "--matrix", str(matrix), "--pyproject", str(pyproject), "--write")
    assert "corrected" in res.out, res.out + res.err
    assert _all_crlf(pyproject) and 'requires-python = ">=3.6"' not in pyproject.read_text()


def test_new_shim_and_migrate_keep_a_crlf_matrix(shim_repo, tmp_path):
    _crlf(shim_repo / "compat.yaml")
    res = cli("new-shim", "2.14", "--matrix", "compat.yaml", cwd=shim_repo)
    assert res.code == 0, res.err
    assert _all_crlf(shim_repo / "compat.yaml") and "2.14" in (shim_repo / "compat.yaml").read_text()
    repo = tmp_path / "toy"
    shutil.copytree(REPO / "examples" / "toy-adapter", repo, symlinks=True)
    _crlf(repo / "compat.yaml")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "toy"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True)
    res = cli("migrate", "torch", "2.16.0", "--upstream", str(FIXTURES / "pypi" / "torch-2.16"), cwd=repo)
    assert res.code == 0, res.err
    assert _all_crlf(repo / "compat.yaml") and '"2.16":' in (repo / "compat.yaml").read_text()


def test_validate_write_keeps_a_byte_order_mark(tmp_path):
    """'the rewritten torch facts do not parse; edit the file by hand' for a file validate reads."""
    matrix = tmp_path / "compat.yaml"
    matrix.write_bytes(b"\xef\xbb\xbf" + MINIMAL.replace("released: 2023-10-04", "released: 2023-10-05").encode())
    res = cli("validate", "--matrix", str(matrix), "--upstream", RECORDED, "--write")
    assert res.code == 0, res.err
    data = matrix.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# A small") and b"released: 2023-10-04\n" in data


def test_validate_lists_every_invalid_file_it_is_given(tmp_path):
    """pre-commit passes every changed matrix: the first broken one hid the others' errors."""
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "tab.yaml").write_text(MINIMAL.replace("  device: npu", "\tdevice: npu"))
    (tmp_path / "good.yaml").write_text(MINIMAL)
    res = cli("validate", "empty.yaml", "tab.yaml", "good.yaml", cwd=tmp_path)
    assert res.code == 2
    assert "error: empty.yaml: 1 error in the matrix" in res.err
    assert "tab.yaml:5:1: invalid YAML: found a tab character" in res.err
    assert "error: tab.yaml: 1 error in the matrix" in res.err
    assert "good.yaml: valid" in res.out


def test_tier_refuses_a_negative_disk_floor(tmp_path):
    (tmp_path / "compat.yaml").write_text(MINIMAL)
    res = cli("tier", "edges", "--dry-run", "--min-free-gb", "-1", cwd=tmp_path)
    assert res.code == 2 and "error: --min-free-gb -1: the free disk space, in GB, a cell needs" in res.err
    assert cli("tier", "edges", "--dry-run", "--min-free-gb", "0", cwd=tmp_path).code == 0


@pytest.mark.parametrize("name", ['"demo adapter"', "-demo", "demo_", "démo", "demo==1.0"])
def test_a_distribution_pip_cannot_install_is_an_error(name):
    """check printed `pip install 'demo adapter==2.0.0'`: no command installs it."""
    (error,) = _errors(MINIMAL.replace("distribution: demo-adapter", f"distribution: {name}"))
    assert error.startswith("compat.yaml:4:17: adapter distribution ")
    assert "is not a distribution name pip can install" in error


def test_a_distribution_name_in_any_pep_508_spelling_stays_valid():
    for name in ("Demo.Adapter_2", "a", "torch-npu", "torch_npu"):
        load_text(MINIMAL.replace("distribution: demo-adapter", f"distribution: {name}"), "c.yaml")


def test_results_into_a_read_only_checkout_is_one_line(tmp_path, monkeypatch):
    """`results --into evidence` and `release` were internal errors (exit 5) on a read-only checkout."""
    shutil.copytree(FIXTURES / "tables" / "results", tmp_path / "res")
    (tmp_path / "compat.yaml").write_text(MINIMAL)
    _read_only(monkeypatch)
    res = cli("results", "res", "--into", "evidence", cwd=tmp_path)
    assert res.code == 2, res.err
    assert "cannot write evidence/" in res.err and "the file system is read-only" in res.err
    assert "internal error" not in res.err


def test_init_says_a_kept_matrix_is_broken_and_refuses_another_adapters(tmp_path):
    """It kept a compat.yaml with a tab without a word (the README's table and the hooks then fail),
    and registered another adapter's matrix under --distribution."""
    root = _project(tmp_path / "repo")
    (root / "compat.yaml").write_text("schema-version: 2\nadapter:\n\tdevice: x\n")
    res = cli("init", "--distribution", "foo-npu", "--device", "npu", "--upstream", RECORDED, cwd=root)
    assert res.code == 0, res.err
    assert res.out.startswith(
        "compat.yaml: kept (exists), not a valid matrix yet (1 error(s)): `adapter-matrix validate` lists them"
    ), res.out
    root = _project(tmp_path / "other")
    (root / "compat.yaml").write_text(MINIMAL)  # demo-adapter's
    before = _tree(root)
    res = cli("init", "--distribution", "foo-npu", "--device", "npu", "--upstream", RECORDED, cwd=root)
    assert res.code == 2
    assert "--distribution 'foo-npu' is not the adapter of compat.yaml, which is 'demo-adapter'" in res.err
    assert _tree(root) == before


def test_a_pyproject_that_is_a_fifo_or_missing_is_one_line_never_a_wait(tmp_path):
    """`validate --pyproject FIFO` waited for a writer forever (docs/security.md: never)."""
    import sys

    (tmp_path / "compat.yaml").write_text(MINIMAL)
    os.mkfifo(tmp_path / "pyproject.toml")
    code = "import sys; from adapter_matrix.cli import main; sys.argv[0] = 'adapter-matrix'; main()"
    run = subprocess.run(
        [sys.executable, "-c", code, "validate", "--pyproject", "pyproject.toml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "pyproject.toml: cannot read it: it is a FIFO (named pipe), not a regular file" in run.stderr
    res = cli("validate", "--pyproject", "missing.toml", cwd=tmp_path)
    assert res.code == 2
    assert "missing.toml: cannot read it: No such file or directory \u2014 give the path" in res.err
