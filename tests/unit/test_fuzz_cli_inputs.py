"""Fuzz the command line's file inputs: hostile matrices and documents with markers.

``validate --matrix M`` and ``table --matrix M --update DOC`` get a matrix mutated with
what an attacker or an accident puts into one (slow regexes, huge numbers, control
characters, FIFOs and devices as detector paths, odd quotes) and a document with random
marker options, line endings and quotes. The property, for every example: a documented
exit code and no exception (``catch_exceptions=False``: a traceback fails the test), an
answer within a bound, and no file written other than the document being updated.
Deterministic (``derandomize=True``) and a few seconds long, so it runs in the default test run.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .helpers import REPO, cli

TOY = (REPO / "examples" / "toy-adapter" / "toy_adapter" / "compat.yaml").read_text()
DETECTOR = "      - env: TOY_DRIVER_VERSION\n"
BOUND = 15.0  # seconds per example; a hang is minutes
FUZZ = settings(
    max_examples=50, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)

hostile_scalar = st.sampled_from(
    [
        "'^(a|aa)+$'",
        "'(x+x+)+y'",
        "'[unclosed'",
        "'" + "a" * 1200 + "'",
        '"\\e]0;title\\a"',
        '"\\r\\n"',
        "1e300",
        "-0.0",
        "nan",
        ".inf",
        "9" * 400,
        "'{version}'",
        "''",
        "!!python/object:os.system [echo]",
        "&a [*a]",
        "/dev/zero",
        "/dev/stdin",
        "'\\u202e'",
        "~",
        "fifo",
        "{}",
        "[]",
        "'a\\x00b'",
    ]
)
detector_key = st.sampled_from(["env", "file", "command", "regex", "timeout", "distribution", "builtin"])


@st.composite
def hostile_matrix(draw) -> str:
    text = TOY
    if draw(st.booleans()):  # else a valid matrix, so that the document's markers are read too
        lines = []
        for _ in range(draw(st.integers(1, 3))):
            key, value = draw(detector_key), draw(hostile_scalar)
            lines.append(f"        {key}: {value}\n" if lines else f"      - {key}: {value}\n")
        text = TOY.replace(DETECTOR, "".join(lines) + DETECTOR)
        if draw(st.booleans()):
            text += f"\nevidence:\n  max-age-days: {draw(st.sampled_from(['0', '99999999', '1e9', '-3', '٣']))}\n"
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


marker_options = st.lists(
    st.sampled_from(
        [
            "view=grid",
            "view='grid",
            'view="releases',
            "lang=zh",
            "format=rst",
            "view=nope",
            "release=9.9",
            "\\",
            "'",
            "=",
            "view=grid\x1b[2J",
            "results=/dev/zero",
            "results=../../etc",
            "view=verified",
        ]
    ),
    max_size=3,
)


@st.composite
def hostile_document(draw) -> str:
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    options = " ".join(draw(marker_options))
    body = ["# Doc", "", f"<!-- adapter-matrix:table {options} -->", "old"]
    if draw(st.integers(0, 3)):  # mostly closed: an unclosed block stops before its options are read
        body.append("<!-- /adapter-matrix:table -->")
    if draw(st.booleans()):
        body += ["```", "<!-- adapter-matrix:table view=grid -->", "```"]
    return eol.join(body) + eol


@given(matrix=hostile_matrix(), document=hostile_document())
@FUZZ
def test_hostile_matrices_and_documents_end_cleanly_and_write_nothing_else(matrix: str, document: str):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.mkfifo(root / "fifo")
        (root / "compat.yaml").write_text(matrix, encoding="utf-8", newline="")
        doc = root / "README.md"
        doc.write_text(document, encoding="utf-8", newline="")
        files_before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file() and p.name != "fifo"}
        os.environ["ADAPTER_MATRIX_CACHE"] = str(root / "cache")
        try:
            for args in (
                ["validate", "--matrix", "compat.yaml"],
                ["table", "--matrix", "compat.yaml", "--update", "README.md"],
                ["table", "--matrix", "compat.yaml", "--check", "README.md"],
            ):
                start = time.perf_counter()
                res = cli(*args, cwd=root)  # an exception here is a traceback for the user
                assert time.perf_counter() - start < BOUND, args
                assert res.code in (0, 1, 2, 3), (args, res.code)
                if res.code == 2:
                    assert "error" in res.err or ": " in res.err, (args, res.err)
        finally:
            del os.environ["ADAPTER_MATRIX_CACHE"]
        files_after = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file() and p.name != "fifo"}
        assert sorted(files_after) == sorted(files_before)  # no new file beside them (no temporary left)
        assert files_after["compat.yaml"] == files_before["compat.yaml"]
        assert sorted(p.name for p in root.iterdir()) in (
            sorted(["compat.yaml", "README.md", "fifo"]),
            sorted(["compat.yaml", "README.md", "fifo", "cache"]),
        )
