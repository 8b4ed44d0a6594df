"""Test packs: the part of PyTorch's source a run of its device-generic tests needs, per release.

No torch wheel ships ``test/*.py`` and PyPI has no torch sdist: the files come from the
release's source archive on GitHub (``urls.PYTORCH_SOURCE_ARCHIVE``), pinned by its sha256 in
the tool's table (:mod:`.packtable`) or by the user's ``--sha256``. :func:`run` fetches (or
takes an offline copy of) the archive, verifies it, and unpacks the chosen test files and the
helpers they import from ``test/`` into the user cache (``<cache>/packs``). The rules of
docs/security.md hold:

- the digest is checked before anything is read from the archive; a mismatch unpacks nothing;
- every member must lie inside the archive's one root folder (no absolute name, no ``..``, no
  link whose target leaves it), whatever the digest says: one that does not refuses the archive;
- only regular files are written (never a link, a device or a FIFO), each at most
  ``limits.PACK_MEMBER_BYTES``, the whole pack at most ``limits.PACK_BYTES``;
- the pack is written into a private staging folder and renamed into place: a reader sees the
  old pack or the new one, never a half.

A folder the user trusts (``--pack DIR``, a checkout of the tag) is used in place, not copied.
"""

from __future__ import annotations

import ast
import json
import os
import posixpath
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from packaging.version import InvalidVersion, Version

from .. import limits
from ..errors import AdapterMatrixError
from ..files import printable, sha256_file
from ..memo import cache_folder
from ..urls import PYTORCH_SOURCE_ARCHIVE

__all__ = [
    "PackError",
    "PackRequest",
    "TestPack",
    "GENERIC_MARK",
    "run",
    "cached",
    "scan_archive",
    "ARCHIVE_URL_ENV",
    "add_to_table",
]

GENERIC_MARK = "instantiate_device_type_tests("  # what makes a test file device-generic
ARCHIVE_URL_ENV = "ADAPTER_MATRIX_PACK_URL"  # a mirror of the release archives ({version} in it); a test's server
MANIFEST = "pack.json"
TEST_FOLDER = "test"


class PackError(AdapterMatrixError, ValueError):
    """A pack that cannot be had: an unknown release, a digest that differs, a member outside
    the archive's root, no network. One message that says what to do."""


class PackRequest(NamedTuple):
    """What ``ops pack`` asks: a release, where its archive comes from (``source``: an archive
    file or a trusted folder; None: the network), the digest it must have when not the table's,
    and the test files to take (file names under ``test/``; empty: every device-generic one)."""

    release: str
    source: Optional[str] = None
    sha256: Optional[str] = None
    files: Tuple[str, ...] = ()
    table: Optional[Mapping[str, str]] = None  # default: packtable.SHA256


@dataclass(frozen=True)
class TestPack:
    """An unpacked pack: ``root`` holds ``test/``; ``files`` the test files taken, ``helpers``
    the modules of ``test/`` they import; ``sha256`` None for a trusted folder."""

    __test__ = False  # not a pytest test class

    release: str
    root: str
    files: Tuple[str, ...]
    helpers: Tuple[str, ...] = ()
    sha256: Optional[str] = None
    source: str = ""
    pinned_by: str = ""  # "the tool's table", "--sha256", "a trusted folder"
    reused: bool = False  # found in the cache, nothing unpacked

    @property
    def test_dir(self) -> str:
        return os.path.join(self.root, TEST_FOLDER)

    def to_json(self) -> Dict[str, object]:
        return {
            "release": self.release,
            "sha256": self.sha256,
            "source": self.source,
            "pinned_by": self.pinned_by,
            "files": list(self.files),
            "helpers": list(self.helpers),
        }


def _release(value: str) -> str:
    try:
        v = Version(value)
    except InvalidVersion:
        raise PackError(f"{printable(value)!r} is not a torch release: write it as X.Y.Z (2.13.0)") from None
    if len(v.release) != 3 or v.local or v.pre or v.dev:
        raise PackError(f"{printable(value)!r}: name a torch release as X.Y.Z (2.13.0), without a local or pre part")
    return str(v)


def _add_hint(release: str) -> str:
    return (
        f"give the digest you verified of its archive: `adapter-matrix ops pack {release} --pack "
        f"pytorch-v{release}.tar.gz --sha256 HASH`, or add the release to the tool's table "
        f"(`python -m adapter_matrix.upstream.testpacks add {release} ARCHIVE`, docs/op-coverage.md#test-packs)"
    )


def packs_folder() -> str:
    return cache_folder("packs")


def _pack_folder(release: str, sha256: str) -> str:
    return os.path.join(packs_folder(), f"torch-{release}-{sha256[:16]}")


def run(request: PackRequest) -> TestPack:
    """Fetch or take, verify and unpack the pack of ``request`` (see the module's docstring)."""
    from .packtable import SHA256

    release = _release(request.release)
    if request.source is not None and os.path.isdir(request.source):
        return _trusted_folder(release, request.source, request.files)
    table = SHA256 if request.table is None else request.table
    want = (request.sha256 or "").lower() or table.get(release)
    if request.sha256 is not None and not _is_digest(want or ""):
        raise PackError(f"{printable(request.sha256)!r} is not a sha256 digest (64 hexadecimal digits)")
    if want is None:
        raise PackError(f"torch {release} is not in the tool's table of test packs; {_add_hint(release)}")
    pinned_by = "--sha256" if request.sha256 else "the tool's table"
    os.makedirs(packs_folder(), mode=0o700, exist_ok=True)
    if request.source is None:
        archive, source = _download(release), _url(release)
    else:
        archive, source = request.source, os.path.abspath(request.source)
        if not os.path.isfile(archive):
            raise PackError(f"{printable(archive)}: no such archive (give a .tar.gz file or a folder)")
    try:
        size = os.path.getsize(archive)
        if size > limits.PACK_ARCHIVE_BYTES:
            raise PackError(
                f"{printable(archive)}: {size >> 20} MiB, more than the {limits.PACK_ARCHIVE_BYTES >> 20} MiB allowed"
            )
        got = sha256_file(archive)
        if got != want:
            raise PackError(
                f"{printable(source)}: sha256 {got} differs from {want} ({pinned_by}'s digest for torch {release}); "
                "the archive is not the one pinned (damaged or tampered with): nothing was unpacked"
            )
        return _unpack(release, archive, got, source, pinned_by, request.files)
    finally:
        if request.source is None:
            os.unlink(archive)


def _is_digest(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _url(release: str) -> str:
    return (os.environ.get(ARCHIVE_URL_ENV) or PYTORCH_SOURCE_ARCHIVE).format(version=release)


def _download(release: str) -> str:
    from .metadata import MetadataError, http_download

    url = _url(release)
    fd, path = tempfile.mkstemp(prefix=".download-", suffix=".tar.gz", dir=packs_folder())
    try:
        with os.fdopen(fd, "wb") as out:
            http_download(url, out, limits.PACK_ARCHIVE_BYTES)
    except MetadataError as exc:
        os.unlink(path)
        raise PackError(
            f"cannot download torch {release}'s source archive ({exc}); without network, download "
            f"pytorch-v{release}.tar.gz where GitHub is reachable and give it with --pack FILE "
            f"(or a checkout of the tag v{release} with --pack DIR)"
        ) from None
    return path


# -- reading an archive --------------------------------------------------------------------


@dataclass
class _Scan:
    root: str = ""
    sources: Dict[str, bytes] = field(default_factory=dict)  # path under test/ -> bytes (*.py only)
    read: int = 0


def _inside(name: str, root: str) -> Optional[str]:
    """``name`` relative to the root folder, or None when it leaves it."""
    if not name or name.startswith("/") or "\\" in name or "\x00" in name or (len(name) > 1 and name[1] == ":"):
        return None
    norm = posixpath.normpath(name)
    if norm == ".." or norm.startswith("../"):
        return None
    head, _, rest = norm.partition("/")
    if head != root:
        return None
    return rest


def scan_archive(path: str) -> _Scan:
    """One pass over the archive: every member checked (inside the root, links that stay in
    it), the ``*.py`` files under ``test/`` read (bounded). :class:`PackError` for the first
    member that breaks a rule, before anything is written."""
    scan = _Scan()
    try:
        with tarfile.open(path, "r|*") as tar:
            for count, member in enumerate(tar, 1):
                if count > limits.PACK_MEMBERS:
                    raise PackError(f"{printable(path)}: more than {limits.PACK_MEMBERS} members; not a source archive")
                name = member.name
                if not scan.root:
                    scan.root = posixpath.normpath(name).split("/")[0]
                    if scan.root in ("", ".", ".."):
                        raise PackError(f"{printable(path)}: member {printable(name)!r} is outside the archive's root")
                rel = _inside(name, scan.root)
                if rel is None:
                    raise PackError(
                        f"{printable(path)}: member {printable(name)!r} is outside the archive's root "
                        f"{printable(scan.root)}/: the archive is refused, whatever its digest"
                    )
                if member.issym() or member.islnk():
                    target = (
                        posixpath.join(posixpath.dirname(name), member.linkname) if member.issym() else member.linkname
                    )
                    if member.linkname.startswith("/") or _inside(target, scan.root) is None:
                        raise PackError(
                            f"{printable(path)}: link {printable(name)!r} -> {printable(member.linkname)!r} leaves "
                            f"the archive's root {printable(scan.root)}/: the archive is refused"
                        )
                    continue  # links are never unpacked
                if not member.isfile():
                    continue  # folders are made as needed; devices and FIFOs never
                under = rel.split("/", 1)
                if len(under) < 2 or under[0] != TEST_FOLDER or not under[1].endswith(".py"):
                    continue
                if member.size > limits.PACK_MEMBER_BYTES:
                    raise PackError(
                        f"{printable(path)}: {printable(name)} is {member.size >> 20} MiB, more than the "
                        f"{limits.PACK_MEMBER_BYTES >> 20} MiB a test file may have"
                    )
                scan.read += member.size
                if scan.read > limits.PACK_BYTES:
                    raise PackError(f"{printable(path)}: its test files exceed {limits.PACK_BYTES >> 20} MiB")
                handle = tar.extractfile(member)
                if handle is not None:
                    scan.sources[under[1]] = handle.read(limits.PACK_MEMBER_BYTES + 1)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise PackError(f"{printable(path)}: not a readable .tar.gz archive ({exc})") from None
    if not any("/" not in p for p in scan.sources):
        raise PackError(f"{printable(path)}: no test/ folder of Python files under {printable(scan.root)}/")
    return scan


# -- choosing the files -----------------------------------------------------------------------


def _imports(source: bytes, module_path: str) -> Set[str]:
    """Dotted module names ``source`` imports (relative ones resolved against its package)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    package = module_path[:-3].replace("/", ".").rpartition(".")[0]
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                base = ".".join([*parts, *([base] if base else [])])
            if base:
                names.add(base)
                names.update(f"{base}.{a.name}" for a in node.names)
    return names


def _module_files(name: str, available: Mapping[str, object]) -> List[str]:
    """The files of ``test/`` that importing ``name`` reads (its packages' ``__init__`` too)."""
    parts = name.split(".")
    out = []
    for i in range(1, len(parts) + 1):
        stem = "/".join(parts[:i])
        for candidate in (f"{stem}/__init__.py", f"{stem}.py"):
            if candidate in available:
                out.append(candidate)
    return out


def select(sources: Mapping[str, bytes], files: Sequence[str]) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(test files, helpers): the named files (default: every device-generic ``test_*.py``
    directly in ``test/``) and the modules of ``test/`` they import, transitively."""
    if files:
        missing = [f for f in files if f not in sources]
        if missing:
            raise PackError(f"not in the pack's test/ folder: {', '.join(printable(m) for m in missing)}")
        chosen = list(files)
    else:
        chosen = sorted(
            p for p, text in sources.items() if "/" not in p and p.startswith("test_") and GENERIC_MARK.encode() in text
        )
    helpers: Set[str] = set()
    todo = list(chosen)
    while todo:
        current = todo.pop()
        for name in _imports(sources[current], current):
            for found in _module_files(name, sources):
                if found not in helpers and found not in chosen:
                    helpers.add(found)
                    todo.append(found)
    return tuple(chosen), tuple(sorted(helpers))


# -- writing the pack ---------------------------------------------------------------------------


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _unpack(release: str, archive: str, digest: str, source: str, pinned_by: str, files: Sequence[str]) -> TestPack:
    final = _pack_folder(release, digest)
    existing = _read_manifest(final)
    if existing is not None and set(files) <= set(existing.files) and (files or existing.pinned_by == pinned_by):
        return TestPack(**{**existing.__dict__, "reused": True})
    scan = scan_archive(archive)
    chosen, helpers = select(scan.sources, files)
    staging = tempfile.mkdtemp(prefix=".staging-", dir=packs_folder())
    try:
        for rel in (*chosen, *helpers):
            dest = os.path.join(staging, TEST_FOLDER, *rel.split("/"))
            os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
            _write_new(dest, scan.sources[rel])
        pack = TestPack(release, final, chosen, helpers, digest, source, pinned_by)
        _write_new(os.path.join(staging, MANIFEST), json.dumps(pack.to_json(), indent=1).encode())
        if os.path.isdir(final):  # another selection of the same archive: replaced whole
            old = tempfile.mkdtemp(prefix=".old-", dir=packs_folder())
            os.rename(final, os.path.join(old, "pack"))
            os.rename(staging, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return pack


def _read_manifest(folder: str) -> Optional[TestPack]:
    from ..files import FileReadError, read_regular
    from ..memo import trusted_entry

    path = os.path.join(folder, MANIFEST)
    if not trusted_entry(path):
        return None
    try:
        data = json.loads(read_regular(path, limits.CACHE_ENTRY_BYTES, follow=False))
        return TestPack(
            str(data["release"]),
            folder,
            tuple(data["files"]),
            tuple(data["helpers"]),
            data["sha256"],
            str(data["source"]),
            str(data["pinned_by"]),
        )
    except (FileReadError, ValueError, KeyError, TypeError):
        return None


def _trusted_folder(release: str, folder: str, files: Sequence[str]) -> TestPack:
    root = os.path.abspath(folder)
    if not os.path.isdir(os.path.join(root, TEST_FOLDER)):
        if os.path.basename(root) == TEST_FOLDER:
            root = os.path.dirname(root)
        else:
            raise PackError(f"{printable(folder)}: no test/ folder in it (give a checkout of the tag v{release})")
    test_dir = os.path.join(root, TEST_FOLDER)
    sources: Dict[str, bytes] = {}
    for base, dirs, names in os.walk(test_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(base, name)
                with open(path, "rb") as fh:
                    sources[os.path.relpath(path, test_dir).replace(os.sep, "/")] = fh.read(limits.PACK_MEMBER_BYTES)
    chosen, helpers = select(sources, files)
    return TestPack(release, root, chosen, helpers, None, root, "a trusted folder")


def cached(release: str) -> Optional[TestPack]:
    """The newest pack of ``release`` in the cache, if any."""
    release = _release(release)
    try:
        names = [n for n in os.listdir(packs_folder()) if n.startswith(f"torch-{release}-")]
    except OSError:
        return None
    found = [p for p in (_read_manifest(os.path.join(packs_folder(), n)) for n in names) if p is not None]
    found.sort(key=lambda p: os.stat(os.path.join(p.root, MANIFEST)).st_mtime)
    return TestPack(**{**found[-1].__dict__, "reused": True}) if found else None


def add_to_table(release: str, archive: str) -> str:
    """The maintainer's command: hash ``archive`` (release ``release``'s source archive), check
    it as a pack (every member inside its root, a test/ folder) and write its entry into the
    table of :mod:`.packtable`, between its markers; the digest."""
    from ..files import atomic_write
    from . import packtable

    version = _release(release)
    digest = sha256_file(archive)
    scan_archive(archive)
    table = dict(packtable.SHA256, **{version: digest})
    path = os.path.abspath(packtable.__file__)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    head, _, rest = text.partition(packtable.BEGIN)
    _, _, tail = rest.partition(packtable.END)
    rows = "".join(f'    "{v}": "{table[v]}",\n' for v in sorted(table, key=Version))
    body = "SHA256: Dict[str, str] = {\n" + rows + "}\n"
    atomic_write(path, head + packtable.BEGIN + body + packtable.END + tail)
    return digest


if __name__ == "__main__":  # pragma: no cover - the maintainer's command
    import sys

    if len(sys.argv) != 4 or sys.argv[1] != "add":
        raise SystemExit("usage: python -m adapter_matrix.upstream.testpacks add X.Y.Z ARCHIVE")
    print(f"{sys.argv[2]}: {add_to_table(sys.argv[2], sys.argv[3])}")
