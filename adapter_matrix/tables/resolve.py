"""Every published install command resolves: pip's own resolver, in ``--dry-run``.

The selector and the platform export publish commands (``check``'s fixes for a fresh
environment). A command can stop working after it is published: a pinned wheel is
yanked, or a dependency (a companion) pulls another torch than the cell claims. For
each distinct command, and the oldest and newest Python it is published for, this runs

    python -m pip install --dry-run --ignore-installed --report - \\
        --only-binary=:all: --python-version X.Y --platform <Linux x86_64 tags> REQUIREMENTS

against the commands' own indexes, or against a *recorded* index: folders of recorded
PyPI answers (PEP 691 JSON trimmed as ``tests/fixtures/pypi/README.md`` describes) that
:func:`build_index` turns into a local PEP 503 index of tiny wheels, one per recorded
Linux x86_64 or pure-Python file, each carrying the recorded ``Requires-Python``,
``Requires-Dist`` (dependencies on projects outside the record are dropped: they are not
what is being judged) and yanked flag. Offline, so CI and tests can run it.

A command fails when pip cannot resolve it, when the resolution picks a yanked file
(pip takes a yanked release that ``==`` pins, with a warning only), or when the torch it
resolves is not the torch the combination claims.
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
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from ..names import canonical_name, escaped_name

__all__ = ["Problem", "build_index", "published", "resolve", "check_commands"]

# pip's platform tags for a Linux x86_64 machine, newest glibc first (what a user's pip accepts)
_PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(40, 16, -1)] + [
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
    "linux_x86_64",
]
_YANKED = re.compile(r"yanked version: '([^']+)' candidate \(version (\S+)")
_INDEX_OPTIONS = ("--index-url", "--extra-index-url", "--find-links", "-i", "-f")


class Problem(NamedTuple):
    """A published command that does not install what it claims."""

    command: str
    python: str
    reason: str

    def __str__(self) -> str:
        return f"{self.command} (Python {self.python}): {self.reason}"


def _linux_or_pure(filename: str) -> bool:
    if not filename.endswith(".whl"):
        return False
    try:
        tags = parse_wheel_filename(filename)[3]
    except ValueError:
        return False
    return any(t.platform == "any" or t.platform in _PLATFORMS for t in tags)


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


def _metadata(name: str, version: str, entry: Dict[str, Any], known: Iterable[str]) -> str:
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
    answers: Dict[str, Dict[str, Any]] = {}
    for recorded in folders:
        for path in sorted(Path(recorded).glob("*.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(doc, dict) and "files" in doc and "name" in doc:
                answers[canonical_name(doc["name"])] = doc
    root = Path(dest) / "simple"
    for project, doc in answers.items():
        folder = root / project
        folder.mkdir(parents=True, exist_ok=True)
        links = []
        for entry in doc["files"]:
            filename = entry["filename"]
            if not _linux_or_pure(filename):
                continue
            version = parse_wheel_filename(filename)[1]
            _wheel(folder / filename, doc["name"], str(version), _metadata(doc["name"], str(version), entry, answers))
            attrs = ""
            if entry.get("requires-python"):
                attrs += f' data-requires-python="{html.escape(entry["requires-python"])}"'
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
    """The requirements and the index options of a combination's pip commands (the first
    --index-url stays the index; later ones become extra indexes, as installing in turn does)."""
    requirements: List[str] = []
    indexes: List[str] = []
    for command in commands:
        words = shlex.split(command)
        args = words[words.index("install") + 1 :]
        i = 0
        while i < len(args):
            word = args[i]
            if word in _INDEX_OPTIONS and i + 1 < len(args):
                option = "--index-url" if word in ("--index-url", "-i") else word
                if option == "--index-url" and "--index-url" in indexes:
                    option = "--extra-index-url"
                indexes += [option, args[i + 1]]
                i += 2
                continue
            if not word.startswith("-"):
                requirements.append(word)
            i += 1
    return requirements, indexes


def resolve(
    commands: Sequence[str], python: str, index_url: Optional[str] = None, pip: Sequence[str] = ()
) -> Dict[str, Any]:
    """pip's installation report for ``commands`` on Linux x86_64 CPython ``python``
    (``index_url``: resolve there instead of the commands' indexes); ``{"error": ...}``
    when pip cannot resolve them."""
    requirements, indexes = _split(commands)
    plain = python.rstrip("t")
    abi = "cp" + plain.replace(".", "") + ("t" if python.endswith("t") else "")
    args = [*(pip or (sys.executable, "-m", "pip")), "install", "--dry-run", "--quiet"]
    args += ["--report", "-", "--no-cache-dir", "--disable-pip-version-check", "--only-binary=:all:"]
    args += ["--python-version", plain, "--implementation", "cp", "--abi", abi, "--abi", "abi3", "--abi", "none"]
    for platform in _PLATFORMS:
        args += ["--platform", platform]
    args += ["--index-url", index_url] if index_url else indexes
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
        return {"error": (lines[0] if lines else f"pip exited {proc.returncode}").replace("ERROR: ", "", 1)}
    report: Dict[str, Any] = json.loads(proc.stdout)
    # pip takes a yanked release an == pins, and says so only in a warning (its report has
    # is_yanked from pip 24 on)
    report["yanked"] = sorted(set(_YANKED.findall(proc.stderr)))
    return report


def published(combinations: Sequence[Dict[str, Any]]) -> List[Tuple[Tuple[str, ...], str, Dict[str, Any]]]:
    """(commands, python, combination) to resolve: each distinct command list for the oldest
    and the newest Python it is published for (where requires-python and wheel tags bite)."""
    by_commands: Dict[Tuple[str, ...], List[Dict[str, Any]]] = {}
    for entry in combinations:
        if entry["commands"]:
            by_commands.setdefault(tuple(entry["commands"]), []).append(entry)
    out = []
    for commands, entries in by_commands.items():
        ordered = sorted(entries, key=lambda e: (Version(e["python"].rstrip("t")), e["python"].endswith("t")))
        for chosen in [ordered[0]] + ([ordered[-1]] if len(ordered) > 1 else []):
            out.append((commands, chosen["python"], chosen))
    return out


def check_commands(
    combinations: Sequence[Dict[str, Any]],
    index_url: Optional[str] = None,
    pip: Sequence[str] = (),
    progress: Optional[Callable[[str, int, int], None]] = None,
) -> Tuple[int, List[Problem]]:
    """Resolve every published command; (how many resolutions ran, the problems found).
    ``progress`` hears ``("pip resolutions", done, total)`` as each ends."""
    problems: List[Problem] = []
    runs = published(combinations)
    if progress is not None:
        progress("pip resolutions", 0, len(runs))
    # two pip processes at a time: each spends most of its time starting up and reading files
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(resolve, run[0], run[1], index_url, pip) for run in runs]
        for done, _future in enumerate(as_completed(futures), 1):
            if progress is not None:
                progress("pip resolutions", done, len(runs))
        reports = [future.result() for future in futures]
    for (commands, python, entry), report in zip(runs, reports):
        text = " && ".join(commands)
        if "error" in report:
            problems.append(Problem(text, python, f"does not resolve: {report['error']}"))
            continue
        installed = {
            canonical_name(item["metadata"]["name"]): item for item in report.get("install", []) if "metadata" in item
        }
        yanked = {(canonical_name(n), v) for n, v in report.get("yanked", [])}
        yanked |= {(name, item["metadata"]["version"]) for name, item in installed.items() if item.get("is_yanked")}
        for name, version in sorted(yanked):
            problems.append(Problem(text, python, f"pins a yanked release: {name}=={version}"))
        torch = installed.get(canonical_name("torch"))
        claimed = Version(entry["torch"])
        if torch is not None and Version(torch["metadata"]["version"]).public != claimed.public:
            got = torch["metadata"]["version"]
            problems.append(Problem(text, python, f"installs torch {got}, not the torch {claimed} it claims"))
    return len(runs), problems
