"""`validate --pyproject`: requires-python, classifiers and the torch pin follow the matrix."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_matrix.matrix.loader import load
from adapter_matrix.upstream.pyproject import check_pyproject, expected_pythons

from .helpers import FIXTURES, REPO, cli

MINIMAL = "tests/fixtures/minimal.yaml"  # newest release 2.0.0: torch >=2.2,<2.4 on Python 3.9-3.12
GOOD = """\
[project]
name = "demo-adapter"
requires-python = ">=3.9"
classifiers = [
  "Programming Language :: Python :: 3",
  "Programming Language :: Python :: 3.9",
  "Programming Language :: Python :: 3.10",
  "Programming Language :: Python :: 3.11",
  "Programming Language :: Python :: 3.12",
]
dependencies = ["packaging"]

[project.optional-dependencies]
device = ["torch>=2.2,<2.4", "ninja"]
"""


def _check(tmp_path: Path, text: str, matrix: str = MINIMAL):
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return [str(d) for d in check_pyproject(load(REPO / matrix).matrix, str(path))], str(path)


def test_the_adapters_of_this_repository_agree_with_their_matrices(tmp_path):
    # the torch pin lives in the adapters' pyprojects (the tool has none): not a vacuous check
    for matrix, pyproject in (
        ("compat.yaml", "shims/pyproject.toml"),
        ("examples/toy-adapter/toy_adapter/compat.yaml", "examples/toy-adapter/pyproject.toml"),
    ):
        assert "torch>=" in (REPO / pyproject).read_text()
        res = cli("validate", "--matrix", matrix, "--pyproject", pyproject)
        assert res.code == 0, res.err
        assert "error" not in res.out + res.err
    text = (REPO / "shims" / "pyproject.toml").read_text().replace('"torch>=2.1,<2.16"', '"torch>=2.1,<2.15"')
    assert any("torch>=2.1,<2.15" in d for d in _check(tmp_path, text, "compat.yaml")[0])


def test_the_fixture_with_a_wrong_classifier_fails_with_its_exact_message():
    fixture = FIXTURES / "pyproject" / "wrong_classifier.toml"
    expected = fixture.read_text(encoding="utf-8").splitlines()[0].split("# expect: ", 1)[1]
    res = cli("validate", "--matrix", MINIMAL, "--pyproject", str(fixture.relative_to(REPO)))
    assert res.code == 2
    assert res.err.splitlines()[0] == f"{fixture.relative_to(REPO)}:{expected}"
    assert "1 error(s)" in res.out and "Traceback" not in res.err


def test_expected_pythons_are_the_claim_intersected_with_the_claimed_torch_lines():
    minimal = load(FIXTURES / "minimal.yaml").matrix
    assert [str(p) for p in expected_pythons(minimal, minimal.releases[-1])] == ["3.9", "3.10", "3.11", "3.12"]
    dims = load(FIXTURES / "tables" / "dimensions.yaml").matrix  # claims 3.13t too: no classifier for it
    assert [str(p) for p in expected_pythons(dims, dims.releases[-1])] == ["3.10", "3.11", "3.12", "3.13"]


def test_a_consistent_pyproject_passes(tmp_path):
    assert _check(tmp_path, GOOD)[0] == []


def test_a_missing_classifier_is_reported_at_the_key_with_the_line_to_add(tmp_path):
    found, path = _check(tmp_path, GOOD.replace('  "Programming Language :: Python :: 3.10",\n', ""))
    assert found == [
        f"{path}:4:1: classifiers lack Python 3.10, which release 2.0.0 in {MINIMAL} supports"
        ' \u2014 add "Programming Language :: Python :: 3.10"'
    ]


def test_only_what_the_project_declares_is_judged(tmp_path):
    """No Python classifiers, no requires-python, no [project]: nothing declared disagrees (issue 43:
    validate --pyproject failed on the project init had just adopted)."""
    head, tail = GOOD.split("classifiers = [")
    bare = head + tail.split("]\n", 1)[1]
    assert "Python :: 3.9" not in bare and "dependencies" in bare
    assert _check(tmp_path, bare)[0] == []
    found, path = _check(tmp_path, bare.replace('requires-python = ">=3.9"\n', ""))
    assert found == [f'{path}:2:1: warning: [project] has no requires-python \u2014 add requires-python = ">=3.9"']
    found, path = _check(tmp_path, '[build-system]\nrequires = ["setuptools"]\n')
    assert len(found) == 1 and found[0].startswith(f"{path}:1:1: warning: no [project] table")
    res = cli("validate", "--matrix", MINIMAL, "--pyproject", path)
    assert res.code == 0 and "1 warning(s)" in res.out
    # a classifier that is present must still agree, and one present asks for the others
    found, path = _check(
        tmp_path,
        bare.replace("dependencies =", 'classifiers = ["Programming Language :: Python :: 3.8"]\ndependencies ='),
    )
    assert [f.split(": ", 1)[1].split(",")[0] for f in found] == [
        "classifier 'Programming Language :: Python :: 3.8' claims Python 3.8",
        "classifiers lack Python 3.9",
    ]


@pytest.mark.parametrize(
    "spec,problem",
    [
        (">=3.8", "admits Python 3.8, which it does not support"),
        (">=3.9,<3.12", "refuses Python 3.12, which it supports"),
        (">=3.10", "refuses Python 3.9, which it supports"),
        (
            "==3.8.*",
            "refuses Python 3.9, 3.10, 3.11, 3.12, which it supports; admits Python 3.8, which it does not support",
        ),
    ],
)
def test_requires_python_must_admit_every_supported_python_and_not_the_one_below(tmp_path, spec, problem):
    found, path = _check(tmp_path, GOOD.replace('">=3.9"', f'"{spec}"'))
    assert found == [
        f"{path}:3:19: requires-python '{spec}' disagrees with release 2.0.0 in {MINIMAL}: {problem}"
        ' \u2014 write requires-python = ">=3.9"'
    ]


def test_requires_python_may_be_written_differently_and_without_a_cap(tmp_path):
    assert _check(tmp_path, GOOD.replace('">=3.9"', '">=3.9.0, !=3.9.1"'))[0] == []


def test_the_torch_pin_must_be_the_releases_specifier_markers_kept(tmp_path):
    text = GOOD.replace('"torch>=2.2,<2.4"', "'torch>=2.2; platform_system == \"Linux\"'")
    found, path = _check(tmp_path, text)
    assert found == [
        f"{path}:14:11: the device extra pins 'torch>=2.2; platform_system == \"Linux\"', but release 2.0.0 in {MINIMAL} "
        'supports torch >=2.2,<2.4 \u2014 write "torch>=2.2,<2.4; platform_system == \\"Linux\\""'
    ]
    assert _check(tmp_path, GOOD.replace('"torch>=2.2,<2.4"', '"torch<2.4,>=2.2"'))[0] == []  # same set, other order


def test_a_torch_pin_in_the_dependencies_is_checked_too(tmp_path):
    found, path = _check(
        tmp_path, GOOD.replace('dependencies = ["packaging"]', 'dependencies = ["packaging", "Torch==2.3.1"]')
    )
    assert found == [
        f"{path}:11:30: dependencies pins 'Torch==2.3.1', but release 2.0.0 in {MINIMAL} supports torch >=2.2,<2.4"
        ' \u2014 write "torch>=2.2,<2.4"'
    ]


def test_without_a_torch_requirement_there_is_no_pin_to_check(tmp_path):
    assert _check(tmp_path, GOOD.replace('"torch>=2.2,<2.4", ', ""))[0] == []


def test_dynamic_metadata_is_not_checked(tmp_path):
    text = GOOD.replace('requires-python = ">=3.9"\n', 'dynamic = ["classifiers", "requires-python"]\n')
    text = text.replace('  "Programming Language :: Python :: 3.9",\n', "")
    assert _check(tmp_path, text)[0] == []


def test_every_problem_is_reported_at_once(tmp_path):
    text = GOOD.replace('">=3.9"', '">=3.8"').replace('"torch>=2.2,<2.4"', '"torch"').replace("3.12", "3.13")
    found, _path = _check(tmp_path, text)
    assert len(found) == 4  # requires-python, an extra and a missing classifier, the pin


def test_unreadable_files_are_one_clear_message(tmp_path):
    found, path = _check(tmp_path, '[project\nname = "x"\n')
    assert found == [
        f"{path}:1:9: not valid TOML: Expected ']' at the end of a table declaration \u2014 fix the syntax"
    ]
    res = cli("validate", "--pyproject", str(tmp_path / "missing.toml"))
    assert res.code == 2 and "cannot read it: No such file or directory" in res.err and "Traceback" not in res.err


def test_a_matrix_without_releases_has_nothing_to_compare(tmp_path):
    found, _path = _check(tmp_path, GOOD, "tests/fixtures/tables/empty.yaml")
    assert len(found) == 1 and "warning: " in found[0] and "has no release" in found[0]
