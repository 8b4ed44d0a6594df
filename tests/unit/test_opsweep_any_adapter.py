"""The op sweep for any adapter: activating it as a user does, and a first sweep summed up by cause."""

from __future__ import annotations

import json
import os
import types
from importlib import metadata

import pytest

from adapter_matrix.device.opsweep import causes
from adapter_matrix.device.opsweep import expected as ex
from adapter_matrix.device.opsweep import record as rec
from adapter_matrix.device.opsweep.activation import ActivationError, activate, activation_of
from adapter_matrix.device.opsweep.runner import Sweep, Task

from .helpers import REPO, cli

# -- activation -----------------------------------------------------------------------------


class FakeDistribution:
    def __init__(self, entry_points=(), top_level=None):
        self.entry_points = [types.SimpleNamespace(group=g, name=n, value=v) for g, n, v in entry_points]
        self.top_level = top_level

    def read_text(self, name):
        return self.top_level if name == "top_level.txt" else None


def installed(monkeypatch, dist):
    def distribution(name):
        if dist is None:
            raise metadata.PackageNotFoundError(name)
        return dist

    monkeypatch.setattr(metadata, "distribution", distribution)


def test_the_shims_package_stays_the_activation_of_this_repositorys_adapter():
    assert activation_of("adapter-matrix-npu", "shims").target == "shims"
    assert activation_of("adapter-matrix-npu", "shims", "adapter_matrix").target == "adapter_matrix"  # --activate wins


def test_an_adapter_without_shims_is_activated_as_its_users_do(monkeypatch):
    autoload = FakeDistribution([("torch.backends", "toy", "toy_adapter:_autoload")], "toy_adapter\n")
    installed(monkeypatch, autoload)
    found = activation_of("toy-adapter", None)
    assert found.target == "toy_adapter:_autoload" and "autoload entry point toy" in found.how
    installed(monkeypatch, FakeDistribution([("adapter_matrix.matrices", "tiny-accel", "tiny_accel:compat.yaml")]))
    assert activation_of("tiny-accel", None).target == "tiny_accel"
    installed(monkeypatch, FakeDistribution((), "_private\ntorch_npu\n"))
    assert activation_of("torch-npu", None).target == "torch_npu"
    installed(monkeypatch, FakeDistribution())
    assert activation_of("my-Accel", None).target == "my_accel"
    installed(monkeypatch, None)
    with pytest.raises(ActivationError, match="tiny-accel is not installed"):
        activation_of("tiny-accel", None)


def fake_torch(name):
    state = {"name": name}
    torch = types.SimpleNamespace(_C=types.SimpleNamespace(_get_privateuse1_backend_name=lambda: state["name"]))
    return torch, state


def test_the_worker_calls_the_entry_point_unless_autoload_did_and_checks_the_device_name(monkeypatch):
    torch, state = fake_torch("privateuseone")
    calls = []
    module = types.ModuleType("fake_autoload_adapter")
    module._autoload = lambda: (calls.append(1), state.update(name="toy"))
    monkeypatch.setitem(__import__("sys").modules, "fake_autoload_adapter", module)
    activate(torch, "fake_autoload_adapter:_autoload", "toy")
    assert calls == [1]
    activate(torch, "fake_autoload_adapter:_autoload", "toy")  # torch's autoload ran it: not again
    assert calls == [1]
    state["name"] = "privateuseone"
    module._autoload = lambda: None  # an entry point that registers nothing
    with pytest.raises(ActivationError, match="did not register the device 'toy': PrivateUse1 is named"):
        activate(torch, "fake_autoload_adapter:_autoload", "toy")


def test_ops_sweep_of_an_adapter_that_is_not_installed_says_so_with_exit_2(tmp_path):
    matrix = tmp_path / "compat.yaml"
    source = (REPO / "examples" / "cpp-adapter" / "compat.yaml").read_text()
    matrix.write_text(source.replace("tiny-accel", "tiny-accel-not-installed"))
    result = cli("ops", "sweep", "--matrix", str(matrix), "--op", "add")
    assert result.code == 2, result.err
    assert "tiny-accel-not-installed is not installed" in result.err


# -- a first sweep, by cause ------------------------------------------------------------------


def first_sweep():
    """A device without complex64 and without autograd kernels, and one op it lacks."""
    tasks = []
    for op, family in (("add", "binary"), ("sin", "unary"), ("sum", "reduction"), ("conv2d", "nn.functional")):
        tasks.append(Task(op, family, "float32", "forward", "passed"))
        missing = f"sample 0: NotImplementedError: Could not run 'aten::{op}_backward' with arguments from the 'tiny' backend."
        tasks.append(Task(op, family, "float32", "backward", "failed", missing))
        tasks.append(
            Task(op, family, "complex64", "forward", "failed", "sample 2: RuntimeError: complex64 is not supported")
        )
    tasks[0] = Task("add", "binary", "float32", "forward", "failed", "sample 1: Mismatched elements: 3 / 4 (75.0%)")
    return Sweep("2.13.0", "3.11.0", "tiny", tasks, 1.0, 1)


def test_a_missing_capability_is_one_line_and_the_rest_is_grouped_by_cause():
    sweep = first_sweep()
    expectations = ex.Expectations("(none)", (), ())
    record = rec.build_record(sweep, ex.judge(sweep, expectations), expectations, "custom")
    found = causes.digest(record)
    assert {(g.get("dtype") or g.get("kind"), g["tasks"]) for g in found["absent"]} == {
        ("complex64", 4),
        ("backward", 4),
    }
    by_cause = {c["cause"]: c for c in found["causes"]}
    backward = by_cause["NotImplementedError: Could not run 'aten::…' with arguments from the 'tiny' backend."]
    assert backward["tasks"] == 4 and backward["kinds"] == {"backward": 4} and backward["ops"] == 4
    assert backward["families"] == {"binary": 1, "nn.functional": 1, "reduction": 1, "unary": 1}
    assert "Mismatched elements: N / N (N%)" in by_cause
    assert found["causes"][0]["tasks"] == 4  # largest first


def test_cause_of_takes_out_what_varies_between_ops():
    assert causes.cause_of("sample 12: structure: on cpu, not on the device") == "on cpu, not on the device"
    assert causes.cause_of(None) == "no error"
    assert len(causes.cause_of("x" * 500)) == causes.CAUSE_CHARS


# -- expectations any vendor can keep: PyTorch's disabled-tests JSON and --write-expected ----

from adapter_matrix.device.opsweep import baseline  # noqa: E402  # this part's own imports, kept with its tests
from adapter_matrix.device.opsweep import disabled_tests as dt  # noqa: E402  # as above

# PyTorch's format as torch_npu keeps it (test/unsupported_test_cases/.pytorch-disabled-tests-2.11.json:
# issue "" and platforms [""]) and as PyTorch's CI writes it (an issue URL, platforms or none), mixed with
# entries for tests of PyTorch's that the sweep does not run.
DISABLED = """\
{
  "test_grad_fn_with_kwargs_dynamic_shapes (__main__.DynamicShapesFuncTorchHigherOrderOpTests)": ["", [""]],
  "test_compare_cpu_to_sparse_npu_float32 (__main__.TestCommonPRIVATEUSE1)": ["", [""]],
  "test_compare_cpu_sgn (__main__.TestCommon)": ["https://github.com/pytorch/pytorch/issues/1", []],
  "test_compare_cpu_backward_abs_npu_float64 (__main__.TestOpSweepPRIVATEUSE1)": ["", ["linux"]],
  "test_compare_cpu_mul_npu_float32 (__main__.TestCommonPRIVATEUSE1)": ["https://github.com/pytorch/pytorch/issues/2", ["win"]],
  "test_cpu_gpu_parity_nn_LSTM_train_mode_npu_float64 (__main__.TestModulePRIVATEUSE1)": ["", [""]],
  "test_exponential_npu_float16 (__main__.TestTorchDeviceTypePRIVATEUSE1)": ["", ["rocm", "linux"]]
}
"""


def test_a_disabled_tests_json_in_pytorchs_format_round_trips(tmp_path):
    tests = dt.parse(DISABLED, str(tmp_path / "d.json"))
    assert dt.dumps(tests.entries) == DISABLED  # the same text: one entry a line, in order
    assert len(tests.entries) == 7 and tests.lines["test_compare_cpu_sgn (__main__.TestCommon)"] == 4
    # written from a sweep: entries of other tests and other selections stay as they were, each
    # listed task that still fails keeps its issue, a listed one that passes now is dropped
    tasks = [
        Task("to_sparse", "other", "float32", "forward", "failed", "NotImplementedError"),
        Task("sgn", "unary", "float32", "forward", "failed", "mismatch"),
        Task("abs", "unary", "float64", "backward", "passed"),
        Task("add", "binary", "float32", "forward", "crashed", "SIGSEGV"),
    ]
    after = dt.entries_for(tasks, "npu", tests)
    assert list(after) == [
        "test_grad_fn_with_kwargs_dynamic_shapes (__main__.DynamicShapesFuncTorchHigherOrderOpTests)",
        "test_compare_cpu_mul_npu_float32 (__main__.TestCommonPRIVATEUSE1)",
        "test_cpu_gpu_parity_nn_LSTM_train_mode_npu_float64 (__main__.TestModulePRIVATEUSE1)",
        "test_exponential_npu_float16 (__main__.TestTorchDeviceTypePRIVATEUSE1)",
        "test_compare_cpu_to_sparse_npu_float32 (__main__.TestCommonPRIVATEUSE1)",
        "test_compare_cpu_sgn_npu_float32 (__main__.TestCommonPRIVATEUSE1)",
        "test_compare_cpu_add_npu_float32 (__main__.TestCommonPRIVATEUSE1)",
    ]
    assert after["test_compare_cpu_sgn_npu_float32 (__main__.TestCommonPRIVATEUSE1)"][0].endswith("/issues/1")
    again = dt.parse(dt.dumps(after), "d.json")
    assert dt.dumps(again.entries) == dt.dumps(after)


def test_the_sweep_is_judged_against_a_disabled_tests_file_as_pytorch_matches_it(tmp_path):
    path = tmp_path / "pytorch-disabled-tests-2.13.json"
    path.write_text(DISABLED)
    expectations = baseline.load([str(path)], "npu")
    assert expectations.sample == ex.DEFAULT_SAMPLE  # a JSON file names no sample: the built-in one
    sweep = Sweep(
        "2.13.0",
        "3.11.0",
        "npu",
        [
            Task("to_sparse", "other", "float32", "forward", "failed", "x"),  # listed, fails: agrees
            Task("sgn", "unary", "bfloat16", "forward", "crashed", "x"),  # the class and the name without dtype
            Task("abs", "unary", "float64", "backward", "passed"),  # listed: a new pass
            Task("mul", "binary", "float32", "forward", "failed", "x"),  # listed for Windows only
            Task("nn.LSTM.train", "modules", "float64", "module", "timeout", "x"),
        ],
        1.0,
        1,
    )
    problems = {v.task.op: v.problem for v in ex.judge(sweep, expectations) if v.problem}
    assert set(problems) == {"abs", "mul"}
    assert problems["mul"] == "new failure"
    assert "passes now" in problems["abs"] and "pytorch-disabled-tests-2.13.json:5" in problems["abs"]


def test_a_bad_disabled_tests_file_names_each_entry_at_its_line(tmp_path):
    with pytest.raises(ex.ExpectationsError) as error:
        dt.parse('{\n  "test_a (__main__.T)": ["", ""],\n  "no_class": ["", []]\n}\n', "bad.json")
    assert [p.mark.line for p in error.value.problems] == [2, 3]
    with pytest.raises(ex.ExpectationsError, match="not JSON"):
        dt.parse("{", "bad.json")


def test_written_yaml_expectations_are_the_starting_point_then_every_change_disagrees(tmp_path):
    tasks = [
        Task("add", "binary", "float32", "forward", "passed"),
        Task("div", "binary", "float32", "forward", "failed", "sample 3: Mismatched elements: 1 / 4 (25.0%)"),
        Task("div.trunc", "binary", "float32", "forward", "passed"),  # a variant of a failing op passes
        Task("sin", "unary", "float32", "backward", "failed", "NotImplementedError: no autograd"),
        Task("sin", "unary", "float64", "backward", "failed", "NotImplementedError: no autograd"),
        Task("sin", "unary", "float64", "forward", "passed"),
        Task("cos", "unary", "complex64", "forward", "crashed", "SIGSEGV"),
    ]
    path = tmp_path / "op-sweep" / "torch-2.13.yaml"
    baseline.write(str(path), tasks, "2.13.0+cpu", "tiny", ["add", "sin"])
    written = ex.load(str(path))
    assert written.sample == ("add", "sin")
    assert [(e.ops, e.outcome, e.dtypes, e.kinds, e.exact) for e in written.entries] == [
        (("div",), "fails", ("float32",), ("forward",), True),
        (("sin",), "fails", ("float32", "float64"), ("backward",), False),
        (("cos",), "crashes", ("complex64",), ("forward",), False),
    ]
    assert "Mismatched elements: N / N (N%)" in written.entries[0].reason
    assert not [v for v in ex.judge(Sweep("2.13.0", "3.11", "tiny", tasks, 1.0, 1), written) if v.problem]
    changed = [
        Task("div", "binary", "float32", "forward", "passed"),
        Task("add", "binary", "float32", "forward", "failed", "x"),
    ]
    problems = [v.problem for v in ex.judge(Sweep("2.13.0", "3.11", "tiny", changed, 1.0, 1), written) if v.problem]
    assert len(problems) == 2 and "passes now" in problems[0] and problems[1] == "new failure"
    # written again after a sweep of one op: the other ops' entries stay, with their reasons
    baseline.write(
        str(path), [Task("cos", "unary", "complex64", "forward", "passed")], "2.13.0", "tiny", ["add"], [str(path)]
    )
    again = ex.load(str(path))
    assert [e.ops for e in again.entries] == [("div",), ("sin",)]
    assert again.entries[0].reason == written.entries[0].reason


def test_the_torch_lines_files_are_found_next_to_the_matrix(tmp_path):
    assert baseline.find(str(tmp_path), "2.13") == []
    paths = baseline.paths_for(str(tmp_path), "2.13")
    assert paths["yaml"].endswith("op-sweep/torch-2.13.yaml")
    assert paths["json"].endswith("op-sweep/pytorch-disabled-tests-2.13.json")
    os.makedirs(os.path.dirname(paths["json"]))
    with open(paths["json"], "w") as fh:
        fh.write("{}\n")
    assert baseline.find(str(tmp_path), "2.13") == [paths["json"]]
    assert baseline.find(str(REPO), "2.13") == [str(REPO / "tests" / "ops" / "expected.yaml")]  # this repository's


def test_the_built_in_sample_is_this_repositorys_sample():
    assert ex.load(str(REPO / "tests" / "ops" / "expected.yaml")).sample == ex.DEFAULT_SAMPLE


@pytest.mark.slow
def test_write_expected_then_a_new_pass_fails_the_next_sweep(tmp_path):
    """The real worker on npu: the expectations a sweep wrote in PyTorch's format hold for
    the next sweep, and a listed task that passes makes it exit 1 naming the op."""
    pytest.importorskip("expecttest")
    path = tmp_path / "disabled.json"
    args = ("ops", "sweep", "--op", "to_sparse", "--op", "add", "--dtype", "float32", "--kind", "forward")
    first = cli(*args, "--expected", str(path), "--write-expected")
    assert first.code == 0, first.out + first.err
    assert json.loads(path.read_text()) == {
        "test_compare_cpu_to_sparse_npu_float32 (__main__.TestCommonPRIVATEUSE1)": ["", []]
    }
    assert cli(*args, "--expected", str(path)).code == 0
    path.write_text(dt.dumps({"test_compare_cpu_add (__main__.TestCommon)": ["", []]}))
    third = cli(*args, "--expected", str(path))
    assert third.code == 1 and "add/float32/forward: passes now" in third.out


CONFIGURING_ADAPTER = """\
import shims  # the device
from torch.testing._internal.common_device_type import PrivateUse1TestBase

PrivateUse1TestBase.set_test_configs(op_allowlist=["add"], test_exclusions={"TestCommon": ["test_compare_cpu"]})
"""


@pytest.mark.slow
def test_the_adapters_set_test_configs_shape_the_sweep_on_torch_2_13(tmp_path, monkeypatch):
    """torch 2.13's PrivateUse1TestBase.set_test_configs, set where the adapter is imported:
    op_allowlist keeps its ops, test_exclusions of TestCommon.test_compare_cpu drop the forward tasks."""
    pytest.importorskip("expecttest")
    cdt = pytest.importorskip("torch.testing._internal.common_device_type")
    if not hasattr(getattr(cdt, "PrivateUse1TestBase", None), "set_test_configs"):
        pytest.skip("torch before 2.13 has no set_test_configs")
    (tmp_path / "configuring_adapter.py").write_text(CONFIGURING_ADAPTER)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    args = ("--op", "add", "--op", "mul", "--dtype", "float32", "--kind", "forward", "--kind", "backward")
    result = cli("ops", "sweep", *args, "--activate", "configuring_adapter", "--json")
    assert result.code == 0, result.err
    # the adapter's allowlist left mul out: said, not refused as a typo would be
    assert "--op 'mul': no task ran for it (the adapter's set_test_configs: op_allowlist keeps" in result.err
    record = json.loads(result.out)
    assert record["by_dtype"] == {
        "float32": {"backward": {"passed": 1, "failed": 0, "crashed": 0, "timeout": 0, "skipped": 0}}
    }
    assert record["ops"] == 1  # add only
    assert record["selection"]["configs"].startswith("the adapter's set_test_configs: op_allowlist keeps 1 of ")
