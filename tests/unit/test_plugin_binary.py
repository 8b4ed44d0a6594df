"""A plugin of a plugin (issue 57, item 1): an op library that links its adapter's own library
(as torchvision_npu links torch_npu's) is read against the adapter installed beside it. Built
against a newer adapter's header, it needs a symbol the installed adapter lacks: ``check``
names the symbol, the installed adapter release and the one the plugin was built against.

Two tiny libraries are compiled here with g++ (about a second): the adapter's at two releases
(0.2.0 adds a function) and a plugin built against 0.2.0's."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Dict, Sequence

import pytest

from adapter_matrix.binary.audit import audit
from adapter_matrix.check.facts import distribution_version

from .test_binary import _cache, _gxx, check_cli, site_of  # noqa: F401  # _cache: autouse, no user cache

ADAPTER = """
namespace fake_dev {
__attribute__((visibility("default"))) int allocations() { return 1; }
#ifdef RELEASE_020
__attribute__((visibility("default"))) int stream_count() { return 2; }
#endif
}
"""
PLUGIN = """
namespace fake_dev { int allocations(); int stream_count(); }
extern "C" int fused_op() { return fake_dev::allocations() + fake_dev::stream_count(); }
"""


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> Dict[str, Path]:
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    out = tmp_path_factory.mktemp("plugin-builds")
    (out / "adapter.cpp").write_text(ADAPTER)
    (out / "plugin.cpp").write_text(PLUGIN)
    for release in ("010", "020"):
        (out / release).mkdir()
        _gxx(f"-DRELEASE_{release}", "adapter.cpp", "-o", f"{release}/libfake_dev.so", cwd=out)
    # linked against 0.2.0's library; at run time it finds the installed adapter's beside it
    _gxx("plugin.cpp", "-o", "_C.so", "-L020", "-lfake_dev", "-Wl,-rpath,$ORIGIN/../fake_dev/lib", cwd=out)
    return {"0.1.0": out / "010" / "libfake_dev.so", "0.2.0": out / "020" / "libfake_dev.so", "plugin": out / "_C.so"}


def _dist(site: Path, name: str, version: str, files: Dict[str, Path], requires: Sequence[str]) -> None:
    """Install ``files`` (relative path -> source) as the distribution ``name`` ``version``."""
    package = name.replace("-", "_")
    for rel, src in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, site / rel)
    info = site / f"{package}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        + "".join(f"Requires-Dist: {r}\n" for r in requires)
        + "\n"
    )
    (info / "top_level.txt").write_text(package + "\n")
    (info / "RECORD").write_text("".join(f"{rel},,\n" for rel in [*files, f"{info.name}/METADATA"]))


def _stack(site: Path, builds: Dict[str, Path], adapter: str, pin: str) -> Path:
    _dist(site, "fake-dev", adapter, {"fake_dev/lib/libfake_dev.so": builds[adapter]}, [])
    _dist(site, "fake-fused", "1.0", {"fake_fused/_C.so": builds["plugin"]}, [f"fake-dev{pin}"])
    return site


def test_a_plugin_built_against_a_newer_adapter_is_named_with_the_symbol_and_both_releases(builds, tmp_path):
    _stack(tmp_path, builds, "0.1.0", "==0.2.0")
    done = check_cli(tmp_path, "--adapter", "fake-fused", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    (answer,) = json.loads(done.stdout)["checks"]
    assert answer["verdict"] == "unsupported"
    (problem,) = answer["binary"]["problems"]
    assert problem["kind"] == "missing-symbol"
    assert [s["demangled"] for s in problem["symbols"]] == ["fake_dev::stream_count()"]
    assert problem["linked"] == {"distribution": "fake-dev", "installed": "0.1.0", "built_against": "0.2.0"}
    assert "`fake_dev::stream_count()`, which fake-dev 0.1.0's libfake_dev.so does not export" in problem["message"]
    assert "built against fake-dev 0.2.0 (fake-dev==0.2.0 in its metadata)" in problem["message"]
    assert problem["fix"].startswith("install fake-dev 0.2.0 (pip install 'fake-dev==0.2.0')")
    text = check_cli(tmp_path, "--adapter", "fake-fused")
    assert text.returncode == 1 and "fake-dev 0.1.0's libfake_dev.so does not export" in text.stdout


def test_the_same_plugin_beside_the_adapter_it_was_built_against_loads(builds, tmp_path):
    report = audit("fake-fused", site_of(_stack(tmp_path, builds, "0.2.0", "==0.2.0")), use_cache=False)
    assert report is not None and report["ok"], report["problems"]
    (entry,) = report["files"]
    found = entry["needed"]["libfake_dev.so"]  # through the plugin's $ORIGIN/../fake_dev/lib rpath
    assert Path(found).resolve() == (tmp_path / "fake_dev" / "lib" / "libfake_dev.so").resolve()


def test_a_range_on_the_adapter_names_no_release_it_was_built_against(builds, tmp_path):
    report = audit("fake-fused", site_of(_stack(tmp_path, builds, "0.1.0", ">=0.1")), use_cache=False)
    assert report is not None
    (problem,) = report["problems"]
    assert problem["linked"]["built_against"] is None
    assert "built against another release of fake-dev (fake-dev>=0.1 in its metadata)" in problem["message"]
    assert problem["fix"] == "install a build of fake-fused made against fake-dev 0.1.0"


ADAPTER_MATRIX = """schema-version: 2
adapter: {distribution: fake-dev, device: fakedev}
torch:
  "%(line)s": {released: 2026-07-08, patches: [%(torch)s], python: ["%(python)s"]}
releases:
  - {version: 0.1.0, torch: "==%(line)s.*", python: ">=3.10", status: supported}
"""
LAYER_MATRIX = """schema-version: 2
layer: {distribution: fake-fused, adapter: fake-dev}
releases:
  - {version: "1.0", status: supported, torch: "==%(line)s.*", adapter: 0.1.0}
"""


def test_a_stacks_check_reads_the_layers_library_against_the_adapter_installed(builds, tmp_path):
    """The cell's check (``--matrix ADAPTER --matrix LAYER``): the layer's pins hold, its op
    library does not load beside the adapter installed, so the stack is unsupported and the
    layer's binary section (the record's ``binary``) says why."""
    torch = distribution_version("torch")
    if torch is None:
        pytest.skip("needs torch: the matrices describe the installed one")
    facts = {
        "line": ".".join(torch.split(".")[:2]),
        "torch": torch.split("+")[0],
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
    }
    site = _stack(tmp_path / "site", builds, "0.1.0", "==0.2.0")
    (tmp_path / "adapter.yaml").write_text(ADAPTER_MATRIX % facts)
    (tmp_path / "layer.yaml").write_text(LAYER_MATRIX % facts)
    matrices = ["--matrix", str(tmp_path / "adapter.yaml"), "--matrix", str(tmp_path / "layer.yaml")]
    done = check_cli(site, *matrices, "--json")
    (answer,) = json.loads(done.stdout)["checks"]
    assert done.returncode == 1 and answer["verdict"] == "unsupported", done.stdout + done.stderr
    (layer,) = answer["stack"]["layers"]
    assert layer["status"] == "supported" and layer["problems"] == []  # its pins hold: the binary does not
    (problem,) = layer["binary"]["problems"]
    assert problem["linked"] == {"distribution": "fake-dev", "installed": "0.1.0", "built_against": "0.2.0"}
    assert problem["message"] in answer["reasons"]
    text = check_cli(site, *matrices).stdout
    assert "fake-fused binary check: 1 problem in 1 library" in text, text
