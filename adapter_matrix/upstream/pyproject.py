"""``validate --pyproject``: packaging metadata must say what the matrix says.

Three places in ``pyproject.toml`` restate the matrix and drift from it (torch_npu's
setup.py classifiers disagreed with its tables). Their expected values come from the
newest release of the matrix:

``requires-python``
    admits every Python the newest release supports (its Python claim intersected
    with the wheels of the torch lines it claims) and rejects the Python just below
    the oldest. No upper bound is asked for: caps on requires-python make resolvers
    pick ancient releases instead of failing, and ``check`` explains a too-new Python.
    A project without one gets a warning (pip would install it on any Python).
``Programming Language :: Python :: 3.X`` classifiers
    exactly one per supported Python (free-threaded builds have no such classifier),
    when the project declares any: a project without Python version classifiers
    claims nothing to disagree with.
the torch requirement
    every ``torch`` requirement in ``dependencies`` or in an extra (e.g. ``device``)
    has the release's torch specifier set. A project without one is not checked.

Only what the project declares is judged: a dynamic field, an absent one, or a
``pyproject.toml`` without ``[project]`` (the metadata lives in ``setup.py``) is no
disagreement.

Each finding is a :class:`~adapter_matrix.matrix.diagnostics.Diagnostic` at the line and
column of the offending key or value, with the value it should have.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from ..files import FileReadError, read_keeping_newlines, read_regular
from ..matrix.diagnostics import Diagnostic, Mark, display_path
from ..matrix.model import Matrix, PythonVersion, Release
from ..matrix.queries import claimed_lines, pythons_for
from ..matrix.textedit import Edit, apply_edits
from ..names import canonical_name

__all__ = ["expected_pythons", "check_pyproject", "fixed_pyproject", "matrix_of"]

_CLASSIFIER = re.compile(r"^Programming Language :: Python :: (\d+\.\d+)$")
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def expected_pythons(matrix: Matrix, release: Release) -> List[PythonVersion]:
    """The Pythons ``release`` supports on some torch line it claims, oldest first."""
    found = {p for line, _patches in claimed_lines(matrix, release) for p in pythons_for(release, line)}
    return sorted(p for p in found if not p.free_threaded)


class _Locator:
    """Finds where keys and string values sit in the TOML text (parsers drop positions)."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.lines = text.splitlines()
        self._starts = [0]  # the offset of each line's first character
        for raw in text.splitlines(keepends=True):
            self._starts.append(self._starts[-1] + len(raw))

    # The edits `validate --pyproject --write` makes: each from a mark a check found, checked
    # against the text there (None when the value is not written as found, e.g. with escapes).

    def _offset(self, mark: Mark) -> int:
        return self._starts[mark.line - 1] + mark.column - 1 if 0 < mark.line <= len(self.lines) else -1

    def _literal(self, mark: Mark, value: str) -> Optional[Tuple[int, int]]:
        at = self._offset(mark)
        if at < 0:
            return None
        quote = self.text[at : at + 1]
        if quote not in ('"', "'") or self.text[at : at + len(value) + 2] != quote + value + quote:
            return None
        return at, at + len(value) + 2

    def string(self, mark: Mark, value: str, new: str) -> Optional[Edit]:
        """Replace the string ``value`` at ``mark`` by ``new`` (a TOML basic string)."""
        span = self._literal(mark, value)
        quoted = '"' + new.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return None if span is None else (span[0], span[1], quoted)

    def remove_element(self, mark: Mark, value: str) -> Optional[Edit]:
        """Remove the array element ``value`` at ``mark``: its whole line when it stands alone
        there (a multi-line array), else the element and its comma."""
        span = self._literal(mark, value)
        if span is None:
            return None
        line = self.lines[mark.line - 1]
        if re.fullmatch(r"\s*" + re.escape(self.text[span[0] : span[1]]) + r"\s*,?\s*(#.*)?", line):
            start = self._starts[mark.line - 1]
            return start, self._starts[mark.line], ""
        tail = re.match(r"\s*,\s*", self.text[span[1] :])
        return span[0], span[1] + (tail.end() if tail else 0), ""

    def add_elements(self, after: Tuple[Mark, str], values: List[str]) -> Optional[Edit]:
        """Insert the (quoted) ``values`` into the array after the element ``after``: as lines of
        its indentation when it stands on a line of its own, else inline."""
        mark, value = after
        span = self._literal(mark, value)
        if span is None:
            return None
        line = self.lines[mark.line - 1]
        if re.fullmatch(r"\s*" + re.escape(self.text[span[0] : span[1]]) + r"\s*,?\s*(#.*)?", line):
            indent = line[: len(line) - len(line.lstrip())]
            end = self._starts[mark.line]
            return end, end, "".join(f"{indent}{v},\n" for v in values)
        return span[1], span[1], "".join(f", {v}" for v in values)

    def mark(self, line: int, column: int) -> Mark:
        return Mark(self.path, line, column)

    def _table(self, name: str) -> Tuple[int, int]:
        """The 0-based line span of ``[name]``'s body (the whole file if absent)."""
        start = None
        for i, line in enumerate(self.lines):
            header = _HEADER.match(line)
            if header is None:
                continue
            if start is not None:
                return start, i
            if header.group(1).replace(" ", "").replace('"', "") == name:
                start = i + 1
        return (start, len(self.lines)) if start is not None else (0, len(self.lines))

    def key(self, table: str, key: str) -> Mark:
        """The position of ``key = ...`` in ``[table]`` (else of the table's header)."""
        lo, hi = self._table(table)
        pattern = re.compile(r"^(\s*)[\"']?" + re.escape(key) + r"[\"']?\s*=")
        for i in range(lo, hi):
            found = pattern.match(self.lines[i])
            if found:
                return self.mark(i + 1, len(found.group(1)) + 1)
        return self.mark(max(lo, 1), 1)

    def value(self, table: str, key: str, value: str) -> Mark:
        """The position of the string ``value`` after ``key`` in ``[table]``."""
        start = self.key(table, key)
        _lo, hi = self._table(table)
        for i in range(start.line - 1, hi):
            for quote in ('"', "'"):
                col = self.lines[i].find(quote + value + quote)
                if col >= 0:
                    return self.mark(i + 1, col + 1)
        return start


def _load(path: str) -> Tuple[Optional[Dict[str, Any]], Optional[Diagnostic]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    shown = display_path(path)
    try:  # a regular file, bounded: a FIFO named pyproject.toml is refused, never waited on
        return tomllib.loads(read_regular(path).decode("utf-8")), None
    except FileReadError as exc:
        return None, Diagnostic(
            Mark(shown, 0, 0), f"cannot read it: {exc.reason}", "give the path of the project's pyproject.toml"
        )
    except UnicodeDecodeError as exc:
        return None, Diagnostic(Mark(shown, 0, 0), f"not UTF-8 (byte {exc.start})", "save it as UTF-8")
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"at line (\d+), column (\d+)", str(exc))
        line, col = (int(where.group(1)), int(where.group(2))) if where else (1, 1)
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        return None, Diagnostic(Mark(shown, line, col), f"not valid TOML: {message}", "fix the syntax")


def _check_requires_python(
    project: Dict[str, Any], pythons: List[PythonVersion], claimant: str, at: _Locator
) -> List[_Found]:
    oldest = pythons[0].version
    expected = _expected_requires_python(project.get("requires-python"), pythons)
    text = project.get("requires-python")
    if text is None:  # nothing declared to disagree with, but pip would install it on any Python
        return [
            _Found(
                Diagnostic(
                    at.key("project", "name"),
                    "[project] has no requires-python",
                    f'add requires-python = "{expected}"',
                    severity="warning",
                )
            )
        ]
    mark = at.value("project", "requires-python", str(text))
    try:
        spec = SpecifierSet(str(text))
    except InvalidSpecifier:
        found = Diagnostic(mark, f"requires-python {text!r} is not a PEP 440 specifier set", f'write "{expected}"')
        return [_Found(found, [at.string(mark, str(text), expected)])]
    refused = [p for p in pythons if not spec.contains(p.version, prereleases=True)]
    below = Version(f"{oldest.major}.{oldest.minor - 1}") if oldest.minor else None
    problems = []
    if refused:
        problems.append("refuses Python " + ", ".join(str(p) for p in refused) + ", which it supports")
    if below is not None and spec.contains(below, prereleases=True):
        problems.append(f"admits Python {below.major}.{below.minor}, which it does not support")
    if not problems:
        return []
    message = f"requires-python {text!r} disagrees with {claimant}: " + "; ".join(problems)
    return [
        _Found(
            Diagnostic(mark, message, f'write requires-python = "{expected}"'), [at.string(mark, str(text), expected)]
        )
    ]


def _expected_requires_python(declared: object, pythons: List[PythonVersion]) -> str:
    """``>=OLDEST``, and the declared upper bounds (``<3.14``) that refuse no supported Python:
    the project may keep its cap, the matrix only asks for its floor."""
    expected = f">={pythons[0].version}"
    try:
        spec = SpecifierSet(str(declared)) if isinstance(declared, str) else SpecifierSet()
    except InvalidSpecifier:
        return expected
    caps = [
        str(s)
        for s in spec
        if s.operator in ("<", "<=", "!=") and all(s.contains(p.version, prereleases=True) for p in pythons)
    ]
    return ",".join([expected, *sorted(caps)])


def _check_classifiers(
    project: Dict[str, Any], pythons: List[PythonVersion], claimant: str, at: _Locator
) -> List[_Found]:
    classifiers = [c for c in project.get("classifiers", []) if isinstance(c, str)]
    declared: Dict[str, str] = {}  # "3.11" -> its classifier
    for classifier in classifiers:
        found = _CLASSIFIER.match(classifier)
        if found:
            declared[found.group(1)] = classifier
    if not declared:  # the project claims no Python version: nothing to disagree with
        return []
    wanted = {str(p) for p in pythons}
    out: List[_Found] = []
    kept: Optional[Tuple[Mark, str]] = None  # the last classifier of a supported Python: new ones go after it
    for version, classifier in sorted(declared.items(), key=lambda kv: Version(kv[0])):
        mark = at.value("project", "classifiers", classifier)
        if version in wanted:
            kept = (mark, classifier)
            continue
        extra = Diagnostic(
            mark, f"classifier {classifier!r} claims Python {version}, which {claimant} does not support", "remove it"
        )
        out.append(_Found(extra, [at.remove_element(mark, classifier)]))
    missing = sorted(wanted - set(declared), key=Version)
    if missing:
        added = [f'"Programming Language :: Python :: {v}"' for v in missing]
        lack = Diagnostic(
            at.key("project", "classifiers"),
            f"classifiers lack Python {', '.join(missing)}, which {claimant} supports",
            f"add {', '.join(added)}",
        )
        out.append(_Found(lack, [at.add_elements(kept, added)] if kept is not None else []))
    return out


def _torch_requirements(project: Dict[str, Any]) -> List[Tuple[str, str, str]]:
    """(table, key, requirement text) of every requirement string that names torch."""
    found = [("project", "dependencies", r) for r in project.get("dependencies", []) if isinstance(r, str)]
    extras = project.get("optional-dependencies", {})
    for extra, reqs in extras.items() if isinstance(extras, dict) else ():
        found += [("project.optional-dependencies", extra, r) for r in reqs if isinstance(r, str)]
    out = []
    for table, key, text in found:
        try:
            if canonical_name(Requirement(text).name) == "torch":
                out.append((table, key, text))
        except InvalidRequirement:
            continue  # not ours to lint: pip reports it
    return out


def _check_torch_pin(project: Dict[str, Any], release: Release, claimant: str, at: _Locator) -> List[_Found]:
    out = []
    for table, key, text in _torch_requirements(project):
        req = Requirement(text)
        if req.specifier == release.torch.specifier:
            continue
        where = "dependencies" if key == "dependencies" and table == "project" else f"the {key} extra"
        fixed = f"torch{release.torch}" + (f"; {req.marker}" if req.marker else "")
        quoted = '"' + fixed.replace("\\", "\\\\").replace('"', '\\"') + '"'  # as a TOML string
        mark = at.value(table, key, text)
        found = Diagnostic(
            mark, f"{where} pins {text!r}, but {claimant} supports torch {release.torch}", f"write {quoted}"
        )
        out.append(_Found(found, [at.string(mark, text, fixed)]))
    return out


class _Found(NamedTuple):
    """A finding and the edits of ``pyproject.toml`` that fix it (none: a person must)."""

    diagnostic: Diagnostic
    edits: Sequence[Optional[Edit]] = ()


def check_pyproject(matrix: Matrix, path: str) -> List[Diagnostic]:
    """Every disagreement between ``path`` and the newest release of ``matrix``."""
    return [found.diagnostic for found in _findings(matrix, path)]


def fixed_pyproject(matrix: Matrix, path: str) -> Tuple[Optional[str], List[Diagnostic]]:
    """The text of ``path`` with every error :func:`check_pyproject` finds fixed (``None``:
    nothing to fix), and the errors left for a person (a value written with escapes, a list
    of classifiers that has no Python version to add after)."""
    findings = [f for f in _findings(matrix, path) if f.diagnostic.severity == "error"]
    edits = [e for f in findings for e in f.edits if e is not None]
    left = [f.diagnostic for f in findings if not f.edits or any(e is None for e in f.edits)]
    if not edits:
        return None, left
    text, back = read_keeping_newlines(path)  # a CRLF file stays CRLF
    return back(apply_edits(text, edits)), left


def _findings(matrix: Matrix, path: str) -> List[_Found]:
    data, problem = _load(path)
    if problem is not None:
        return [_Found(problem)]
    assert data is not None
    with open(path, encoding="utf-8") as fh:
        at = _Locator(display_path(path), fh.read())
    project = data.get("project")
    if not isinstance(project, dict):  # the metadata lives elsewhere (setup.py, setup.cfg): nothing declared here
        return [
            _Found(
                Diagnostic(
                    at.mark(1, 1),
                    "no [project] table, so there is nothing to compare",
                    "declare the metadata in [project] (PEP 621) to have it checked",
                    severity="warning",
                )
            )
        ]
    release = matrix.newest_release
    if release is None:
        return [
            _Found(
                Diagnostic(
                    at.mark(1, 1), f"{matrix.path} has no release, so there is nothing to compare", severity="warning"
                )
            )
        ]
    pythons = expected_pythons(matrix, release)
    claimant = f"release {release.version} in {display_path(matrix.path)}"
    out: List[_Found] = []
    dynamic = set(project.get("dynamic", []))
    if pythons:
        if "requires-python" not in dynamic:
            out += _check_requires_python(project, pythons, claimant, at)
        if "classifiers" not in dynamic:
            out += _check_classifiers(project, pythons, claimant, at)
    out += _check_torch_pin(project, release, claimant, at)
    return out


def matrix_of(path: str) -> Optional[str]:
    """The matrix a ``pyproject.toml`` registers: its ``adapter_matrix.matrices`` entry point
    (``pkg:compat.yaml``, the package found next to the file or under ``src/``), else a
    ``compat.yaml`` beside it; ``None`` when it names none that exists."""
    import os

    project, problem = _load(path)
    if project is None or problem is not None:
        return None
    base = os.path.dirname(os.path.abspath(path))
    points = ((project.get("project") or {}).get("entry-points") or {}).get("adapter_matrix.matrices") or {}
    for value in points.values():
        module, _sep, name = str(value).partition(":")
        for top in (base, os.path.join(base, "src")):
            candidate = os.path.join(top, *module.strip().split("."), name.strip())
            if name and os.path.isfile(candidate):
                return candidate
    beside = os.path.join(base, "compat.yaml")
    return beside if os.path.isfile(beside) else None
