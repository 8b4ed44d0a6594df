"""Where each package of a stack comes from, and which git commit it is.

Users install the layers above an adapter in four ways (docs/stacks.md, "How layers are
installed"): a wheel from an index, a VCS install (``pip install git+URL@REF``: pip and uv
record the commit in PEP 610's ``direct_url.json``), an editable or local-folder install of a
clone (``direct_url.json`` names the folder), or no install at all: a clone put on
``PYTHONPATH`` (or copied into the working folder) that no metadata describes. A
:class:`Provenance` is one package's answer, one record for every reader (``check``'s stack
judgment and its ``--json``, ``adapter-matrix env``'s bug report).

Reading is bounded and runs no code of the checkout (docs/security.md): ``HEAD``, refs,
``packed-refs`` and ``config`` are read as files of bounded size; the commit graph (how far
HEAD is from a tag or a pin) is asked of ``git`` with a timeout, no pager, no system or
global configuration, ``core.fsmonitor`` off, and only plumbing that runs no hook. Metadata
that cannot be read is "unknown commit", never an exception.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..files import FileReadError, read_regular
from ..names import canonical_name

if TYPE_CHECKING:
    from .elsewhere import Target

__all__ = [
    "KINDS",
    "Provenance",
    "Shadowed",
    "Survey",
    "CommitJudgement",
    "judge_commit",
    "survey",
    "current_survey",
    "stack_provenance",
    "installed_provenance",
    "same_repository",
    "git_worktree",
    "head_commit",
    "tag_version",
    "release_tag",
    "unknown_source",
    "compiled",
]

KINDS = ("wheel", "vcs", "editable", "directory", "checkout", "unknown")
GIT_SECONDS = 3.0  # one git query on a local clone takes milliseconds
_SMALL = 64 << 10  # HEAD, a ref, a .git file, direct_url.json, a config: a few hundred bytes
_PACKED = 8 << 20  # packed-refs of a large clone (vLLM's: ~1 MiB)
_HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_SHORT = re.compile(r"^[0-9a-fA-F]{7,64}$")
_DESCRIBED = re.compile(r"^(?P<tag>.+)-(?P<n>\d+)-g(?P<hash>[0-9a-f]+)(?P<dirty>-dirty)?$")
_DIRTY = "-dirty"  # git describe --dirty: tracked files differ from the commit
_UP = 12  # folders walked up from a package to find its clone's .git


class Provenance(NamedTuple):
    """How one package is installed (``kind``: wheel | vcs | editable | directory | checkout, or
    unknown when its ``direct_url.json`` cannot be read: :func:`unknown_source` says why)
    and, where a git clone is behind it, which commit. ``path``: its dist-info folder, or a
    checkout's package folder; ``source``: the clone (or folder) it was built from, where this
    machine can read it; ``describe``: ``git describe --tags --long`` of that clone
    (``v0.11.0-8-gabc1234``); ``error``: why the commit is unknown."""

    name: str  # canonical distribution name (a checkout: its package's name, canonical)
    kind: str
    path: str
    version: Optional[str] = None  # the metadata's version; a checkout's: its tag's, if HEAD is at one
    commit: Optional[str] = None
    describe: Optional[str] = None
    url: Optional[str] = None  # the VCS URL (vcs), the clone's origin (checkout)
    requested: Optional[str] = None  # the revision asked for at install (vcs: requested_revision)
    source: Optional[str] = None
    error: Optional[str] = None

    @property
    def dirty(self) -> bool:
        """Whether the clone's tracked files differ from its commit (``git describe --dirty``)."""
        return (self.describe or "").endswith(_DIRTY)

    @property
    def past(self) -> Optional[str]:
        """``8 commits past v0.11.0`` (``at v0.11.0`` on the tag), from :attr:`describe`, and
        ``with uncommitted changes`` when its tracked files differ from the commit."""
        found = _DESCRIBED.match(self.describe or "")
        changed = ["with uncommitted changes"] if self.dirty else []
        if not found:
            return changed[0] if changed else None
        n = int(found["n"])
        at = f"at {found['tag']}" if n == 0 else f"{n} commit{'s' if n != 1 else ''} past {found['tag']}"
        return ", ".join([at, *changed])

    @property
    def built_version(self) -> Optional[str]:
        """What the package is, judged by its commit (docs/stacks.md): the version of the tag HEAD
        is at (an editable vllm-ascend of tag v0.23.0 that calls itself 0.23.1.dev0+g5cb98caaa is
        0.23.0), else the tag a VCS install asked for, else the metadata's version."""
        found = _DESCRIBED.match(self.describe or "")
        if found and found["n"] == "0":
            exact = tag_version(found["tag"])
            if exact:
                return exact
        if self.kind == "vcs" and self.requested:
            exact = tag_version(self.requested)
            if exact:
                return exact
        return self.version

    def shown(self) -> str:
        """One line for a report: ``editable /src/vllm-ascend at 5cb98caa (at v0.23.0)``."""
        where = self.source or (self.url if self.kind == "vcs" and self.url else self.path)
        commit = f"commit {self.commit[:12]}" if self.commit else "unknown commit"
        if self.kind == "wheel":
            return f"wheel {self.path}"
        if self.kind == "unknown":
            return unknown_source(self.path)
        past = f" ({self.past})" if self.past else ""
        why = f" ({self.error})" if self.error and not self.commit else ""
        return f"{self.kind} {where}, {commit}{past}{why}"

    @classmethod
    def from_json(cls, data: Mapping[str, Optional[str]]) -> Provenance:
        """A record as :meth:`to_json` wrote it (``check --json``'s ``provenance``)."""
        name, kind, path = (data.get(key) or "" for key in ("name", "kind", "path"))
        rest = {key: data.get(key) for key in cls._fields[3:]}
        return cls(name, kind, path, **rest)

    def to_json(self) -> Dict[str, Optional[str]]:
        out: Dict[str, Optional[str]] = {key: getattr(self, key) for key in self._fields}
        out["past"] = self.past
        return out


class Shadowed(NamedTuple):
    """One top-level package importable from several places: ``imported`` wins (the first on the
    import path), ``hidden`` are the others, each with the distribution that owns it, if known."""

    package: str
    imported: str
    hidden: Tuple[str, ...]
    owners: Tuple[Tuple[str, str], ...] = ()  # (path, "megatron-core 0.16.1")

    def warning(self) -> str:
        def named(path: str) -> str:
            owner = dict(self.owners).get(path)
            return f"{path} ({owner})" if owner else path

        others = ", ".join(named(p) for p in self.hidden)
        return (
            f"{self.package} is importable from {len(self.hidden) + 1} places: Python imports {named(self.imported)}, "
            f"which hides {others}"
        )


class Survey(NamedTuple):
    """What an environment's import path holds beyond its distributions' metadata: the
    checkouts found on it and every package importable twice."""

    checkouts: Tuple[Provenance, ...]
    shadowed: Tuple[Shadowed, ...]
    layer_files: Tuple[Tuple[str, str], ...] = ()  # (checkout package, its compat.yaml)

    def checkout(self, name: str) -> Optional[Provenance]:
        wanted = canonical_name(name)
        return next((c for c in self.checkouts if c.name == wanted), None)

    def imports(self, checkout: Provenance) -> bool:
        """Whether Python imports ``checkout``'s package rather than another copy of it (the
        checkout is first on the import path: ``PYTHONPATH`` before site-packages)."""
        real = os.path.realpath(checkout.path)
        return any(os.path.realpath(s.imported) == real for s in self.shadowed)


# -- git, read as files ---------------------------------------------------------------------


def _read(path: str, limit: int = _SMALL) -> Optional[str]:
    try:
        return read_regular(path, limit).decode("utf-8", "replace")
    except (FileReadError, OSError):
        return None


def git_worktree(folder: str) -> Optional[Tuple[str, str]]:
    """``(work tree, git dir)`` of the clone ``folder`` is in (a ``.git`` folder, or a ``.git``
    file of a worktree or submodule naming one), else None."""
    here = os.path.abspath(folder)
    for _ in range(_UP):
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return here, dot
        if os.path.isfile(dot):
            text = _read(dot) or ""
            if text.startswith("gitdir:"):
                target = text[len("gitdir:") :].strip()
                target = target if os.path.isabs(target) else os.path.join(here, target)
                return here, os.path.normpath(target)
            return None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def _common(gitdir: str) -> str:
    """The folder holding refs: a linked worktree's ``commondir``, else the git dir itself."""
    common = _read(os.path.join(gitdir, "commondir"))
    if common:
        common = common.strip()
        return os.path.normpath(common if os.path.isabs(common) else os.path.join(gitdir, common))
    return gitdir


def _ref(gitdir: str, ref: str) -> Optional[str]:
    if ".." in ref.split("/") or not ref.startswith("refs/"):
        return None  # a ref never leaves the git dir
    for base in dict.fromkeys((gitdir, _common(gitdir))):
        loose = _read(os.path.join(base, *ref.split("/")))
        if loose and _HEX.match(loose.strip()):
            return loose.strip()
        packed = _read(os.path.join(base, "packed-refs"), _PACKED)
        for line in (packed or "").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1].strip() == ref and _HEX.match(parts[0]):
                return parts[0]
    return None


def head_commit(gitdir: str) -> Tuple[Optional[str], Optional[str]]:
    """``(commit, None)`` of HEAD, or ``(None, why it is unknown)``."""
    head = _read(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None, f"unknown commit: {gitdir}/HEAD cannot be read"
    head = head.strip()
    if _HEX.match(head):
        return head, None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        found = _ref(gitdir, ref)
        return (found, None) if found else (None, f"unknown commit: {ref} is not found in {gitdir}")
    return None, f"unknown commit: {gitdir}/HEAD is not a commit or a ref"


def _origin(gitdir: str) -> Optional[str]:
    """The URL of the clone's ``origin`` remote, from its config file."""
    text = _read(os.path.join(_common(gitdir), "config")) or ""
    section = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == '[remote "origin"]' and line.startswith("url") and "=" in line:
            return line.split("=", 1)[1].strip()
    return None


def same_repository(a: Optional[str], b: Optional[str]) -> bool:
    """Whether two git URLs name one repository (scheme, user, ``.git`` and case aside)."""

    def key(url: str) -> str:
        url = url.strip().lower()
        url = re.sub(r"^(git\+)?[a-z]+://", "", url)
        url = re.sub(r"^[^@/]+@", "", url).replace(":", "/")
        url = url.rstrip("/")
        return url[: -len(".git")] if url.endswith(".git") else url

    return bool(a and b) and key(a or "") == key(b or "")


# -- git, asked (the commit graph) ----------------------------------------------------------


def _git_env() -> Dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT")}
    return dict(
        keep,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
    )


def _git(worktree: str, *args: str) -> Optional[str]:
    """One git query on ``worktree``'s clone: its output, or None (no git, a timeout, an error)."""
    from .bounded import run_command

    argv = ["git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "safe.directory=*", "-C", worktree, *args]
    result = run_command(argv, GIT_SECONDS, limit=_SMALL, env=_git_env())
    if result.error is not None or result.returncode != 0:
        return None
    return result.output.decode("utf-8", "replace").strip()


def _describe(worktree: str) -> Optional[str]:
    # --dirty: a checkout at its pin whose files were edited is not that commit; --always: said
    # for a clone without tags too (no tag, no "past")
    return _git(worktree, "describe", "--tags", "--long", "--abbrev=12", "--dirty", "--always")


def _resolve(worktree: str, ref: str) -> Optional[str]:
    if ref.startswith("-"):
        return None  # never an option
    found = _git(worktree, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return found if found and _HEX.match(found) else None


def tag_version(tag: str) -> Optional[str]:
    """The release a tag names: ``v0.23.0`` -> 0.23.0, ``core_v0.12.1`` -> 0.12.1, ``v0.11.0-dev``
    -> None (a branch's name, no release)."""
    from packaging.version import InvalidVersion, Version

    found = re.search(r"(?:^|[^0-9A-Za-z])v?(\d+(?:\.\d+)*(?:(?:rc|a|b|\.post|\.dev)\d+)?)$", tag) or re.match(
        r"^v?(\d+(?:\.\d+)*(?:(?:rc|a|b|\.post|\.dev)\d+)?)$", tag
    )
    if not found:
        return None
    try:
        return str(Version(found.group(1)))
    except InvalidVersion:
        return None


def release_tag(worktree: str, version: str) -> Optional[str]:
    """The tag of release ``version`` in the clone at ``worktree``: ``vX.Y.Z`` (preferred) or
    ``X.Y.Z``, compared as versions (``v0.23.0rc1`` is 0.23.0rc1), else None (no such tag, or
    git cannot say)."""
    from packaging.version import InvalidVersion, Version

    listed = _git(worktree, "for-each-ref", "--format=%(refname:short)", "refs/tags")
    wanted = Version(version)
    found = []
    for tag in (listed or "").splitlines():
        try:
            if Version(tag[1:] if tag.startswith("v") else tag) == wanted:
                found.append(tag)
        except InvalidVersion:
            continue
    return min(found, key=lambda t: (not t.startswith("v"), t)) if found else None


_BUILT_BY = ("CMakeLists.txt", "meson.build")
_EXTENSIONS = re.compile(r"ext_modules|CMakeExtension|CppExtension|CUDAExtension|\bExtension\(")


def compiled(worktree: str) -> bool:
    """Whether the clone at ``worktree`` builds compiled extensions (a ``CMakeLists.txt`` or
    ``meson.build`` at its top, or a ``setup.py`` declaring extension modules): an editable
    install of it is rebuilt after a checkout, a pure-Python one follows its files as they are."""
    if any(os.path.isfile(os.path.join(worktree, name)) for name in _BUILT_BY):
        return True
    return bool(_EXTENSIONS.search(_read(os.path.join(worktree, "setup.py"), _PACKED) or ""))


def missing_ref(worktree: str, ref: str) -> Optional[str]:
    """Why the clone at ``worktree`` cannot check out ``ref`` as it is (``a shallow clone`` or
    ``not fetched``), else None: a ``git checkout`` of a commit the clone has not fetched fails
    ("reference is not a tree"), so the fix fetches it first."""
    if _resolve(worktree, ref) is not None:
        return None
    found = git_worktree(worktree)
    if found is not None and os.path.isfile(os.path.join(_common(found[1]), "shallow")):
        return "a shallow clone"
    return "not fetched"


def fetch_argv(worktree: str, ref: str, url: Optional[str], pinned_url: str) -> Optional[List[str]]:
    """The arguments of the ``git -C WORKTREE`` command that brings ``ref`` into the clone at
    ``worktree`` before it is checked out (None when it holds it): a full commit is fetched by
    itself, from ``origin`` when that is the pin's repository, else from the pin's URL; a tag, a
    branch or an abbreviated commit (which no server fetches by itself) with the clone's history
    and tags, in full when it is shallow."""
    why = missing_ref(worktree, ref)
    if why is None:
        return None
    remote = "origin" if same_repository(url, pinned_url) else re.sub(r"^git\+", "", pinned_url)
    if _HEX.match(ref.lower()):
        return ["fetch", remote, ref.lower()]
    unshallow = ["--unshallow"] if why == "a shallow clone" else []
    return ["fetch", *unshallow, "--tags", remote]


# -- a pin's commit against what is installed -----------------------------------------------


class CommitJudgement(NamedTuple):
    """Whether an installed package is the commit a git pin names: ``ok`` True/False, or None
    when it cannot be told (``text`` says why); ``distance``: ``3 commits past 1b16c01``."""

    ok: Optional[bool]
    text: str
    commit: Optional[str] = None
    pinned: Optional[str] = None  # the pin's ref, as a commit where it could be resolved
    distance: Optional[str] = None


def _is_commit(ref: str) -> bool:
    return bool(_SHORT.match(ref))


def _distance(worktree: str, pinned: str, head: str) -> Optional[str]:
    counted = _git(worktree, "rev-list", "--left-right", "--count", f"{pinned}...{head}")
    if not counted:
        return None
    try:
        behind, ahead = (int(x) for x in counted.split())
    except ValueError:
        return None

    def commits(n: int) -> str:
        return f"{n} commit{'s' if n != 1 else ''}"

    if behind == 0:
        return f"{commits(ahead)} past"
    if ahead == 0:
        return f"{commits(behind)} behind"
    return f"{commits(ahead)} past and {commits(behind)} behind"


def judge_commit(found: Provenance, ref: str) -> CommitJudgement:
    """Whether ``found`` is the commit ``ref`` (a commit, or a tag or branch) names."""
    if found.commit is None:
        why = found.error or f"{found.kind} install: no commit is recorded"
        return CommitJudgement(None, why)
    commit = found.commit
    if _is_commit(ref) and commit.startswith(ref.lower()):
        return CommitJudgement(True, "", commit, commit)
    if found.requested == ref and found.kind != "checkout":
        return CommitJudgement(True, "", commit, commit)  # pip resolved the tag to this commit at install
    pinned = None
    if found.source is not None and git_worktree(found.source) is not None:
        pinned = _resolve(found.source, ref)
    if pinned is None and _is_commit(ref) and len(ref) == len(commit):
        pinned = ref.lower()
    if pinned is None and not _is_commit(ref):
        return CommitJudgement(None, f"{ref} cannot be resolved where it is installed", commit)
    if pinned is not None and pinned == commit:
        return CommitJudgement(True, "", commit, pinned)
    distance = _distance(found.source, pinned, commit) if pinned and found.source else None
    return CommitJudgement(False, "", commit, pinned, distance)


# -- the installed distributions ------------------------------------------------------------


def _file_path(url: str) -> Optional[str]:
    if not url.startswith("file://"):
        return None
    from urllib.parse import unquote, urlsplit

    return unquote(urlsplit(url).path) or None


def _from_clone(base: Provenance, folder: str) -> Provenance:
    """``base`` with the commit and ``describe`` of the clone at ``folder`` (if it is one)."""
    found = git_worktree(folder)
    if found is None:
        return base._replace(source=folder, error="unknown commit: not a git clone")
    worktree, gitdir = found
    commit, why = head_commit(gitdir)
    return base._replace(
        source=worktree,
        commit=commit,
        error=why,
        describe=_describe(worktree) if commit else None,
        url=base.url or _origin(gitdir),
    )


def unknown_source(folder: str) -> str:
    """How a distribution whose ``direct_url.json`` cannot be read is said, on every surface."""
    return f"unknown source: {os.path.join(folder, 'direct_url.json')} is not valid JSON"


def distribution_provenance(name: str, folder: str, version: Optional[str]) -> Provenance:
    """The provenance of the distribution whose dist-info folder is ``folder``."""
    wanted = canonical_name(name)
    text = _read(os.path.join(folder, "direct_url.json"))
    if text is None:
        return Provenance(wanted, "wheel", folder, version)
    try:
        data = json.loads(text)
        url = str(data.get("url", ""))
    except (ValueError, AttributeError):
        # not a wheel from an index: PEP 610's file is written for every other install, and says which
        return Provenance(wanted, "unknown", folder, version, error=unknown_source(folder))
    vcs = data.get("vcs_info") if isinstance(data.get("vcs_info"), dict) else None
    if vcs is not None:
        commit = str(vcs.get("commit_id", "")).lower()
        requested = vcs.get("requested_revision")
        return Provenance(
            wanted,
            "vcs",
            folder,
            version,
            commit=commit if _HEX.match(commit) else None,
            url=url,
            requested=str(requested) if requested else None,
            error=None if _HEX.match(commit) else "unknown commit: direct_url.json records none",
        )
    info = data.get("dir_info") if isinstance(data.get("dir_info"), dict) else None
    path = _file_path(url)
    if info is not None and path is not None:
        kind = "editable" if info.get("editable") else "directory"
        return _from_clone(Provenance(wanted, kind, folder, version), path)
    return Provenance(wanted, "wheel", folder, version, url=url or None)


def _dist_folder(entry: str, wanted: str) -> Optional[Tuple[str, str]]:
    try:
        names = sorted(os.listdir(entry or "."))
    except OSError:
        return None
    for item in names:
        if item.endswith(".dist-info") and canonical_name(item.split("-", 1)[0]) == wanted:
            return os.path.join(entry or ".", item), item
    return None


def installed_provenance(name: str, target: Optional[Target]) -> Optional[Provenance]:
    """The provenance of the installed distribution ``name`` (the first along the judged import path)."""
    from .facts import distribution_version, search_path

    wanted = canonical_name(name)
    for entry in search_path(target):
        hit = _dist_folder(entry, wanted)
        if hit is not None:
            return distribution_provenance(name, hit[0], distribution_version(name, target))
    return None


# -- the import path: checkouts and shadowing -------------------------------------------------


def _has_dists(names: Sequence[str]) -> bool:
    return any(n.endswith((".dist-info", ".egg-info")) for n in names)


def _packages(entry: str, names: Sequence[str]) -> List[str]:
    """The regular packages in one folder of the import path (a folder with ``__init__.py``)."""
    out = []
    for item in names:
        if item.isidentifier() and os.path.isfile(os.path.join(entry, item, "__init__.py")):
            out.append(item)
    return out


def _owner(site: str, package: str) -> Optional[str]:
    """``megatron-core 0.16.1``: the distribution in ``site`` whose top_level.txt or RECORD names
    ``package`` (asked only of a package importable twice)."""
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith(".dist-info"))
    except OSError:
        return None
    for item in names:
        folder = os.path.join(site, item)
        top = _read(os.path.join(folder, "top_level.txt")) or ""
        record = "" if package in top.split() else (_read(os.path.join(folder, "RECORD"), _PACKED) or "")
        if package in top.split() or f"\n{package}/__init__.py," in "\n" + record:
            stem = item[: -len(".dist-info")]
            name, _, version = stem.partition("-")
            return f"{canonical_name(name)} {version}".strip()
    return None


def survey(paths: Sequence[str], extra_front: Sequence[str] = ()) -> Survey:
    """The checkouts among the folders of ``paths`` that hold no distributions (``PYTHONPATH``,
    what a ``.pth`` file adds, the working folder: ``extra_front``, searched first), and every
    regular package importable from more than one folder."""
    order = list(dict.fromkeys([*extra_front, *paths]))
    listing: Dict[str, List[str]] = {}
    bare: List[str] = []
    stdlib = _stdlib()
    for entry in order:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        listing[entry] = names
        if not _has_dists(names) and not _inside(os.path.abspath(entry or "."), stdlib):
            bare.append(entry)
    # editable installs: their clone's folders are theirs, not a checkout of their own (read only
    # when a folder without distributions holds a package: most environments have none)
    found_any = any(_packages(entry, listing[entry]) for entry in bare)
    editable_roots = _editable_roots([e for e in order if e not in bare], listing) if found_any else ()
    checkouts: List[Provenance] = []
    layer_files: List[Tuple[str, str]] = []
    seen_names = set()
    shadowed: List[Shadowed] = []
    for entry in bare:
        for package in _packages(entry, listing[entry]):
            where = os.path.join(entry or ".", package)
            copies = [
                os.path.join(other or ".", package)
                for other in order
                if other in listing and os.path.isfile(os.path.join(other or ".", package, "__init__.py"))
            ]
            real = list(dict.fromkeys(os.path.realpath(c) for c in copies))
            if len(real) > 1 and package not in seen_names:
                owners = tuple(
                    (c, o)
                    for c in copies
                    for o in [_owner(os.path.dirname(c), package) if c not in (where,) else None]
                    if o
                )
                shadowed.append(Shadowed(package, copies[0], tuple(c for c in copies[1:]), owners))
            if package in seen_names:
                continue
            seen_names.add(package)
            if any(_inside(os.path.realpath(where), root) for root in editable_roots):
                continue
            found = Provenance(canonical_name(package), "checkout", where)
            clone = git_worktree(where)
            if clone is None:
                checkouts.append(found._replace(error="unknown commit: not in a git clone"))
            else:
                found = _from_clone(found, where)
                tag = _DESCRIBED.match(found.describe or "")
                version = tag_version(tag["tag"]) if tag and tag["n"] == "0" else None
                checkouts.append(found._replace(version=version))
            for candidate in (
                os.path.join(where, "compat.yaml"),
                *([os.path.join(clone[0], "compat.yaml")] if clone else []),
            ):
                if os.path.isfile(candidate):
                    layer_files.append((canonical_name(package), candidate))
                    break
    return Survey(tuple(checkouts), tuple(shadowed), tuple(layer_files))


def _stdlib() -> str:
    """This interpreter's standard library folder (its packages are no checkout): where ``os`` is."""
    return os.path.dirname(os.path.abspath(os.__file__))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _editable_roots(sites: Sequence[str], listing: Dict[str, List[str]]) -> Tuple[str, ...]:
    out = []
    for site in sites:
        for item in listing.get(site, ()):
            if not item.endswith(".dist-info"):
                continue
            text = _read(os.path.join(site, item, "direct_url.json"))
            if not text or '"dir_info"' not in text:
                continue
            try:
                path = _file_path(str(json.loads(text).get("url", "")))
            except (ValueError, AttributeError):
                continue
            if path:
                out.append(os.path.realpath(path))
    return tuple(out)


def current_survey(target: Optional[Target]) -> Survey:
    """The survey of the import path being judged (this process's ``sys.path``, or ``check
    --env``'s, with ``--pythonpath``'s folders first), made once per answer by the pipeline and handed down."""
    from .facts import search_path

    paths = search_path(target)
    front: Tuple[str, ...] = ()
    if (target is None or target.here) and "" not in paths and os.getcwd() not in paths:
        front = (os.getcwd(),)  # `python -m` and `python -c` import from the working folder first
    return survey(paths, front)


def stack_provenance(
    name: str, target: Optional[Target], looked: Survey, urls: Sequence[str] = ()
) -> Optional[Provenance]:
    """How ``name`` is installed where it is judged: its distribution's metadata, else a checkout
    of its package on the import path, else a checkout whose clone is one of ``urls`` (the
    repositories its git pins name: Megatron-LM's clone holds the package ``megatron``); such a
    checkout before the distribution on the import path hides it, and is what is judged."""
    installed = installed_provenance(name, target)
    checkout = looked.checkout(name) or next(
        (
            c._replace(name=canonical_name(name))
            for c in looked.checkouts
            if any(same_repository(c.url, u) for u in urls)
        ),
        None,
    )
    if checkout is not None and (installed is None or looked.imports(checkout)):
        return checkout  # what Python imports: a checkout on PYTHONPATH hides the installed copy
    return installed
