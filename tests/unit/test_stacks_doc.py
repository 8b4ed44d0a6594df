"""docs/stacks.md: the conflict and the warnings it quotes are what the tool says of the same
fixtures (its `check` blocks are executed with every transcript: test_transcripts.py)."""

from __future__ import annotations

from .helpers import REPO
from .test_transcripts import run as _run

PAGE = REPO / "docs" / "stacks.md"


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
