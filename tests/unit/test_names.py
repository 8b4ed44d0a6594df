"""One name per distribution: ours is packaging's canonical name, without its import cost."""

from __future__ import annotations

import pytest
from packaging.utils import canonicalize_name

from adapter_matrix.names import canonical_name, escaped_name

NAMES = ["torch_npu", "Torch-NPU", "torch.npu", "torch__npu", "intel_extension_for_pytorch", "A-._b", "ipex", "x"]


@pytest.mark.parametrize("name", NAMES)
def test_the_canonical_name_is_packagings(name):
    assert canonical_name(name) == canonicalize_name(name)


@pytest.mark.parametrize("name", NAMES)
def test_the_escaped_name_is_the_canonical_one_as_a_file_name_spells_it(name):
    assert escaped_name(name) == canonicalize_name(name).replace("-", "_")
    assert "-" not in escaped_name(name)


def test_check_finds_a_distribution_folder_by_its_canonical_name(tmp_path, monkeypatch):
    from adapter_matrix.check.facts import distribution_version

    info = tmp_path / "Torch_NPU-2.13.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: Torch.NPU\nVersion: 2.13.0\n")
    monkeypatch.setattr("sys.path", [str(tmp_path)])
    assert distribution_version("torch.npu") == distribution_version("TORCH-npu") == "2.13.0"


def test_every_module_canonicalizes_through_names():
    """One canonicalizer in the package: a module that called packaging's directly could drift
    from the start-up path's (and pays for packaging.tags at import)."""
    import ast
    import pathlib

    import adapter_matrix

    callers = []
    for path in pathlib.Path(adapter_matrix.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any(a.name == "canonicalize_name" for a in node.names):
                callers.append(path.name)
    assert callers == []
