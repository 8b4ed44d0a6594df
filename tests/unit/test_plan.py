"""`adapter-matrix plan`: strategies, ids, and GitHub rows that mirror the JSON plan."""

from __future__ import annotations

import json

from adapter_matrix.ci.plan import plan
from adapter_matrix.ci.release import past_releases  # the rows this tree can test
from adapter_matrix.matrix.loader import load

from .helpers import REPO, cli


def _rows(*args):
    res = cli("plan", *args)
    assert res.code == 0, res.err
    return res.out


def test_github_rows_correspond_one_to_one_with_json():
    for strategy in ("full", "edges", "latest", "smoke"):
        rows = json.loads(_rows("-s", strategy, "-f", "json"))
        include = json.loads(_rows("-s", strategy, "-f", "github"))["include"]
        assert [r["session"] for r in rows] == [i["session"] for i in include]
        assert [(r["python"], r["torch"]) for r in rows] == [(i["python"], i["torch"]) for i in include]


def test_full_plan_is_every_python_torch_cell_once():
    matrix = load(REPO / "compat.yaml").matrix
    rows = plan(matrix, "full", skip=past_releases(matrix))
    ids = [r.session for r in rows]
    assert len(ids) == len(set(ids))
    expected = sum(
        len([p for p in line.python if not p.free_threaded and p.version.minor < 14]) for line in matrix.torch
    )
    assert len(rows) == expected


def test_edges_are_oldest_and_newest_python_per_torch_line():
    matrix = load(REPO / "compat.yaml").matrix
    edges = {(str(r.cell.line.minor), str(r.cell.python)) for r in plan(matrix, "edges", skip=past_releases(matrix))}
    assert ("2.1", "3.8") in edges and ("2.1", "3.11") in edges and ("2.1", "3.9") not in edges
    assert ("2.15", "3.11") in edges and ("2.15", "3.13") in edges
    assert len(edges) == 30


def test_smoke_is_oldest_cell_plus_ci_smoke_cells():
    matrix = load(REPO / "compat.yaml").matrix
    assert [r.session for r in plan(matrix, "smoke", skip=past_releases(matrix))] == [
        "device(py3.8-torch2.1)",
        "device(py3.11-torch2.13)",
    ]


def test_rows_carry_tags_and_install_sources():
    rows = json.loads(_rows("-s", "smoke", "-f", "json"))
    local = next(r for r in rows if r["torch_minor"] == "2.13")
    assert {"torch2.13", "py3.11", "smoke", "full"} <= set(local["tags"])
    assert [s["source"] for s in local["install"]] == ["local", "pypi"]
    assert local["companions"] == {"torchvision": "0.28.0"}  # ci: companions:, the release for torch 2.13
    assert local["install"][0]["variant"] == "cpu"


def test_a_release_frozen_on_other_code_is_not_planned_and_ids_stay():
    """This repository's older releases are frozen and main's code has moved on: this tree
    can test only the newest release, so the plan holds its rows alone, with the ids the
    sessions had before a second release existed."""
    matrix = load(REPO / "compat.yaml").matrix
    versions = {str(r.version) for r in matrix.releases}
    newest = str(max(r.version for r in matrix.releases))
    assert len(versions) > 1
    assert past_releases(matrix) == versions - {newest}
    everything = plan(matrix, "full", skip=())
    assert {str(r.cell.release.version) for r in everything} == versions
    assert all(r.id.endswith(f"-v{r.cell.release.version}") for r in everything)  # several releases: ids say which
    tree = plan(matrix, "full", skip=past_releases(matrix))
    assert {str(r.cell.release.version) for r in tree} == {newest}
    assert [r.id for r in tree] == [
        r.id[: -len(f"-v{newest}")] for r in everything if str(r.cell.release.version) == newest
    ]
    assert "device(py3.11-torch2.13)" in {r.session for r in tree}
