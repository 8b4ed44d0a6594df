"""`adapter-matrix ops pack`: a torch release's test files, pinned by sha256, unpacked safely.

The fixture pack (tests/fixtures/testpack) is a release's source archive in miniature: three
device-generic test files and the helper they import, archived byte for byte reproducibly.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import tarfile

import pytest

from adapter_matrix import limits
from adapter_matrix.files import sha256_file
from adapter_matrix.upstream import metadata, packtable, testpacks

from .helpers import FIXTURES, cli

PACK_DIR = FIXTURES / "testpack"
ARCHIVE = PACK_DIR / "pytorch-v2.13.0.tar.gz"
DIGEST = (PACK_DIR / "pytorch-v2.13.0.tar.gz.sha256").read_text().split()[0]
TEST_FILES = ("test_pack_modules.py", "test_pack_ops.py", "test_pack_optim.py")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _unpacked(cache) -> list:
    folder = cache / "packs"
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []


def _archive(tmp_path, members, name="evil.tar.gz") -> str:
    """A .tar.gz of ``members``: (name, bytes) for a file, (name, "->target") for a symlink."""
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as tar:
        for member, data in members:
            info = tarfile.TarInfo(member)
            if isinstance(data, str):
                info.type, info.linkname = tarfile.SYMTYPE, data[2:]
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return str(path)


def test_the_fixture_archive_is_its_folder_and_its_digest():
    spec = importlib.util.spec_from_file_location("build_archive", PACK_DIR / "build_archive.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = module.archive_bytes()
    assert built == ARCHIVE.read_bytes(), "rebuild it: python tests/fixtures/testpack/build_archive.py"
    assert hashlib.sha256(built).hexdigest() == DIGEST


def test_pack_unpacks_the_device_generic_files_and_their_helper(cache):
    res = cli("ops", "pack", "2.13.0", "--pack", str(ARCHIVE), "--sha256", DIGEST)
    assert res.code == 0, res.err
    assert "pinned by --sha256" in res.out
    (folder,) = _unpacked(cache)
    test_dir = cache / "packs" / folder / "test"
    assert sorted(os.listdir(test_dir)) == ["pack_helpers.py", *TEST_FILES]
    assert (test_dir / "test_pack_ops.py").read_bytes() == (
        PACK_DIR / "pytorch-v2.13.0/test/test_pack_ops.py"
    ).read_bytes()
    assert oct(os.stat(test_dir / "test_pack_ops.py").st_mode & 0o777) == "0o600"
    found = testpacks.cached("2.13.0")
    assert found is not None and found.files == TEST_FILES and found.helpers == ("pack_helpers.py",)
    again = cli("ops", "pack", "2.13.0", "--pack", str(ARCHIVE), "--sha256", DIGEST)
    assert again.code == 0 and "reused from the cache" in again.out


def test_a_named_file_brings_only_its_helpers(cache):
    pack = testpacks.run(testpacks.PackRequest("2.13.0", str(ARCHIVE), DIGEST, ("test_pack_optim.py",)))
    assert pack.files == ("test_pack_optim.py",) and pack.helpers == ("pack_helpers.py",)
    assert sorted(os.listdir(pack.test_dir)) == ["pack_helpers.py", "test_pack_optim.py"]


def test_the_table_pins_a_release(cache, monkeypatch):
    monkeypatch.setattr(packtable, "SHA256", {"2.13.0": DIGEST})
    res = cli("ops", "pack", "2.13.0", "--pack", str(ARCHIVE))
    assert res.code == 0, res.err
    assert "pinned by the tool's table" in res.out


def test_a_tampered_archive_is_refused_and_nothing_unpacked(cache, tmp_path, monkeypatch):
    data = bytearray(ARCHIVE.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tampered = tmp_path / "pytorch-v2.13.0.tar.gz"
    tampered.write_bytes(bytes(data))
    res = cli("ops", "pack", "2.13.0", "--pack", str(tampered), "--sha256", DIGEST)
    assert res.code == 2
    assert f"differs from {DIGEST}" in res.err and "nothing was unpacked" in res.err
    assert _unpacked(cache) == []
    monkeypatch.setattr(packtable, "SHA256", {"2.13.0": DIGEST})
    res = cli("ops", "pack", "2.13.0", "--pack", str(tampered))
    assert res.code == 2 and "the tool's table's digest" in res.err
    assert _unpacked(cache) == []


@pytest.mark.parametrize(
    "members, says",
    [
        (
            [("pytorch-v2.13.0/test/test_a.py", b"x = 1\n"), ("pytorch-v2.13.0/../escape.py", b"")],
            "outside the archive's root",
        ),
        ([("pytorch-v2.13.0/test/test_a.py", b""), ("/etc/cron.d/evil", b"")], "outside the archive's root"),
        ([("pytorch-v2.13.0/test/test_a.py", b""), ("other-root/test/x.py", b"")], "outside the archive's root"),
        (
            [("pytorch-v2.13.0/test/test_a.py", b""), ("pytorch-v2.13.0/test/helper.py", "->../../../home")],
            "leaves the archive's root",
        ),
        (
            [("pytorch-v2.13.0/test/test_a.py", b""), ("pytorch-v2.13.0/test/h.py", "->/etc/passwd")],
            "leaves the archive's root",
        ),
    ],
)
def test_a_member_outside_the_root_is_refused_whatever_its_digest(cache, tmp_path, members, says):
    evil = _archive(tmp_path, members)
    digest = sha256_file(evil)  # the digest is right: the archive is refused all the same
    res = cli("ops", "pack", "2.13.0", "--pack", evil, "--sha256", digest)
    assert res.code == 2
    assert says in res.err and "refused" in res.err
    assert _unpacked(cache) == []
    assert not (tmp_path / "escape.py").exists()


def test_a_test_file_larger_than_the_bound_is_refused(cache, monkeypatch):
    monkeypatch.setattr(limits, "PACK_MEMBER_BYTES", 1000)
    res = cli("ops", "pack", "2.13.0", "--pack", str(ARCHIVE), "--sha256", DIGEST)
    assert res.code == 2 and "more than the" in res.err
    assert _unpacked(cache) == []


def test_an_unknown_release_is_refused_with_how_to_add_it():
    res = cli("ops", "pack", "2.99.1")
    assert res.code == 2
    assert "torch 2.99.1 is not in the tool's table of test packs" in res.err
    assert "--sha256 HASH" in res.err and "python -m adapter_matrix.upstream.testpacks add 2.99.1" in res.err
    bad = cli("ops", "pack", "2.13")
    assert bad.code == 2 and "X.Y.Z" in bad.err


def test_no_network_names_pack(cache, monkeypatch):
    monkeypatch.setattr(packtable, "SHA256", {"2.13.0": DIGEST})
    monkeypatch.setattr(metadata, "RETRIES", 0)
    monkeypatch.setenv(testpacks.ARCHIVE_URL_ENV, "http://127.0.0.1:9/pytorch-v{version}.tar.gz")  # nothing listens
    res = cli("ops", "pack", "2.13.0")
    assert res.code == 2
    assert "cannot download torch 2.13.0's source archive" in res.err
    assert "--pack FILE" in res.err and "--pack DIR" in res.err
    assert _unpacked(cache) == [] and not [n for n in os.listdir(cache / "packs") if n.startswith(".download")]


def test_a_trusted_folder_is_used_in_place(cache):
    pack = testpacks.run(testpacks.PackRequest("2.13.0", str(PACK_DIR / "pytorch-v2.13.0")))
    assert pack.root == str(PACK_DIR / "pytorch-v2.13.0") and pack.sha256 is None
    assert pack.files == TEST_FILES and pack.pinned_by == "a trusted folder"
    assert _unpacked(cache) == []


def test_the_maintainer_command_adds_a_verified_release(tmp_path, monkeypatch):
    with open(packtable.__file__, encoding="utf-8") as fh:
        original = fh.read()
    copy = tmp_path / "packtable.py"
    copy.write_text(original)
    monkeypatch.setattr(packtable, "__file__", str(copy))
    assert testpacks.add_to_table("2.13.0", str(ARCHIVE)) == DIGEST
    text = copy.read_text()
    assert f'    "2.13.0": "{DIGEST}",\n' in text
    before, after = original.split("# adapter-matrix:pack-table\n"), text.split("# adapter-matrix:pack-table\n")
    assert after[0] == before[0] and after[1].split("# /adapter-matrix")[1] == before[1].split("# /adapter-matrix")[1]
