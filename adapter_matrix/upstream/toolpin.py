"""Where an adopting repository takes adapter-matrix from: the ref its workflow's ``uses:`` and
its pre-commit hooks are pinned to, and the requirement its CI installs the tool with.

``init`` writes no placeholder: the ref is one it knows.

1. ``--tool-ref`` when given (a commit SHA, or a tag);
2. else, when this copy was installed from a git URL of the repository
   (``pip install "adapter-matrix @ git+https://github.com/...@v0.2.0"``), the commit pip
   resolved, which PEP 610's ``direct_url.json`` records: a SHA pin, as zizmor asks for;
3. else the tag of this version, ``v{__version__}``; ``init`` says how to pin it to its commit.

The tool itself is installed from PyPI once it is published there (:data:`ON_PYPI`), else from
the same git ref (``--tool`` overrides either).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Optional, Tuple

from .._version import __version__
from ..errors import ChoiceError

__all__ = ["REPOSITORY", "ON_PYPI", "ToolPin", "tool_pin", "installed_commit"]

# Where adapter-matrix is published: its reusable workflow, its hooks and its release tags (v0.2.0).
REPOSITORY = "https://github.com/adapter-matrix/adapter-matrix"
# Whether this version is on PyPI: then CI installs `adapter-matrix==VERSION`, else from git.
ON_PYPI = False

_SHA = re.compile(r"^[0-9a-f]{40}$")
_GITHUB = re.compile(r"^https://github\.com/(?P<slug>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class ToolPin:
    """adapter-matrix at one ref of one repository: ``ref`` a commit SHA or a tag, ``label``
    what it is called (the tag), ``requirement`` what ``pip install`` installs the tool from."""

    repository: str
    ref: str
    label: str
    requirement: str

    @property
    def slug(self) -> str:
        """``owner/name``, as ``uses:`` names a repository (GitHub only)."""
        found = _GITHUB.match(self.repository)
        if found is None:
            raise ChoiceError(
                "tool-repository",
                f"{self.repository!r}: give the https://github.com/OWNER/NAME URL of adapter-matrix "
                "(a reusable workflow is called by its GitHub name)",
            )
        return found.group("slug")

    @property
    def is_commit(self) -> bool:
        return bool(_SHA.match(self.ref))

    def uses(self, path: str) -> str:
        """The ``uses:`` value of the reusable workflow at ``path``, with the tag as a comment
        beside a SHA (the form zizmor and Dependabot read)."""
        line = f"{self.slug}/{path}@{self.ref}"
        return f"{line} # {self.label}" if self.is_commit and self.label != self.ref else line


def _same_repository(a: str, b: str) -> bool:
    def norm(url: str) -> str:
        return re.sub(r"(\.git)?/*$", "", url.strip().lower().replace("git+", "", 1))

    return norm(a) == norm(b)


def installed_commit(repository: str) -> Optional[Tuple[str, str]]:
    """The commit this copy of adapter-matrix was installed from and the revision asked for
    (a tag, else the commit), when pip installed it from a git URL of ``repository`` (PEP 610
    ``direct_url.json``); ``None`` otherwise (PyPI, a local folder, an editable checkout)."""
    from importlib import metadata

    try:
        text = metadata.distribution("adapter-matrix").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        found = json.loads(text or "null")
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    vcs = found.get("vcs_info") or {}
    commit = vcs.get("commit_id") if isinstance(vcs, dict) else None
    url = found.get("url")
    if vcs.get("vcs") != "git" or not isinstance(commit, str) or not isinstance(url, str):
        return None
    if not _SHA.match(commit) or not _same_repository(url, repository):
        return None
    asked = vcs.get("requested_revision")
    return commit, asked if isinstance(asked, str) and asked else commit


def tool_pin(repository: Optional[str] = None, ref: Optional[str] = None, requirement: Optional[str] = None) -> ToolPin:
    """The pin ``init`` writes (module docstring): the given ``ref``, else the commit this copy
    was installed from, else the tag of this version."""
    repository = (repository or REPOSITORY).rstrip("/")
    tag = f"v{__version__}"
    label = ref
    if ref is None:
        ref, label = installed_commit(repository) or (tag, tag)
    if not ref or any(c.isspace() for c in ref) or ref.startswith("-"):
        raise ChoiceError("tool-ref", f"{ref!r}: give a commit SHA or a tag of adapter-matrix")
    if requirement is None:
        requirement = (
            f"adapter-matrix=={__version__}" if ON_PYPI and ref == tag else f"adapter-matrix @ git+{repository}@{ref}"
        )
    pin = ToolPin(repository, ref, label or ref, requirement)
    pin.slug  # noqa: B018 - a repository `uses:` cannot name fails init, not the workflow later
    return pin
