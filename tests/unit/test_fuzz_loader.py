"""Regressions of the loader: the smallest inputs that broke it, each now a clean error.

Found by fuzzing (the property tests of this file): every outcome of ``load_text`` must be
a result or a :class:`MatrixError` whose diagnostics each read ``FILE:LINE:COL: ...`` on
one line, never a traceback or a hang.
"""

from __future__ import annotations

from typing import List

import pytest

from adapter_matrix.diagnostics import MatrixError
from adapter_matrix.loader import load_text

from .helpers import REPO

FILENAME = "fuzz.yaml"


# -- regressions: the smallest inputs that broke the loader ---------------------------------

MINIMAL = (REPO / "tests" / "fixtures" / "minimal.yaml").read_text()


def _errors(text: str) -> List[str]:
    try:
        load_text(text, FILENAME)
    except MatrixError as exc:
        return [str(d) for d in exc.diagnostics if d.severity == "error"]
    raise AssertionError("the document loaded")


def _minimal(old: str, new: str) -> str:
    assert MINIMAL.count(old) == 1, old
    return MINIMAL.replace(old, new)


def _position(text: str, needle: str) -> str:
    before = text[: text.index(needle)]
    return f"{before.count(chr(10)) + 1}:{len(before) - before.rfind(chr(10))}"


def test_alias_bomb_is_one_clean_error():
    """Was: each alias expanded again, 10**9 nodes for nine lines (hours, then out of memory)."""
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
    )
    assert "fuzz.yaml:3:4: YAML aliases repeat more than 10000 nodes \u2014 write the repeated parts out, or alias smaller pieces" in _errors(text)


def test_aliases_still_share_their_anchor():
    text = _minimal('python: ["3.8", "3.9", "3.10", "3.11", "3.12"]\n    install', "python: *py\n    install")
    text = text.replace('python: ["3.8", "3.9", "3.10", "3.11", "3.12"]', 'python: &py ["3.8", "3.9", "3.10", "3.11", "3.12"]')
    lines = load_text(text, FILENAME).matrix.torch
    assert lines[1].python == lines[2].python and len(lines[2].python) == 5


@pytest.mark.parametrize(
    "text, expected",
    [
        ("\ud800", "fuzz.yaml:1:1: invalid YAML: character '\\ud800' is not Unicode text (a lone surrogate) \u2014 remove the unreadable characters"),
        ("\x00", "fuzz.yaml:1:1: invalid YAML: unacceptable character #x0000: control characters are not allowed \u2014 remove the unreadable characters"),
    ],
    ids=["lone-surrogate-was-UnicodeEncodeError", "reader-error-was-two-lines"],
)
def test_unreadable_text_is_one_line_error(text, expected):
    assert _errors(text) == [expected]


def test_specifier_with_a_number_packaging_cannot_compare():
    """Was: ValueError (4,300-digit limit) from SpecifierSet.contains in the consistency checks."""
    text = _minimal('torch: ">=2.2,<2.4"', 'torch: ">=2.2,<2.' + "9" * 4301 + '"')
    (error,) = _errors(text)
    where = _position(text, '">=2.2,<2.99')
    assert error.startswith(f"fuzz.yaml:{where}: bad torch specifier '>=2.2,<2.999")
    assert error.endswith("\u2014 write a PEP 440 specifier set such as '>=2.1,<2.5' or a version")


def test_a_far_upper_bound_does_not_probe_every_minor():
    """Was: `<2.100000000` probed 10**8 minors for undescribed claims (a hang)."""
    errors = _errors(_minimal('torch: ">=2.2,<2.4"', 'torch: ">=2.2,<2.100000000"'))
    assert errors[0].endswith(
        "release 2.0.0 claims torch 2.4 (torch >=2.2,<2.100000000), which this file does not describe "
        "\u2014 add a `torch: 2.4:` entry with its facts, or narrow the specifier"
    )
    assert len(errors) <= 101


DETECTOR = "\ndimensions:\n  cann:\n    detect:\n      - file: /etc/cann\n        regex: {regex}\n        timeout: {timeout}\nshims:\n"


@pytest.mark.parametrize(
    "regex, timeout, expected",
    [
        ("'a{4294967296}'", "1", "bad regex 'a{4294967296}': the repetition number is too large"),  # was OverflowError
        ("'" + "(" * 500 + ")" * 500 + "'", "1", "bad regex '((((("),  # was RecursionError
        ("x(?P<version>.*)", "nan", "bad timeout 'nan': not a finite number \u2014 give seconds as a number"),  # was accepted
    ],
    ids=["regex-overflow", "regex-recursion", "timeout-nan"],
)
def test_detector_values_python_cannot_use(regex, timeout, expected):
    (error,) = _errors(_minimal("\nshims:\n", DETECTOR.format(regex=regex, timeout=timeout)))
    assert expected in error


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("device: npu", 'device: "npu\\n"', "device name 'npu\\n' is not an identifier \u2014 use a name such as npu"),
        ("module: shims.torch_2_3", "module: |\n      shims.torch_2_3", "shim module 'shims.torch_2_3\\n' is not a valid dotted module name"),
        ("released: 2023-10-04", "released: 20231004", "bad release date '20231004' \u2014 write the date as YYYY-MM-DD"),
        ("released: 2023-10-04", "released: 2023-W40-3", "bad release date '2023-W40-3' \u2014 write the date as YYYY-MM-DD"),
    ],
    ids=["trailing-newline-device", "trailing-newline-module", "basic-iso-date", "week-date"],
)
def test_values_accepted_on_one_python_only_or_with_a_newline(old, new, expected):
    """Was: `$` matched before a final newline; Python 3.11+ read 20231004 and week dates."""
    (error,) = _errors(_minimal(old, new))
    assert expected in error


def test_names_with_line_breaks_stay_on_one_line():
    """Was: a key holding a line break split its diagnostic over two lines (the loader's
    messages and the consistency checks' hints alike)."""
    text = _minimal("\nshims:\n", '\ndimensions:\n  "a\\nb":\n    values: 1\nshims:\n')
    name, values = _position(text, '"a'), _position(text, "1\nshims")
    assert _errors(text) == [
        f"fuzz.yaml:{name}: dimension name 'a\\nb' is not an identifier \u2014 use a name such as cann",
        f"fuzz.yaml:{values}: 'a\\nb' version must be a list, found '1' \u2014 write it as a YAML list (`- item`)",
    ]
    text = _minimal("sources:\n", 'sources:\n  "a\\u2028b":\n    find-links: /wheels\n    fallback: nope\n')
    source = _position(text, '"a')
    assert _errors(text) == [f"fuzz.yaml:{source}: source 'a\\u2028b' falls back to unknown source 'nope' \u2014 known: a\\u2028b, cpu, pypi"]


def test_a_specifier_written_over_two_lines_reads_as_one():
    """Was: the text kept its newline, and every message and table quoting it broke."""
    result = load_text(_minimal('torch: ">=2.2,<2.4"', "torch: |\n      >=2.2,\n      <2.4"), FILENAME)
    assert result.matrix.releases[1].torch.text == ">=2.2, <2.4"
