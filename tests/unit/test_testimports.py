"""Issue 67: a compiled adapter whose tests import PyTorch's test machinery
(`torch.testing._internal.common_utils`, as OpenReg's and torch_npu's do) stopped at collection
in its cells: `ModuleNotFoundError: No module named 'expecttest'`. `init` reads the tests'
imports and writes what they need into the noxfile; a cell reads them again; a collection that
still misses a module says which, and the line to add."""

from __future__ import annotations

import ast

from adapter_matrix.device.testimports import add_line, missing_module, requirements_of_tests

from .test_init import _compiled_project, _init_tiny

COMMON_UTILS = "from torch.testing._internal.common_utils import TestCase, run_tests\n"


def test_pytorch_style_tests_need_expecttest_and_numpy_and_hypothesis_where_used(tmp_path):
    tests = tmp_path / "tests"
    (tests / "sub").mkdir(parents=True)
    (tests / "test_plain.py").write_text("import torch\n\ndef test_x():\n    assert torch\n")
    assert requirements_of_tests(str(tests)) == []
    (tests / "sub" / "test_ops.py").write_text(COMMON_UTILS)
    assert requirements_of_tests(str(tests)) == ["expecttest", "numpy"]
    (tests / "test_prop.py").write_text("from hypothesis import given\n")
    assert requirements_of_tests(str(tests)) == ["expecttest", "numpy", "hypothesis"]
    (tests / "test_broken.py").write_text("def (:\n")  # a file that does not parse is read as no import
    assert requirements_of_tests(str(tests)) == ["expecttest", "numpy", "hypothesis"]
    assert requirements_of_tests(str(tmp_path / "absent")) == []


def test_a_collection_error_names_the_module_and_the_line_to_add():
    junit = "<error message=\"collection failure\">ModuleNotFoundError: No module named 'expecttest'</error>"
    assert missing_module(junit) == "expecttest"
    assert missing_module("1 failed") is None
    assert add_line("expecttest").startswith('requirements=["expecttest"],')


def test_init_writes_what_the_tests_import_into_the_noxfile(tmp_path):
    _compiled_project(tmp_path)
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_device.py").write_text(COMMON_UTILS)
    res = _init_tiny(tmp_path)
    assert res.code == 0, res.err
    noxfile = (tmp_path / "noxfile.py").read_text()
    ast.parse(noxfile)
    assert 'requirements=["expecttest", "numpy"],  # the tests import PyTorch\'s test machinery' in noxfile
