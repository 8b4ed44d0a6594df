"""The binary check (issue 48): the adapter's libraries judged as the dynamic loader will
judge them beside the installed torch, without importing either.

Small C++ libraries are built here against the installed torch (tests/fixtures/binary/tiny.cpp,
seconds with g++), each with one thing the loader refuses: a torch symbol that torch does
not export, a DT_NEEDED library that is nowhere, the other C++ ABI, a libstdc++ too old.
They are installed into a folder as a distribution without a matrix and checked with
``check --adapter DIST``, in a subprocess as users run it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Sequence

import pytest

from adapter_matrix.binary import audit as audit_module
from adapter_matrix.binary.audit import Site, audit, cxx11_abi
from adapter_matrix.binary.elf import ElfError, read_elf
from adapter_matrix.binary.itanium import demangle
from adapter_matrix.binary.ldso import ld_cache
from adapter_matrix.check.facts import distribution_folder, distribution_version

from .helpers import FIXTURES, REPO

TORCH = distribution_version("torch")
pytestmark = pytest.mark.skipif(TORCH is None or not sys.platform.startswith("linux"), reason="needs torch on Linux")


def _torch_lib() -> Path:
    found = distribution_folder("torch")
    assert found is not None
    return Path(found[0], "torch", "lib")


def _gxx(*args: str, cwd: Path) -> None:
    done = subprocess.run(
        ["nice", "-n", "10", "g++", "-shared", "-fPIC", *args], cwd=cwd, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> Dict[str, Path]:
    """The variants of tiny.cpp, built once per session (about 5 s on 2 cores)."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("tiny-builds")
    shutil.copy(FIXTURES / "binary" / "tiny.cpp", out)
    (out / "foo.cpp").write_text('extern "C" int foo_value(void) { return 1; }\n')
    (out / "vendor").mkdir()
    _gxx("foo.cpp", "-o", "vendor/libfoo.so", cwd=out)
    torch = ["-L", str(_torch_lib()), "-Wl,--no-as-needed", "-lc10"]
    _gxx("tiny.cpp", "-o", "ok.so", *torch, cwd=out)
    _gxx("-DMISSING_SYMBOL", "tiny.cpp", "-o", "missing.so", *torch, cwd=out)
    _gxx("-D_GLIBCXX_USE_CXX11_ABI=0", "tiny.cpp", "-o", "oldabi.so", *torch, cwd=out)
    _gxx("-DNEEDS_FOO", "tiny.cpp", "-o", "needsfoo.so", *torch, "-Lvendor", "-lfoo", cwd=out)
    _gxx("-DNEEDS_FOO", "tiny.cpp", "-o", "rpathfoo.so", *torch, "-Lvendor", "-lfoo", "-Wl,-rpath,$ORIGIN/lib", cwd=out)
    return {**{p.stem: p for p in out.glob("*.so")}, "libfoo": out / "vendor" / "libfoo.so"}


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    """One cache for the session (each library is read once), none of the user's."""
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path_factory.getbasetemp() / "binary-cache"))
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)


def install(
    site: Path,
    library: Optional[Path],
    *,
    requires: Sequence[str] = (f"torch=={TORCH}",),
    extra: Optional[Dict[str, Path]] = None,
) -> Path:
    """Install ``library`` as ``fake_adapter/_C.so`` of the distribution fake-adapter 1.0 into
    ``site``: by default a build for the installed torch, as its metadata says."""
    package = site / "fake_adapter"
    package.mkdir(parents=True, exist_ok=True)
    files = {"fake_adapter/_C.so": library} if library is not None else {}
    files.update({f"fake_adapter/{k}": v for k, v in (extra or {}).items()})
    for rel, src in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, site / rel)
    info = site / "fake_adapter-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-adapter\nVersion: 1.0\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires)
        + "\n"
    )
    (info / "top_level.txt").write_text("fake_adapter\n")
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in [*files, "fake_adapter-1.0.dist-info/METADATA"]))
    (package / "__init__.py").write_text("")
    return site


def site_of(folder: Path, ld_library_path: str = "") -> Site:
    return Site((str(folder), *sys.path), "/", ld_library_path, sys.implementation.cache_tag)


def check_cli(folder: Path, *args: str, env: Optional[Dict[str, str]] = None):
    """``adapter-matrix check ARGS`` with ``folder`` on the import path and as the working directory."""
    environ = {**os.environ, "PYTHONPATH": str(folder), **(env or {})}
    script = Path(sys.executable).with_name("adapter-matrix")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "adapter_matrix"]
    return subprocess.run([*cmd, "check", *args], cwd=folder, env=environ, capture_output=True, text=True, timeout=300)


def check(folder: Path, *args: str, env: Optional[Dict[str, str]] = None):
    """``adapter-matrix check --adapter fake-adapter ARGS``."""
    return check_cli(folder, "--adapter", "fake-adapter", *args, env=env)


def test_a_library_built_for_this_torch_loads(tiny, tmp_path):
    report = audit("fake-adapter", site_of(install(tmp_path, tiny["ok"])))
    assert report is not None and report["ok"], report["problems"]
    (entry,) = report["files"]
    assert entry["file"] == "fake_adapter/_C.so" and entry["cxx11_abi"] == 1
    # libc10.so has no RPATH to find it by: it is torch's, loaded by `import torch` first
    assert entry["needed"]["libc10.so"] == str(_torch_lib() / "libc10.so")
    assert entry["needed"]["libstdc++.so.6"]  # from the ld.so cache
    assert report["torch"] == TORCH and report["torch_cxx11_abi"] == 1


def test_a_missing_torch_symbol_is_named_demangled_with_the_pair_and_the_fix(tiny, tmp_path):
    install(tmp_path, tiny["missing"], requires=("torch==2.12.0",))
    done = check(tmp_path, "--json")
    assert done.returncode == 1, done.stderr
    (doc,) = json.loads(done.stdout)["checks"]
    assert doc["verdict"] == "unsupported" and doc["matrix"] is None and doc["origin"] == "--adapter"
    (problem,) = doc["binary"]["problems"]
    assert problem["kind"] == "missing-symbol"
    assert problem["subject"] == "_ZN3c106detail12not_in_torchEPKcz"
    assert problem["message"] == (
        f"fake-adapter 1.0's _C.so needs `c10::detail::not_in_torch(char const*, ...)`, which torch {TORCH} "
        "does not export; it was built for torch 2.12.0"
    )
    assert "pip install 'torch==2.12.0'" in problem["fix"] and f"for torch {TORCH}" in problem["fix"]
    assert doc["reasons"] == [problem["message"]]
    # the report says the same, and the fix
    text = check(tmp_path)
    assert text.returncode == 1
    assert "unsupported: fake-adapter 1.0's _C.so needs `c10::detail::not_in_torch(char const*, ...)`" in text.stdout
    assert "fix: install the torch it was built for (pip install 'torch==2.12.0')" in text.stdout


def test_the_torch_a_release_pins_names_what_it_was_built_for(tiny, tmp_path):
    """Without a pin in its metadata, the matrix's release says which torch it was built for;
    without either, the message says another torch."""
    report = audit("fake-adapter", site_of(install(tmp_path, tiny["missing"], requires=())), built_for="2.11.0")
    assert report["problems"][0]["message"].endswith("does not export; it was built for torch 2.11.0")
    report = audit("fake-adapter", site_of(tmp_path), use_cache=False)
    assert report["problems"][0]["message"].endswith("does not export; it was built for another torch")


def beside_torch(site: Path, version: str) -> Path:
    """A torch ``version`` installed into ``site`` as far as ``check`` reads it: its
    dist-info, and this torch's libraries as its ``torch/lib`` (a link); its package raises
    when imported, which ``check`` never does."""
    info = site / f"torch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n\n")
    (info / "RECORD").write_text(f"torch/__init__.py,,\n{info.name}/METADATA,,\n")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("raise SystemExit('torch was imported')\n")
    (site / "torch" / "lib").symlink_to(_torch_lib(), target_is_directory=True)
    return site


def test_a_build_for_another_torch_minor_is_refused_though_every_symbol_resolves(tiny, tmp_path):
    """Issue 57: a CppExtension wheel built for torch 2.13 (`Requires-Dist: torch<2.14,>=2.13`)
    installed with --no-deps beside torch 2.12.1 imports, then its first op fails (2.13
    renumbered the dispatch keys). No symbol is missing: its metadata says it, and `check
    --adapter DIST` (and `--env`) exit 1 before importing anything."""
    if not TORCH.startswith("2.13."):
        pytest.skip("the library is built against torch 2.13 here")
    prefix = tmp_path / "prefix"
    site = beside_torch(prefix / "lib" / "python3.11" / "site-packages", "2.12.1")
    install(site, tiny["ok"], requires=("torch<2.14,>=2.13", "numpy"))
    (site / "fake_adapter" / "__init__.py").write_text("raise SystemExit('fake_adapter was imported')\n")
    for how in (("--adapter", "fake-adapter"), ("--adapter", "fake-adapter", "--env", str(prefix))):
        done = check_cli(site if "--env" not in how else tmp_path, *how, "--json")
        assert done.returncode == 1, done.stdout + done.stderr
        assert "was imported" not in done.stdout + done.stderr
        (doc,) = json.loads(done.stdout)["checks"]
        assert doc["verdict"] == "unsupported" and doc["environment"]["torch"] == "2.12.1"
        (problem,) = doc["binary"]["problems"]  # every symbol resolves: only the metadata tells
        assert problem["kind"] == "built-for" and problem["subject"] == "torch<2.14,>=2.13"
        assert problem["file"] == "fake_adapter-1.0.dist-info/METADATA" and problem["built_for"] == "2.13"
        assert problem["message"] == (
            "fake-adapter 1.0 was built for torch 2.13 (its metadata requires torch<2.14,>=2.13), but torch 2.12.1 "
            "is installed: a PrivateUse1 binary is tied to the torch minor it was compiled against (dispatch keys "
            "and the C++ ABI change between minors), so it can import and then fail at its first op"
        )
        assert problem["fix"] == (
            "install the build of fake-adapter for torch 2.12, or the torch it was built for "
            "(pip install 'torch<2.14,>=2.13')"
        )
        assert doc["reasons"] == [problem["message"]] and doc["binary"]["built_for_line"] == "2.13"
    text = check_cli(site, "--adapter", "fake-adapter")
    assert text.returncode == 1
    assert (
        "unsupported: fake-adapter 1.0 was built for torch 2.13 (its metadata requires torch<2.14,>=2.13)"
        in text.stdout
    )
    assert "fix: install the build of fake-adapter for torch 2.12, or the torch it was built for" in text.stdout


def test_a_remembered_answer_is_given_anew_when_the_metadata_says_another_torch(tiny, tmp_path):
    """A plain `check` is remembered with the stamps of what the binary check read, the
    adapter's METADATA among them: a Requires-Dist rewritten in place answers anew."""
    if not TORCH.startswith("2.13.0"):
        pytest.skip("the matrix describes torch 2.13.0")
    site = install(tmp_path / "site", tiny["ok"], requires=(f"torch=={TORCH}",))
    shutil.copy(FIXTURES / "binary" / "built-for-2.13.yaml", site / "compat.yaml")
    cache = Path(os.environ["ADAPTER_MATRIX_CACHE"]) / "check-answers"
    before = set(cache.glob("*")) if cache.is_dir() else set()
    first = check_cli(site)
    assert first.returncode in (0, 3), first.stdout + first.stderr
    assert set(cache.glob("*")) - before, "the answer was not remembered"
    assert check_cli(site).stdout == first.stdout
    metadata = site / "fake_adapter-1.0.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text().replace(f"torch=={TORCH}", "torch>=2.12,<2.13"))
    again = check_cli(site)
    assert again.returncode == 1 and "was built for torch 2.12" in again.stdout, again.stdout + again.stderr


def test_the_torch_a_build_is_for_is_read_from_any_specifier():
    from adapter_matrix.check.binary import built_for_torch

    line = lambda *requires: (lambda b: b and (b.requirement, b.line, b.exact))(built_for_torch(requires))
    assert line("torch<2.14,>=2.13") == ("torch<2.14,>=2.13", "2.13", None)
    assert line("torch (==2.13.0)") == ("torch==2.13.0", "2.13", "2.13.0")
    assert line("torch==2.13.*") == ("torch==2.13.*", "2.13", None)
    assert line("torch==2.14.0.*") == ("torch==2.14.0.*", "2.14", None)  # torch_npu's
    assert line("torch~=2.13.1") == ("torch~=2.13.1", "2.13", None)
    assert line("torch>=2.13.0,<2.13.9") == ("torch<2.13.9,>=2.13.0", "2.13", None)
    assert line("torch<=2.13.3,>2.13.0") == ("torch<=2.13.3,>2.13.0", "2.13", None)
    assert line("torch>=2.13,<2.15")[1] is None  # two minors: built for neither alone
    assert line("torch>=2.1")[1] is None and line("torch")[1] is None and line("torch~=2.13")[1] is None
    assert line("torch<3,>=2.99")[1] is None
    assert line("numpy", "torch==2.12.0 ; extra == 'test'") is None  # an extra's is not installed with it
    assert line("numpy") is None


def just_in_time(package: Path) -> None:
    """Make ``package`` compile its C++ core at its first import, as the reference adapter does."""
    (package / "csrc").mkdir()
    (package / "csrc" / "core.cpp").write_text("// compiled at first import\n")
    (package / "_activation.py").write_text(
        "from adapter_matrix.device import build as _build\n\n"
        "def activate():\n    return _build.ensure_built(_build.Extension.of_package(__package__, 'fake'))\n"
    )


def test_only_a_core_compiled_at_import_is_called_just_in_time(tmp_path, monkeypatch):
    """A csrc/ shipped in the wheel (a CppExtension's sources beside its _C) is no core compiled
    at the first import: no note says one is to be built. One the package's Python compiles with
    adapter-matrix's build is, until it is built."""
    monkeypatch.delenv("ADAPTER_MATRIX_DEVICE_LIBRARY", raising=False)
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))
    site = install(tmp_path / "site", None)
    (site / "fake_adapter" / "csrc").mkdir()
    (site / "fake_adapter" / "csrc" / "tiny.cpp").write_text("// the sources of its _C, shipped\n")
    (site / "fake_adapter" / "ops.py").write_text("import torch  # the compiled _C's ops: built by setup.py\n")
    report = audit("fake-adapter", site_of(site))
    assert not any("first import" in n for n in report["notes"]), report["notes"]
    (site / "fake_adapter" / "csrc" / "tiny.cpp").unlink()
    (site / "fake_adapter" / "csrc").rmdir()
    just_in_time(site / "fake_adapter")
    report = audit("fake-adapter", site_of(site))
    assert report["notes"][0].startswith(
        f"fake_adapter's C++ core is compiled at its first import; none is built for torch {TORCH} yet"
    )


def test_a_build_whose_manifest_records_another_torch_is_refused(tiny, tmp_path, monkeypatch):
    """A JIT core built elsewhere ($ADAPTER_MATRIX_DEVICE_LIBRARY): its manifest records the
    torch it was compiled against, and another minor is refused as a wheel's metadata is."""
    site = tmp_path / "site"
    install(site, None, requires=())
    just_in_time(site / "fake_adapter")
    build = tmp_path / "build"
    build.mkdir()
    shutil.copy(tiny["ok"], build / "fake_core.so")
    manifest = {"library": "fake_core.so", "torch": "2.11.0+cpu", "torch_git": "0" * 40, "python": "cpython-311"}
    (build / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("ADAPTER_MATRIX_DEVICE_LIBRARY", str(build))
    report = audit("fake-adapter", site_of(site), use_cache=False)
    (problem,) = report["problems"]
    assert problem["kind"] == "built-for" and problem["file"] == str(build / "manifest.json")
    assert problem["message"].startswith(
        f"fake-adapter 1.0 was built for torch 2.11 (its build's manifest.json records torch 2.11.0+cpu), but torch {TORCH} is installed"
    )
    assert report["built_for"] == "2.11.0+cpu"
    manifest["torch"] = TORCH
    (build / "manifest.json").write_text(json.dumps(manifest))
    assert audit("fake-adapter", site_of(site))["ok"]


def test_a_missing_needed_library_is_named_and_found_as_the_loader_finds_it(tiny, tmp_path):
    site = install(tmp_path / "site", tiny["needsfoo"])
    report = audit("fake-adapter", site_of(site))
    (problem,) = report["problems"]
    assert problem["kind"] == "missing-library" and problem["subject"] == "libfoo.so"
    assert problem["message"].startswith(
        "fake-adapter 1.0's _C.so needs libfoo.so, which the loader cannot find (searched "
    )
    assert "LD_LIBRARY_PATH is unset" in problem["message"]
    assert "/etc/ld.so.cache" in problem["searched"]
    assert "LD_LIBRARY_PATH" in problem["fix"]
    vendor = str(tiny["libfoo"].parent)
    assert audit("fake-adapter", site_of(site, vendor))["ok"]  # LD_LIBRARY_PATH finds it
    # a DT_RUNPATH of $ORIGIN/lib finds it beside the library, as shipped in the wheel
    other = install(tmp_path / "other", tiny["rpathfoo"], extra={"lib/libfoo.so": tiny["libfoo"]})
    report = audit("fake-adapter", site_of(other))
    assert report["ok"], report["problems"]
    assert report["files"][0]["needed"]["libfoo.so"] == str(other / "fake_adapter" / "lib" / "libfoo.so")


def test_a_cxx11_abi_mismatch_is_named(tiny, tmp_path):
    report = audit("fake-adapter", site_of(install(tmp_path, tiny["oldabi"])))
    (problem,) = report["problems"]
    assert problem["kind"] == "cxx11-abi" and problem["subject"] == "_GLIBCXX_USE_CXX11_ABI=0"
    assert problem["message"].startswith(
        f"fake-adapter 1.0's _C.so was built with _GLIBCXX_USE_CXX11_ABI=0, but torch {TORCH} uses 1: it needs "
        "`c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::"
    )
    assert report["files"][0]["cxx11_abi"] == 0


def test_a_system_library_older_than_the_build_needs_is_named(tiny, tmp_path):
    """A libstdc++.so.6 that defines GLIBCXX_3.4 only, first on LD_LIBRARY_PATH: the
    library needs GLIBCXX_3.4.21 (C++11 strings), which it does not define."""
    stub = tmp_path / "oldstdcxx"
    stub.mkdir()
    (stub / "v.map").write_text("GLIBCXX_3.4 { global: old_stdcxx; local: *; };\nCXXABI_1.3 { global: old_abi; };\n")
    (stub / "s.c").write_text("int old_stdcxx(void) { return 0; }\nint old_abi(void) { return 0; }\n")
    done = subprocess.run(
        ["gcc", "-shared", "-fPIC", "-Wl,--version-script=v.map", "-Wl,-soname,libstdc++.so.6", "s.c", "-o", "libstdc++.so.6"],
        cwd=stub, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = audit("fake-adapter", site_of(install(tmp_path / "site", tiny["ok"]), str(stub)))
    (problem,) = report["problems"]
    assert problem["kind"] == "symbol-version" and problem["subject"] == "libstdc++.so.6"
    assert "GLIBCXX_3.4.21" in problem["missing"] and "GLIBCXX_3.4" not in problem["missing"]
    assert (
        f"from libstdc++.so.6, but the one the loader finds ({stub / 'libstdc++.so.6'}) is older; it defines GLIBCXX up to 3.4"
        in problem["message"]
    )


def test_an_adapter_without_a_matrix_is_checked_by_name(tiny, tmp_path):
    install(tmp_path, tiny["ok"])
    done = check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "supported: fake-adapter ships no compat.yaml: only its binaries were checked" in done.stdout
    assert f"binary check: 1 library loads against torch {TORCH}" in done.stdout
    missing = check(tmp_path, "--adapter", "not-installed-anywhere")
    assert missing.returncode == 2 and "no distribution of that name is installed" in missing.stderr


def test_the_verdict_is_reused_until_a_file_it_read_changes(tiny, tmp_path, monkeypatch):
    site = install(tmp_path, tiny["ok"])
    assert audit("fake-adapter", site_of(site))["ok"]

    def no_reading(path):
        raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(audit_module, "facts_for", no_reading)
    assert audit("fake-adapter", site_of(site))["ok"]  # warm: stats only
    monkeypatch.undo()
    monkeypatch.setenv("ADAPTER_MATRIX_CACHE", str(tmp_path / "cache"))
    assert audit("fake-adapter", site_of(site))["ok"]
    shutil.copy(tiny["missing"], site / "fake_adapter" / "_C.so")  # reinstalled in place: another build
    assert [p["kind"] for p in audit("fake-adapter", site_of(site))["problems"]] == ["missing-symbol"]


@pytest.mark.slow
def test_the_reference_device_passes(monkeypatch):
    """The reference adapter's C++ core, built for this torch (`adapter-matrix build`: a
    no-op when this machine has built it), loads beside this torch. Its distribution ships
    no library: the check finds the core in the build folder (``$ADAPTER_MATRIX_DEVICE_LIBRARY``
    names it here; by default, the build cache)."""
    env = {k: v for k, v in os.environ.items() if k != "ADAPTER_MATRIX_CACHE"}
    script = Path(sys.executable).with_name("adapter-matrix")
    done = subprocess.run([str(script), "build"], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = done.stdout.replace("\n", "").split("cache: ", 1)[1].split()[0]
    monkeypatch.setenv("ADAPTER_MATRIX_DEVICE_LIBRARY", folder)
    report = audit("adapter-matrix-npu")
    assert report is not None and report["ok"], report["problems"]
    (entry,) = report["files"]
    assert entry["file"].endswith("shims_npu_core.so") and f"-torch-{TORCH}-" in entry["file"]
    assert entry["needed"]["libtorch_cpu.so"] == str(_torch_lib() / "libtorch_cpu.so")
    assert report["built_for"] == TORCH and report["notes"] == []


# -- another environment, a file not yet installed ---------------------------------------


@pytest.mark.slow
def test_check_env_judges_a_venv_as_check_inside_it_does(wheels, tmp_path):
    """A fresh venv with the tool and the reference adapter (torch linked from here): `check
    --env VENV` from this interpreter answers as `check` run by the venv's own interpreter,
    binary check included, without running anything of the venv."""
    from .freshvenv import FreshVenv, requirements_of

    venv = FreshVenv(tmp_path / "venv")
    venv.install(wheels["tool"], wheels["adapter"])
    venv.link(*requirements_of(wheels["tool"]), *requirements_of(wheels["adapter"]))
    here = tmp_path / "work"  # no compat.yaml: the matrix the adapter registers
    here.mkdir()
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ADAPTER_MATRIX_CACHE")}
    inside = subprocess.run(
        [venv.bin("adapter-matrix"), "check", "--json"],
        cwd=here,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    script = Path(sys.executable).with_name("adapter-matrix")
    outside = subprocess.run(
        [str(script), "check", "--json", "--env", str(venv.root)],
        cwd=here,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert inside.returncode == outside.returncode, inside.stdout + inside.stderr + outside.stdout + outside.stderr
    (a,) = json.loads(inside.stdout)["checks"]
    (b,) = json.loads(outside.stdout)["checks"]
    assert b["environment"].pop("location") == f"virtual environment {venv.root}"
    keys = (
        "matrix",
        "origin",
        "adapter",
        "environment",
        "verdict",
        "exit_code",
        "reasons",
        "release",
        "torch_line",
        "shim",
    )
    assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    assert a["environment"]["torch"] == TORCH and a["matrix"].startswith(str(venv.purelib))
    assert a["binary"]["problems"] == b["binary"]["problems"] and a["binary"]["ok"] == b["binary"]["ok"]
    assert a["binary"]["files"] == b["binary"]["files"]


def test_check_env_refuses_a_folder_without_packages(tmp_path):
    done = subprocess.run(
        [str(Path(sys.executable).with_name("adapter-matrix")), "check", "--env", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "no site-packages found" in done.stderr and "Traceback" not in done.stderr


def test_an_image_root_is_read_under_its_root(tmp_path):
    from adapter_matrix.check.elsewhere import locate

    site = tmp_path / "usr" / "local" / "lib" / "python3.10" / "site-packages"
    site.mkdir(parents=True)
    install(site, None, requires=("torch==2.13.0",))
    (site / "extra.pth").write_text("/opt/extra\nimport os\n")
    (tmp_path / "opt" / "extra").mkdir(parents=True)
    target = locate(str(tmp_path))
    assert target.root == str(tmp_path) and target.python == "3.10"
    assert target.paths == (str(site), str(tmp_path / "opt" / "extra"))  # the image's /opt/extra, not this machine's
    assert target.description == f"image root {tmp_path}"


def test_requirements_pinning_another_torch_is_unsupported_before_install(tmp_path):
    """A file pinning torch 2.14.0 beside fake-adapter 1.0, a build for torch 2.13.0: the
    matrix says unsupported, with nothing installed (neither is, here)."""
    req = tmp_path / "requirements.txt"
    req.write_text(
        "# pip-compile output\ntorch==2.14.0 \\\n    --hash=sha256:00\nfake-adapter==1.0 ; python_version >= '3'\nrich>=13\n"
    )
    matrix = FIXTURES / "binary" / "built-for-2.13.yaml"
    done = check_cli(tmp_path, "--matrix", str(matrix), "--requirements", str(req), "--json")
    assert done.returncode == 1, done.stderr
    (doc,) = json.loads(done.stdout)["checks"]
    assert doc["environment"]["torch"] == "2.14.0" and doc["environment"]["adapter"] == "1.0"
    assert doc["reasons"] == ["fake-adapter 1.0 supports torch 2.13.0, not 2.14.0"]
    assert doc["fixes"][0]["commands"] == ["pip install 'torch==2.13.0'"]
    assert "binary" not in doc  # nothing of it is installed to read
    lock = tmp_path / "pylock.toml"
    lock.write_text(
        'lock-version = "1.0"\n[[packages]]\nname = "torch"\nversion = "2.13.0"\n[[packages]]\nname = "fake_adapter"\nversion = "1.0"\n'
    )
    ok = check_cli(tmp_path, "--matrix", str(matrix), "--requirements", str(lock))
    assert ok.returncode == 0 and "supported" in ok.stdout, ok.stdout + ok.stderr


def test_requirements_beside_an_installed_adapter_built_for_another_torch(tmp_path):
    """No matrix: the installed adapter's metadata pins the torch it was built for."""
    install(tmp_path / "site", None, requires=("torch==2.13.0",))
    req = tmp_path / "req.txt"
    req.write_text("torch==2.14.0\n")
    done = check(tmp_path / "site", "--requirements", str(req))
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"unsupported: fake-adapter 1.0 (installed) was built for torch 2.13.0, but {req} would install torch 2.14.0"
        in done.stdout
    )
    req.write_text("torch==2.13.0\n")
    assert check(tmp_path / "site", "--requirements", str(req)).returncode == 0
    req.write_text("torch==2.13.0+cpu\n")  # ==2.13.0 admits the CPU build, as pip reads it
    assert check(tmp_path / "site", "--requirements", str(req)).returncode == 0


def test_a_torch_range_is_judged_against_the_minor_an_installed_adapter_was_built_for(tmp_path):
    """No matrix: a file of ranges is judged by the torch minors it admits, never ignored."""
    install(tmp_path / "site", None, requires=("torch<2.14,>=2.13",))
    req = tmp_path / "req.txt"
    req.write_text("torch>=2.12,<2.13\nnumpy\n")
    done = check(tmp_path / "site", "--requirements", str(req))
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "unsupported: fake-adapter 1.0 (installed) was built for torch 2.13 (torch<2.14,>=2.13 in its metadata), "
        f"but {req} asks for torch<2.13,>=2.12, which admits no torch 2.13: a PrivateUse1 binary is tied"
    ) in done.stdout
    req.write_text("torch~=2.13.0\n")
    done = check(tmp_path / "site", "--requirements", str(req))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"the one torch minor {req}'s torch~=2.13.0 installs" in done.stdout
    req.write_text("torch>=2.12\n")  # 2.13 among others: which one pip picks decides
    done = check(tmp_path / "site", "--requirements", str(req), "--json")
    assert done.returncode == 3, done.stdout + done.stderr
    (doc,) = json.loads(done.stdout)["checks"]
    assert doc["verdict"] == "experimental"
    assert doc["reasons"] == [
        f"{req} asks for torch>=2.12, not one torch minor: it admits others than torch 2.13, the one fake-adapter "
        "1.0 was built for, and which one pip installs depends on its index (pin torch>=2.13,<2.14 in it, or "
        "--resolve asks pip's resolver)"
    ]
    req.write_text("torch==2.13.0+cpu\n")  # an exact pin of the minor it was built for
    assert check(tmp_path / "site", "--requirements", str(req)).returncode == 0


def test_a_torch_range_is_judged_at_the_one_line_of_the_matrix_it_admits(tmp_path):
    matrix = FIXTURES / "binary" / "built-for-2.13.yaml"
    req = tmp_path / "req.txt"
    req.write_text("torch>=2.14,<2.15\nfake-adapter==1.0\n")
    done = check_cli(tmp_path, "--matrix", str(matrix), "--requirements", str(req), "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    (doc,) = json.loads(done.stdout)["checks"]
    assert doc["environment"]["torch"] == "2.14.1" and doc["reasons"] == [
        "fake-adapter 1.0 supports torch 2.13.0, not 2.14.1"
    ]
    assert doc["assumptions"] == [
        f"torch 2.14.1: the newest release of torch<2.15,>=2.14 this matrix describes ({req} pins no exact torch: "
        "pip installs the newest its index has, or keeps an installed torch the range admits)"
    ]
    req.write_text("torch>=2.13\nfake-adapter==1.0\n")  # two lines of the matrix: cannot tell which
    done = check_cli(tmp_path, "--matrix", str(matrix), "--requirements", str(req))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{req} asks for torch>=2.13, which admits torch 2.13, 2.14 of this matrix" in " ".join(done.stderr.split())
    req.write_text("torch>=3\nfake-adapter==1.0\n")
    done = check_cli(tmp_path, "--matrix", str(matrix), "--requirements", str(req))
    assert done.returncode == 1 and "which admits no torch release this matrix describes (2.13, 2.14)" in " ".join(
        done.stderr.split()
    )


def test_a_torch_range_beside_an_installed_build_with_a_matrix(tmp_path):
    """The installed adapter's build and the file's range: refused when the range admits no
    torch of its minor; the adapter's own range judged as installed when it admits it."""
    if not TORCH.startswith("2.13."):
        pytest.skip("the matrix describes torch 2.13 and 2.14")
    site = install(tmp_path / "site", None, requires=("torch<2.14,>=2.13",))
    shutil.copy(FIXTURES / "binary" / "built-for-2.13.yaml", site / "compat.yaml")
    req = tmp_path / "req.txt"
    req.write_text("torch>=2.14,<2.15\nfake-adapter>=1.0\n")
    done = check_cli(site, "--requirements", str(req), "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    (doc,) = json.loads(done.stdout)["checks"]
    assert (
        "fake-adapter 1.0 (installed) was built for torch 2.13 (torch<2.14,>=2.13 in its metadata), but "
        f"{req} asks for torch<2.15,>=2.14, which admits no torch 2.13: a PrivateUse1 binary"
    ) in doc["reasons"][-1]
    assert doc["assumptions"][1] == (
        f"fake-adapter 1.0: installed, and {req} asks for fake-adapter>=1.0, which admits it (pip keeps it)"
    )
    req.write_text("torch>=2.13,<2.14\n")
    assert check_cli(site, "--requirements", str(req)).returncode == 0
    req.write_text("torch>=2.13,<2.14\nfake-adapter>=2\n")  # pip would replace the adapter, by an unknown release
    done = check_cli(site, "--requirements", str(req))
    assert done.returncode == 2
    assert (
        f"{req} asks for fake-adapter>=2, which the installed fake-adapter 1.0 does not satisfy: which release pip "
        "installs depends on its index, so it is not judged"
    ) in " ".join(done.stderr.split())


def test_pins_are_read_from_requirements_and_lock_files(tmp_path):
    from adapter_matrix.check.requirements import RequirementsError, read_pins

    (tmp_path / "base.txt").write_text("torch==2.13.0+cpu\n--index-url https://download.pytorch.org/whl/cpu\n")
    (tmp_path / "req.txt").write_text(
        "-r base.txt\nnumpy==1.26.4 ; python_version < '3'\nTorch_NPU==2.2.0  # vendor\nyaml\n"
    )
    pins = read_pins(str(tmp_path / "req.txt"))
    assert pins.versions == {"torch": "2.13.0+cpu", "torch-npu": "2.2.0"}
    assert pins.ranges == {"yaml": "yaml"} and pins.range("torch") is None  # a range is kept, not dropped
    (tmp_path / "ranges.txt").write_text("torch>=2.12\n-c limits.txt\n")
    (tmp_path / "limits.txt").write_text("torch<2.13 ; python_version >= '3'\n")
    assert read_pins(str(tmp_path / "ranges.txt")).range("Torch") == "torch<2.13,>=2.12"  # both, as pip takes them
    (tmp_path / "uv.lock").write_text('version = 1\n[[package]]\nname = "torch"\nversion = "2.14.0"\n')
    assert read_pins(str(tmp_path / "uv.lock")).get("torch") == "2.14.0"
    (tmp_path / "bad.txt").write_text("torch===\n")
    with pytest.raises(RequirementsError, match=r"bad.txt:1: "):
        read_pins(str(tmp_path / "bad.txt"))


# -- the pieces ---------------------------------------------------------------------------


def test_the_elf_reader_agrees_with_readelf(tiny):
    facts = read_elf(str(tiny["rpathfoo"]))
    assert facts.elf_class == 64 and "libfoo.so" in facts.needed and "libc10.so" in facts.needed
    assert facts.runpath == ("$ORIGIN/lib",) and facts.rpath == ()
    assert "tiny_check" in facts.exports
    weak = {u.name: u for u in facts.undefined}
    assert weak["optional_hook"].weak and not weak["foo_value"].weak and weak["foo_value"].version == ""
    versions = dict(facts.versions_needed)
    assert "GLIBCXX_3.4.21" in versions["libstdc++.so.6"]
    if shutil.which("readelf"):
        dynamic = subprocess.run(["readelf", "-d", str(tiny["rpathfoo"])], capture_output=True, text=True).stdout
        assert [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line] == list(
            facts.needed
        )


def test_a_damaged_file_is_one_line(tiny, tmp_path):
    short = tmp_path / "short.so"
    short.write_bytes(tiny["ok"].read_bytes()[:200])
    with pytest.raises(ElfError, match=r"cut short|outside the file|shorter"):
        read_elf(str(short))
    text = tmp_path / "text.so"
    text.write_text("INPUT(-lfoo)\n")  # a linker script named like a library
    with pytest.raises(ElfError, match="not an ELF file"):
        read_elf(str(text))


@pytest.mark.skipif(not os.path.exists("/etc/ld.so.cache") or shutil.which("ldconfig") is None, reason="no ld.so cache")
def test_the_ld_so_cache_reads_as_ldconfig_prints_it():
    cache = ld_cache()
    printed = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout.splitlines()[1:]
    pairs = {(line.split(" (")[0].strip(), line.rsplit("=> ", 1)[1].strip()) for line in printed if "=> " in line}
    assert pairs and pairs == {(name, path) for name, paths in cache.items() for path in paths}


def test_the_cxx11_abi_is_told_from_the_names():
    assert (
        cxx11_abi(["_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"]) == 1
    )
    assert cxx11_abi(["_ZN3c106detail14torchCheckFailEPKcS2_jRKSs"]) == 0
    assert cxx11_abi(["_ZN3c1013getThreadNameB5cxx11Ev"]) == 1
    assert cxx11_abi(["tiny_check", "_ZN2at6TensorC1Ev"]) is None  # no std::string in sight: cannot tell


@pytest.mark.parametrize(
    "mangled,readable",
    [
        ("_ZN5torch10ValueErrorC1EPKcz", "torch::ValueError::ValueError(char const*, ...)"),
        (
            "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
            "c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
        ),
        (
            "_ZNSt6vectorIN2at6TensorESaIS1_EE9push_backERKS1_",
            "std::vector<at::Tensor, std::allocator<at::Tensor> >::push_back(at::Tensor const&)",
        ),
        ("_ZNK2at10TensorBase4sizeEl", "at::TensorBase::size(long) const"),
        ("_ZN3c1013getThreadNameB5cxx11Ev", "c10::getThreadName[abi:cxx11]()"),
        ("_ZTVN3c1010ValueErrorE", "vtable for c10::ValueError"),
        ("_ZN3c10gtERKNS_6SymIntEd", "c10::operator>(c10::SymInt const&, double)"),
        ("not_mangled", "not_mangled"),
        ("_ZN3c10Q", "_ZN3c10Q"),  # unreadable: shown as it is
    ],
)
def test_the_fallback_demangler_reads_torchs_names_as_cxxfilt_does(mangled, readable):
    assert demangle(mangled) == readable


def test_the_device_core_is_looked_up_by_the_torch_build_version_py_names(tmp_path):
    """PyPI's CUDA wheels say ``2.1.2`` in their metadata and ``2.1.2+cu121`` in
    ``torch/version.py``, which is what a build of the device core is named by (0.3.0's first
    torch 2.1 cell recorded ``libraries: 0``)."""
    from adapter_matrix.binary.audit import _torch_build

    torch_dir = tmp_path / "torch"
    torch_dir.mkdir()
    (torch_dir / "version.py").write_text(
        "__version__ = '2.1.2+cu121'\ndebug = False\ncuda = '12.1'\ngit_version = 'a8e7c98cb95ff97bb30a728c6b2a1ce6bff946eb'\n"
    )
    assert _torch_build(str(torch_dir), "2.1.2") == ("2.1.2+cu121", "a8e7c98cb95ff97bb30a728c6b2a1ce6bff946eb")
    assert _torch_build(str(tmp_path / "none"), "2.1.2") == ("2.1.2", "")


@pytest.mark.parametrize(
    "library, requires, kinds",
    [
        ("ok", (f"torch=={TORCH}",), set()),
        ("missing", ("torch==2.12.0",), {"missing-symbol"}),  # with symbols
        ("needsfoo", (f"torch=={TORCH}",), {"missing-library"}),  # with searched
        ("oldabi", (f"torch=={TORCH}",), {"cxx11-abi"}),
        ("ok", ("torch<2.2,>=2.1",), {"built-for"}),  # with built_for
    ],
)
def test_the_typed_binary_section_writes_the_bytes_the_audit_wrote(tiny, tmp_path, library, requires, kinds):
    """`check --json` prints the declared BinarySection read from the audit's JSON: each problem
    kind's own keys (and only those) come back, in the audit's order (issue 70)."""
    from adapter_matrix.answer import BinarySection
    from adapter_matrix.documents import from_json, to_json

    report = audit("fake-adapter", site_of(install(tmp_path, tiny[library], requires=requires)), use_cache=False)
    assert report is not None and {p["kind"] for p in report["problems"]} == kinds
    section = from_json(BinarySection, report)
    assert json.dumps(to_json(section)) == json.dumps(report)


def test_nothing_built_is_said_so_not_counted_as_zero_libraries():
    """Issue 67: a healthy fresh install read "binary check: 0 libraries load against torch ..."."""
    from adapter_matrix.answer import BinaryFile, BinarySection
    from adapter_matrix.check.binary import binary_lines

    section = BinarySection(True, "adapter-matrix-npu", "0.3.0", "2.13.0+cpu", 1, None, None, (), (), ())
    text = "".join(part for part, _style in binary_lines(section)[0])
    assert text.startswith("binary check: nothing built yet: adapter-matrix-npu 0.3.0 has no compiled library")
    assert "0 librar" not in text
    section = section._replace(files=(BinaryFile("x.so", 1, {}),))
    assert "".join(p for p, _s in binary_lines(section)[0]) == "binary check: 1 library loads against torch 2.13.0+cpu"
