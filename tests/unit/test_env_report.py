"""``adapter-matrix env``: a fixture environment as the Markdown block a bug report pastes.

The environment holds the vllm-ascend stack on torch_npu: torch and torch-npu from an index,
vllm-ascend installed from git (PEP 610's ``vcs_info`` with its commit), vllm from a local
checkout (an editable install of a git working tree), triton-ascend from an index. Every
layer and package must be named with its source, each dimension with where its value came
from; ``--json`` must be the declared document (read back key by key).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from adapter_matrix.check.elsewhere import locate
from adapter_matrix.check.env_report import EnvReport, package_source, read_report
from adapter_matrix.documents import keys_of

from .test_stack import V023, _environment

COMMIT = "0123456789abcdef0123456789abcdef01234567"
CHECKOUT_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"


def _fixture(tmp_path: Path) -> Path:
    env = _environment(tmp_path / "env", **V023)
    site = next(env.glob("lib/python*/site-packages"))
    vcs = {"url": "https://github.com/vllm-project/vllm-ascend.git"}
    vcs["vcs_info"] = {"vcs": "git", "commit_id": COMMIT, "requested_revision": "v0.23.0"}  # type: ignore[assignment]
    (site / "vllm_ascend-0.23.0.dist-info" / "direct_url.json").write_text(json.dumps(vcs))
    checkout = tmp_path / "src" / "vllm"
    (checkout / ".git" / "refs" / "heads").mkdir(parents=True)
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (checkout / ".git" / "refs" / "heads" / "main").write_text(CHECKOUT_COMMIT + "\n")
    editable = {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    (site / "vllm-0.23.0.dist-info" / "direct_url.json").write_text(json.dumps(editable))
    return env


def _env(env: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "env", "--env", str(env), "--no-binary", "--today", "2026-12-06"]
        + ["--set", "arch=aarch64", "--set", "cann=9.1.0", *args],
        capture_output=True,
        text=True,
        cwd=env.parent,
        timeout=120,
    )


def test_env_names_every_layer_and_package_with_its_source(tmp_path):
    env = _fixture(tmp_path)
    proc = _env(env)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ")}
    assert "torch-npu" in rows and "2.10.0.post4" in rows["torch-npu"] and "wheel from an index" in rows["torch-npu"]
    assert f"VCS https://github.com/vllm-project/vllm-ascend.git@v0.23.0, commit {COMMIT}" in rows["vllm-ascend"]
    assert "| layer |" in rows["vllm-ascend"]
    assert f"checkout {tmp_path / 'src' / 'vllm'}, commit {CHECKOUT_COMMIT}" in rows["vllm"]
    assert "| pinned |" in rows["triton-ascend"] and "wheel from an index" in rows["triton-ascend"]
    assert "| cann | 9.1.0 | --set |" in text and "| arch | aarch64 | --set |" in text
    assert "**Verdict:** supported" in text


def test_env_json_is_the_declared_document(tmp_path):
    env = _fixture(tmp_path)
    proc = _env(env, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert list(data) == [k.name for k in keys_of(EnvReport)]
    report = read_report(data)  # every key as declared, or DocumentError naming the first that is not
    (seen,) = report.adapters
    sources = {p.name: (p.role, p.source.kind, p.source.commit) for p in seen.packages}
    assert sources["vllm-ascend"] == ("layer", "vcs", COMMIT)
    assert sources["vllm"] == ("pinned", "checkout", CHECKOUT_COMMIT)
    assert sources["torch"][:2] == ("torch", "index")
    assert seen.dimensions["cann"].source == "--set" and seen.verdict == "supported"
    assert report.to_json() == data


def test_an_unsupported_environment_reports_the_verdict_and_the_fix(tmp_path):
    env = _environment(tmp_path / "env", **dict(V023, **{"torch-npu": "2.10.0.post2"}))
    proc = _env(env)
    assert proc.returncode == 0, proc.stderr
    assert "**Verdict:** unsupported: vllm-ascend 0.23.0 pins torch-npu ==2.10.0.post4" in proc.stdout
    assert "**Fix:** upgrade torch-npu from 2.10.0.post2 to 2.10.0.post4" in proc.stdout  # uv's words (issue 67)
    assert "```sh\npip install 'torch-npu==2.10.0.post4'\n```" in proc.stdout


def test_a_distribution_not_installed_has_no_source(tmp_path):
    (tmp_path / "lib/python3.11/site-packages").mkdir(parents=True)
    target = locate(str(tmp_path))
    assert package_source("no-such-distribution", target).kind == "absent"
