"""`validate --upstream` for companions: the torch requirement their wheels declare, read
from wheel metadata, against compat.yaml; and `--write`, `--record`.

Every test reads the answers recorded on 2026-12-01 (tests/fixtures/pypi/2026-12-01/) or
serves a wheel built here; none touches the network (the autouse fixture makes sure).
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from adapter_matrix.matrix.loader import load_text
from adapter_matrix.upstream import companion_index as upc
from adapter_matrix.upstream import companion_write
from adapter_matrix.upstream import metadata as md

from .helpers import FIXTURES, REPO, cli

RECORDED = FIXTURES / "pypi" / "2026-12-01"
RECORDED_ARG = str(RECORDED.relative_to(REPO))
COMPAT = (REPO / "compat.yaml").read_text()
FIX = f"or run `adapter-matrix validate --upstream {RECORDED_ARG} --write`"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    def refuse(url, headers, timeout=0):
        raise AssertionError(f"a test touched the network: {url}")

    monkeypatch.setattr(md, "http_get", refuse)


def _matrix(text: str = COMPAT):
    return load_text(text, "compat.yaml", check_modules=False).matrix


def _recorded() -> Dict[str, upc.CompanionIndex]:
    found, missing = upc.read_companions(str(RECORDED), _matrix())
    assert missing == {}
    return found


# -- what the recording says -------------------------------------------------------------------


def test_the_recording_reads_the_torch_requirement_of_every_wheel():
    found = _recorded()
    vision, audio = found["torchvision"], found["torchaudio"]
    assert vision.releases[Version("0.16.1")].torch == SpecifierSet("==2.1.1")
    assert vision.releases[Version("0.16.1")].wheels == 4  # cp38-cp311, one Linux x86_64 wheel each
    assert vision.releases[Version("0.29.1")].torch == SpecifierSet(">=2.14.0")  # open: a stable-ABI build
    assert audio.releases[Version("2.11.0")].torch is None  # its wheels declare no torch requirement
    assert max(audio.releases) == Version("2.11.1")  # torchaudio has no release built for 2.12 or later
    # releases older than the oldest described torch line (2.1, 2023-10-04) are out of scope
    assert min(vision.releases) == Version("0.16.0")


def test_a_release_belongs_to_the_line_of_the_oldest_torch_it_admits():
    matrix = _matrix()
    assert upc.built_for(SpecifierSet("==2.13.0"), matrix) == Version("2.13")
    assert upc.built_for(SpecifierSet(">=2.14.0"), matrix) == Version("2.14")
    assert upc.built_for(SpecifierSet("==2.0.1"), matrix) is None  # a torch the file does not describe


def test_compat_yaml_agrees_with_the_recording():
    res = cli("validate", "--upstream", RECORDED_ARG)
    assert res.code == 0, res.err
    # the one warning: a release whose wheels declare nothing (compat.yaml says why it is listed)
    (warning,) = res.err.strip().splitlines()
    assert warning.startswith("compat.yaml:") and "torchaudio 2.11.0 declares no torch requirement" in warning


# -- planted mistakes ----------------------------------------------------------------------------


def _planted(tmp_path: Path, old: str, new: str) -> Tuple[Path, str]:
    assert COMPAT.count(old) == 1, old
    text = COMPAT.replace(old, new)
    path = tmp_path / "compat.yaml"
    path.write_text(text)
    return path, text


def _at(text: str, needle: str, offset: int = 0) -> str:
    index = text.index(needle) + offset
    line = text.count("\n", 0, index) + 1
    return f"{line}:{index - text.rfind(chr(10), 0, index)}"


def _errors(err: str) -> List[str]:
    return [line for line in err.splitlines() if ": warning: " not in line and not line.startswith("error:")]


@pytest.mark.parametrize(
    "old,new,needle,message",
    [
        (  # the acceptance case: a wrong pairing, reported at its value
            "0.16.1: 2.1.1,",
            "0.16.1: 2.1.0,",
            "2.1.0, 0.16.2",
            "torchvision 0.16.1 requires torch==2.1.1 (its wheels declare Requires-Dist: torch (==2.1.1)), "
            "not torch==2.1.0 \u2014 write 0.16.1: 2.1.1, {fix}",
        ),
        (
            '"2.13": {0.28.0: 2.13.0}',
            '"2.13": none',
            '"2.13": none',
            "torchvision 0.28.0 requires torch==2.13.0 (built for torch 2.13), but this file says none for torch 2.13 "
            '\u2014 list it under "2.13", {fix}',
        ),
    ],
)
def test_a_planted_wrong_pairing_is_an_error_at_its_position(tmp_path, old, new, needle, message):
    path, text = _planted(tmp_path, old, new)
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG)
    assert res.code == 2
    assert _errors(res.err) == [f"{path}:{_at(text, needle)}: {message.format(fix=FIX)}"]


def test_a_release_the_index_lacks_is_an_error_and_a_missing_one_a_warning(tmp_path):
    path, text = _planted(tmp_path, "0.18.0: 2.3.0, 0.18.1: 2.3.1", "0.18.0: 2.3.0, 0.18.7: 2.3.1")
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG)
    assert res.code == 2
    assert f"{path}:{_at(text, '2.3.1}', 0)}: torchvision 0.18.7 has no Linux x86_64 wheel on the index" in res.err
    assert (
        "warning: torchvision 0.18.1 requires torch==2.3.1 (built for torch 2.3) and is on the index, but this file does not list it"
        in res.err
    )


def test_torch_facts_alone_verify_no_companion_and_say_so():
    res = cli("validate", "--upstream", str((RECORDED / "torch.json").relative_to(REPO)))
    assert res.code == 0
    assert "warning: the torch facts of torchvision are not verified" in res.err
    assert "pass a folder recorded with `validate --upstream pypi --record DIR`" in res.err


# -- --write -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "old,new",
    [
        ("0.16.1: 2.1.1,", "0.16.1: 2.1.0,"),  # a wrong requirement
        ('"2.13": {0.28.0: 2.13.0}', '"2.13": none'),  # none where there is a release
        ('0.29.1: ">=2.14.0", ', ""),  # a missing release
        ('      "2.6": {0.21.0: 2.6.0}\n', ""),  # a missing line
    ],
)
def test_write_restores_the_facts_and_keeps_everything_else(tmp_path, old, new):
    path, _text = _planted(tmp_path, old, new)
    res = cli("validate", "--matrix", str(path), "--upstream", RECORDED_ARG, "--write")
    assert res.code == 0, res.err
    assert "updated the companion facts" in res.out
    assert path.read_text() == COMPAT  # byte for byte: comments, order and style kept


def test_write_rewrites_a_block_style_line_and_adds_lines_to_an_empty_mapping():
    text = COMPAT.replace(
        '      "2.2": {0.17.0: 2.2.0, 0.17.1: 2.2.1, 0.17.2: 2.2.2}\n',
        '      "2.2":\n        0.17.0: 2.2.9 # wrong\n        0.17.1: 2.2.1\n',
    )
    matrix = _matrix(text)
    new = companion_write.rewrite_companions(text, matrix, _recorded(), "compat.yaml")
    assert new == COMPAT
    flow = "companions:\n  torchvision:\n    torch: {}\n"
    start = COMPAT.index("\ncompanions:") + 1
    end = COMPAT.index("\nci:")
    text = COMPAT[:start] + flow + COMPAT[end:]
    new = companion_write.rewrite_companions(text, _matrix(text), _recorded(), "compat.yaml")
    comp = _matrix(new).companion("torchvision")
    assert [str(e.minor) for e in comp.lines] == [f"2.{m}" for m in range(1, 16)]
    assert str(comp.release(Version("0.28.0")).torch) == "2.13.0"


def test_render_line_writes_bare_versions_for_exact_pins():
    assert companion_write.render_line(()) == "none"
    rendered = companion_write.render_line(((Version("0.29.0"), "2.14.0"), (Version("0.29.1"), ">=2.14.0")))
    assert rendered == '{0.29.0: 2.14.0, 0.29.1: ">=2.14.0"}'


# -- reading metadata from an index ------------------------------------------------------------


def _wheel(requires: List[str], padding: int = 300_000) -> bytes:
    """A wheel whose METADATA comes first, then a large member: the tail request misses it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        headers = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n" + "".join(
            f"Requires-Dist: {r}\n" for r in requires
        )
        archive.writestr("demo-1.0.dist-info/METADATA", headers + "\nA long description.\n")
        archive.writestr("demo/_C.so", os.urandom(padding))
        archive.writestr("demo-1.0.dist-info/RECORD", "")
    return buffer.getvalue()


class _Server:
    """Serves URLs from memory, honouring Range like a CDN; counts the requests."""

    def __init__(self, files: Dict[str, bytes]) -> None:
        self.files, self.requests = files, []

    def __call__(self, url, headers, timeout=0):
        self.requests.append((url, dict(headers)))
        if url not in self.files:
            raise md.MetadataError(f"{url}: HTTP 404 Not Found")
        data = self.files[url]
        wanted = dict(headers).get("Range")
        if wanted is None:
            return data, {}
        first, last = re.match(r"bytes=(\d*)-(\d*)", wanted).groups()
        start = len(data) - int(last) if not first else int(first)
        end = len(data) - 1 if not first or not last else min(int(last), len(data) - 1)
        start = max(start, 0)
        return data[start : end + 1], {"content-range": f"bytes {start}-{end}/{len(data)}"}


def test_metadata_is_read_out_of_the_wheel_with_range_requests(monkeypatch):
    wheel = _wheel(["numpy", "torch (==2.1.0)"])
    server = _Server({"https://files.example/demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl": wheel})
    monkeypatch.setattr(md, "http_get", server)
    text = md.wheel_metadata("https://files.example/demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", announced=False)
    assert "Requires-Dist: torch (==2.1.0)" in text
    fetched = sum(len(server.files[u]) if "Range" not in h else 0 for u, h in server.requests)
    assert fetched == 0 and len(server.requests) <= 3  # ranges only: never the whole 300 KB wheel


def test_an_announced_metadata_file_is_fetched_instead(monkeypatch):
    server = _Server(
        {"https://files.example/w.whl.metadata": b"Metadata-Version: 2.1\nName: demo\nRequires-Dist: torch>=2.11\n"}
    )
    monkeypatch.setattr(md, "http_get", server)
    assert "torch>=2.11" in md.wheel_metadata("https://files.example/w.whl", announced=True)
    assert [u for u, _h in server.requests] == ["https://files.example/w.whl.metadata"]


def test_record_writes_the_answers_with_the_metadata_of_each_wheel(monkeypatch, tmp_path):
    simple = {
        "meta": {"api-version": "1.1"},
        "name": "torchvision",
        "versions": ["0.16.0", "0.28.0"],
        "files": [
            {"filename": f"torchvision-{v}-cp311-cp311-manylinux_2_28_x86_64.whl", "url": f"https://files.example/tv-{v}.whl",
             "upload-time": day, "requires-python": ">=3.8", "yanked": False, "hashes": {"sha256": "0"}}
            for v, day in (("0.15.2", "2023-05-08T00:00:00Z"), ("0.16.0", "2023-10-04T16:00:00Z"), ("0.28.0", "2026-07-08T10:00:00Z"))
        ] + [{"filename": "torchvision-0.16.0-cp311-cp311-win_amd64.whl", "url": "https://files.example/win.whl", "yanked": False}],
    }  # fmt: skip
    server = _Server(
        {
            "https://pypi.org/simple/torchvision/": json.dumps(simple).encode(),
            "https://files.example/tv-0.16.0.whl": _wheel(["torch (==2.1.0)"], 1000),
            "https://files.example/tv-0.28.0.whl": _wheel(
                ["torch==2.13.0; platform_system != 'Darwin'", "torch ; extra == 'x'"], 1000
            ),
        }
    )
    monkeypatch.setattr(md, "http_get", server)
    matrix = _matrix()
    matrix = matrix._replace(companions=tuple(c for c in matrix.companions if c.name == "torchvision"))
    paths = upc.record(str(tmp_path), matrix, (RECORDED / "torch.json").read_bytes())
    assert sorted(Path(p).name for p in paths) == ["torch.json", "torchvision.json"]
    recorded = json.loads((tmp_path / "torchvision.json").read_text())
    with_metadata = {f["filename"]: f["metadata"] for f in recorded["files"] if "metadata" in f}
    # 0.15.2 predates torch 2.1 (out of scope), Windows wheels are not read, hashes and URLs are dropped
    assert sorted(with_metadata) == [
        "torchvision-0.16.0-cp311-cp311-manylinux_2_28_x86_64.whl",
        "torchvision-0.28.0-cp311-cp311-manylinux_2_28_x86_64.whl",
    ]
    assert all("url" not in f and "hashes" not in f for f in recorded["files"])
    index = upc.parse_companion(recorded, "torchvision", "recorded")
    assert index.releases[Version("0.28.0")].torch == SpecifierSet(
        "==2.13.0"
    )  # the marker applies on Linux; the extra does not
    assert (tmp_path / "torch.json").read_bytes() != b""


def test_wheels_that_disagree_pair_with_what_every_one_allows():
    document = {
        "name": "torchvision",
        "files": [
            {
                "filename": "torchvision-0.29.9-cp311-cp311-manylinux_2_28_x86_64.whl",
                "metadata": "Requires-Dist: torch>=2.14.0\n",
            },
            {
                "filename": "torchvision-0.29.9-cp312-cp312-manylinux_2_28_x86_64.whl",
                "metadata": "Requires-Dist: torch==2.14.1\n",
            },
        ],
    }
    release = upc.parse_companion(document, "torchvision", "test").releases[Version("0.29.9")]
    assert release.torch == SpecifierSet(">=2.14.0,==2.14.1") and len(release.declared) == 2


def test_a_recorded_answer_for_another_project_is_refused():
    with pytest.raises(upc.UpstreamError, match="lists the files of 'torch', not torchvision"):
        upc.parse_companion({"name": "torch", "files": []}, "torchvision", "x.json")
