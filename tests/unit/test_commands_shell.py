"""Everything published as a command is a shell command and nothing else.

Every command of every stack table (each format, each language), every fix command of
``check --json`` over a sample of the fixtures' environments (adapters alone and stacks), and
every command of the selector and of the pytorch.org export: bash parses it (``bash -n``), and it
holds no prose: each ``&&``-joined part is ``pip``/``pythonX.Y -m pip`` ``install``/``uninstall``,
whose every word is an option, an option's value or a PEP 508 requirement. A prerequisite
("cann 9.1.0 first: not a pip package") is a field and a column of its own, never in a command.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import re
import shlex
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, Iterable, List, Optional

import pytest
from packaging.requirements import InvalidRequirement, Requirement

from adapter_matrix.check.pipeline import CheckRequest, run
from adapter_matrix.cli.quick import _probes
from adapter_matrix.matrix.cache import load_any
from adapter_matrix.tables.formats import FORMATS, render_table
from adapter_matrix.tables.platform import platform_entry
from adapter_matrix.tables.views import build
from adapter_matrix.tables.views.stack import stack
from adapter_matrix.tables.words import LANGS

from .helpers import FIXTURES

TODAY = _dt.date(2026, 12, 6)
ADAPTER = FIXTURES / "matrices" / "torch_npu.yaml"
LAYERS = sorted((FIXTURES / "stacks").glob("*.yaml"))
_OPTIONS_WITH_VALUE = {"--index-url", "--extra-index-url", "--find-links", "-i", "-f"}


def _prose(command: str) -> Optional[str]:
    """Why ``command`` is not a plain pip command line, or None."""
    for part in re.split(r" && |; ", command):
        try:
            words = shlex.split(part)
        except ValueError as exc:
            return f"{part!r}: {exc}"
        head = words[:1] + (["-m", "pip"] if words[:1] and words[0].startswith("python") else [])
        if words[: len(head)] != head or (head[0] not in ("pip",) and not re.fullmatch(r"python3\.\d+t?", head[0])):
            return f"{part!r} is not a pip command"
        rest = words[len(head) + (2 if head[0] != "pip" else 0) :]
        if rest[:1] not in (["install"], ["uninstall"]):
            return f"{part!r} neither installs nor uninstalls"
        skip = False
        for word in rest[1:]:
            if skip:
                skip = False
                continue
            if word.startswith("-"):
                skip = word in _OPTIONS_WITH_VALUE
                continue
            try:
                Requirement(word)
            except InvalidRequirement:
                return f"{part!r}: {word!r} is neither an option nor a requirement"
    return None


def _assert_commands(commands: Iterable[str], tmp_path: Path, what: str) -> int:
    commands = list(dict.fromkeys(commands))
    assert commands, f"no command found in {what}"
    bad = [(c, why) for c in commands if (why := _prose(c))]
    assert not bad, f"{what}: {bad[:3]}"
    script = tmp_path / "commands.sh"
    for command in commands:  # one file would hide which one bash refuses
        script.write_text(command + "\n")
        proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{what}: bash -n refuses {command!r}: {proc.stderr}"
    return len(commands)


class _Codes(HTMLParser):
    """The text of every <code> and every data-command of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: List[str] = []
        self.attrs: List[str] = []
        self._in = 0

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self._in += tag == "code"
        if tag == "code":
            self.codes.append("")
        self.attrs += [v for k, v in attrs if k == "data-command" and v]

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        self._in -= tag == "code"

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._in:
            self.codes[-1] += data


def _commands_in(text: str, fmt: str, table_data: Dict) -> List[str]:
    """The install commands a stack table shows in ``fmt``, read back from its text."""
    install_keys = [c["key"] for c in table_data["columns"] if c["key"].startswith("install")]
    index = [i for i, c in enumerate(table_data["columns"]) if c["key"] in install_keys]
    if fmt == "json":
        data = json.loads(text)
        return [c for r in data["releases"] for i in r["install"] for c in i["commands"]] + [
            row[i]["text"] for row in data["rows"] for i in index if row[i]["text"].startswith("pip")
        ]
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(text)))[1:]
        return [row[i] for row in rows for i in index if row[i].startswith("pip")]
    if fmt == "markdown":
        spans = re.findall(r"(?<!`)`([^`]+)`(?!`)", text)
        return [s for s in spans if s.startswith("pip")]
    if fmt == "rst":
        return [s.replace("\\ ", " ") for s in re.findall(r"``(.+?)``", text) if s.startswith("pip")]
    parser = _Codes()
    parser.feed(text)
    assert sorted(set(parser.attrs)) == sorted({c for c in parser.codes if c.startswith("pip")})  # each copy button
    return parser.attrs


@pytest.mark.parametrize("layer_path", LAYERS, ids=lambda p: p.stem)
def test_every_command_of_every_stack_table_is_a_shell_command(layer_path, tmp_path):
    layer = load_any(layer_path).layer
    adapter = load_any(ADAPTER).matrix
    checked = 0
    for lang in LANGS:
        table = stack(layer, lang, adapter, TODAY)
        data = json.loads(render_table(table, "json"))
        expected = {c for r in data["releases"] for i in r["install"] for c in i["commands"]}
        for r in data["releases"]:
            for install in r["install"]:
                assert install["commands"] and all(not _prose(c) for c in install["commands"])
                assert all("first" in p or p.startswith("make sure") for p in install["prerequisites"])
        for fmt in FORMATS:
            text = render_table(table, fmt)
            found = _commands_in(text, fmt, data)
            # a row's commands are one line, joined with && (what its copy button copies)
            joined = {" && ".join(i["commands"]) for r in data["releases"] for i in r["install"]}
            assert set(found) >= (joined if fmt != "json" else expected), (fmt, lang)
            checked += _assert_commands(found, tmp_path, f"{layer_path.name} {fmt} {lang}")
    assert checked > 0


def _answers(*args: str) -> List[dict]:
    options: Dict[str, object] = {"as_json": True, "no_binary": True, "today": "2026-12-06"}
    sets, companions, matrices = [], [], []
    it = iter(args)
    for flag in it:
        value = next(it)
        if flag == "--set":
            sets.append(value)
        elif flag == "--companion":
            companions.append(value)
        elif flag == "--matrix":
            matrices.append(value)
        else:
            options[flag.lstrip("-")] = value
    request = CheckRequest(_probes(), matrix=matrices, sets=sets, companions=companions, **options)  # type: ignore[arg-type]
    result = run(request)
    assert result.document is not None
    return result.document.to_json()["checks"]


SAMPLE = (
    [  # (matrices, what-if flags): adapters alone and stacks, both arches, CANN known or not
        ([ADAPTER], ["--python", "3.11", "--torch", torch, "--adapter", adapter, "--set", f"arch={arch}", *cann])
        for torch, adapter in (("2.10.0", "2.10.0.post2"), ("2.9.0", "2.10.0.post4"), ("2.13.0", "2.12.0"))
        for arch in ("aarch64", "x86_64")
        for cann in ((), ("--set", "cann=9.1.0"), ("--set", "cann=8.1.RC1"))
    ]
    + [
        (
            [ADAPTER, FIXTURES / "stacks" / "vllm-ascend.yaml"],
            ["--python", "3.11", "--torch", "2.10.0", "--adapter", adapter, "--set", f"arch={arch}", *cann]
            + ["--companion", "vllm-ascend=0.23.0", "--companion", "vllm=0.23.0", "--companion", "triton-ascend=3.2.2"],
        )
        for adapter in ("2.10.0.post2", "2.9.0")
        for arch in ("aarch64", "x86_64")
        for cann in ((), ("--set", "cann=9.1.0"))
    ]
    + [
        (
            [ADAPTER, FIXTURES / "stacks" / "vllm-ascend.yaml", FIXTURES / "stacks" / "mindspeed-llm.yaml"],
            ["--python", "3.10", "--torch", "2.10.0", "--adapter", "2.10.0.post4", "--set", "arch=aarch64"]
            + ["--set", "cann=9.1.0", "--companion", "vllm-ascend=0.23.0", "--companion", "mindspeed-llm=26.1.0"],
        ),
    ]
)


@pytest.mark.slow  # dozens of checks, stacks among them
def test_every_fix_command_of_check_json_is_a_shell_command(tmp_path):
    commands, manual = [], []
    for matrices, flags in SAMPLE:
        for answer in _answers(*[x for m in matrices for x in ("--matrix", str(m))], *flags):
            for fix in answer["fixes"]:
                commands += fix["commands"]
                manual += fix["manual"]
    assert manual and all(not m.startswith("pip") for m in manual)  # steps by hand are apart
    assert _assert_commands(commands, tmp_path, "check --json") >= 10


@pytest.mark.parametrize("name", ["torch_npu", "ipex", "gaudi", "minimal"])
def test_every_command_of_the_selector_and_the_pytorch_org_entry_is_a_shell_command(name, tmp_path):
    matrix = load_any(FIXTURES / "matrices" / f"{name}.yaml").matrix
    today = _dt.date(2026, 1, 1)  # IPEX's releases have ended by the end of 2026: nothing to install then
    combos = build(matrix, "selector", today=today, picks=False).data["combinations"]
    commands = [c for e in combos for c in e["commands"]]
    _assert_commands(commands, tmp_path, f"{name} selector")
    for lang in LANGS:  # the selector's table in every text format: the same commands, nothing else
        table = build(matrix, "selector", lang, today=today, picks=False)
        spans = re.findall(r"(?<!`)`([^`]+)`(?!`)", render_table(table, "markdown"))
        shown = [s for s in spans if s.startswith(("pip", "python"))]
        cells = [row[-1] for row in list(csv.reader(io.StringIO(render_table(table, "csv"))))[1:] if row[-1]]
        assert set(shown) == set(commands) and {c for cell in cells for c in cell.split("; ")} == set(commands)
        _assert_commands(cells, tmp_path, f"{name} selector csv {lang}")  # one cell: a `;` sequence bash takes
    try:
        entry = platform_entry(matrix, "https://example.org/help", today=today)
    except ValueError:
        return  # no supported Linux combination: nothing published
    published = list(entry.data["stable"].values()) + list(entry.data.get("preview", {}).values())
    published += re.findall(r"```bash\n(.*?)\n```", entry.markdown, flags=re.S)
    _assert_commands([c for text in published for c in text.splitlines()], tmp_path, f"{name} pytorch.org")


@pytest.mark.parametrize("lang", LANGS)
def test_the_stack_tables_json_validates_against_the_published_schema(lang):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((FIXTURES.parent.parent / "docs" / "compatibility-table.schema.json").read_text())
    adapter = load_any(ADAPTER).matrix
    for layer_path in LAYERS:
        layer = load_any(layer_path).layer
        for with_adapter in (adapter, None):
            doc = json.loads(render_table(stack(layer, lang, with_adapter, TODAY), "json"))
            jsonschema.validate(doc, schema)
