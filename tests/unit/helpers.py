"""Helpers for driving the CLI in-process and in subprocesses."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

from typer.testing import CliRunner

from adapter_matrix.cli import app

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


@dataclass
class Result:
    code: int
    out: str
    err: str


def cli(*args: str, cwd: Optional[Path] = None) -> Result:
    """Run ``adapter-matrix ARGS`` in-process with stdout and stderr kept apart."""
    import os

    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2 mixes the streams by default
    except TypeError:
        runner = CliRunner()  # click >= 8.2 always keeps them apart
    old = os.getcwd()
    os.chdir(cwd or REPO)
    try:
        res = runner.invoke(app, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return Result(res.exit_code, res.stdout, res.stderr)


def github_outputs(out: str) -> Dict[str, str]:
    """``plan --format github``'s ``$GITHUB_OUTPUT`` lines as a dictionary."""
    return dict(line.split("=", 1) for line in out.splitlines() if line)


def github_chunks(out: str) -> list:
    """The matrices of ``plan --format github``, in order: one ``include`` list per chunk."""
    import json

    outputs = github_outputs(out)
    count = int(outputs["chunks"])
    jobs = [k for k in outputs if k.startswith("chunk") and k != "chunks"]
    assert all(outputs[f"chunk{n}"] == "" for n in range(count + 1, len(jobs) + 1))  # the cell jobs that skip
    return [json.loads(outputs[f"chunk{n}"])["include"] for n in range(1, count + 1)]


def github_rows(out: str) -> list:
    """Every row of ``plan --format github``, the chunks one after another."""
    return [row for chunk in github_chunks(out) for row in chunk]


def quick_check(*args: str) -> Tuple[int, str, str]:
    """``adapter-matrix check ARGS`` through the typer-free path the command takes, in-process,
    in the repository: (exit code, stdout, stderr)."""
    import contextlib
    import io
    import os

    from adapter_matrix.cli import quick

    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = quick.main(["check", *args])
            except SystemExit as exc:
                code = exc.code
    finally:
        os.chdir(cwd)
    return int(code or 0), out.getvalue(), err.getvalue()


def run(
    args: Sequence[str], cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None
) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=str(cwd or REPO), env=env, capture_output=True, text=True, timeout=120)


PYTHON = sys.executable


def compared_changes(fix, before, after, layers) -> frozenset:
    """What a stack fix changes, as the ways out of a conflict compare them (docs/stacks.md): a
    layer installed at a release no fix keeps (end of life, broken, none of its matrix's) that
    the fix leaves out (uninstalled) is another change than that layer moved to a maintained
    release."""
    from adapter_matrix.matrix.model import Status

    maintained = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)
    unkept = set()
    for layer in layers:
        version = before.version(layer.name)
        release = layer.release(version) if version is not None else None
        if version is not None and (release is None or release.status not in maintained):
            unkept.add(layer.name)
    return frozenset(f"uninstall {n}" if n in unkept and after.version(n) is None else n for n in fix.changes)
