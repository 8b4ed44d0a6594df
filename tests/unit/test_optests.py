"""`adapter-matrix ops tests`: PyTorch's own test files on the adapter's device.

The fast tests hold the parts that decide (override files, test ids, verdicts, the
expectations a run writes); the slow ones run the fixture pack (tests/fixtures/testpack) and
small packs written here on the reference device, one torch process per file.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap

import pytest

from adapter_matrix.device.opsweep.expected import ExpectationsError
from adapter_matrix.device.optests import packoverrides, packrecord
from adapter_matrix.device.optests.packrun import (
    FileResult,
    TestOutcome,
    TestsRequest,
    TestsResult,
    base_file_text,
    cpu_id,
    expectations_after,
    run,
)

from .helpers import FIXTURES, cli

PACK = FIXTURES / "testpack" / "pytorch-v2.13.0"
OPS_FAIL = "test_sort_matches_numpy_sort_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)"


# -- override files ------------------------------------------------------------------------------


def test_an_override_file_is_read_and_its_mistakes_are_placed(tmp_path):
    good = tmp_path / "overrides.yaml"
    good.write_text(
        textwrap.dedent(
            """\
            schema: 1
            skip: {"test_x (__main__.TestY)": "hangs"}
            xfail: {"test_z (__main__.TestY)": "known"}
            ops: [add, mul]
            tolerances:
              - {op: exp, dtypes: [float32], atol: 1.0e-4, rtol: 0.001, test: TestPackOps.test_matches_cpu}
            infos:
              - {optim: Adam, add: {supports_fused_on: ["{device}"]}}
            """
        )
    )
    loaded = packoverrides.load(str(good))
    assert loaded["ops"] == ["add", "mul"] and loaded["tolerances"][0]["atol"] == 1.0e-4
    assert loaded["infos"] == [{"optim": "Adam", "add": {"supports_fused_on": ["{device}"]}}]
    bad = tmp_path / "bad.yaml"
    bad.write_text('schema: 1\nskipped: {}\ninfos:\n  - {optim: Adam, op: add}\nskip: {"no id": x}\n')
    with pytest.raises(ExpectationsError) as caught:
        packoverrides.load(str(bad))
    text = str(caught.value)
    assert "bad.yaml:2:1: unknown key 'skipped'" in text
    assert "bad.yaml:4:5: an info change names one of op, module, optim" in text
    assert "'no id' is not a test id" in text


def test_test_ids_match_as_pytorchs_disabled_tests_do():
    entries = {"test_matches_cpu (__main__.TestPackOps)": "every dtype", "test_exact_npu_float32 (__main__.TestA)": 2}
    assert (
        packoverrides.matches(entries, "test_matches_cpu_add_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)", "npu")
        is None
    )
    assert (
        packoverrides.matches(entries, "test_matches_cpu_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)", "npu")
        == "every dtype"
    )
    assert packoverrides.matches(entries, "test_exact_npu_float32 (__main__.TestAPRIVATEUSE1)", "npu") == 2
    assert packoverrides.matches(entries, "test_exact_npu_float32 (__main__.TestB)", "npu") is None
    assert cpu_id(OPS_FAIL, "npu") == "test_sort_matches_numpy_sort_cpu_float32 (__main__.TestPackOpsCPU)"


def test_override_files_merge_in_order():
    merged = packoverrides.merge(
        [
            {"skip": {"a (m.C)": "1"}, "ops": ["add", "mul"]},
            {"skip": {"b (m.C)": "2"}, "ops": ["add"], "infos": [{"op": "x"}]},
        ]
    )
    assert merged == {"skip": {"a (m.C)": "1", "b (m.C)": "2"}, "ops": ["add"], "infos": [{"op": "x"}]}


def test_the_generated_base_file_is_pytorchs_hook():
    text = base_file_text("shims", "npu")
    compile(text, "device_test_base.py", "exec")
    assert "TEST_CLASS = AdapterMatrixTestBase" in text and "activate(torch, 'shims', 'npu')" in text


# -- verdicts and expectations ----------------------------------------------------------------------


def _result(tests):
    def counts(name):
        found = {}
        for t in tests:
            if t.file == name:
                found[t.outcome] = found.get(t.outcome, 0) + 1
        return found

    files = tuple(
        FileResult(f, counts(f), "completed", 1.0, 1, sum(1 for t in tests if t.file == f))
        for f in dict.fromkeys(t.file for t in tests)
    )
    return TestsResult("2.13.0", "npu", files, tuple(tests), 1.0, None, ())


def test_update_expected_keeps_other_entries_and_lists_what_failed():
    previous = {
        "test_other (__main__.TestElsewhere)": ["https://issue/1", ["linux"]],
        "test_fixed_npu_float32 (__main__.TestPackOps)": ["https://issue/2", []],
        "test_still (__main__.TestPackOps)": ["https://issue/3", []],
    }
    done = _result(
        [
            TestOutcome("f.py", "test_fixed_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)", "passed"),
            TestOutcome("f.py", "test_still_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)", "failed"),
            TestOutcome("f.py", "test_new_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)", "crashed"),
        ]
    )
    assert expectations_after(done, previous) == {
        "test_other (__main__.TestElsewhere)": ["https://issue/1", ["linux"]],
        "test_still_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)": ["https://issue/3", []],
        "test_new_npu_float32 (__main__.TestPackOpsPRIVATEUSE1)": ["", []],
    }


# -- runs on the reference device ------------------------------------------------------------------


def _generic(name, body):
    return (
        textwrap.dedent(
            f"""\
        import faulthandler
        import time

        import torch
        from torch.testing._internal.common_device_type import instantiate_device_type_tests
        from torch.testing._internal.common_utils import TestCase


        class {name}(TestCase):
        """
        )
        + textwrap.indent(textwrap.dedent(body), "    ")
        + f"\n\ninstantiate_device_type_tests({name}, globals())\n"
    )


@pytest.mark.slow
def test_the_fixture_pack_runs_on_the_device_and_again_the_same(tmp_path):
    """Counts per file in the record, the same on a second run; the NumPy 2 failure is the CPU
    control's (it fails on CPU too), not a device failure; `--update-expected` then lists it."""
    out1, out2 = tmp_path / "first.json", tmp_path / "second.json"
    expected = tmp_path / "disabled.json"
    args = ["ops", "tests", "--pack", str(PACK), "-j", "2", "--control", "cpu", "--expected", str(expected)]
    first = cli(*args, "--output", str(out1))
    assert first.code == 0, first.out + first.err
    assert "ETA" in first.out and "fails on CPU too (not the device)" in first.out
    record = json.loads(out1.read_text())
    counts = {name: f["outcomes"] for name, f in record["files"].items()}
    assert counts == {
        "test_pack_modules.py": {"passed": 4},
        "test_pack_ops.py": {"passed": 13, "failed": 1},  # with the class written only_for="cuda"
        "test_pack_optim.py": {"passed": 3, "skipped": 3},
    }
    assert [e["test"] for e in record["cpu_too"]] == [OPS_FAIL] and record["new_failures"] == []
    assert record["files"]["test_pack_ops.py"]["ended"] == "completed"
    second = cli(*args, "--output", str(out2), "--update-expected")
    assert second.code == 0
    again = json.loads(out2.read_text())
    assert {name: f["outcomes"] for name, f in again["files"].items()} == counts
    assert json.loads(expected.read_text()) == {OPS_FAIL: ["", []]}
    third = cli("ops", "tests", "--pack", str(PACK), "-f", "test_pack_ops.py", "--expected", str(expected), "--json")
    assert third.code == 0
    assert json.loads(third.out)["files"]["test_pack_ops.py"]["known"] == 1


@pytest.mark.slow
def test_fused_adam_runs_on_the_device_through_the_override_file(tmp_path):
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(
        'schema: 1\ninfos:\n  - {optim: Adam, add: {supports_fused_on: ["{device}"]}}\n'
        '  - {optim: AdamW, add: {supports_fused_on: ["{device}"]}}\n'
    )
    res = cli("ops", "tests", "--pack", str(PACK), "-f", "test_pack_optim.py", "--overrides", str(overrides), "--json")
    assert res.code == 0, res.err
    record = json.loads(res.out)
    assert record["files"]["test_pack_optim.py"]["outcomes"] == {"passed": 5, "skipped": 1}  # SGD's fused: not added
    assert "optim Adam (1 infos): supports_fused_on += ['npu']" in record["configured"]


@pytest.mark.slow
def test_a_segfault_ends_its_file_only_and_a_hang_keeps_what_ran(tmp_path):
    test_dir = tmp_path / "test"
    test_dir.mkdir()
    (test_dir / "test_crash.py").write_text(
        _generic(
            "TestCrash",
            """\
            def test_a_before(self, device):
                self.assertEqual(torch.ones(2, device=device).sum().item(), 2.0)

            def test_b_segfault(self, device):
                faulthandler._sigsegv()

            def test_c_after(self, device):
                pass
            """,
        )
    )
    (test_dir / "test_hang.py").write_text(
        _generic(
            "TestHang",
            """\
            def test_a_quick(self, device):
                pass

            def test_b_hangs(self, device):
                time.sleep(1000)
            """,
        )
    )
    (test_dir / "test_fine.py").write_text(
        _generic(
            "TestFine",
            "def test_add(self, device):\n    self.assertEqual((torch.ones(2, device=device) * 2).cpu(), torch.full((2,), 2.0))\n",
        )
    )
    # 30 s: the hang costs the whole timeout; the other two files end in a few seconds even on
    # a busy 2-core machine (their torch is imported once, in the runner's fork server)
    request = TestsRequest(
        str(test_dir), ("test_crash.py", "test_hang.py", "test_fine.py"), "npu", "shims", jobs=3, timeout=30
    )
    done = run(request)
    record = packrecord.build(done)
    crash, hang, fine = (record["files"][f] for f in request.files)
    assert crash["ended"] == "crashed (SIGSEGV) in test_b_segfault_npu (__main__.TestCrashPRIVATEUSE1)"
    assert crash["outcomes"] == {"passed": 1, "crashed": 1}
    assert hang["ended"].startswith("timeout after 30 s in test_b_hangs_npu") and hang["outcomes"] == {
        "passed": 1,
        "timeout": 1,
    }
    assert fine == {**fine, "ended": "completed", "outcomes": {"passed": 1}}
    assert {e["test"] for e in record["new_failures"]} == {
        "test_b_segfault_npu (__main__.TestCrashPRIVATEUSE1)",
        "test_b_hangs_npu (__main__.TestHangPRIVATEUSE1)",
    }


@pytest.mark.slow
def test_a_large_file_is_sharded_with_the_same_counts():
    request = TestsRequest(str(PACK / "test"), ("test_pack_ops.py",), "npu", "shims", jobs=2, shard_bytes=0)
    done = run(request)
    (only,) = done.files
    assert only.shards == 2 and only.counts["passed"] == 13 and only.counts["failed"] == 1
    assert len({t.id for t in done.tests}) == 14


def _scratch_example(folder):
    """A scratch copy of examples/cpp-adapter (tiny-accel, device `tiny`) with the CPU fallback of
    tests/fixtures/opsweep: the example itself has one kernel (``empty``), so every test would fail."""
    import shutil

    from .helpers import REPO

    shutil.copytree(REPO / "examples" / "cpp-adapter", folder, ignore=shutil.ignore_patterns("evidence", "build"))
    shutil.copy(FIXTURES / "opsweep" / "fallback.cpp", folder / "csrc" / "fallback.cpp")
    setup = folder / "setup.py"
    setup.write_text(setup.read_text().replace('["csrc/tiny.cpp"]', '["csrc/tiny.cpp", "csrc/fallback.cpp"]'))
    return folder


def _install_built(source, site):
    """``source`` built against this environment's torch and installed into ``site``, no dependencies."""
    import os
    import shutil
    import subprocess
    import sys

    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(site), "."]  # fmt: skip
    subprocess.run(pip, cwd=source, check=True, env=dict(os.environ, MAX_JOBS="1"))
    shutil.rmtree(source / "build", ignore_errors=True)


BROKEN_NEG = """\
// Broken on purpose (tests/unit/test_optests.py): the device's neg returns its input unchanged.
#include <ATen/ATen.h>
#include <torch/library.h>

static at::Tensor broken_neg(const at::Tensor& self) { return self.clone(); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("neg", broken_neg); }
"""


@pytest.mark.slow
@pytest.mark.compiled
def test_a_kernel_broken_in_a_compiled_adapter_is_a_new_failure_with_its_test_id(tmp_path):
    """A scratch copy of examples/cpp-adapter (tiny-accel, device `tiny`, which has no
    `is_available()`: PyTorch would not instantiate its tests without the generated base file),
    with the CPU fallback of tests/fixtures/opsweep; its expectations written from a first run;
    then built again with a `neg` kernel that returns its input: the next run names the test."""
    import os
    import subprocess
    import sys

    pytest.importorskip("expecttest")
    source = _scratch_example(tmp_path / "tiny-accel")
    setup = source / "setup.py"

    def build(site):
        _install_built(source, site)

    def tests(site, *args):
        env = dict(os.environ, PYTHONPATH=str(site), TORCH_DEVICE_BACKEND_AUTOLOAD="0")  # not this venv's shims
        return subprocess.run(
            [sys.executable, "-m", "adapter_matrix", "ops", "tests", "--pack", str(PACK), "-f", "test_pack_ops.py", *args],
            cwd=source, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip

    build(tmp_path / "site")
    expected = tmp_path / "disabled.json"
    first = tests(tmp_path / "site", "--expected", str(expected), "--update-expected", "--json")
    assert first.returncode == 0, first.stdout + first.stderr
    record = json.loads(first.stdout)
    assert record["device"] == "tiny" and record["files"]["test_pack_ops.py"]["outcomes"].get("passed", 0) >= 10, record
    (source / "csrc" / "broken.cpp").write_text(BROKEN_NEG)
    setup.write_text(setup.read_text().replace('"csrc/fallback.cpp"]', '"csrc/fallback.cpp", "csrc/broken.cpp"]'))
    build(tmp_path / "site-broken")
    broken = tests(tmp_path / "site-broken", "--expected", str(expected), "--json")
    assert broken.returncode == 1, broken.stderr
    new = json.loads(broken.stdout)["new_failures"]
    assert [e["test"] for e in new] == ["test_matches_cpu_neg_tiny_float32 (__main__.TestPackOpsPRIVATEUSE1)"]


@pytest.mark.slow
@pytest.mark.compiled
def test_the_compiled_example_adapters_cell_runs_the_pack_and_its_record_keeps_the_counts(tmp_path):
    """Issue 68, item 6: the compiled example adapter runs the fixture pack in its own cell. A
    scratch copy of examples/cpp-adapter with the CPU fallback of tests/fixtures/opsweep (the
    example itself has one kernel, ``empty``: every test of the pack would fail on it), whose
    noxfile declares ``op_tests=OpTests(...)`` as an adopting adapter does (docs/op-coverage.md,
    "In cells and records"); its maintainer writes the torch line's expectations with
    ``ops tests --update-expected`` first. Its py3.11-torch2.13 cell (offline, torch 2.13 from
    /opt/wheels) builds it, runs its tests, then the pack with the CPU control, and the result
    record and its evidence copy keep the counts per file."""
    import glob
    import os
    import subprocess
    import sys

    from .offline import LOCAL_TORCH, op_cell_env
    from .test_nox import NOX

    pytest.importorskip("expecttest")
    if NOX is None or not glob.glob(os.path.join(LOCAL_TORCH, "torch-2.13.0*-cp311-*.whl")):
        pytest.skip("needs nox and the local torch 2.13 wheel")
    torch = pytest.importorskip("torch")
    if not torch.__version__.startswith("2.13"):
        pytest.skip("the expectations are written with this environment's torch, the cell's is 2.13")
    archive = FIXTURES / "testpack" / "pytorch-v2.13.0.tar.gz"
    digest = (FIXTURES / "testpack" / "pytorch-v2.13.0.tar.gz.sha256").read_text().split()[0]
    cell = _scratch_example(tmp_path / "tiny-accel")
    noxfile = cell / "noxfile.py"
    declared = f'op_tests=OpTests(pack={str(archive)!r}, sha256={digest!r}, control="cpu", jobs=2),'
    noxfile.write_text(
        noxfile.read_text()
        .replace("import Adapter, Pytest, cells", "import Adapter, OpTests, Pytest, cells")
        .replace('tests=Pytest("tests"),', 'tests=Pytest("tests"),\n        ' + declared)
    )
    assert "op_tests=OpTests(" in noxfile.read_text()

    # the maintainer's first run, on a build against this environment's torch: the expectations
    site = tmp_path / "site"
    _install_built(cell, site)
    first = subprocess.run(
        [sys.executable, "-m", "adapter_matrix", "ops", "tests", "--pack", str(archive), "--sha256", digest,
         "--control", "cpu", "--update-expected", "--json"],
        cwd=cell, env=dict(os.environ, PYTHONPATH=str(site), TORCH_DEVICE_BACKEND_AUTOLOAD="0"),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert (cell / "op-sweep" / "pytorch-disabled-tests-2.13.json").is_file()
    written = json.loads(first.stdout)["files"]

    env = op_cell_env(cell, tmp_path, ADAPTER_MATRIX_OPS_TESTS="on")
    proc = subprocess.run(
        [NOX, "--envdir", str(tmp_path / "nox"), "-s", "device(py3.11-torch2.13)"],
        cwd=cell, capture_output=True, text=True, timeout=1800, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    record = json.loads((tmp_path / "results" / "py3.11-torch2.13.json").read_text())
    tests = record["ops"]["tests"]
    assert record["outcome"] == "passed" and record["suites"]["tests"]["passed"] == 3
    assert tests["ok"] and tests["new_failures"] == []
    # the cell's counts per file are those of the maintainer's run, each file completed
    assert {f: (c["outcomes"], c["ended"]) for f, c in tests["files"].items()} == {
        f: (c["outcomes"], "completed") for f, c in written.items()
    }
    assert tests["files"]["test_pack_ops.py"]["outcomes"].get("passed", 0) >= 10
    for name, counts in tests["files"].items():  # each file a suite group of the cell, no failure in it
        group = record["suites"][f"op-tests-{name[: -len('.py')]}"]
        assert group["failed"] == group["errors"] == 0 and group["passed"] == counts["outcomes"].get("passed", 0)
    evidence = json.loads((tmp_path / "evidence" / "0.1.0" / "py3.11-torch2.13.json").read_text())
    assert evidence["ops"]["tests"]["files"] == tests["files"]


def test_a_cell_record_keeps_the_counts_per_file_and_results_shows_them(tmp_path):
    from adapter_matrix.ci.record import OpsSummary, ResultRecord, read_records, write_record
    from adapter_matrix.ci.results import _op_sweep

    done = _result(
        [
            TestOutcome("test_a.py", "test_x_npu (__main__.TestAPRIVATEUSE1)", "passed"),
            TestOutcome("test_a.py", "test_y_npu (__main__.TestAPRIVATEUSE1)", "failed", "boom", verdict="new-failure"),
            TestOutcome("test_b.py", "test_z_npu (__main__.TestBPRIVATEUSE1)", "failed", "np", verdict="cpu-too"),
        ]
    )
    summary = packrecord.summary(packrecord.build(done))
    assert summary["files"]["test_a.py"] == {
        "outcomes": {"passed": 1, "failed": 1},
        "ended": "completed",
        "new_failures": 1,
    }
    assert summary["new_failures"] == ["test_y_npu (__main__.TestAPRIVATEUSE1)"] and summary["cpu_too"] == 1
    record = ResultRecord(cell="py3.11-torch2.13", outcome="passed", timestamp="2026-12-07T03:00:00+00:00")  # type: ignore[arg-type]
    write_record(str(tmp_path), dataclasses.replace(record, ops=OpsSummary(tests=summary)))
    (back,) = read_records(str(tmp_path))
    assert back.ops is not None and back.ops.tests == summary and back.ops.compiled is None
    assert _op_sweep(back).endswith("test files 2: 1/3 passed, 1 new failures")
