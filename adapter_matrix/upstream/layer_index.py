"""A layer's releases against its own wheels (``validate --upstream`` on a layer's matrix).

A layer publishes a table (vllm-ascend's versioning policy) and, separately, the pins its
wheels declare (``Requires-Dist``); pip obeys the second. Where a row pins a version the
wheel's requirement does not admit (the table says torch_npu ``2.7.1.post1``, the wheel
requires ``torch-npu==2.7.1``, and PEP 440's ``==2.7.1`` does not admit ``.post1``), users who
follow the table get a stack pip refuses, or pip silently installs another. Each such row is
a warning at the pin; a release the index lacks, or whose files carry no metadata, too.

The answer is PyPI's PEP 691 document with each file's metadata headers (``Name``,
``Version``, ``Requires-Python``, every ``Requires-Dist``), as a recording keeps it
(``tests/fixtures/pypi/README.md``); a release without wheels is judged by its sdist.
"""

from __future__ import annotations

import os
from email.parser import HeaderParser
from typing import Dict, List, Optional, Tuple, cast

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from ..matrix.diagnostics import Diagnostic
from ..matrix.model import Layer, LayerRelease
from ..names import canonical_name
from . import companion_index as _companions
from .history import answer_path, recorded_answer
from .index import UpstreamError
from .simple_html import IndexAnswer, IndexFile

__all__ = ["read_layer", "verify_layer"]

# The platforms a layer for an accelerator ships wheels for; a requirement counts when its
# marker holds on one of them.
_PLATFORMS = (("linux", "x86_64"), ("linux", "aarch64"))


def _version_of(filename: str) -> Optional[Version]:
    """The version a wheel's or an sdist's file name carries."""
    stem = filename[: -len(".whl")] if filename.endswith(".whl") else filename
    for suffix in (".tar.gz", ".zip"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            try:
                return Version(stem.rsplit("-", 1)[1])
            except (IndexError, InvalidVersion):
                return None
    parts = stem.split("-")
    try:
        return Version(parts[1]) if filename.endswith(".whl") and len(parts) >= 5 else None
    except InvalidVersion:
        return None


def _keep(text: str) -> str:
    """What a recording keeps of a layer's METADATA: name, version, Requires-Python and every requirement."""
    message = HeaderParser().parsestr(text, headersonly=True)
    kept = [
        f"{k}: {v}\n"
        for k, v in message.items()
        if k in ("Metadata-Version", "Name", "Version", "Requires-Python", "Requires-Dist")
    ]
    return "".join(kept)


def read_layer(source: str, name: str) -> Optional[IndexAnswer]:
    """The index's answer for ``name`` from ``pypi`` or a recorded folder; ``None`` when the folder
    has none (or ``source`` is a single file: torch's)."""
    if source == "pypi":
        return _companions.fetch_document(name, None, wheel=lambda _f: True, keep=_keep)
    if not os.path.isdir(source):
        return None
    document = recorded_answer(source, name)
    if document is not None and not (isinstance(document, dict) and isinstance(document.get("files"), list)):
        raise UpstreamError(f"{answer_path(source, name)}: no list of files: expected a PEP 691 answer for {name}")
    return cast(IndexAnswer, document)  # a list of files; each entry checked where read


def _requirements(document: IndexAnswer) -> Dict[Version, Tuple[List[Requirement], bool]]:
    """Per version: the requirements its files' metadata declare on Linux (wheels before the
    sdist), and whether any file carried metadata at all."""
    per: Dict[Version, Tuple[List[IndexFile], List[IndexFile]]] = {}
    for entry in document["files"]:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("filename"), str)
            or entry.get("yanked") not in (None, False)
        ):
            continue
        version = _version_of(entry["filename"])
        if version is not None:
            wheels, sdists = per.setdefault(version, ([], []))
            (wheels if entry["filename"].endswith(".whl") else sdists).append(entry)
    out: Dict[Version, Tuple[List[Requirement], bool]] = {}
    for version, (wheels, sdists) in per.items():
        texts = [e["metadata"] for e in (wheels or sdists) if isinstance(e.get("metadata"), str)]
        reqs: Dict[str, Requirement] = {}
        for text in texts:
            for line in HeaderParser().parsestr(text, headersonly=True).get_all("Requires-Dist") or []:
                try:
                    req = Requirement(line)
                except InvalidRequirement:
                    continue
                applies = req.marker is None or any(
                    req.marker.evaluate(dict(_companions.marker_environment("3.11", os_name, arch), extra=""))
                    for os_name, arch in _PLATFORMS
                )
                if applies:
                    reqs.setdefault(str(req), req)
        out[version] = (list(reqs.values()), bool(texts))
    return out


def _verify_release(layer: Layer, release: LayerRelease, declared: List[Requirement]) -> List[Diagnostic]:
    out = []
    by_name: Dict[str, List[Requirement]] = {}
    for req in declared:
        by_name.setdefault(canonical_name(req.name), []).append(req)
    for pin in release.packages:
        wheel = by_name.get(pin.name)
        if not wheel:
            continue  # the wheel does not pin it: the table's row is the only statement
        for version in pin.exact:
            refused = [r for r in wheel if not r.specifier.contains(version, prereleases=True)]
            if refused:
                out.append(
                    Diagnostic(
                        pin.mark,
                        f"{layer.distribution} {release.version}: the table pins {pin}, but its wheel requires "
                        f"{refused[0]}, which does not admit {version}",
                        "pip obeys the wheel: correct the row, or publish a build whose requirement admits it",
                        "warning",
                    )
                )
    return out


def verify_layer(layer: Layer, source: str) -> List[Diagnostic]:
    """Each release whose pins its wheel's ``Requires-Dist`` contradicts, and each release the
    index does not have; nothing when the index does not know the layer."""
    document = read_layer(source, layer.distribution)
    if document is None:
        return []
    published = _requirements(document)
    out: List[Diagnostic] = []
    for release in layer.releases:
        entry = published.get(release.version)
        if entry is None:
            out.append(
                Diagnostic(
                    release.mark,
                    f"{layer.distribution} {release.version} is not on the index ({source})",
                    "a row users cannot install: check the version, or name the index with index-url:",
                    "warning",
                )
            )
            continue
        declared, described = entry
        if not described:
            out.append(
                Diagnostic(
                    release.mark,
                    f"{layer.distribution} {release.version}: its files carry no metadata here, so its pins are not verified",
                    "record the answer with each file's metadata (tests/fixtures/pypi/README.md)",
                    "warning",
                )
            )
            continue
        out += _verify_release(layer, release, declared)
    return out
