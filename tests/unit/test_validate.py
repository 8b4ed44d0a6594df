"""`adapter-matrix validate`: every error class, exact positions, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load, load_text
from adapter_matrix.matrix.schema import json_schema

from .helpers import FIXTURES, REPO, cli

INVALID = sorted((FIXTURES / "invalid").glob("*.yaml"))


def test_repository_matrix_is_valid():
    res = cli("validate")
    assert res.code == 0, res.err
    assert "compat.yaml: valid" in res.out


def test_minimal_fixture_is_valid():
    assert cli("validate", "--matrix", "tests/fixtures/minimal.yaml").code == 0


@pytest.mark.parametrize("fixture", INVALID, ids=[p.stem for p in INVALID])
def test_each_error_class_reports_its_exact_position_and_message(fixture: Path):
    expected = fixture.read_text().splitlines()[0].split("# expect: ", 1)[1]
    expected = expected.replace("{shims}", str(REPO / "shims" / "src" / "shims"))
    rel = fixture.relative_to(REPO)
    res = cli("validate", "--matrix", str(rel))
    assert res.code == 2
    assert f"{rel}:{expected}" in res.err.splitlines(), res.err
    assert "Traceback" not in res.err + res.out


def test_all_errors_are_reported_at_once(tmp_path):
    text = (FIXTURES / "minimal.yaml").read_text()
    text = text.replace("status: deprecated", "status: suported").replace("version: 2.0.0", "version: two")
    text = text.replace('torch: ">=2.3,<2.4"', 'torch: ">=2.2,<2.4"')
    with pytest.raises(MatrixError) as info:
        load_text(text, "m.yaml")
    messages = [d.message for d in info.value.diagnostics]
    assert any("unknown status 'suported'" in m for m in messages)
    assert any("bad release version 'two'" in m for m in messages)


def test_unquoted_versions_are_read_as_written_not_as_floats():
    text = (
        (FIXTURES / "minimal.yaml").read_text().replace('"2.1":', "2.10:").replace("[2.1.0, 2.1.1, 2.1.2]", "[2.10.0]")
    )
    text = text.replace('torch: ">=2.1,<2.3"\n    python: ">=3.8"', 'torch: ">=2.2,<2.3"\n    python: ">=3.8"')
    result = load_text(text, "m.yaml")
    assert [str(t.minor) for t in result.matrix.torch] == ["2.2", "2.3", "2.10"]


@pytest.mark.parametrize(
    "text",
    ["", "[]", "- a\n- b", "schema-version: 2", "a: [b", "\tx: 1", "x: &a [*a]", "? [a]\n: b", "schema-version: 1\n"],
)
def test_garbage_is_a_clean_error(text):
    with pytest.raises(MatrixError) as info:
        load_text(text, "g.yaml")
    assert info.value.diagnostics
    assert all(str(d).startswith("g.yaml:") for d in info.value.diagnostics)


def test_missing_file_is_exit_2_without_traceback(tmp_path):
    res = cli("validate", "--matrix", str(tmp_path / "nope.yaml"))
    assert res.code == 2
    assert "cannot read the matrix" in res.err
    assert "Traceback" not in res.err


def test_warnings_do_not_fail(tmp_path):
    text = (FIXTURES / "minimal.yaml").read_text().replace('torch: ">=2.2,<2.4"', 'torch: ">=2.2"')
    path = tmp_path / "open.yaml"
    path.write_text(text)
    res = cli("validate", "--matrix", str(path))
    assert res.code == 0
    assert "warning: release 2.0.0 claims every future torch" in res.err


def test_schema_command_matches_the_committed_schema_file():
    res = cli("schema")
    assert res.code == 0
    assert json.loads(res.out) == json.loads((REPO / "docs" / "compat.schema.json").read_text())
    assert (REPO / "compat.yaml").read_text().startswith("# yaml-language-server: $schema=docs/compat.schema.json")


def _as_editors_see(path):
    yaml = pytest.importorskip("yaml")
    # JSON has no dates: editors see YAML dates as strings, so compare like they do
    return json.loads(json.dumps(yaml.safe_load(path.read_text()), default=str))


def test_json_schema_accepts_the_repository_matrix_and_rejects_a_typo():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json_schema()
    data = _as_editors_see(REPO / "compat.yaml")
    jsonschema.validate(data, schema)
    data["relases"] = data.pop("releases")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


@pytest.mark.parametrize("name", ["torch_npu", "ipex", "minimal"])
def test_json_schema_accepts_the_real_matrices(name):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json_schema()
    data = _as_editors_see(FIXTURES / "matrices" / f"{name}.yaml")
    jsonschema.validate(data, schema)
    if name == "torch_npu":  # a package key misspelled inside a release line
        data["releases"][0]["packages"][0]["pyhton"] = data["releases"][0]["packages"][0].pop("python")
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(data, schema)


def test_json_schema_keeps_version_1_requirements():
    jsonschema = pytest.importorskip("jsonschema")
    data = _as_editors_see(FIXTURES / "minimal.yaml")
    del data["shims"]
    with pytest.raises(jsonschema.ValidationError):  # version 1 requires shims
        jsonschema.validate(data, json_schema())
    data["schema-version"] = 2
    jsonschema.validate(data, json_schema())


def test_loader_model_is_immutable():
    matrix = load(REPO / "compat.yaml").matrix
    with pytest.raises(AttributeError):
        matrix.releases = ()  # type: ignore[misc]


def test_a_folder_named_like_the_shims_package_is_not_taken_for_it(tmp_path, monkeypatch):
    """A project folder named like the package (this repository's shims/, no __init__.py)
    on the working directory is a namespace portion, not the package: validate warns that
    it cannot check the shim modules instead of calling them missing."""
    from adapter_matrix.matrix.loader import load

    (tmp_path / "shims").mkdir()  # a project folder: pyproject.toml, src/ ... but no package here
    (tmp_path / "shims" / "pyproject.toml").write_text("")
    text = (REPO / "compat.yaml").read_text()
    (tmp_path / "compat.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    importlib.invalidate_caches()
    monkeypatch.delitem(__import__("sys").modules, "shims", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", _namespace_only(importlib.util.find_spec, tmp_path))
    result = load(tmp_path / "compat.yaml")  # raised MatrixError ("shim module ... does not exist") before
    assert any("cannot check shim module shims.torch_2_1" in d.message for d in result.warnings)


def _namespace_only(find_spec, root):
    """find_spec as if the installed shims package were absent: only the folder under ``root``."""
    import importlib.machinery

    def fake(name, *args, **kwargs):
        if name == "shims":
            return importlib.machinery.PathFinder.find_spec(name, [str(root)])
        return find_spec(name, *args, **kwargs)

    return fake


def test_errors_of_every_phase_come_in_one_run_in_line_order(tmp_path):
    """Issue 67: an unknown dimension (found by the model's checks) came only after the field
    errors were fixed. Now a status typo, an unknown key and an unknown dimension: one run, by line."""
    text = (REPO / "compat.yaml").read_text(encoding="utf-8")
    text = text.replace('    status: experimental\n    reason: "new;', '    status: experimentl\n    reason: "new;', 1)
    text = text.replace('python: "==3.11", status: supported}', 'python: "==3.11", status: supported, colour: red}', 1)
    head, tail = text.split("  - version: 0.2.1\n", 1)
    text = head + "  - version: 0.2.1\n    dimensions: {cann: 9.1.0}\n" + tail
    path = tmp_path / "compat.yaml"
    path.write_text(text, encoding="utf-8")
    res = cli("validate", str(path))
    assert res.code == 2
    found = [line for line in res.out.splitlines() + res.err.splitlines() if line.startswith(str(path))]
    assert [("experimentl" in f, "colour" in f, "unknown dimension 'cann'" in f) for f in found] == [
        (True, False, False),
        (False, True, False),
        (False, False, True),
    ], found
    places = [tuple(int(n) for n in f[len(str(path)) + 1 :].split(":")[:2]) for f in found]
    assert places == sorted(places)


def test_a_dimension_with_values_but_no_runner_label_is_a_warning():
    """Issue 67: x86_64 and aarch64 rows would run on the same runners."""
    res = cli("validate", "--matrix", str(FIXTURES / "matrices" / "torch_npu.yaml"))
    assert res.code == 0
    (line,) = [line for line in res.err.splitlines() if "runner label" in line]
    assert "warning: dimension arch has values in the releases (aarch64, x86_64) but no runner label" in line
    arch = (FIXTURES / "matrices" / "torch_npu.yaml").read_text().splitlines().index("  arch:") + 1
    assert f"torch_npu.yaml:{arch}:3:" in line
