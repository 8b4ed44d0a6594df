"""The op sweep for any adapter: activating it as a user does, and a first sweep summed up by cause."""

from __future__ import annotations

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
    assert activation_of("adapter-matrix-npu", "shims", "other_mod").target == "other_mod"  # --activate wins


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
