"""Upstream facts about companion packages, read from the index and checked against the matrix.

For each companion that ``compat.yaml`` gives torch facts for, ``validate --upstream``
reads its PEP 691 file list and the core metadata of each of its **Linux x86_64 wheels**
(:mod:`adapter_matrix.upstream.metadata`), and takes from it the evidence that matters: the
``torch`` requirement the wheels declare (``Requires-Dist: torch==2.1.0``). That is what
pip enforces, so it decides which torch a release pairs with; a release is built for the
line of the oldest torch it admits. The versions in a name (torchvision 0.16 "is for"
torch 2.1) and README tables are not evidence.

A recorded answer is a folder (``--record DIR`` writes one): ``DIR/torch.json`` and one
``DIR/<companion>.json`` each, PEP 691 answers trimmed to what is read, every wheel read
carrying the headers of its ``METADATA`` under ``"metadata"``. ``--upstream FILE`` (torch's
answer alone) verifies no companion, and says so.

Releases uploaded before the oldest torch line the file describes are out of scope: they
were built for older torch.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from dataclasses import dataclass
from email.parser import HeaderParser
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple, cast

from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ..files import atomic_write, make_folders
from ..matrix.companions import NONE, requirement
from ..matrix.diagnostics import Diagnostic
from ..matrix.model import Companion, CompanionLine, Matrix, Spec
from ..names import canonical_name
from . import metadata as _metadata
from . import simple_html
from .index import ACCEPT, UpstreamError

# PEP 691's content negotiation: the JSON form first, the HTML forms of PEP 503 if that is all an index has
ACCEPT_ANY = f"{ACCEPT}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"

__all__ = [
    "ACCEPT_ANY",
    "NotOnIndex",
    "UpstreamRelease",
    "CompanionIndex",
    "fetch_document",
    "parse_companion",
    "project_url",
    "read_companions",
    "record",
    "intersection",
    "marker_environment",
    "torch_requirements",
    "trim",
    "wheel_tags",
    "write_answer",
    "built_for",
    "verify_companions",
    "wanted_lines",
    "written_lines",
]

WORKERS = 8  # metadata requests in flight

_LINUX_X86_64 = re.compile(r"^manylinux[0-9a-z_]*_x86_64$")
_CPYTHON = re.compile(r"^cp(\d)(\d+)$")
_KEPT = ("filename", "upload-time", "requires-python", "yanked", "core-metadata", "data-dist-info-metadata")


class NotOnIndex(UpstreamError):
    """The index does not know the project (HTTP 404): nothing published yet."""


@dataclass(frozen=True)
class UpstreamRelease:
    """One release of a companion on the index, as its Linux x86_64 wheels declare it.

    ``torch`` is what every wheel allows (the intersection of their ``torch``
    requirements), ``None`` when no wheel declares one; ``declared`` lists the distinct
    declarations as written.
    """

    version: Version
    torch: Optional[SpecifierSet]
    declared: Tuple[str, ...]
    uploaded: Optional[_dt.date]
    wheels: int


@dataclass(frozen=True)
class CompanionIndex:
    """What the index says about one companion: its in-scope releases and the yanked ones."""

    name: str
    origin: str
    releases: Dict[Version, UpstreamRelease]
    yanked: FrozenSet[Version]


# -- reading -------------------------------------------------------------------------------


def wheel_tags(filename: str) -> Optional[Tuple[Version, FrozenSet[Tag]]]:
    """(version, tags) of a wheel's filename; ``None`` for anything that is not a wheel's."""
    if not filename.endswith(".whl"):
        return None
    try:
        _name, version, _build, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return version, tags


def _linux_wheel(filename: str) -> Optional[Tuple[Version, str]]:
    """(version, python version for markers) of a final release's Linux x86_64 wheel."""
    parsed = wheel_tags(filename)
    if parsed is None:
        return None
    version, tags = parsed
    if version.is_prerelease or version.local or not any(_LINUX_X86_64.match(t.platform) for t in tags):
        return None
    match = next((_CPYTHON.match(t.interpreter) for t in tags if _CPYTHON.match(t.interpreter)), None)
    return version, (f"{match[1]}.{match[2]}" if match else "3.11")


def _day(value: object) -> Optional[_dt.date]:
    try:
        return _dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def project_url(name: str, index_url: Optional[str] = None) -> str:
    """The Simple API page of project ``name`` on an index (PyPI's by default): ``INDEX/<name>/``,
    the name normalized as PEP 503 says."""
    if index_url is None:
        return _metadata.simple_url(name)  # PyPI's, or $ADAPTER_MATRIX_INDEX_URL's
    return f"{index_url.rstrip('/')}/{canonical_name(name)}/"


def fetch_document(
    name: str,
    floor: Optional[_dt.date],
    *,
    timeout: float = 30.0,
    wheel: Callable[[str], bool] = lambda filename: _linux_wheel(filename) is not None,
    keep: Callable[[str], str] = _metadata.headers,
    workers: int = WORKERS,
    index_url: Optional[str] = None,
    yanked: bool = False,
) -> simple_html.IndexAnswer:
    """The Simple API answer for ``name`` from ``index_url`` (PyPI's by default; PEP 691 JSON,
    or a PEP 503 HTML page read as the JSON it stands for), trimmed, each in-scope wheel (by
    default: Linux x86_64, final releases; yanked ones too with ``yanked``) with what ``keep``
    takes of its ``METADATA`` under ``"metadata"`` (the form a recording keeps). An HTML answer
    says so (``"html": true``): a recording keeps it in that form."""
    url = project_url(name, index_url)
    try:
        body, reply = _metadata.http_get(url, {"Accept": ACCEPT_ANY}, timeout)
        html = simple_html.is_html(reply.get("content-type", ""), body)
        if html:
            document = simple_html.parse_page(body.decode("utf-8", errors="replace"), name, url)
        else:
            document = json.loads(body)
    except _metadata.MetadataError as exc:
        if exc.status == 404:
            raise NotOnIndex(f"{url}: the index has no project {name} (HTTP 404)") from None
        raise UpstreamError(
            f"cannot read {exc} \u2014 check the network, or pass a recorded folder: --upstream DIR"
        ) from None
    except ValueError as exc:
        raise UpstreamError(f"{url} is neither a PEP 691 JSON answer nor a PEP 503 page ({exc})") from None
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, list):
        raise UpstreamError(f"{url}: the answer has no list of files")
    trimmed = [_kept(f) for f in files if isinstance(f, dict) and isinstance(f.get("filename"), str)]
    wanted = [
        (entry, source)
        for entry, source in zip(
            trimmed, [f for f in files if isinstance(f, dict) and isinstance(f.get("filename"), str)]
        )
        if wheel(entry["filename"])
        and (yanked or not _yanked(entry))
        and (floor is None or (_day(entry.get("upload-time")) or floor) >= floor)
    ]

    def read(pair: Tuple[simple_html.IndexFile, simple_html.IndexFile]) -> None:
        entry, source = pair
        announced = bool(source.get("core-metadata") or source.get("data-dist-info-metadata"))
        try:
            entry["metadata"] = keep(_metadata.wheel_metadata(source["url"], announced, timeout))
        except (_metadata.MetadataError, KeyError) as exc:
            if _yanked(entry):  # a yanked file may be gone: recorded without its metadata, as such
                return
            raise UpstreamError(f"cannot read the metadata of {entry['filename']}: {exc}") from None

    _metadata.fan_out(read, wanted, f"{canonical_name(name)} wheels", workers)
    out: simple_html.IndexAnswer = {
        "meta": document.get("meta"),
        "name": document.get("name"),
        "versions": document.get("versions"),
        "files": trimmed,
    }
    if html:
        out["html"] = True
    return out


def _kept(entry: Mapping[str, object]) -> simple_html.IndexFile:
    """What a recording keeps of an index's file entry (its values are checked where read)."""
    return cast(simple_html.IndexFile, {k: entry[k] for k in _KEPT if k in entry})


def _yanked(entry: Mapping[str, object]) -> bool:
    value = entry.get("yanked")
    return value is True or isinstance(value, str)  # PEP 691: false, true, or the reason


def marker_environment(python: str, os_name: str = "linux", arch: str = "x86_64") -> Dict[str, str]:
    """The PEP 508 marker values of CPython ``python`` on a platform (``os`` and ``arch`` as
    the built-in detectors name them: linux, windows, macos; x86_64, aarch64)."""
    return {
        "extra": "",
        "sys_platform": {"windows": "win32", "macos": "darwin"}.get(os_name, os_name),
        "platform_system": {"linux": "Linux", "windows": "Windows", "macos": "Darwin"}.get(os_name, os_name),
        "platform_machine": "AMD64" if (os_name, arch) == ("windows", "x86_64") else arch,
        "os_name": "nt" if os_name == "windows" else "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "python_version": python,
        "python_full_version": f"{python}.0",
    }


def torch_requirements(text: str, environment: Dict[str, str]) -> List[Tuple[Requirement, str]]:
    """The ``torch`` requirements of a METADATA text that apply in ``environment`` (extras do
    not), each with its text as written (whitespace folded)."""
    found: List[Tuple[Requirement, str]] = []
    for line in HeaderParser().parsestr(text, headersonly=True).get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonical_name(req.name) != "torch":
            continue
        try:
            if req.marker is not None and not req.marker.evaluate(environment):
                continue
        except InvalidMarker:  # pragma: no cover - a marker packaging parsed but cannot evaluate
            continue
        found.append((req, " ".join(line.split())))
    return found


def _torch_requirement(text: str, python: str) -> Tuple[Optional[SpecifierSet], Tuple[str, ...]]:
    """The torch requirement of a METADATA text for Linux x86_64 CPython ``python``:
    (the intersection of the applicable ones, their texts)."""
    found = torch_requirements(text, marker_environment(python))
    if not found:
        return None, ()
    return intersection(req.specifier for req, _text in found), tuple(line for _req, line in found)


def intersection(specs: Iterable[SpecifierSet]) -> SpecifierSet:
    """What every specifier set allows, each specifier once (packaging 26's ``&`` keeps repeats)."""
    return SpecifierSet(",".join(sorted({str(one) for spec in specs for one in spec})))


def parse_companion(document: object, name: str, origin: str) -> CompanionIndex:
    """The releases a (recorded) answer shows for companion ``name``: every final release
    with a Linux x86_64 wheel whose metadata was read, and the torch it requires."""

    def bad(what: str) -> UpstreamError:
        return UpstreamError(
            f"{origin}: {what} \u2014 expected a PEP 691 answer for {name} recorded with `validate --record DIR`"
        )

    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        raise bad("no list of files")
    if canonical_name(str(document.get("name", ""))) != canonical_name(name):
        raise bad(f"it lists the files of {document.get('name')!r}, not {name}")
    declared: Dict[Version, List[Tuple[Optional[SpecifierSet], Tuple[str, ...]]]] = {}
    uploaded: Dict[Version, _dt.date] = {}
    seen, live = set(), set()
    for entry in document["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            raise bad("a file without a filename")
        wheel = _linux_wheel(entry["filename"])
        if wheel is None:
            continue
        version, python = wheel
        seen.add(version)
        if _yanked(entry):
            continue
        live.add(version)
        if not isinstance(entry.get("metadata"), str):
            continue  # out of scope when recorded (uploaded before the oldest described torch)
        declared.setdefault(version, []).append(_torch_requirement(entry["metadata"], python))
        day = _day(entry.get("upload-time"))
        if day is not None and (version not in uploaded or day < uploaded[version]):
            uploaded[version] = day
    releases = {}
    for version, per_wheel in sorted(declared.items()):
        specs = [spec for spec, _texts in per_wheel]
        together = intersection(s for s in specs if s is not None) if any(s is not None for s in specs) else None
        texts = tuple(dict.fromkeys(t for _spec, ts in per_wheel for t in ts))
        releases[version] = UpstreamRelease(version, together, texts, uploaded.get(version), len(per_wheel))
    return CompanionIndex(name, origin, releases, frozenset(seen - live))


def _floor(matrix: Matrix) -> Optional[_dt.date]:
    return min((line.released for line in matrix.torch), default=None)


def read_companions(source: str, matrix: Matrix) -> Tuple[Dict[str, CompanionIndex], Dict[str, str]]:
    """The answers for every companion of ``matrix`` with torch facts, from ``source``
    (``pypi``, a recorded folder, or torch's recorded file), and, per companion without one,
    why not."""
    wanted = [c.name for c in matrix.companions if c.torch_facts]
    found: Dict[str, CompanionIndex] = {}
    missing: Dict[str, str] = {}
    for name in wanted:
        if source == "pypi":
            found[name] = parse_companion(fetch_document(name, _floor(matrix)), name, project_url(name))
        elif os.path.isdir(source):
            path = os.path.join(source, f"{canonical_name(name)}.json")
            try:
                with open(path, "rb") as fh:
                    document = json.loads(fh.read())
            except FileNotFoundError:
                missing[name] = f"{source} holds no recorded answer for it ({os.path.basename(path)})"
                continue
            except (OSError, ValueError) as exc:
                raise UpstreamError(f"cannot read {path}: {exc}") from None
            found[name] = parse_companion(document, name, path)
        else:
            missing[name] = (
                f"{source} is torch's answer alone; pass a folder recorded with `validate --upstream pypi --record DIR`"
            )
    return found, missing


def record(folder: str, matrix: Matrix, torch_answer: bytes) -> List[str]:
    """Record PyPI's answers for torch and every companion with torch facts into ``folder``
    (one JSON file each, one file entry per line so diffs stay readable); the paths written."""
    make_folders(folder)
    documents = {"torch": trim(json.loads(torch_answer))}
    for comp in matrix.companions:
        if comp.torch_facts:
            documents[canonical_name(comp.name)] = fetch_document(comp.name, _floor(matrix))
    paths = []
    for name, document in documents.items():
        path = os.path.join(folder, f"{name}.json")
        write_answer(path, document)
        paths.append(path)
    return paths


def trim(document: simple_html.IndexAnswer) -> simple_html.IndexAnswer:
    """A PEP 691 answer as a recording keeps it: what this tool reads of each file."""
    return {
        "meta": document.get("meta"),
        "name": document.get("name"),
        "versions": document.get("versions"),
        "files": [_kept(f) for f in document.get("files", []) if isinstance(f, dict)],
    }


def write_answer(path: str, document: simple_html.IndexAnswer) -> None:
    """Save a trimmed answer as a recording keeps it: one file entry per line, so that a
    re-recording's diff shows what the index changed."""
    head = "".join(f"  {json.dumps(k)}: {json.dumps(document.get(k))},\n" for k in ("meta", "name", "versions"))
    body = ",\n".join("    " + json.dumps(f) for f in document["files"])
    atomic_write(path, "{\n" + head + '  "files": [\n' + body + "\n  ]\n}\n")


# -- verification ---------------------------------------------------------------------------


def built_for(torch: SpecifierSet, matrix: Matrix) -> Optional[Version]:
    """The torch line a requirement was built for: that of the oldest described torch it admits."""
    for line in matrix.torch:
        if any(torch.contains(p, prereleases=True) for p in line.patches):
            return line.minor
    return None


def _as_written(spec: SpecifierSet) -> str:
    """How the file writes a requirement: ``2.1.0`` for ``==2.1.0``, else the specifier."""
    specs = list(spec)
    if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
        return specs[0].version
    return ",".join(sorted(str(s) for s in specs))


def _same(written: Spec, upstream: SpecifierSet) -> bool:
    return SpecifierSet(requirement(written)) == upstream


def _guess_line(matrix: Matrix, day: Optional[_dt.date]) -> Optional[Version]:
    """The newest described torch line released on or before ``day``."""
    lines = [line.minor for line in matrix.torch if day is not None and line.released <= day]
    return lines[-1] if lines else None


def verify_companions(
    matrix: Matrix, found: Dict[str, CompanionIndex], missing: Dict[str, str], source: str
) -> List[Diagnostic]:
    """Check the torch facts of every companion against the index; diagnostics point at the
    value to change. A companion without an answer is a warning saying why."""
    out: List[Diagnostic] = []
    fix = f"or run `adapter-matrix validate --upstream {source} --write`"
    for comp in matrix.companions:
        if not comp.torch_facts:
            continue
        if comp.name in missing:
            out.append(
                Diagnostic(
                    comp.mark, f"the torch facts of {comp.name} are not verified: {missing[comp.name]}", "", "warning"
                )
            )
            continue
        out += _verify(matrix, comp, found[comp.name], fix)
    return out


def _verify(matrix: Matrix, comp: Companion, index: CompanionIndex, fix: str) -> List[Diagnostic]:
    out: List[Diagnostic] = []
    where = {rel.version: rel for rel in comp.releases}
    for rel in comp.releases:
        known = index.releases.get(rel.version)
        if known is None:
            why = "was yanked" if rel.version in index.yanked else "has no Linux x86_64 wheel"
            out.append(
                Diagnostic(
                    rel.mark, f"{comp.name} {rel.version} {why} on the index", f"remove it from torch {rel.line}, {fix}"
                )
            )
        elif known.torch is None:
            out.append(
                Diagnostic(
                    rel.mark,
                    f"{comp.name} {rel.version} declares no torch requirement: pip installs it beside any torch, "
                    f"and the pairing written here (torch{requirement(rel.torch)}) is not verified",
                    "keep it only if the project documents the pairing",
                    "warning",
                )
            )
        elif not _same(rel.torch, known.torch):
            out.append(
                Diagnostic(
                    rel.mark,
                    f"{comp.name} {rel.version} requires torch{known.torch} (its wheels declare Requires-Dist: "
                    f"{'; '.join(known.declared)}), not torch{requirement(rel.torch)}",
                    f"write {rel.version}: {_as_written(known.torch)}, {fix}",
                )
            )
        if (
            known is not None
            and len({t.replace(" ", "").replace("(", "").replace(")", "") for t in known.declared}) > 1
        ):
            out.append(
                Diagnostic(
                    rel.mark,
                    f"the wheels of {comp.name} {rel.version} declare different torch requirements: {'; '.join(known.declared)}",
                    f"a release pairs with what every wheel allows (torch{known.torch})",
                    "warning",
                )
            )
    for version, known in index.releases.items():
        if version in where:
            continue
        if known.torch is None:
            guess = _guess_line(matrix, known.uploaded)
            hint = f"uploaded {known.uploaded}" + (f", when torch {guess} was the newest line" if guess else "")
            out.append(
                Diagnostic(
                    comp.mark,
                    f"{comp.name} {version} is on the index but declares no torch requirement ({hint})",
                    "list it by hand under the torch line its project documents, or leave it out",
                    "warning",
                )
            )
            continue
        line = built_for(known.torch, matrix)
        if line is None:
            continue  # built for a torch this file does not describe
        entry = comp.line(line)
        said = f"{comp.name} {version} requires torch{known.torch} (built for torch {line})"
        if entry is not None and not entry.releases:
            out.append(
                Diagnostic(
                    entry.mark, f"{said}, but this file says {NONE} for torch {line}", f'list it under "{line}", {fix}'
                )
            )
        else:
            out.append(
                Diagnostic(
                    entry.mark if entry else comp.mark,
                    f"{said} and is on the index, but this file does not list it",
                    f'add {version}: {_as_written(known.torch)} under "{line}", {fix}',
                    "warning",
                )
            )
    return out


def wanted_lines(
    matrix: Matrix, comp: Companion, index: CompanionIndex
) -> Dict[Version, Tuple[Tuple[Version, str], ...]]:
    """Per described torch line, the releases built for it as the index says, each with the
    requirement as the file writes it; releases the file lists that declare no torch
    requirement are kept as written, releases the index lacks are dropped."""
    out: Dict[Version, List[Tuple[Version, str]]] = {line.minor: [] for line in matrix.torch}
    for version, known in index.releases.items():
        if known.torch is None:
            rel = comp.release(version)
            if rel is not None and rel.line in out:
                out[rel.line].append((version, _as_written(SpecifierSet(requirement(rel.torch)))))
            continue
        line = built_for(known.torch, matrix)
        if line is not None:
            out[line].append((version, _as_written(known.torch)))
    return {line: tuple(sorted(releases)) for line, releases in out.items()}


def written_lines(entry: Optional[CompanionLine]) -> Optional[Tuple[Tuple[Version, str], ...]]:
    """A line's releases as the file states them, comparable with :func:`wanted_lines`."""
    if entry is None:
        return None
    return tuple(sorted((r.version, _as_written(SpecifierSet(requirement(r.torch)))) for r in entry.releases))
