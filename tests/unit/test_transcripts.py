"""The transcripts of README.md and docs/, executed: each block after a `<!-- transcript -->`
marker (a ```text block whose first line is `$ adapter-matrix ...`; or, on docs/stacks.md, the
```sh block after `<!-- stacks:run -->` and the ```text block after it) runs from the
repository's root and prints exactly the text the page shows (``<!-- transcript 2>&1 -->``: what
it prints on stdout and stderr together, for a command that speaks on stderr, as `validate`'s
errors do). A page whose tool output changed
fails here until the block is pasted again from a run (issue 67: the README showed
`adapter-matrix-npu 0.2.1` where `check` printed 0.3.0); ``TRANSCRIPTS_UPDATE=1`` pastes them."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Tuple

from .helpers import REPO

# the README's form: the command and its output in one block
TRANSCRIPT = re.compile(
    r"<!-- transcript(?P<both> 2>&1)? -->\n```text\n\$ (?P<cmd>[^\n]*(?:\\\n[^\n]*)*)\n(?P<out>.*?)```", re.S
)
# docs/stacks.md's form: the command to copy, then what it prints
STACKS = re.compile(r"<!-- stacks:run -->\n```sh\n(?P<cmd>.*?)\n```\n\n```text\n(?P<out>.*?)```", re.S)


def run(command: str, both: bool = False) -> subprocess.CompletedProcess:
    """``adapter-matrix ...`` as a user runs it at the repository's root (no remembered answer,
    no Ascend variables of this machine); ``both``: stderr into stdout, as a terminal shows them."""
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[0] == "adapter-matrix"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}
    env["ADAPTER_MATRIX_NO_MEMO"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "adapter_matrix", *argv[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if both else subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )


def transcripts() -> Iterator[Tuple[Path, str, str, bool]]:
    """(page, command, what the page says it prints, whether stderr is shown) for every marked block."""
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for pattern in (TRANSCRIPT, STACKS):
            for match in pattern.finditer(text):
                yield page, match["cmd"], match["out"], bool(match.groupdict().get("both"))


def _update() -> None:
    """``TRANSCRIPTS_UPDATE=1``: paste every block again from a run (after a deliberate change of
    what the tool prints; review the diff)."""
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for pattern in (TRANSCRIPT, STACKS):
            text = pattern.sub(
                lambda m: (
                    m.group(0)[: m.start("out") - m.start(0)]
                    + run(m["cmd"], bool(m.groupdict().get("both"))).stdout
                    + "```"
                ),
                text,
            )
        page.write_text(text, encoding="utf-8")


def test_every_transcript_prints_what_its_page_shows():
    if os.environ.get("TRANSCRIPTS_UPDATE"):
        _update()
    found = list(transcripts())
    pages = {page.name for page, _cmd, _out, _both in found}
    assert {"README.md", "stacks.md"} <= pages and len(found) >= 3, found
    for page, command, out, both in found:
        proc = run(command, both)
        assert proc.stdout == out, f"{page.relative_to(REPO)}: `{command}` prints\n{proc.stdout}{proc.stderr or ''}"
