"""Print the README's test command: the ```sh block right after the `<!-- test-command` marker.

`.ci/run` runs what this prints, so CI runs exactly what the README tells a newcomer to run,
wherever the block sits in the README. Standard library only: it runs before any venv exists.
Exit 2 with a message when the marker is missing, repeated, or not followed by an sh block.
"""

from __future__ import annotations

import sys
from pathlib import Path

MARKER = "<!-- test-command"


def test_command(text: str) -> str:
    """The body of the ```sh block that follows the one marker line (blank lines may separate them)."""
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip().startswith(MARKER)]
    if len(marks) != 1:
        raise ValueError(f"expected one `{MARKER} ... -->` line, found {len(marks)}")
    rest = iter(lines[marks[0] + 1 :])
    for line in rest:
        if not line.strip():
            continue
        if line.strip() != "```sh":
            raise ValueError(f"the `{MARKER}` line must be followed by a ```sh block, not {line.strip()!r}")
        break
    else:
        raise ValueError(f"no ```sh block after the `{MARKER}` line")
    body = []
    for line in rest:
        if line.strip() == "```":
            break
        body.append(line)
    else:
        raise ValueError("the test command's ```sh block is not closed")
    command = "\n".join(body).strip()
    if not command:
        raise ValueError("the test command's ```sh block is empty")
    return command


def main(argv: list[str]) -> int:
    path = Path(argv[1] if len(argv) > 1 else "README.md")
    try:
        print(test_command(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        print(f"{path}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
