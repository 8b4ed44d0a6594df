"""Every published install command resolves: pip's own resolver, in ``--dry-run``.

The selector and the platform export publish commands (``check``'s fixes for a fresh
environment). A command can stop working after it is published: a pinned wheel is
yanked, or a dependency (a companion) pulls another torch than the cell claims. For
each distinct command, on its own platform, and the oldest and newest Python it is
published for, this runs

    python -m pip install --dry-run --ignore-installed --report - --only-binary=:all: \\
        --python-version X.Y --implementation cp --abi cpXY --platform <its tags> REQUIREMENTS

as a user on that platform would: the platform is the combination's ``os`` and ``arch``
(:class:`PipPlatform`; Linux x86_64 where it names neither), so torch-npu's aarch64 command
(PyPI's ``torch==2.11.0``) is judged with aarch64 wheels and its x86_64 command
(``torch==2.11.0+cpu`` from PyTorch's CPU index) with x86_64 ones.

It resolves against the commands' own indexes, or against a *recorded* index: folders of
recorded PyPI answers (PEP 691 JSON trimmed as ``tests/fixtures/pypi/README.md``
describes) that :func:`build_index` turns into a local PEP 503 index of tiny wheels, one
per recorded wheel (every platform: each keeps its file name, so its tags), each carrying
the recorded ``Requires-Python``, ``Requires-Dist`` (dependencies on projects outside the
record are dropped: they are not what is being judged) and yanked flag. Offline, so CI and
tests can run it. The record stands for PyPI.

Three outcomes per resolution: it installs what it claims; a **problem**, when pip cannot
resolve it, when the resolution picks a yanked file (pip takes a yanked release that ``==``
pins, with a warning only), or when the torch it resolves is not the torch the combination
claims; or **unreachable**, when an index the command needs cannot be read from here (a
connection error, or with a record an index the record does not hold, such as PyTorch's CPU
index): nothing is known of the command then, and it is counted apart, not as a problem.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import (
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    TypedDict,
    Union,
    cast,
)

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import mac_platforms
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from ..names import canonical_name, escaped_name
from ..urls import PYPI_SIMPLE

__all__ = ["PipPlatform", "Problem", "Resolutions", "build_index", "published", "resolve", "check_commands"]

_YANKED = re.compile(r"yanked version: '([^']+)' candidate \(version (\S+)")
_INDEX_OPTIONS = ("--index-url", "--extra-index-url", "--find-links", "-i", "-f")
# what pip says when it could not talk to an index (its retries exhausted), not what it found there
_UNREACHABLE = re.compile(
    r"NewConnectionError|ConnectTimeout|ReadTimeout|Max retries exceeded|Failed to establish a new connection"
    r"|Name or service not known|Temporary failure in name resolution|Network is unreachable|ProxyError"
    r"|SSLError|Connection refused|Could not fetch URL"
)


class PipPlatform(NamedTuple):
    """Where a command is typed: the ``os`` and ``arch`` its combination names, as the
    built-in detectors name them (linux, windows, macos; x86_64, aarch64)."""

    os: str = "linux"
    arch: str = "x86_64"

    @classmethod
    def of(cls, dimensions: Dict[str, str]) -> PipPlatform:
        """A combination's platform; Linux x86_64 for what it does not name (a release that
        names no OS or architecture is published for every one; the commonest is judged)."""
        return cls(dimensions.get("os", "linux").lower(), dimensions.get("arch", "x86_64").lower())

    def tags(self) -> List[str]:
        """pip's ``--platform`` tags for a machine of this platform, newest first (what a
        user's pip there accepts)."""
        if self.os.startswith("win"):
            return ["win_arm64"] if self.arch == "aarch64" else ["win_amd64"]
        if self.os == "macos":
            return list(mac_platforms((15, 0), "arm64" if self.arch == "aarch64" else "x86_64"))
        legacy = ["manylinux2014"] + (["manylinux2010", "manylinux1"] if self.arch == "x86_64" else [])
        manylinux = [f"manylinux_2_{minor}" for minor in range(40, 16, -1)] + legacy
        return [f"{tag}_{self.arch}" for tag in manylinux] + [f"linux_{self.arch}"]

    def __str__(self) -> str:
        return f"{self.os} {self.arch}"


class Problem(NamedTuple):
    """A published command that does not install what it claims (``reason``), or, counted
    apart, one that needs an index that cannot be read from here (``reason`` says which)."""

    command: str
    python: str
    reason: str
    platform: PipPlatform = PipPlatform()

    def __str__(self) -> str:
        return f"{self.command} (Python {self.python}, {self.platform}): {self.reason}"


class Resolutions(NamedTuple):
    """What ``table --resolve`` found: how many resolutions it asked for, the problems, and
    the resolutions it could not run for an index it cannot reach (not problems)."""

    runs: int
    problems: List[Problem]
    unreachable: List[Problem]


# A recorded PyPI answer (tests/fixtures/pypi, ``table --resolve --recorded``): a project's
# files as PyPI's JSON API lists them, with each wheel's METADATA text
RecordedFile = TypedDict(
    "RecordedFile",
    {"filename": str, "requires-python": Optional[str], "yanked": Union[bool, str], "metadata": Optional[str]},
    total=False,
)


class RecordedProject(TypedDict):
    name: str
    files: List[RecordedFile]


class _CombinationBase(TypedDict):
    commands: List[str]
    python: str
    torch: str


class Combination(_CombinationBase, total=False):
    """What the resolution reads of a selector's combination (:mod:`.views.selector`)."""

    dimensions: Dict[str, str]


class PipInstallMetadata(TypedDict):
    name: str
    version: str


class PipInstall(TypedDict, total=False):
    """An ``install`` item of pip's installation report (the parts read here)."""

    metadata: PipInstallMetadata
    is_yanked: bool


class PipReport(TypedDict, total=False):
    """pip's installation report (``--report``, the parts read here), or why there is none:
    ``error`` (it does not resolve) or ``unreachable`` (an index could not be read)."""

    install: List[PipInstall]
    yanked: List[Tuple[str, str]]  # (name, version): what pip's warnings say it took yanked
    error: str
    unreachable: str


def _wheel_file(filename: str) -> bool:
    if not filename.endswith(".whl"):
        return False
    try:
        parse_wheel_filename(filename)
    except ValueError:
        return False
    return True


def _wheel(path: Path, name: str, version: str, metadata: str) -> None:
    """A minimal valid wheel: METADATA, WHEEL and RECORD, nothing to import."""
    dist_info = f"{escaped_name(name)}-{version}.dist-info"
    files = {
        f"{dist_info}/METADATA": metadata,
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: adapter-matrix\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for member, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{member},sha256={digest},{len(text.encode())}")
    files[f"{dist_info}/RECORD"] = "\n".join(record + [f"{dist_info}/RECORD,,"]) + "\n"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(zipfile.ZipInfo(member, (2020, 1, 1, 0, 0, 0)), text)


def _metadata(name: str, version: str, entry: RecordedFile, known: Iterable[str]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if entry.get("requires-python"):
        lines.append(f"Requires-Python: {entry['requires-python']}")
    for line in (entry.get("metadata") or "").splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        try:
            req = Requirement(line.split(":", 1)[1].strip())
        except InvalidRequirement:
            continue
        if canonical_name(req.name) in known:  # a project outside the record is not judged
            lines.append(line)
    return "\n".join(lines) + "\n"


def build_index(folders: Sequence[str], dest: str) -> str:
    """A local PEP 503 index in ``dest`` from the recorded answers in ``folders``; its URL."""
    from ..errors import AdapterMatrixError, ChoiceError
    from ..files import FileReadError, read_regular

    answers: Dict[str, RecordedProject] = {}
    for recorded in folders:
        if not os.path.isdir(recorded):  # a typo was an internal error, the index's page missing
            what = "no such folder" if not os.path.exists(recorded) else "not a folder"
            raise ChoiceError("recorded", f"{recorded}: {what}: give a folder of recorded PyPI answers")
        for path in sorted(Path(recorded).glob("*.json")):
            try:
                doc = json.loads(read_regular(str(path)).decode("utf-8"))
            except FileReadError as exc:
                raise AdapterMatrixError(str(exc)) from None
            except ValueError as exc:  # not UTF-8, not JSON
                raise AdapterMatrixError(f"{path}: not a recorded PyPI answer ({exc})") from None
            if isinstance(doc, dict) and "files" in doc and "name" in doc:
                answers[canonical_name(doc["name"])] = cast(RecordedProject, doc)
    if not answers:
        raise ChoiceError(
            "recorded",
            f"{', '.join(folders)}: no recorded PyPI answer (PEP 691 JSON) in it: record one with "
            "`adapter-matrix validate --upstream pypi --record DIR` (tests/fixtures/pypi/README.md)",
        )
    root = Path(dest) / "simple"
    for project, doc in answers.items():
        folder = root / project
        folder.mkdir(parents=True, exist_ok=True)
        links = []
        for entry in doc["files"]:
            filename = entry["filename"]
            if not _wheel_file(filename):  # every platform's: a command is resolved for its own
                continue
            version = parse_wheel_filename(filename)[1]
            _wheel(folder / filename, doc["name"], str(version), _metadata(doc["name"], str(version), entry, answers))
            attrs = ""
            requires = entry.get("requires-python")
            if requires:
                attrs += f' data-requires-python="{html.escape(requires)}"'
            yanked = entry.get("yanked")
            if yanked:
                attrs += f' data-yanked="{html.escape(yanked if isinstance(yanked, str) else "")}"'
            links.append(f'<a href="{html.escape(filename)}"{attrs}>{html.escape(filename)}</a><br>')
        (folder / "index.html").write_text(
            "<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n", encoding="utf-8"
        )
    (root / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n"
        + "\n".join(f'<a href="{p}/">{p}</a><br>' for p in sorted(answers))
        + "\n</body></html>\n",
        encoding="utf-8",
    )
    return root.resolve().as_uri()


def _split(commands: Sequence[str]) -> Tuple[List[str], List[str]]:
    """The requirements and the index options of a combination's pip commands, for one pip
    run that reads every index they read in turn: each command reads its ``--index-url``
    (PyPI when it names none) and its extra indexes; the first index stays the index, the
    others become extra indexes (``pip install 'torch==2.11.0+cpu' --index-url …/cpu``
    then ``pip install torch-npu==…`` reads PyPI for torch-npu)."""
    requirements: List[str] = []
    indexes: List[str] = []

    def add(option: str, url: str) -> None:
        if url in indexes[1::2]:
            return
        if option == "--index-url" and "--index-url" in indexes[::2]:
            option = "--extra-index-url"
        indexes.extend([option, url])

    for command in commands:
        words = shlex.split(command)
        args = words[words.index("install") + 1 :]
        options: List[Tuple[str, str]] = []
        i = 0
        while i < len(args):
            word = args[i]
            if word in _INDEX_OPTIONS and i + 1 < len(args):
                options.append(("--index-url" if word in ("--index-url", "-i") else word, args[i + 1]))
                i += 2
                continue
            if not word.startswith("-"):
                requirements.append(word)
            i += 1
        if not any(option == "--index-url" for option, _url in options):
            options.insert(0, ("--index-url", PYPI_SIMPLE))
        for option, url in options:
            add(option, url)
    return requirements, indexes


def _indexes_needed(indexes: Sequence[str]) -> List[str]:
    """The indexes (and find-links locations) a pip run's options read."""
    return list(indexes[1::2])


def _is_pypi(url: str) -> bool:
    return url.rstrip("/") in (PYPI_SIMPLE, "https://pypi.python.org/simple")


def _local(url: str) -> bool:
    """Whether ``url`` is an index on this machine that exists (a folder, a ``file:`` URL)."""
    from urllib.parse import urlsplit

    return urlsplit(url).scheme in ("", "file") and reachable(url) is None


def reachable(url: str) -> Optional[str]:
    """``None`` when the index at ``url`` answers (any HTTP status: it is there), else why
    not, in a line. Local folders and ``file:`` URLs are reachable when they exist."""
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    parts = urlsplit(url)
    if parts.scheme in ("", "file"):
        path = url2pathname(parts.path) if parts.scheme else url
        return None if Path(path).exists() else f"{url}: no such folder"
    from ..upstream.metadata import unreachable

    return unreachable(url.rstrip("/") + "/", timeout=15)


def resolve(
    commands: Sequence[str],
    python: str,
    index_url: Optional[str] = None,
    pip: Sequence[str] = (),
    platform: PipPlatform = PipPlatform(),
) -> PipReport:
    """pip's installation report for ``commands`` on a ``platform`` machine with CPython
    ``python`` (``index_url``: a record of PyPI, read instead of PyPI wherever a command reads it);
    ``{"error": ...}`` when pip cannot resolve them, ``{"unreachable": ...}`` when it could
    not read an index."""
    requirements, indexes = _split(commands)
    plain = python.rstrip("t")
    abi = "cp" + plain.replace(".", "") + ("t" if python.endswith("t") else "")
    args = [*(pip or (sys.executable, "-m", "pip")), "install", "--dry-run", "--quiet"]
    args += ["--report", "-", "--no-cache-dir", "--disable-pip-version-check", "--only-binary=:all:"]
    args += ["--python-version", plain, "--implementation", "cp", "--abi", abi, "--abi", "abi3", "--abi", "none"]
    for tag in platform.tags():
        args += ["--platform", tag]
    if index_url:  # the record stands for PyPI; a local index a command names (a folder) is read as it is
        indexes = [index_url if i % 2 and _is_pypi(word) else word for i, word in enumerate(indexes)]
    args += indexes
    # no pip.conf and no PIP_* variable: a machine's find-links or constraints would answer instead
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    # pip accepts another Python's tags only for a --target install; --dry-run writes nothing there
    with tempfile.TemporaryDirectory() as target:
        proc = subprocess.run(
            [*args, "--target", target, *requirements], capture_output=True, text=True, env=env, timeout=600
        )
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or proc.stderr.splitlines()
        first = (lines[0] if lines else f"pip exited {proc.returncode}").replace("ERROR: ", "", 1)
        # "could not find a version" after pip failed to connect says nothing of the index's versions
        if _UNREACHABLE.search(proc.stderr):
            return {"unreachable": f"pip could not read an index ({first})"}
        return {"error": first}
    report: PipReport = json.loads(proc.stdout)
    # pip takes a yanked release an == pins, and says so only in a warning (its report has
    # is_yanked from pip 24 on)
    report["yanked"] = sorted(set(_YANKED.findall(proc.stderr)))
    return report


class Run(NamedTuple):
    """One resolution to ask pip for: a combination's commands, on its platform, for a Python."""

    commands: Tuple[str, ...]
    python: str
    platform: PipPlatform
    entry: Combination


def published(combinations: Sequence[Mapping[str, object]]) -> List[Run]:
    """The resolutions to run: each distinct command list on each platform it is published
    for, for the oldest and the newest Python it is published for there (where
    requires-python and wheel tags bite)."""
    by_commands: Dict[Tuple[Tuple[str, ...], PipPlatform], List[Combination]] = {}
    # a selector's combinations, or a stack table's rows as the command line builds them: the
    # keys of a Combination either way (typed at their source once those views are)
    for entry in cast(Sequence[Combination], combinations):
        if entry["commands"]:
            key = (tuple(entry["commands"]), PipPlatform.of(entry.get("dimensions") or {}))
            by_commands.setdefault(key, []).append(entry)
    out = []
    for (commands, platform), entries in by_commands.items():
        ordered = sorted(entries, key=lambda e: (Version(e["python"].rstrip("t")), e["python"].endswith("t")))
        for chosen in [ordered[0]] + ([ordered[-1]] if len(ordered) > 1 else []):
            out.append(Run(commands, chosen["python"], platform, chosen))
    return out


def _unreachable_index(run: Run, index_url: Optional[str], known: Dict[str, Optional[str]]) -> Optional[str]:
    """Why ``run`` cannot be resolved from here, if it cannot: with a record (``index_url``,
    standing for PyPI), an index the record does not hold; without, an index that does not
    answer (``known``: each index's answer, asked once)."""
    needed = _indexes_needed(_split(run.commands)[1])
    if index_url is not None:
        missing = [url for url in needed if not _is_pypi(url) and not _local(url)]
        return f"the record holds PyPI only, not {', '.join(missing)}" if missing else None
    for url in needed:
        if url not in known:
            known[url] = reachable(url)
        if known[url] is not None:
            return f"index unreachable: {known[url]}"
    return None


def check_commands(
    combinations: Sequence[Mapping[str, object]],
    index_url: Optional[str] = None,
    pip: Sequence[str] = (),
    progress: Optional[Callable[[str, int, int], None]] = None,
) -> Resolutions:
    """Resolve every published command for its platform and Pythons (:func:`published`).
    ``index_url``: a record of PyPI to resolve against instead of the commands' indexes.
    ``progress`` hears ``("pip resolutions", done, total)`` as each ends."""
    problems: List[Problem] = []
    unreachable: List[Problem] = []
    runs = published(combinations)
    known: Dict[str, Optional[str]] = {}
    reports: List[PipReport] = []
    for run in runs:
        why = _unreachable_index(run, index_url, known)
        reports.append({"unreachable": why} if why else {})
    asked = [i for i, report in enumerate(reports) if not report]
    if progress is not None:
        progress("pip resolutions", 0, len(asked))
    # two pip processes at a time: each spends most of its time starting up and reading files
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            pool.submit(resolve, runs[i].commands, runs[i].python, index_url, pip, runs[i].platform): i for i in asked
        }
        for done, future in enumerate(as_completed(futures), 1):
            reports[futures[future]] = future.result()
            if progress is not None:
                progress("pip resolutions", done, len(asked))
    for run, report in zip(runs, reports):
        text = " && ".join(run.commands)
        if "unreachable" in report:
            unreachable.append(Problem(text, run.python, report["unreachable"], run.platform))
            continue
        if "error" in report:
            problems.append(Problem(text, run.python, f"does not resolve: {report['error']}", run.platform))
            continue
        installed = {
            canonical_name(item["metadata"]["name"]): item for item in report.get("install", []) if "metadata" in item
        }
        yanked = {(canonical_name(n), v) for n, v in report.get("yanked", [])}
        yanked |= {(name, item["metadata"]["version"]) for name, item in installed.items() if item.get("is_yanked")}
        for name, version in sorted(yanked):
            problems.append(Problem(text, run.python, f"pins a yanked release: {name}=={version}", run.platform))
        torch = installed.get(canonical_name("torch"))
        claimed = Version(run.entry["torch"])
        if torch is not None and Version(torch["metadata"]["version"]).public != claimed.public:
            got = torch["metadata"]["version"]
            problems.append(
                Problem(text, run.python, f"installs torch {got}, not the torch {claimed} it claims", run.platform)
            )
    return Resolutions(len(runs), problems, unreachable)
