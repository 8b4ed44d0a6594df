"""What a frozen release's ``release.json`` says, read as untrusted input.

``adapter-matrix release VERSION`` (:mod:`adapter_matrix.ci.release`) writes
``<evidence>/<VERSION>/release.json``; the gate, the verified view and the evidence
writer read it back with :func:`read_frozen`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Tuple, Union

from .. import limits
from .record_names import RELEASE_FILE, EvidenceError, check_name

__all__ = ["FROZEN_SCHEMA", "FrozenRelease", "read_frozen"]

FROZEN_SCHEMA = 1


@dataclass(frozen=True)
class FrozenRelease:
    """What ``release.json`` says: the release, the hash its records must have run on, where and when."""

    version: str
    sources_hash: str
    paths: Tuple[str, ...]
    commit: Optional[str]
    date: str  # YYYY-MM-DD (UTC)
    path: str  # the release.json it was read from

    def as_dict(self) -> Dict[str, object]:
        return {
            "schema": FROZEN_SCHEMA,
            "kind": "release",
            "release": self.version,
            "sources": {"hash": self.sources_hash, "paths": list(self.paths)},
            "commit": self.commit,
            "date": self.date,
        }


def _parse(path: str, doc: object) -> FrozenRelease:
    def bad(why: str) -> EvidenceError:
        return EvidenceError(
            f"{path}: not a frozen release ({why}) \u2014 restore it from git, or delete it and run `adapter-matrix release VERSION`"
        )

    if not isinstance(doc, dict) or doc.get("kind") != "release":
        raise bad('no "kind": "release"')
    version, sources, commit, date = doc.get("release"), doc.get("sources"), doc.get("commit"), doc.get("date")
    if not isinstance(version, str):
        raise bad("release is not a string")
    try:
        check_name(version, "release")
    except EvidenceError as exc:
        raise bad(str(exc)) from None
    if version != os.path.basename(os.path.dirname(path)):
        raise bad(f"it names release {version!r} but sits in folder {os.path.basename(os.path.dirname(path))!r}")
    if not isinstance(sources, dict) or not isinstance(sources.get("hash"), str):
        raise bad("sources.hash is not a string")
    paths = sources.get("paths") or []
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise bad("sources.paths is not a list of strings")
    if commit is not None and not isinstance(commit, str):
        raise bad("commit is not a string")
    try:
        _dt.date.fromisoformat(date if isinstance(date, str) else "")
    except ValueError:
        raise bad("date is not YYYY-MM-DD") from None
    return FrozenRelease(version, sources["hash"], tuple(paths), commit, str(date), path)


def read_frozen(folders: Union[str, Iterable[str]]) -> Dict[str, FrozenRelease]:
    """The releases frozen under ``folders`` (a folder or several): ``<release>/release.json``
    directly below each. :class:`EvidenceError` naming the file for a broken one."""
    found: Dict[str, FrozenRelease] = {}
    for folder in [folders] if isinstance(folders, str) else list(folders):
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name, RELEASE_FILE)
            if not os.path.isfile(path):
                continue
            try:
                with open(path, "rb") as fh:
                    raw = fh.read(limits.RELEASE_FILE_BYTES + 1)
                if len(raw) > limits.RELEASE_FILE_BYTES:
                    raise ValueError(f"larger than {limits.RELEASE_FILE_BYTES // 1024} KiB")
                doc = json.loads(raw.decode("utf-8"))
            except (OSError, ValueError, RecursionError) as exc:
                raise EvidenceError(
                    f"{path}: not a frozen release ({exc.__class__.__name__}: {str(exc)[:200]})"
                ) from None
            entry = _parse(path, doc)
            found.setdefault(entry.version, entry)
    return found
