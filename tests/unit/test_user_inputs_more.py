"""More of what adopting teams type, found by a second exploratory pass over the commands (the
style of test_user_inputs.py): each test is a case that was wrong, asserting what the user
reads and the exit code (the CHANGELOG's lines of this change)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load_text

from .helpers import FIXTURES, cli
from .test_evidence import _tier, project  # noqa: F401  (the fixture: a project with frozen evidence)

MINIMAL = FIXTURES / "minimal.yaml"
RESULTS = FIXTURES / "tables" / "results"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))


# -- a results folder holding JSON that is not a result record ----------------------------------

_STRAYS = {"empty-list.json": [], "empty.json": {}, "other-tool.json": {"tests": 3, "cell": "py3.11-torch2.2"}}
_SAID = {
    "empty-list.json": "not a result record (a list, not a mapping with a cell and an outcome): skipped",
    "empty.json": 'not a result record (an empty mapping without "cell" and "outcome"): skipped',
    "other-tool.json": 'not a result record (a mapping without "outcome"): skipped',
}


def _records(folder: Path) -> Path:
    shutil.copytree(RESULTS, folder)
    (folder / "junit-summary.json").unlink()  # the fixture's own stray: the strays below are the ones said
    return folder


def _with_strays(folder: Path) -> Path:
    for name, doc in _STRAYS.items():
        (folder / name).write_text(json.dumps(doc))
    (folder / "ops").mkdir()  # what a cell writes there besides its record is not a stray
    (folder / "ops" / "py3.11-torch2.2.json").write_text(json.dumps({"record": "op-sweep", "schema": 1}))
    (folder / "op-tests").mkdir()
    (folder / "op-tests" / "py3.11-torch2.2.json").write_text(json.dumps({"kind": "op-tests", "schema": 1}))
    return folder


def _warned(err: str, folder: str) -> None:
    said = [line for line in err.splitlines() if "not a result record" in line]
    assert said == [f"{folder}/{name}: {_SAID[name]}" for name in sorted(_STRAYS)], err
    assert "Traceback" not in err


def test_results_names_each_json_file_that_is_not_a_record_once(tmp_path):
    """`[]`, `{}` and another tool's JSON in a results folder were skipped without a word."""
    clean = cli("results", "res", cwd=_records(tmp_path / "res").parent)
    assert clean.err == ""
    _with_strays(tmp_path / "res")
    res = cli("results", "res", cwd=tmp_path)
    _warned(res.err, "res")
    assert res.code == clean.code == 1  # a cell of the fixture failed: the strays change nothing
    assert res.out == clean.out


def test_table_results_names_each_json_file_that_is_not_a_record(tmp_path):
    args = ("table", "--matrix", str(MINIMAL), "--view", "verified", "--today", "2026-12-01", "--results", "res")
    clean = cli(*args, cwd=_records(tmp_path / "res").parent)
    assert clean.err == ""
    _with_strays(tmp_path / "res")
    res = cli(*args, cwd=tmp_path)
    _warned(res.err, "res")
    assert res.code == clean.code == 0
    assert res.out == clean.out


def test_tier_names_each_json_file_in_the_evidence_that_is_not_a_record(project):  # noqa: F811
    clean = _tier(project, "--dry-run")
    for name, doc in _STRAYS.items():
        (project / "records" / name).write_text(json.dumps(doc))
    res = _tier(project, "--dry-run")
    _warned(res.out, str(project / "records"))
    assert res.code == clean.code == 0
    assert [line for line in res.out.splitlines() if "not a result record" not in line] == clean.out.splitlines()


# -- table --resolve with a table's options -----------------------------------------------------


@pytest.mark.parametrize("extra", [("--format", "json"), ("--lang", "zh")])
def test_table_resolve_refuses_a_format_it_would_ignore(extra):
    """`table --resolve --format json` printed the text report: the JSON asked for was silently ignored."""
    res = cli("table", "--matrix", str(MINIMAL), "--resolve", *extra)
    assert res.code == 2
    assert res.err.strip() == (
        f"error: --resolve prints a report, not a table: give no {extra[0]} (its exit code says whether every "
        "command installs)"
    )
    assert res.out == ""


# -- compat.yaml: sources and evidence suites ---------------------------------------------------


def _errors(text: str, filename: str = "compat.yaml") -> list:
    with pytest.raises(MatrixError) as caught:
        load_text(text, filename, check_modules=False)
    return [str(d) for d in caught.value.diagnostics if d.severity == "error"]


@pytest.mark.parametrize(
    "line, said",
    [
        ('index-url: "not a url"', "compat.yaml:9:16: index-url 'not a url' is not a URL"),
        (
            "index-url: download.pytorch.org/whl/cpu",
            "compat.yaml:9:16: index-url 'download.pytorch.org/whl/cpu' is not a URL",
        ),
        ('find-links: "not a url"', "compat.yaml:9:17: find-links 'not a url' is neither a URL nor a folder"),
        ("find-links: wheels", "compat.yaml:9:17: find-links 'wheels' is neither a URL nor a folder"),
    ],
)
def test_a_source_that_is_not_a_url_or_folder_is_an_error_at_its_place(line, said):
    """`index-url: "not a url"` was accepted: pip failed on it only in a cell, far from the file."""
    text = MINIMAL.read_text().replace("index-url: https://download.pytorch.org/whl/cpu", line)
    (error,) = _errors(text)
    assert error.startswith(said + " \u2014 "), error
    assert "https://" in error  # how to fix: an example of what fits


@pytest.mark.parametrize(
    "value", ["https://download.pytorch.org/whl/cpu", "file:///srv/index", "https://user:token@pkgs.example/simple/"]
)
def test_an_index_url_pip_takes_stays_valid(value):
    load_text(MINIMAL.read_text().replace("https://download.pytorch.org/whl/cpu", value), "c.yaml", check_modules=False)


@pytest.mark.parametrize("value", ["/opt/wheels", "./wheels", "~/wheels", "https://example.org/wheels.html"])
def test_a_find_links_folder_or_page_stays_valid(value):
    text = MINIMAL.read_text().replace("index-url: https://download.pytorch.org/whl/cpu", f"find-links: {value}")
    load_text(text, "c.yaml", check_modules=False)


def test_the_schema_refuses_what_the_loader_refuses():
    import re

    from adapter_matrix.matrix.schema import json_schema

    source = json_schema()["$defs"]["source"]["properties"]
    for key, good, bad in (("index-url", "https://x.org/simple", "not a url"), ("find-links", "./wheels", "wheels")):
        assert re.search(source[key]["pattern"], good) and not re.search(source[key]["pattern"], bad)


_SUITED = """
evidence:
  folder: records
  sources: [pkg, tests]
  suites: [conformance, {group}]
"""


def _suited(root: Path, group: str) -> Path:
    (root / "tests" / "smoke").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "tests" / "test_marked.py").write_text(
        'import pytest\n\n@pytest.mark.suite("speed")\ndef test_x():\n    pass\n'
    )
    path = root / "compat.yaml"
    path.write_text(MINIMAL.read_text() + _SUITED.format(group=group))
    return path


@pytest.mark.parametrize("group", ["ops", "workloads", "smoke", "tests", "speed"])
def test_suite_groups_a_cell_reports_stay_valid(tmp_path, group):
    load_text(_suited(tmp_path, group).read_text(), str(tmp_path / "compat.yaml"), check_modules=False)


def test_an_evidence_suite_no_cell_reports_is_a_warning_naming_the_close_one(tmp_path):
    """`suites: [conformence]` was accepted in silence: every record then lacked that group, stale
    for good. A warning, not an error: the file works, and a suite may live outside the sources."""
    path = _suited(tmp_path, "smoek")
    (warning,) = [str(d) for d in load_text(path.read_text(), str(path), check_modules=False).warnings]
    assert (
        warning.startswith(f"{path}:") and ": warning: suite group 'smoek' is not one a cell reports \u2014 " in warning
    )
    assert "did you mean 'smoke'?" in warning and "evidence: sources:" in warning
    res = cli("validate", "--matrix", str(path))
    assert res.code == 0 and "suite group 'smoek' is not one a cell reports" in res.out + res.err
    res = cli("validate", "--matrix", str(path), "--strict")
    assert res.code != 0


def test_an_evidence_suite_is_not_judged_without_its_suites_on_disk(tmp_path):
    """An installed matrix has no tests beside it: nothing can be said of its groups."""
    text = MINIMAL.read_text() + _SUITED.format(group="smoek")
    load_text(text, str(tmp_path / "compat.yaml"), check_modules=False)


# -- init on a pure-Python plugin built by hatchling, flit-core or pdm-backend ------------------

TORCH_JSON = str(FIXTURES / "pypi" / "2026-12-01" / "torch.json")
_BACKENDS = {
    "hatchling": ("hatchling", "hatchling.build"),
    "flit-core": ("flit_core>=3.9", "flit_core.buildapi"),
    "pdm-backend": ("pdm-backend", "pdm.backend"),
}


def _plugin(root: Path, backend: str, tool: str = "") -> Path:
    requires, module = _BACKENDS[backend]
    (root / "plug").mkdir(parents=True)
    (root / "plug" / "__init__.py").write_text('"""A plugin."""\n')
    (root / "pyproject.toml").write_text(
        f'[build-system]\nrequires = ["{requires}"]\nbuild-backend = "{module}"\n\n'
        '[project]\nname = "plug"\nversion = "1.0"\ndescription = "A plugin."\nrequires-python = ">=3.10"\n' + tool
    )
    return root


def _init_plugin(root: Path):
    res = cli("init", "--distribution", "plug", "--device", "plug", "--upstream", TORCH_JSON, "--torch", "2.13",
              "-o", str(root / "compat.yaml"))  # fmt: skip
    assert res.code == 0, res.err
    return res


@pytest.mark.parametrize("backend", sorted(_BACKENDS))
def test_init_knows_the_backends_that_ship_the_package_folder(tmp_path, backend):
    """hatchling, flit-core and pdm-backend were "an unknown build backend": init did nothing for the wheel."""
    root = _plugin(tmp_path / "repo", backend)
    res = _init_plugin(root)
    assert "unknown build backend" not in res.out
    said = f"pyproject.toml: {backend} ships every file of the package folder in the wheel: plug/compat.yaml needs no package-data setting"
    assert said in res.out, res.out
    assert (root / "plug" / "compat.yaml").is_symlink()


def test_init_gives_flit_and_pdm_sdists_the_matrix_the_link_points_to(tmp_path):
    """Their sdist holds the package and pyproject.toml only: the link in it had no target, and the
    wheel the cells build from the sdist failed."""
    flit = _plugin(tmp_path / "flit", "flit-core")
    assert "compat.yaml, in [tool.flit.sdist]" in _init_plugin(flit).out
    assert (flit / "pyproject.toml").read_text().endswith('\n[tool.flit.sdist]\ninclude = ["compat.yaml"]\n')
    pdm = _plugin(tmp_path / "pdm", "pdm-backend", '\n[tool.pdm.build]\nsource-includes = ["docs"]\n')
    _init_plugin(pdm)
    assert '[tool.pdm.build]\nsource-includes = ["compat.yaml", "docs"]\n' in (pdm / "pyproject.toml").read_text()
    fresh = _plugin(tmp_path / "pdm2", "pdm-backend")
    _init_plugin(fresh)  # pdm's default source-includes (tests) kept
    assert (
        (fresh / "pyproject.toml")
        .read_text()
        .endswith('[tool.pdm.build]\nsource-includes = ["tests", "compat.yaml"]\n')
    )
    hatch = _plugin(tmp_path / "hatch", "hatchling")
    _init_plugin(hatch)
    assert "[tool." not in (hatch / "pyproject.toml").read_text()  # its sdist holds the whole tree


@pytest.mark.parametrize(
    "backend, tool, said",
    [
        (
            "hatchling",
            '\n[tool.hatch.build.targets.wheel]\nonly-include = ["plug/__init__.py"]\n',
            '[tool.hatch.build.targets.wheel] only-include leaves plug/compat.yaml out of the wheel: add "plug/compat.yaml" to it',
        ),
        (
            "hatchling",
            '\n[tool.hatch.build]\nexclude = ["*.yaml"]\n',
            '[tool.hatch.build] exclude "*.yaml" leaves plug/compat.yaml out of the wheel: narrow or remove it',
        ),
        (
            "hatchling",
            '\n[tool.hatch.build.targets.sdist]\ninclude = ["/plug"]\n',
            '[tool.hatch.build.targets.sdist] include leaves compat.yaml out of the sdist (the link\'s target): add "compat.yaml" to it',
        ),
        (
            "flit-core",
            '\n[tool.flit.sdist]\nexclude = ["plug/*.yaml"]\n',
            '[tool.flit.sdist] exclude "plug/*.yaml" leaves plug/compat.yaml out of the sdist: narrow or remove it',
        ),
        (
            "pdm-backend",
            '\n[tool.pdm.build]\nincludes = ["plug/*.py"]\n',
            '[tool.pdm.build] includes leaves plug/compat.yaml out of the wheel: add "plug/compat.yaml" to it',
        ),
        (
            "pdm-backend",
            '\n[tool.pdm.build]\nexcludes = ["**/*.yaml"]\n',
            '[tool.pdm.build] excludes "**/*.yaml" leaves plug/compat.yaml out of the wheel: narrow or remove it',
        ),
    ],
)
def test_init_says_what_of_the_projects_own_build_config_leaves_the_matrix_out(tmp_path, backend, tool, said):
    res = _init_plugin(_plugin(tmp_path / "repo", backend, tool))
    assert f"pyproject.toml: {said}\n" in res.out, res.out
    assert "needs no package-data setting" not in res.out


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(_BACKENDS))
def test_the_wheel_built_from_the_sdist_after_init_carries_the_matrix(tmp_path, backend):
    """As a cell builds it: the sdist, then the wheel from it (flit's failed: the link had no target)."""
    import importlib.util
    import sys
    import tarfile
    import zipfile

    from .freshvenv import UV

    needed = {"hatchling": "hatchling", "flit-core": "flit_core", "pdm-backend": "pdm.backend"}[backend]
    if UV is None or importlib.util.find_spec(needed.split(".")[0]) is None:
        pytest.skip(f"needs uv and {backend} installed")
    root = _plugin(tmp_path / "repo", backend)
    _init_plugin(root)
    out = tmp_path / "dist"
    import subprocess

    subprocess.run(
        [
            UV,
            "build",
            "-q",
            "--python",
            sys.executable,
            "--no-build-isolation",
            "--offline",
            "--out-dir",
            str(out),
            str(root),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        assert z.read("plug/compat.yaml") == (root / "compat.yaml").read_bytes()
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        assert "plug-1.0/compat.yaml" in t.getnames()


def test_table_update_of_verified_blocks_names_each_json_file_that_is_not_a_record_once(tmp_path):
    _with_strays(_records(tmp_path / "res"))
    block = "<!-- adapter-matrix:table view=verified results=res -->\n<!-- /adapter-matrix:table -->\n"
    for name in ("a.md", "b.md"):  # two documents reading one folder: each file said once
        (tmp_path / name).write_text(block)
    res = cli("table", "--matrix", str(MINIMAL), "--today", "2026-12-01", "--update", "a.md", "b.md", cwd=tmp_path)
    assert res.code == 0, res.err
    said = [line for line in res.err.splitlines() if "not a result record" in line]
    assert len(said) == len(_STRAYS) and all(str(tmp_path / "res") in line for line in said), res.err


def test_validate_results_names_each_json_file_that_is_not_a_record(project):  # noqa: F811
    for name, doc in _STRAYS.items():
        (project / "records" / name).write_text(json.dumps(doc))
    res = cli("validate", "--matrix", str(project / "compat.yaml"), "--results", str(project / "records"), cwd=project)
    _warned(res.err, str(project / "records"))
