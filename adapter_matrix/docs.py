"""Keep the tables inside documents in sync with the matrix (``table --update/--check``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from . import tables
from .markers import MarkerError, atomic_write, rewrite, syntax_for, unified_diff
from .model import Matrix, Release

__all__ = ["DocError", "Outcome", "render_table", "render_block", "sync"]

DocError = MarkerError
_BLOCK_OPTIONS = ("view", "lang", "release", "format")


@dataclass(frozen=True)
class Outcome:
    """What ``sync`` found in one file."""

    path: str
    blocks: int
    changed: bool
    diff: str


def render_table(matrix: Matrix, view: str = "grid", fmt: str = "markdown", lang: str = "en", release: Optional[Release] = None) -> str:
    return tables.render(matrix, view=view, fmt=fmt, lang=lang, release=release)


def render_block(matrix: Matrix, options: Dict[str, str], syntax: str, where: str) -> str:
    """The body of one block, from its marker options (``view=grid lang=en``)."""
    unknown = set(options) - set(_BLOCK_OPTIONS)
    if unknown:
        raise MarkerError(f"{where}: unknown marker option(s) {', '.join(sorted(unknown))}; allowed: {', '.join(_BLOCK_OPTIONS)}")
    release = None
    if "release" in options:
        from packaging.version import Version

        release = matrix.release(Version(options["release"]))
        if release is None:
            raise MarkerError(f"{where}: no release {options['release']} in {matrix.path}")
    fmt = options.get("format", syntax)
    try:
        return tables.render(matrix, view=options.get("view", "grid"), fmt=fmt, lang=options.get("lang", "en"), release=release)
    except ValueError as exc:
        raise MarkerError(f"{where}: {exc}") from None


def sync(matrix: Matrix, paths: Sequence[str], write: bool) -> List[Outcome]:
    """Regenerate every block of every file; write changed files when ``write``."""
    outcomes = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                old = fh.read()
        except OSError as exc:
            raise MarkerError(f"{path}: cannot read: {exc.strerror}") from None
        syntax = syntax_for(path)
        new, blocks = rewrite(old, syntax, lambda opts: render_block(matrix, opts, syntax, path), path)
        if not blocks:
            raise MarkerError(f"{path}: no adapter-matrix:table block found \u2014 add one (see the README)")
        changed = new != old
        if changed and write:
            atomic_write(path, new)
        outcomes.append(Outcome(path, len(blocks), changed, unified_diff(old, new, path) if changed else ""))
    return outcomes
