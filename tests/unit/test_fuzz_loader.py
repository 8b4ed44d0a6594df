"""Fuzz the loader: whatever the text, a clean result or clean errors, never a traceback.

``load_text`` must either return a :class:`LoadResult` (whose model the queries can use) or
raise :class:`MatrixError` whose diagnostics all read ``FILE:LINE:COL: ...``. Any other
exception is a bug. Three generators, 10,500 documents in all (about 70 s on 2 cores),
reproducible in CI (``derandomize=True``): random YAML structures, documents shaped like
the schema with random values, and mutations of this repository's ``compat.yaml``. The
regressions at the end are the smallest inputs that broke the loader before.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Callable, Dict, List

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter_matrix.matrix.diagnostics import MatrixError
from adapter_matrix.matrix.loader import load_text
from adapter_matrix.matrix.model import LoadResult
from adapter_matrix.matrix.queries import cells, shim_for
from adapter_matrix.matrix.schema import STRUCTS

from .helpers import REPO

FILENAME = "fuzz.yaml"
POSITION = re.compile(r"^fuzz\.yaml:[1-9][0-9]*:[1-9][0-9]*: \S")
COMPAT = (REPO / "compat.yaml").read_text()


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,  # the same documents on every run: a CI failure reproduces locally
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def assert_clean(text: str) -> None:
    """The property: a usable result, or errors that each point at a line and column."""
    try:
        result = load_text(text, FILENAME)
    except MatrixError as exc:
        assert exc.diagnostics, "a MatrixError without diagnostics"
        assert any(d.severity == "error" for d in exc.diagnostics)
        for diagnostic in exc.diagnostics:
            assert_one_line(str(diagnostic))
        return
    assert isinstance(result, LoadResult)
    for diagnostic in result.warnings:
        assert_one_line(str(diagnostic))
    for cell in cells(result.matrix, today=_dt.date(2027, 1, 1)):  # a clean model answers queries
        shim_for(result.matrix, cell.torch)


def assert_one_line(rendered: str) -> None:
    """``FILE:LINE:COL: message`` on one line: what editors, CI annotations and grep read."""
    assert POSITION.match(rendered) and len(rendered.splitlines()) == 1, rendered


# -- values ---------------------------------------------------------------------------------

VERSIONISH = [
    "2.1", "2.4", "2.10", "2.4.1", "2.4.1+cpu", "2.4rc1", "2.4.0.post1", "2.4.dev0", "1!2.0", "3", "3.", ".3",
    "v2.4", "3.8", "3.13t", "3.13T", "3.t", "2.x", ">=2.1,<2.5", "==2.4.*", "~=2.4", "===foo", "<2.16", ">=3.8,<3.14",
    "!=2.4.1", ">=", ",", "", " ", "nan", "2024-01-30", "2024-02-30", "0000-00-00", "npu", "shims.torch_2_4",
    "pypi", "cpu", "local", "supported", "broken", "eol", "ASCEND_CANN_VERSION", "(", "[a-", "version=(?P<version>\\S+)",
    "shims\n", "npu\n", "2.4\n", "a{4294967296}", "(" * 300 + ")" * 300, "inf", "-0", "1e309",
    ">=2.1,<2.100000000", "<2." + "9" * 5000, ">=3.8,<3." + "9" * 5000, "==2." + "9" * 40 + ".*", "2." + "9" * 5000,
    ">=2.1,\n<2.5", "\x0bcann", "a\u2028b", "20231004", "2023-W40-3",
]  # fmt: skip
KEYS = sorted({f.key for s in STRUCTS.values() for f in s.fields} | {"<<", "pypi", "2.4", "2.10", "cann"})

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.just(10**400),
    st.floats(),
    st.text(max_size=16),
    st.dates(),
    st.datetimes(),
    st.sampled_from(VERSIONISH),
)
ANY_KEY = st.one_of(st.sampled_from(KEYS), st.sampled_from(VERSIONISH), st.text(max_size=8), st.integers(), st.none())


def dump(draw: Callable[[Any], Any], document: object) -> str:
    return yaml.safe_dump(
        document,
        sort_keys=draw(st.booleans()),
        default_flow_style=draw(st.sampled_from([False, True, None])),
        allow_unicode=draw(st.booleans()),
        width=draw(st.sampled_from([80, 10**6])),
    )


# -- random structures ----------------------------------------------------------------------

STRUCTURES = st.recursive(
    LEAVES,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(ANY_KEY, children, max_size=5),
    max_leaves=20,
)


@st.composite
def random_documents(draw: Callable[[Any], Any]) -> str:
    top = draw(st.dictionaries(st.sampled_from(KEYS), STRUCTURES, max_size=8) | STRUCTURES)
    return dump(draw, top)


@pytest.mark.slow  # 1,500 generated documents
@fuzz_settings(1500)  # the slowest to generate (~10 ms): nested structures
@given(random_documents())
def test_random_structures_load_cleanly(text):
    assert_clean(text)


# -- documents shaped like the schema ---------------------------------------------------------

_STRATEGIES: Dict[str, Any] = {}


def _value(fragment: Dict[str, Any]) -> Any:
    """Values of the right shape for a schema fragment, or now and then any leaf."""
    if "$ref" in fragment:
        shaped = struct(fragment["$ref"].rsplit("/", 1)[-1])
    elif "oneOf" in fragment or "anyOf" in fragment:
        shaped = st.one_of([_value(f) for f in fragment.get("oneOf", fragment.get("anyOf"))])
    elif "const" in fragment:
        shaped = st.just(fragment["const"])
    elif "enum" in fragment:  # schema-version 1 or 2, a dimension kind, a built-in detector
        shaped = st.sampled_from(fragment["enum"])
    elif fragment.get("type") == "array":
        shaped = st.lists(_value(fragment["items"]), max_size=4)
    elif fragment.get("type") == "object":
        shaped = st.dictionaries(
            st.sampled_from(VERSIONISH) | st.text(max_size=6), _value(fragment["additionalProperties"]), max_size=4
        )
    elif fragment.get("type") == "boolean":
        shaped = st.booleans()
    elif fragment.get("format") == "date":
        shaped = st.dates() | st.sampled_from(["2024-02-30", "2024-13-01", "24-01-01", "2024-1-1"])
    else:
        shaped = st.sampled_from(VERSIONISH) | st.text(max_size=10) | st.floats(min_value=0, max_value=5)
    return st.one_of(shaped, shaped, shaped, LEAVES)


def struct(name: str) -> Any:
    """A mapping of one declared struct: its required keys and some optional ones."""
    if name not in _STRATEGIES:
        fields = STRUCTS[name].fields
        _STRATEGIES[name] = st.fixed_dictionaries(
            {f.key: _value(f.json) for f in fields if f.required},
            optional={f.key: _value(f.json) for f in fields if not f.required},
        )
    return _STRATEGIES[name]


@st.composite
def shaped_documents(draw: Callable[[Any], Any]) -> str:
    return dump(draw, draw(struct("root")))


@pytest.mark.slow  # 4,000 generated documents
@fuzz_settings(4000)
@given(shaped_documents())
def test_schema_shaped_documents_load_cleanly(text):
    assert_clean(text)


# -- mutations of compat.yaml -------------------------------------------------------------------

_PAIR = re.compile(
    r"^(?P<lead>[ \t]*(?:-[ \t]+)?)(?P<key>[^\s:#][^:#\n]*?):(?P<gap>[ \t]+)(?P<value>[^#\n]*?)(?P<tail>[ \t]*(?:#.*)?)$"
)
Lines = List[str]

NOISE = st.text(
    alphabet=st.sampled_from(list("{}[],:&*!|>'\"%@`#-?\t\n\r\x00\x85\u2028\ufeff\ud800 é€0123456789.tT")),
    min_size=1,
    max_size=6,
)
REPLACEMENTS = st.sampled_from(
    [
        "[]", "{}", "null", "~", "", "true", "no", "0", "-1", "[1, [2]]", "{a: b}", '""', "''", "[2.4.0, 2.4.1", "{x",
        "|\n  block", ">-", "!!binary aGk=", "!!python/object:os.system", "!custom x", "? a", "- x", "2.10", "3.10",
        "2.4", "3.13t", "1e309", ".inf", "-.inf", ".nan", "0x1F", "0o17", "1_000", "99999999999999999999999999",
        "2024-02-30", "9999-12-31", "0001-01-01", "2024-01-30T10:00:00Z", "2001-12-14 21:59:43.10 -5",
        ">=2.1,<2.16", "==2.13.*", "supported", "broken", "shims.nope", "*undefined", "&a x", "|\n  shims", "|-\n  a\n  b",
        '">=2.1,<2.100000000"', '"<2.' + "9" * 5000 + '"', "2." + "9" * 5000, '"nan"', "inf",
    ]
)  # fmt: skip


def _index(draw: Callable[[Any], Any], lines: Lines) -> int:
    return draw(st.integers(min_value=0, max_value=len(lines) - 1))


def _pairs(lines: Lines) -> List[int]:
    return [i for i, line in enumerate(lines) if _PAIR.match(line.rstrip("\n"))]


def _set_value(line: str, value: str) -> str:
    match = _PAIR.match(line.rstrip("\n"))
    assert match
    return f"{match['lead']}{match['key']}:{match['gap']}{value}{match['tail']}\n"


def delete_line(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    i = _index(draw, lines)
    return lines[:i] + lines[i + 1 :]


def duplicate_line(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    i = _index(draw, lines)
    return lines[: i + 1] + [lines[i]] + lines[i + 1 :]


def swap_values(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    pairs = _pairs(lines)
    if len(pairs) < 2:
        return lines
    a, b = draw(st.sampled_from(pairs)), draw(st.sampled_from(pairs))
    out = list(lines)
    value_a = _PAIR.match(lines[a].rstrip("\n"))["value"]  # type: ignore[index]
    value_b = _PAIR.match(lines[b].rstrip("\n"))["value"]  # type: ignore[index]
    out[a], out[b] = _set_value(lines[a], value_b), _set_value(lines[b], value_a)
    return out


def typo_in_key(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    pairs = _pairs(lines)
    if not pairs:
        return lines
    i = draw(st.sampled_from(pairs))
    match = _PAIR.match(lines[i].rstrip("\n"))
    key = match["key"]  # type: ignore[index]
    at = draw(st.integers(min_value=0, max_value=len(key)))
    letter = draw(st.sampled_from(list("abcdefghijklmnopqrstuvwxyz-_ ")))
    key = draw(
        st.sampled_from(
            [key[:at] + letter + key[at:], key[:at] + key[at + 1 :], key[:at] + letter + key[at + 1 :], key.upper()]
        )
    )
    out = list(lines)
    out[i] = f"{match['lead']}{key}:{match['gap']}{match['value']}{match['tail']}\n"  # type: ignore[index]
    return out


def insert_noise(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    i = _index(draw, lines)
    at = draw(st.integers(min_value=0, max_value=len(lines[i])))
    out = list(lines)
    out[i] = lines[i][:at] + draw(NOISE) + lines[i][at:]
    return out


def reindent(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    i = _index(draw, lines)
    out = list(lines)
    if draw(st.booleans()):
        out[i] = draw(st.sampled_from([" ", "  ", "    ", "\t"])) + lines[i]
    else:
        out[i] = lines[i][draw(st.integers(min_value=1, max_value=4)) :] if lines[i].startswith(" ") else lines[i]
    return out


def truncate(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    text = "".join(lines)
    return [text[: draw(st.integers(min_value=0, max_value=len(text)))]]


def replace_value(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    pairs = _pairs(lines)
    if not pairs:
        return lines
    i = draw(st.sampled_from(pairs))
    out = list(lines)
    out[i] = _set_value(lines[i], draw(REPLACEMENTS | st.sampled_from(VERSIONISH)))
    return out


def unquote(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    quoted = [i for i, line in enumerate(lines) if '"' in line]
    if not quoted:
        return lines
    i = draw(st.sampled_from(quoted))
    out = list(lines)
    out[i] = lines[i].replace('"', "")
    return out


def alias_bomb(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    """Aliases of aliases: ten to the power ``depth`` leaves once expanded."""
    depth = draw(st.integers(min_value=2, max_value=12))
    bomb = ["x-0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"]
    bomb += [f"x-{i}: &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]\n" for i in range(1, depth)]
    i = _index(draw, lines)
    out = lines[:i] + bomb + lines[i:]
    pairs = _pairs(out)
    if pairs and draw(st.booleans()):
        j = draw(st.sampled_from(pairs))
        out[j] = _set_value(out[j], f"*x{depth - 1}")
    return out


def anchor_and_alias(draw: Callable[[Any], Any], lines: Lines) -> Lines:
    """An anchor on one value and an alias (or a merge key) somewhere else, before or after it."""
    pairs = _pairs(lines)
    if not pairs:
        return lines
    out = list(lines)
    a, b = draw(st.sampled_from(pairs)), draw(st.sampled_from(pairs))
    match = _PAIR.match(out[a].rstrip("\n"))
    out[a] = _set_value(out[a], f"&a {match['value']}")  # type: ignore[index]
    use = draw(st.sampled_from(["*a", "*b", "[*a, *a]", "{<<: *a}"]))
    if draw(st.booleans()):
        out[b] = _set_value(out[b], use)
    else:
        lead = _PAIR.match(out[b].rstrip("\n"))["lead"].replace("-", " ")  # type: ignore[index]
        out.insert(b + 1, f"{lead}<<: *a\n")
    return out


MUTATIONS = [
    delete_line,
    duplicate_line,
    swap_values,
    typo_in_key,
    insert_noise,
    reindent,
    truncate,
    replace_value,
    unquote,
    anchor_and_alias,
    alias_bomb,
]


@st.composite
def mutated_compat(draw: Callable[[Any], Any]) -> str:
    lines = COMPAT.splitlines(keepends=True)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        if not lines or not "".join(lines):
            break
        lines = draw(st.sampled_from(MUTATIONS))(draw, lines)
    return "".join(lines)


@pytest.mark.slow  # 5,000 generated documents
@fuzz_settings(5000)
@given(mutated_compat())
def test_mutated_compat_yaml_loads_cleanly(text):
    assert_clean(text)


def test_the_fuzzed_documents_are_not_all_rejected():
    """The property is only worth something if many documents get past the YAML parser
    and some load: count both over a sample of each generator."""
    outcomes = {"parsed": 0, "loaded": 0}

    def count(text: str) -> None:
        try:
            load_text(text, FILENAME)
            outcomes["loaded"] += 1
            outcomes["parsed"] += 1
        except MatrixError as exc:
            if not any("invalid YAML" in d.message for d in exc.diagnostics):
                outcomes["parsed"] += 1

    @fuzz_settings(300)
    @given(mutated_compat())
    def sample(text: str) -> None:
        count(text)

    sample()
    assert outcomes["parsed"] > 150 and outcomes["loaded"] > 15, outcomes


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
    assert (
        "fuzz.yaml:3:4: YAML aliases repeat more than 10000 nodes \u2014 write the repeated parts out, or alias smaller pieces"
        in _errors(text)
    )


def test_aliases_still_share_their_anchor():
    text = _minimal('python: ["3.8", "3.9", "3.10", "3.11", "3.12"]\n    install', "python: *py\n    install")
    text = text.replace(
        'python: ["3.8", "3.9", "3.10", "3.11", "3.12"]', 'python: &py ["3.8", "3.9", "3.10", "3.11", "3.12"]'
    )
    lines = load_text(text, FILENAME).matrix.torch
    assert lines[1].python == lines[2].python and len(lines[2].python) == 5


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "\ud800",
            "fuzz.yaml:1:1: invalid YAML: character '\\ud800' is not Unicode text (a lone surrogate) \u2014 remove the unreadable characters",
        ),
        (
            "\x00",
            "fuzz.yaml:1:1: invalid YAML: unacceptable character #x0000: control characters are not allowed \u2014 remove the unreadable characters",
        ),
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
        (
            "x(?P<version>.*)",
            "nan",
            "bad timeout 'nan': not a finite number \u2014 give seconds as a number",
        ),  # was accepted
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
        (
            "module: shims.torch_2_3",
            "module: |\n      shims.torch_2_3",
            "shim module 'shims.torch_2_3\\n' is not a valid dotted module name",
        ),
        (
            "released: 2023-10-04",
            "released: 20231004",
            "bad release date '20231004' \u2014 write the date as YYYY-MM-DD",
        ),
        (
            "released: 2023-10-04",
            "released: 2023-W40-3",
            "bad release date '2023-W40-3' \u2014 write the date as YYYY-MM-DD",
        ),
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
    assert _errors(text) == [
        f"fuzz.yaml:{source}: source 'a\\u2028b' falls back to unknown source 'nope' \u2014 known: a\\u2028b, cpu, pypi"
    ]


def test_a_specifier_written_over_two_lines_reads_as_one():
    """Was: the text kept its newline, and every message and table quoting it broke."""
    result = load_text(_minimal('torch: ">=2.2,<2.4"', "torch: |\n      >=2.2,\n      <2.4"), FILENAME)
    assert result.matrix.releases[1].torch.text == ">=2.2, <2.4"
