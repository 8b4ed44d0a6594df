"""`adapter-matrix plan`: strategies, ids, GitHub rows that mirror the JSON plan, and the
pairwise strategy's covering guarantee (on the torch_npu fixture, the imported torch-npu
history and random matrices)."""

from __future__ import annotations

import datetime as _dt
import json
import random
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter_matrix.ci.chunks import CHUNK_JOBS, MATRIX_LIMIT, OUTPUT_LIMIT, ChunkError, split
from adapter_matrix.ci.covering import cover
from adapter_matrix.ci.plan import STRATEGIES, covered_values, plan
from adapter_matrix.ci.release import past_releases  # the rows this tree can test
from adapter_matrix.matrix.loader import load, load_text

from .helpers import FIXTURES, REPO, cli, github_chunks, github_outputs, github_rows


def _rows(*args):
    res = cli("plan", *args)
    assert res.code == 0, res.err
    return res.out


def test_github_rows_correspond_one_to_one_with_json():
    for strategy in STRATEGIES:
        rows = json.loads(_rows("-s", strategy, "-f", "json"))
        include = github_rows(_rows("-s", strategy, "-f", "github"))
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


# -- pairwise: every release, every pair of values found together in a full row -------------

RECORDED_INDEX = FIXTURES / "pypi" / "2026-12-05"  # PyPI's torch-npu history (test_from_index.py)
NPU_FIXTURE = FIXTURES / "matrices" / "torch_npu.yaml"
TODAY = _dt.date(2026, 12, 5)


def _combos(row, strength):
    values = sorted(covered_values(row.cell).items())
    return set(combinations(values, min(strength, len(values))))


def _assert_covers(matrix, strength=2):
    """The pairwise plan's rows are rows of the full plan; together they hold every release and
    every combination of ``strength`` values some full row holds; each holds one no other does."""
    full = plan(matrix, "full", today=TODAY)
    chosen = plan(matrix, "pairwise", today=TODAY, cover=strength)
    assert {r.id for r in chosen} <= {r.id for r in full}
    assert {r.cell.release.version for r in chosen} == {r.cell.release.version for r in full}
    wanted = set().union(*(_combos(r, strength) for r in full)) if full else set()
    held = set().union(*(_combos(r, strength) for r in chosen)) if chosen else set()
    assert wanted == held
    owned = [_combos(r, strength) | {r.cell.release.version} for r in chosen]
    for i, mine in enumerate(owned):
        others = set().union(*(o for j, o in enumerate(owned) if j != i)) if len(owned) > 1 else set()
        assert mine - others, f"{chosen[i].id} adds nothing the other rows lack"
    assert all("pairwise" in r.tiers for r in chosen) or strength != 2  # the tag names the pairs
    return full, chosen


@pytest.fixture(scope="module")
def npu_history(tmp_path_factory):
    path = tmp_path_factory.mktemp("history") / "compat.yaml"
    res = cli("init", "--from-index", "torch-npu", "--upstream", str(RECORDED_INDEX), "-o", str(path))
    assert res.code == 0, res.err
    return load(str(path)).matrix


def test_pairwise_covers_the_torch_npu_fixture_in_fewer_rows():
    matrix = load(str(NPU_FIXTURE)).matrix
    full, chosen = _assert_covers(matrix)
    assert (len(full), len(chosen)) == (286, 60)  # the counts docs/testing.md gives (each build on 2 arches)
    full, triples = _assert_covers(matrix, 3)
    assert len(chosen) < len(triples) <= len(full)


def test_pairwise_covers_the_imported_torch_npu_history_in_fewer_rows(npu_history):
    full, chosen = _assert_covers(npu_history)
    assert (len(full), len(chosen)) == (398, 70)
    _full, triples = _assert_covers(npu_history, 3)
    assert len(triples) == 109


def test_with_two_dimensions_pairwise_is_every_cell():
    """This repository's matrix varies the torch line and Python only: each cell is a pair."""
    matrix = load(REPO / "compat.yaml").matrix
    skip = past_releases(matrix)
    assert [r.id for r in plan(matrix, "pairwise", skip=skip)] == [r.id for r in plan(matrix, "full", skip=skip)]


def _random_matrix_text(rnd: random.Random) -> str:
    """A matrix of 2-4 torch lines, a runner-provided CANN and an architecture, and 1-4
    releases, each constraining a few of them."""
    pythons = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
    lines = []
    first = rnd.randint(1, 6)
    last = first + rnd.randint(1, 3)
    for minor in range(first, last + 1):
        low = rnd.randint(0, 3)
        chosen = pythons[low : low + rnd.randint(1, 3)]
        lines.append(
            f'  "2.{minor}": {{released: 2024-01-0{minor % 9 + 1}, patches: [2.{minor}.0], python: {json.dumps(chosen)}}}'
        )
    cann = ["8.0.RC1", "8.0.0", "8.1.RC1", "9.0.0"]
    releases = []
    for i in range(rnd.randint(1, 4)):
        lo = rnd.randint(first, last)
        dims = {"cann": rnd.sample(cann, rnd.randint(1, 3))}
        if rnd.random() < 0.6:
            dims["arch"] = rnd.sample(["x86_64", "aarch64"], rnd.randint(1, 2))
        dims_text = ", ".join(f"{k}: [{', '.join(v)}]" for k, v in dims.items())
        releases.append(
            f'  - {{version: 1.{i}.0, torch: ">=2.{lo},<2.{rnd.randint(lo, last) + 1}", python: ">=3.8", '
            f"status: supported, dimensions: {{{dims_text}}}}}"
        )
    return "\n".join(
        [
            "schema-version: 2",
            "adapter: {distribution: demo, device: npu}",
            "torch:",
            *lines,
            "dimensions:",
            f"  cann: {{values: [{', '.join(cann)}], runner: 'cann-{{value}}'}}",
            "  arch: {kind: enum, values: [x86_64, aarch64], runner: '{value}'}",
            "releases:",
            *releases,
        ]
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), strength=st.sampled_from([2, 3]))
def test_pairwise_covers_random_matrices(seed, strength):
    """On any matrix: pairwise rows are full rows that hold every release and combination, each
    needed; fewer than full exactly when some full row holds nothing that no other row holds."""
    text = _random_matrix_text(random.Random(seed))
    matrix = load_text(text, "random.yaml").matrix
    full, chosen = _assert_covers(matrix, strength)
    owned = [_combos(r, strength) | {r.cell.release.version} for r in full]
    redundant = any(not mine - set().union(*(o for j, o in enumerate(owned) if j != i)) for i, mine in enumerate(owned))
    assert (len(chosen) < len(full)) == redundant, text


def test_cover_is_the_pairwise_strength_only():
    assert cli("plan", "-m", str(NPU_FIXTURE), "--cover", "3", "-s", "edges").code == 2
    res = cli("plan", "-m", str(NPU_FIXTURE), "--cover", "4")
    assert res.code == 2 and "--cover 4: choose from 1, 2, 3" in res.err
    three = json.loads(_rows("-m", str(NPU_FIXTURE), "--cover", "3", "--today", "2026-12-05", "-f", "json"))
    assert len(three) == 159


def test_the_covering_guarantee_on_a_crossed_block():
    """Three dimensions of two values each, all eight cells of one release: every pair in
    five rows (the greedy bound), and never in all eight."""
    from itertools import product

    cells = [({"a": a, "b": b, "c": c}, ["r"]) for a, b, c in product((0, 1), repeat=3)]
    picked = cover(cells, 2)
    assert 4 <= len(picked) <= 5
    pairs = {p for values, _ in cells for p in combinations(sorted(values.items()), 2)}
    assert pairs == {p for i in picked for p in combinations(sorted(cells[i][0].items()), 2)}


# -- past 256 jobs: the plan in chunks, one per cell job of the reusable workflow ------------


def test_github_outputs_hold_the_plan_in_chunks_and_say_what_it_needs():
    res = cli("plan", "-m", str(NPU_FIXTURE), "--today", "2026-12-05", "-f", "github")
    assert res.code == 0, res.err
    outputs = github_outputs(res.out)
    assert (outputs["chunks"], outputs["jobs"]) == ("2", "286")  # each build on aarch64 and x86_64
    assert set(outputs) == {"chunks", "jobs", "parallel"} | {f"chunk{n}" for n in range(1, CHUNK_JOBS + 1)}
    assert json.loads(outputs["parallel"]) == [143, 143] + [1] * (CHUNK_JOBS - 2)  # no cap: each chunk's own size
    assert "286 cell job(s) in 2 chunk(s) of at most 256" in res.err


def test_a_plan_past_256_rows_is_split_evenly_and_max_parallel_is_shared():
    rows = [{"id": f"r{i}"} for i in range(700)]
    chunks = split(rows, max_parallel=20)
    assert [len(m) for m in chunks.matrices] == [234, 233, 233]
    assert [row for m in chunks.matrices for row in m] == rows  # in order, each once
    assert chunks.parallel[:3] == (7, 7, 6) and sum(chunks.parallel[:3]) == 20
    assert len(chunks.parallel) == CHUNK_JOBS


def test_a_plan_the_workflow_cannot_run_is_refused_before_any_job():
    with pytest.raises(ChunkError, match=r"2049 rows need 9 matrices of at most 256 jobs, and the workflow runs 8"):
        split([{"id": str(i)} for i in range(CHUNK_JOBS * MATRIX_LIMIT + 1)])
    assert len(split([{"id": str(i)} for i in range(CHUNK_JOBS * MATRIX_LIMIT)]).matrices) == CHUNK_JOBS
    with pytest.raises(ChunkError, match="max-parallel 2 is below the 3 chunks"):
        split([{"id": str(i)} for i in range(600)], max_parallel=2)
    with pytest.raises(ChunkError, match="bytes of job outputs"):
        split([{"id": "x" * 1000} for i in range(1100)])


def test_plan_refuses_a_cap_below_its_chunks_with_the_counts(npu_history, tmp_path):
    path = npu_history.path
    res = cli("plan", "-m", path, "-f", "github", "--max-parallel", "1")
    assert res.code == 2
    assert "max-parallel 1 is below the 2 chunks of 398 rows" in res.err


RUNNER_MATRIX = """\
schema-version: 2
adapter: {distribution: demo, device: npu}
torch:
  "2.4": {released: 2024-07-24, patches: [2.4.1], python: ["3.10", "3.11"]}
dimensions:
  cann:
    values: [8.0.0, 9.0.0]
    runner: {8.0.0: cann-8}     # no label for 9.0.0
  arch: {kind: enum, values: [x86_64, aarch64], runner: "{value}"}
releases:
  - {version: 1.0.0, torch: ">=2.4,<2.5", python: ">=3.10", status: supported, dimensions: {cann: [8.0.0, 9.0.0], arch: x86_64}}
"""


def test_a_row_whose_runner_value_has_no_label_fails_plan_naming_both(tmp_path):
    path = tmp_path / "compat.yaml"
    path.write_text(RUNNER_MATRIX)
    res = cli("plan", "-m", str(path), "-f", "github", "--today", "2026-12-05")
    assert res.code == 2 and res.out == ""
    assert (
        'row py3.10-torch2.4-cann9.0.0-archx86_64 needs a runner with cann 9.0.0, arch x86_64 and no runner label names "cann9.0.0"'
        in res.err
    )
    assert cli("plan", "-m", str(path), "--today", "2026-12-05").code == 0  # the text plan still lists it
    given = json.dumps({"cann9.0.0": ["self-hosted", "cann-9"]})
    res = cli("plan", "-m", str(path), "-f", "github", "--today", "2026-12-05", "--runners", given)
    assert res.code == 0, res.err
    on = {row["id"]: row["runs-on"] for row in github_rows(res.out)}
    assert on["py3.10-torch2.4-cann9.0.0-archx86_64"] == ["self-hosted", "cann-9", "x86_64"]  # each value's labels
    assert on["py3.11-torch2.4-cann8.0.0-archx86_64"] == ["self-hosted", "cann-8", "x86_64"]


# -- scale: 15 torch lines x 5 Pythons x 10 CANN x 2 architectures ---------------------------

SCALE = FIXTURES / "matrices" / "scale_1500.yaml"  # benchmarks/plan_scale.py times plan on it


def test_a_1500_cell_matrix_runs_in_valid_chunks_each_cell_once():
    """The workflow's matrices for 1,500 cells: 6 chunks of at most 256 jobs, every cell in
    exactly one, each row holding every key the cell jobs read and a runner for its CANN and
    architecture; all of it within the plan job's outputs."""
    import re
    import time

    matrix = load(str(SCALE)).matrix
    start = time.perf_counter()
    rows = plan(matrix, "full", today=TODAY)
    assert time.perf_counter() - start < 2.0  # the bound, with room: about 0.1 s here
    assert len(rows) == 15 * 5 * 10 * 2
    res = cli("plan", "-m", str(SCALE), "-f", "github", "--today", "2026-12-05", "--max-parallel", "60")
    assert res.code == 0, res.err
    assert "1500 cell job(s) in 6 chunk(s) of at most 256 (250, 250, 250, 250, 250, 250)" in res.err
    chunks = github_chunks(res.out)
    assert len(chunks) == 6 and all(0 < len(chunk) <= MATRIX_LIMIT for chunk in chunks)
    ids = [row["id"] for chunk in chunks for row in chunk]
    assert sorted(ids) == sorted(r.id for r in rows) and len(set(ids)) == len(ids) == 1500
    workflow = (REPO / ".github" / "workflows" / "adapter-matrix.yml").read_text()
    expressions = " ".join(re.findall(r"\$\{\{(.*?)\}\}", workflow))
    read = set(re.findall(r"\bmatrix\.([a-z-]+)", expressions))  # what the cell jobs read of a row
    assert read == {"session", "python", "id", "runs-on"}
    for chunk in chunks:
        for row in chunk:
            assert set(row) == read | {"torch"} and all(isinstance(row[k], str) and row[k] for k in read - {"runs-on"})
            cann, arch = row["id"].split("-")[2:4]
            assert row["runs-on"] == [
                "self-hosted",
                f"cann-{cann[4:]}",
                {"x86_64": "X64", "aarch64": "ARM64"}[arch[4:]],
            ]
    outputs = github_outputs(res.out)
    assert json.loads(outputs["parallel"]) == [10] * 6 + [1, 1]
    assert len(res.out.encode()) < OUTPUT_LIMIT
    pairwise = plan(matrix, "pairwise", today=TODAY)
    assert len(pairwise) == 150  # torch line x CANN, the largest product of two dimensions: the fewest possible


def test_the_imported_torch_npu_history_runs_in_chunks_holding_every_row_once(npu_history):
    """The issue's acceptance: `plan --strategy full --format github` on torch-npu's PyPI history
    (recorded index) gives chunks of at most 256 rows that together hold all 398 rows once."""
    res = cli("plan", "-m", npu_history.path, "--strategy", "full", "--format", "github", "--today", "2026-12-05")
    assert res.code == 0, res.err
    chunks = github_chunks(res.out)
    assert [len(chunk) for chunk in chunks] == [199, 199]
    ids = [row["id"] for chunk in chunks for row in chunk]
    full = plan(npu_history, "full", today=TODAY)
    assert len(full) == 398 and ids == [r.id for r in full]  # in plan order, each once
    assert [row["session"] for chunk in chunks for row in chunk] == [r.session for r in full]
    assert "398 cell job(s) in 2 chunk(s) of at most 256 (199, 199)" in res.err


def test_a_rows_runner_labels_are_computed_once_for_json_and_github(tmp_path):
    """plan's use case, without the command line: a PlanRequest in, a typed PlanResult out. The
    JSON rows' runs_on and the GitHub rows' runs-on are one computation (ci.plan.row_labels),
    so they agree wherever no --runners overrides them (issue 70)."""
    import datetime as _dt

    from adapter_matrix.ci.commands import PlanRequest, render_plan, run_plan
    from adapter_matrix.errors import ChoiceError

    path = tmp_path / "compat.yaml"
    path.write_text(RUNNER_MATRIX)
    matrix = load(path).matrix
    today = _dt.date(2026, 12, 5)
    given = {"cann9.0.0": ["self-hosted", "cann-9"]}
    done = run_plan(PlanRequest(matrix, fmt="github", today=today, runners=given))
    assert done.chunks is not None and done.strategy == "full"
    github = {row["id"]: row.get("runs-on") for chunk in done.chunks.matrices for row in chunk}
    for row in done.rows:
        if not any(f"{n}{v}" in given for n, v in row.requires):
            assert github[str(row.id)] == list(row.runs_on), row.id
    assert github["py3.10-torch2.4-cann9.0.0-archx86_64"] == ["self-hosted", "cann-9", "x86_64"]
    assert json.loads(render_plan(run_plan(PlanRequest(matrix, fmt="json", today=today))).out[0])[0]["runs_on"]
    with pytest.raises(ChoiceError) as refused:
        run_plan(PlanRequest(matrix, strategy="edges", cover=3))
    assert refused.value.subject == "cover"  # the command line words it: --cover 3 is the strength ...


def test_cover_lists_in_help_the_values_its_error_accepts():
    """Issue 67: help said 2 or 3, the error "choose from 1, 2, 3": one set of values."""
    from adapter_matrix.ci.covering import STRENGTHS

    said = " ".join(cli("plan", "--help").out.split())
    assert "|".join(map(str, STRENGTHS)) in said and "--cover 4: choose from 1, 2, 3" in cli("plan", "--cover", "4").err


def test_plan_ends_with_what_its_rows_cover_on_stderr():
    res = cli("plan", "-m", str(NPU_FIXTURE), "-s", "pairwise", "--today", "2026-12-01")
    rows = res.out.splitlines()
    full = cli("plan", "-m", str(NPU_FIXTURE), "--today", "2026-12-01").out.splitlines()
    assert res.err.strip() == f"{len(rows)} cells of {len(full)} cover every pair of Python, torch, cann, arch"
    assert cli("plan", "-m", str(NPU_FIXTURE), "-f", "json", "--today", "2026-12-01").err == ""
