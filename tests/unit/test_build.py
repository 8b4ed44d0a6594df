"""`adapter-matrix build`: cached per torch build, and a build for another torch is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .helpers import REPO

pytest.importorskip("torch")

from adapter_matrix.device.build import BuildMismatch, Extension, TorchBuild, build_dir, check_manifest, read_manifest

pytestmark = pytest.mark.slow  # compiles the C++ core (about a minute on 2 cores when not cached)


def _cli(*args, env=None):
    script = os.path.join(os.path.dirname(sys.executable), "adapter-matrix")
    cmd = [script, *args] if os.path.exists(script) else [sys.executable, "-m", "adapter_matrix", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def built():
    """The build for the running torch (compiled here if this machine has none yet)."""
    first = _cli("build")
    assert first.returncode == 0, first.stdout + first.stderr
    ext = Extension.of_package("shims", "npu")
    folder = build_dir(ext)
    assert read_manifest(folder) is not None
    return folder


def test_second_build_is_a_cache_hit(built):
    again = _cli("build")
    assert again.returncode == 0, again.stderr
    assert "up to date" in again.stdout and "nothing compiled" in again.stdout
    assert f"cache: {built}" in again.stdout.replace("\n", "")


def test_manifest_records_what_it_was_built_against(built):
    import torch

    manifest = read_manifest(built)
    assert manifest["torch"] == torch.__version__
    assert manifest["torch_git"] == torch.version.git_version
    assert manifest["python"] == sys.implementation.cache_tag
    assert manifest["build_seconds"] > 0
    assert (built / manifest["library"]).is_file()


def _foreign_copy(built, tmp_path, **changes):
    other = tmp_path / "foreign-build"
    shutil.copytree(built, other)
    manifest = read_manifest(other)
    manifest.update(changes)
    (other / "manifest.json").write_text(json.dumps(manifest))
    return other


def test_a_build_for_another_torch_is_refused_before_loading(built, tmp_path):
    import torch

    other = _foreign_copy(built, tmp_path, torch="2.4.1", torch_git="ee1b6804381c57161c477caa380a840a84167676")
    env = dict(os.environ, ADAPTER_MATRIX_DEVICE_LIBRARY=str(other), TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    proc = subprocess.run(
        [sys.executable, "-c", "import shims"], cwd=REPO, capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode != 0
    assert "built against torch 2.4.1" in proc.stderr
    assert f"runs torch {torch.__version__}" in proc.stderr
    assert "adapter-matrix build" in proc.stderr
    assert "undefined symbol" not in proc.stderr


def test_under_autoload_a_refused_build_warns_and_import_torch_survives(built, tmp_path):
    other = _foreign_copy(built, tmp_path, torch="2.4.1")
    env = dict(os.environ, ADAPTER_MATRIX_DEVICE_LIBRARY=str(other))
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    code = "import torch; print('torch imported', torch.__version__)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    import torch

    if not hasattr(torch, "_import_device_backends"):
        pytest.skip("this torch has no torch.backends autoload")
    assert proc.returncode == 0, proc.stderr
    assert "torch imported" in proc.stdout
    assert "the npu device was not activated" in proc.stderr and "built against torch 2.4.1" in proc.stderr


def test_check_manifest_names_python_and_abi_mismatches(tmp_path):
    running = TorchBuild("2.13.0+cpu", "abc", True, "cpython-311")
    manifest = {
        "torch": "2.13.0+cpu",
        "torch_git": "abc",
        "cxx11_abi": False,
        "python": "cpython-38",
        "library": "x.so",
    }
    with pytest.raises(BuildMismatch) as info:
        check_manifest(manifest, tmp_path, running)
    text = str(info.value)
    assert "built for cpython-38, but this is cpython-311" in text
    assert "_GLIBCXX_USE_CXX11_ABI=0, torch uses 1" in text


# -- a damaged library is found before it is loaded --------------------------------------


def _copy_into_cache(built, cache):
    """The build folder copied into an empty cache at the same key (mtimes kept)."""
    target = cache / "builds" / built.name
    shutil.copytree(built, target)
    return target


def _import_shims(env):
    env = dict(env, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    return subprocess.run(
        [sys.executable, "-c", "import shims"], cwd=REPO, capture_output=True, text=True, timeout=300, env=env
    )


def test_manifest_records_the_librarys_size_and_hash(built):
    import hashlib

    manifest = read_manifest(built)
    library = built / manifest["library"]
    assert manifest["library_bytes"] == library.stat().st_size
    assert manifest["library_sha256"] == hashlib.sha256(library.read_bytes()).hexdigest()


def test_a_truncated_cached_library_names_the_folder_to_delete_not_file_too_short(built, tmp_path):
    folder = _copy_into_cache(built, tmp_path)
    library = folder / read_manifest(folder)["library"]
    library.write_bytes(library.read_bytes()[:4096])
    proc = _import_shims(dict(os.environ, ADAPTER_MATRIX_CACHE=str(tmp_path), ADAPTER_MATRIX_NO_BUILD="1"))
    assert proc.returncode != 0
    assert "AdapterError" in proc.stderr and "is damaged: 4096 bytes" in proc.stderr
    assert f"delete {folder} and run `adapter-matrix build`" in proc.stderr
    assert "file too short" not in proc.stderr and "ImportError" not in proc.stderr


def test_a_same_size_rewrite_is_caught_by_the_hash(built, tmp_path):
    other = tmp_path / "prebuilt"
    shutil.copytree(built, other)
    library = other / read_manifest(other)["library"]
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0xFF
    library.write_bytes(bytes(data))
    proc = _import_shims(dict(os.environ, ADAPTER_MATRIX_DEVICE_LIBRARY=str(other)))
    assert proc.returncode != 0
    assert "its SHA-256 is not the one manifest.json records" in proc.stderr and f"delete {other}" in proc.stderr


def test_a_copied_intact_build_still_loads(built, tmp_path):
    import time

    other = tmp_path / "prebuilt"
    shutil.copytree(built, other)
    library = other / read_manifest(other)["library"]
    later = time.time() + 10
    os.utime(library, (later, later))  # another mtime: the hash decides
    proc = subprocess.run(
        [sys.executable, "-c", "import torch, shims; print(torch.ones(2, device='npu').sum().item())"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, ADAPTER_MATRIX_DEVICE_LIBRARY=str(other), TORCH_DEVICE_BACKEND_AUTOLOAD="0"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("2.0")


def test_a_library_the_manifest_check_cannot_vouch_for_fails_with_the_folder_not_a_traceback(built, tmp_path):
    other = tmp_path / "old-prebuilt"
    shutil.copytree(built, other)
    manifest = read_manifest(other)
    for key in ("library_bytes", "library_sha256", "library_mtime_ns"):  # a manifest written before they were recorded
        manifest.pop(key)
    (other / "manifest.json").write_text(json.dumps(manifest))
    (other / manifest["library"]).write_bytes(b"\x7fELF" + b"\0" * 60)
    proc = _import_shims(dict(os.environ, ADAPTER_MATRIX_DEVICE_LIBRARY=str(other)))
    assert proc.returncode != 0
    assert "AdapterError: cannot load" in proc.stderr and f"delete {other}" in proc.stderr


def test_a_damaged_cache_build_is_compiled_again(built, tmp_path, monkeypatch):
    from adapter_matrix.device import build

    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path))
    monkeypatch.delenv("ADAPTER_MATRIX_NO_BUILD", raising=False)
    monkeypatch.delenv("ADAPTER_MATRIX_DEVICE_LIBRARY", raising=False)
    folder = _copy_into_cache(built, tmp_path)
    manifest = read_manifest(folder)
    good = (folder / manifest["library"]).read_bytes()
    (folder / manifest["library"]).write_bytes(good[:100])
    compiled = []

    def fake_compile(ext, target, verbose):  # what cpp_extension would leave: the library in the folder
        compiled.append(target)
        (target / manifest["library"]).write_bytes(good)
        return 1.0

    monkeypatch.setattr(build, "_compile", fake_compile)
    ext = Extension.of_package("shims", "npu")
    with pytest.warns(RuntimeWarning, match="is damaged: 100 bytes.*compiling it again"):
        result = build.ensure_built(ext)
    assert len(compiled) == 1 and result.compiled and result.path == folder
    assert (folder / manifest["library"]).read_bytes() == good
    assert read_manifest(folder)["library_bytes"] == len(good)
    assert not build.ensure_built(ext).compiled  # and the repaired build is a cache hit
    assert sorted(p.name for p in (tmp_path / "builds").iterdir()) == [folder.name, folder.name + ".lock"]
