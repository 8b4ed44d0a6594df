"""docs/stacks.md, executed: each `check` block of the page runs from the repository's root and
prints exactly the text the page shows after it; the conflict and the warnings it quotes are
what the tool says of the same fixtures."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

from .helpers import REPO

PAGE = REPO / "docs" / "stacks.md"
RUN = re.compile(r"<!-- stacks:run -->\n```sh\n(?P<cmd>.*?)\n```\n\n```text\n(?P<out>.*?)```", re.S)


def _run(command: str) -> subprocess.CompletedProcess:
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[0] == "adapter-matrix"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["ADAPTER_MATRIX_NO_MEMO"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *argv[1:]], capture_output=True, text=True, cwd=REPO, env=env
    )


def test_every_check_block_prints_what_the_page_shows():
    found = list(RUN.finditer(PAGE.read_text(encoding="utf-8")))
    assert len(found) == 9  # 5 before issue 65's forms, then one per form (the series' two)
    for match in found:
        proc = _run(match["cmd"])
        assert proc.stdout == match["out"], proc.stderr


def test_the_quoted_lines_are_the_tools_own():
    page = PAGE.read_text(encoding="utf-8")
    validate = _run(
        "adapter-matrix validate tests/fixtures/stacks/vllm-ascend.yaml tests/fixtures/matrices/torch_npu.yaml"
    )
    quoted = [line for line in page.splitlines() if line.startswith("tests/fixtures/stacks/vllm-ascend.yaml:")]
    assert quoted and quoted[0] in validate.stderr + validate.stdout
    upstream = _run(
        "adapter-matrix validate tests/fixtures/stacks/vllm-ascend.yaml --upstream tests/fixtures/pypi/2026-12-06"
    )
    assert quoted[1] in upstream.stderr + upstream.stdout
    table = _run("adapter-matrix table --matrix tests/fixtures/stacks/vllm-ascend.yaml").stdout
    block = page.split("## The stack table", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert table.startswith(block)
