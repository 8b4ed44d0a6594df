"""The scheduled workflow's script (.github/workflows/torch-migrate.yml, step `migrate`), run as
GitHub runs it, in a clone of a copy of the toy adapter whose origin is a local bare repository,
with the GitHub CLI replaced by a stub that records every call and keeps the pull requests it
was asked to open, and nox by one that writes a failed cell's record. The index gains torch
2.16.0 (tests/fixtures/pypi/torch-2.16)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from .helpers import FIXTURES, REPO

WORKFLOW = REPO / ".github" / "workflows" / "torch-migrate.yml"

GH = """\
#!{python}
# a recording stand-in for the GitHub CLI: `gh pr list|create|edit`, `gh issue list|create|comment`
import json, os, sys
log, state_path = os.environ["GH_LOG"], os.environ["GH_STATE"]
args = sys.argv[1:]
with open(log, "a") as fh:
    fh.write(json.dumps(args) + "\\n")
state = json.load(open(state_path)) if os.path.exists(state_path) else {{"prs": [], "issues": []}}
def opt(name):
    return args[args.index(name) + 1] if name in args else None
what, verb = args[0], args[1]
if what == "pr" and verb == "list":  # as --jq '.[0].number // empty' prints it
    found = [p for p in state["prs"] if p["head"] == opt("--head") and p["state"] == "open"]
    print(found[0]["number"] if found else "")
elif what == "pr" and verb == "create":
    body = open(opt("--body-file")).read()
    number = len(state["prs"]) + 1
    state["prs"].append({{"number": number, "head": opt("--head"), "base": opt("--base"), "title": opt("--title"), "body": body, "state": "open"}})
    print(f"https://github.com/o/toy/pull/{{number}}")
elif what == "pr" and verb == "edit":
    pr = next(p for p in state["prs"] if p["number"] == int(args[2]))
    pr.update(title=opt("--title"), body=open(opt("--body-file")).read())
elif what == "issue" and verb == "list":
    print("")
elif what == "issue" and verb == "create":
    state["issues"].append({{"title": opt("--title"), "body": open(opt("--body-file")).read()}})
json.dump(state, open(state_path, "w"))
"""

NOX = """\
#!{python}
# a stand-in for nox: each `-s device(...)` session writes a failed record, and pytest's summary line
import json, os, re, sys
os.makedirs("results", exist_ok=True)
sessions = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "-s"]
record = json.load(open({record!r}))
for session in sessions:
    cell = re.match(r"device\\((.*)\\)", session).group(1)
    print("FAILED tests/test_device.py::test_the_device_registers - AttributeError: no _register_device_module")
    record.update(cell=cell, session=session, release="1.1.0", outcome="failed", torch_claimed="2.16.0",
                  torch="2.16.0", adapter="1.1.0", error="tests/test_device.py::test_the_device_registers failed",
                  tests={{"passed": 2, "failed": 1, "skipped": 0, "errors": 0}},
                  suites={{"tests": {{"passed": 2, "failed": 1, "skipped": 0, "errors": 0}}}})
    json.dump(record, open(os.path.join("results", cell + ".json"), "w"))
sys.exit(1)
"""


def _script() -> str:
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["migrate"]["steps"]
    return next(s["run"] for s in steps if s.get("id") == "migrate")


def _git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def setup(tmp_path: Path):
    origin = tmp_path / "origin.git"
    seed = tmp_path / "seed"
    shutil.copytree(REPO / "examples" / "toy-adapter", seed, symlinks=True)
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    _git(seed, "init", "-q", "-b", "main")
    _git(seed, "add", "-A")
    _git(seed, "commit", "-qm", "toy")
    _git(seed, "push", "-q", str(origin), "main")
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(origin), str(work))
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    record = REPO / "examples" / "toy-adapter" / "evidence" / "1.0.0" / "py3.11-torch2.13.json"
    for name, text in (("gh", GH), ("nox", NOX)):
        path = stubs / name
        path.write_text(textwrap.dedent(text).format(python=sys.executable, record=str(record)))
        path.chmod(0o755)
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    env = dict(
        os.environ,
        PATH=os.pathsep.join([str(stubs), str(Path(sys.executable).parent), os.environ["PATH"]]),
        GH_LOG=str(tmp_path / "gh.log"),
        GH_STATE=str(tmp_path / "gh.json"),
        GH_TOKEN="not-a-token",
        REPOSITORY="o/toy",
        BASE="main",
        MATRIX="compat.yaml",
        UPSTREAM=str(FIXTURES / "pypi" / "torch-2.16"),
        CANDIDATES="false",
        TEST_CHANNEL="https://download.pytorch.org/whl/test/torch/",
        EXTRA_ENV="{}",
        PUSH_URL=str(origin),
        RUNNER_TEMP=str(runner_temp),
    )
    script = tmp_path / "migrate.sh"
    script.write_text(_script())
    return work, origin, env, script, tmp_path


def _run(work: Path, env: dict, script: Path) -> None:
    # as GitHub runs a `run:` step with the bash shell
    out = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _calls(tmp_path: Path) -> list:
    return [json.loads(line) for line in (tmp_path / "gh.log").read_text().splitlines()]


def test_one_pull_request_per_torch_release_opened_then_updated_never_duplicated(setup):
    work, origin, env, script, tmp_path = setup
    _run(work, env, script)
    calls = _calls(tmp_path)
    assert [c[:2] for c in calls] == [["pr", "list"], ["pr", "create"]]
    state = json.loads((tmp_path / "gh.json").read_text())
    (pr,) = state["prs"]
    assert (pr["head"], pr["base"], pr["title"]) == (
        "adapter-matrix/torch-2.16",
        "main",
        "torch 2.16: migrate (adapter-matrix)",
    )
    # the body: migrate's section, the cells' table, the first failing tests
    assert pr["body"].startswith("## torch 2.16.0")
    assert "### The new line's cells" in pr["body"] and "py3.11-torch2.16-v1.1.0" in pr["body"]
    assert "First failing tests:" in pr["body"]
    assert "FAILED tests/test_device.py::test_the_device_registers" in pr["body"]
    # the branch holds migrate's change, not the cells' records
    files = _git(origin, "show", "--name-only", "--format=", "adapter-matrix/torch-2.16").split()
    assert "toy_adapter/compat.yaml" in files and "MIGRATION.md" in files
    assert "toy_adapter/eras/torch_2_16.py" in files and not any(f.startswith("results") for f in files)
    first = _git(origin, "rev-parse", "adapter-matrix/torch-2.16")

    _run(work, env, script)  # the next day: main still lacks torch 2.16
    calls = _calls(tmp_path)
    assert [c[:2] for c in calls[2:]] == [["pr", "list"], ["pr", "edit"]]
    assert calls[3][2] == "1" and "--title" in calls[3]
    state = json.loads((tmp_path / "gh.json").read_text())
    assert len(state["prs"]) == 1 and state["issues"] == []
    assert _git(origin, "branch", "--list").split() == ["adapter-matrix/torch-2.16", "*", "main"] or set(
        _git(origin, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()
    ) == {"main", "adapter-matrix/torch-2.16"}
    # the branch was rebuilt from main and force-pushed: one commit on top of main
    assert _git(origin, "rev-list", "--count", "main..adapter-matrix/torch-2.16").strip() == "1"
    assert first  # the first run's commit existed; the second replaced it


def test_nothing_to_migrate_touches_nothing(setup):
    work, origin, env, script, tmp_path = setup
    env = dict(env, UPSTREAM=str(FIXTURES / "pypi" / "2026-12-05"))  # no torch newer than the matrix's
    _run(work, env, script)
    assert not (tmp_path / "gh.log").exists()
    assert set(_git(origin, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()) == {"main"}


def test_an_issue_when_nothing_could_be_built(setup):
    work, _origin, env, script, tmp_path = setup
    # a matrix migrate refuses (a release it cannot copy: not a `- version:` mapping)
    matrix = work / "toy_adapter" / "compat.yaml"
    block = matrix.read_text().split("releases:\n")[1].split("\n\n")[0]
    text = matrix.read_text().replace(
        block,
        '  - {version: 1.0.0, date: 2026-11-30, torch: ">=2.10,<2.16", python: ">=3.10,<3.14", status: supported, '
        'dimensions: {driver: ">=2.0"}}',
    )
    matrix.write_text(text)
    _git(work, "commit", "-qam", "flow")
    _git(work, "push", "-q", "origin", "HEAD:main")
    _run(work, env, script)
    state = json.loads((tmp_path / "gh.json").read_text())
    assert state["prs"] == []
    (issue,) = state["issues"]
    assert issue["title"] == "torch 2.16: migrate (adapter-matrix)"
    assert "migrate torch 2.16.0` failed" in issue["body"]
