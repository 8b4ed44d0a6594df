"""PyTorch's device-generic module tests, instantiated for the adapter's device.

    python -m adapter_matrix.device.opsweep.generic --device npu --activate shims \\
        --plan PLAN.json --log LOG.jsonl [--start N]

PyTorch's own device-generic test files (``test/test_modules.py``, ``test/test_ops.py``)
are not in the wheel and not on PyPI, and this repository does not vendor them. What
the wheel does ship is their machinery, and that is what runs here:
``instantiate_device_type_tests`` with ``PrivateUse1TestBase``, the ``@modules``
parametrization over ``common_modules.module_db`` (every ModuleInfo, its constructor and
forward inputs, its train/eval modes, and its DecorateInfo skips and xfails) and
``TestCase.assertEqual``'s tolerances.

The test class is PyTorch's ``TestModule.test_cpu_gpu_parity`` re-implemented (named so,
so that module_db's own skips and xfails for that test apply on every device): for each
module input, a module built on CPU and its deep copy on the device run forward on the
same inputs, then backward with the same output gradients, and the outputs and the
gradients of every input and parameter must agree. Each instantiated test is one task of
the sweep (family ``modules``, kind ``module``), run with the same crash isolation.
"""

from __future__ import annotations

import copy
import sys
import unittest
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple, Type, cast

from .process import PlannedTask, TaskResult, arguments, message, serve, start_torch
from .worker import SEED, Mismatch, _plain, _structure, tensors_in

if TYPE_CHECKING:  # torch is imported by start_torch, in the worker process only
    from torch import Tensor
    from torch import dtype as DType
    from torch.nn import Module
    from torch.testing._internal.common_modules import ModuleInfo, ModuleInput

# what unittest passes a result of a failed test: sys.exc_info()
ExcInfo = Tuple[Optional[Type[BaseException]], Optional[BaseException], Optional[TracebackType]]

__all__ = ["FAMILY", "KIND", "DTYPES", "unavailable", "module_tests", "main"]

FAMILY = "modules"
KIND = "module"
DTYPES = ("float32", "float64")
TEST = "test_cpu_gpu_parity"
MODES = ("train_mode", "eval_mode")


class ModuleTask(PlannedTask):
    """A module worker's task: the test method that runs it, beside the plan's keys."""

    test: str


def unavailable(torch: ModuleType) -> Optional[str]:
    """Why PyTorch's device-generic tests do not instantiate for the device, if they do not:
    ``instantiate_device_type_tests`` takes PrivateUse1 only where the device's module
    (``torch.<device>``) answers ``is_available()`` with True."""
    name = torch._C._get_privateuse1_backend_name()
    module = getattr(torch, name, None)
    ask = getattr(module, "is_available", None)
    if module is None:
        return f"torch.{name} is not registered (torch._register_device_module): PyTorch's device-generic tests skip the device"
    if not callable(ask):
        return f"torch.{name} has no is_available(): PyTorch's device-generic tests skip the device"
    if not ask():
        return f"torch.{name}.is_available() is False: PyTorch's device-generic tests skip the device"
    return None


def module_tests(torch: ModuleType) -> Tuple[Optional[Type[unittest.TestCase]], List[Tuple[str, ModuleTask]]]:
    """PyTorch's test class instantiated for the PrivateUse1 device, and its tests as
    (method name, task) in name order; ``(None, [])`` when this torch has no
    PrivateUse1TestBase, ``RuntimeError`` when instantiating makes no tests."""
    from torch.testing._internal import common_device_type as cdt
    from torch.testing._internal.common_modules import module_db, modules
    from torch.testing._internal.common_utils import TestCase

    if not hasattr(cdt, "PrivateUse1TestBase"):
        return None, []
    from .test_configs import excluded

    if excluded("TestModule", TEST):  # the adapter's set_test_configs(test_exclusions=) leaves it out
        return None, []

    # TestCase and modules are Any to mypy (pyproject.toml: torch's annotations are not checked)
    class TestModule(TestCase):  # type: ignore[misc]
        """PyTorch's TestModule, reduced to the device-versus-CPU parity test."""

        @modules(module_db, allowed_dtypes=(torch.float32, torch.float64))  # type: ignore[untyped-decorator]
        def test_cpu_gpu_parity(self, device: str, dtype: DType, module_info: ModuleInfo, training: bool) -> None:
            _parity(self, torch, device, dtype, module_info, training)

    scope: Dict[str, Type[unittest.TestCase]] = {"TestModule": TestModule}
    # a list: torch 2.6 reads a string as its characters
    cdt.instantiate_device_type_tests(TestModule, scope, only_for=["privateuse1"])
    generated = [cls for name, cls in scope.items() if name != "TestModule"]
    if len(generated) != 1:
        raise RuntimeError(f"instantiate_device_type_tests made {len(generated)} classes for privateuse1, not one")
    (cls,) = generated
    names = {info.formatted_name: info.name for info in module_db}
    tests = [(method, _task_of(method, names)) for method in unittest.TestLoader().getTestCaseNames(cls)]
    if not tests:
        raise RuntimeError(
            f"{cls.__name__} has no tests: PyTorch's device-generic tests did not instantiate for the device"
        )
    return cls, tests


def _task_of(method: str, names: Dict[str, str]) -> ModuleTask:
    """``test_cpu_gpu_parity_nn_BatchNorm2d_train_mode_npu_float32`` -> its task (a name
    that does not parse keeps the method name as its op, so no test goes missing)."""
    rest, _, dtype = method[len(TEST) + 1 :].rpartition("_")
    rest = rest.rsplit("_", 1)[0]  # the device
    mode = ""
    for suffix in MODES:
        if rest.endswith("_" + suffix):
            rest, mode = rest[: -len(suffix) - 1], suffix.split("_")[0]
    op = names[rest] + (f".{mode}" if mode else "") if rest in names else method
    return {"op": op, "family": FAMILY, "dtype": dtype, "kind": KIND, "test": method}


def _parity(
    case: unittest.TestCase, torch: ModuleType, device: str, dtype: DType, module_info: ModuleInfo, training: bool
) -> None:
    """The module on CPU and its copy on the device agree, forward and backward."""
    module_cls = module_info.module_cls
    torch.manual_seed(SEED)
    inputs = module_info.module_inputs_func(
        module_info, device="cpu", dtype=dtype, requires_grad=True, training=training
    )
    device_type = torch.device(device).type
    compared = 0
    for index, module_input in enumerate(inputs):
        if module_input.forward_input is None:
            continue
        args, kwargs = module_input.constructor_input.args, module_input.constructor_input.kwargs
        torch.manual_seed(SEED)
        cpu_module = module_cls(*args, **kwargs).to(dtype)
        cpu_module.train(training)
        device_module = copy.deepcopy(cpu_module).to(device)
        cpu_args = (module_input.forward_input.args, module_input.forward_input.kwargs)
        device_args = cast(Tuple[Tuple[object, ...], Dict[str, object]], _to_device(cpu_args, torch, device))
        outs: List[object] = []
        for module, (a, k) in ((cpu_module, cpu_args), (device_module, device_args)):
            torch.manual_seed(SEED + 1)
            getattr(torch, device_type).manual_seed_all(SEED + 1)
            outs.append(module(*a, **k))
        _agree(case, torch, device_type, outs[1], outs[0], f"input {index} ({module_input.desc or 'default'}), forward")
        _backward(case, torch, device_type, index, module_input, cpu_module, device_module, cpu_args, device_args, outs)
        compared += 1
    if not compared:
        raise unittest.SkipTest("no module input with a forward input")


def _to_device(value: object, torch: ModuleType, device: str) -> object:
    memo: Dict[int, Tensor] = {}  # id of a CPU tensor -> its device copy

    def move(v: object) -> object:
        if isinstance(v, torch.Tensor):
            if id(v) not in memo:
                t = v.detach().to(device)
                memo[id(v)] = t.requires_grad_(v.requires_grad) if v.is_floating_point() or v.is_complex() else t
            return memo[id(v)]
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            return cast(Callable[..., object], type(v))(*(move(x) for x in v))  # a named tuple's fields
        if isinstance(v, (tuple, list)):
            return type(v)(move(x) for x in v)
        if isinstance(v, dict):
            return {k: move(x) for k, x in v.items()}
        return v

    return move(value)


def _agree(
    case: unittest.TestCase, torch: ModuleType, device_type: str, device_value: object, cpu_value: object, where: str
) -> None:
    """Same structure, every tensor on the device, and equal within ``TestCase.assertEqual``'s
    tolerances (which the ModuleInfo's toleranceOverride decorators set for the test)."""
    try:
        moved = _structure(device_value, cpu_value, torch, {device_type})
    except Mismatch as exc:
        raise AssertionError(f"{where}: {exc}") from None
    case.assertEqual(moved, _plain(cpu_value, torch) if isinstance(moved, list) else cpu_value, msg=where)


def _backward(
    case: unittest.TestCase,
    torch: ModuleType,
    device_type: str,
    index: int,
    module_input: ModuleInput,
    cpu_module: Module,
    device_module: Module,
    cpu_args: object,
    device_args: object,
    outs: List[object],
) -> None:
    def differentiable(value: object) -> List[Tensor]:
        return [t for t in tensors_in(value, torch) if t.requires_grad and (t.is_floating_point() or t.is_complex())]

    cpu_outs, device_outs = differentiable(outs[0]), differentiable(outs[1])
    if not cpu_outs:
        return
    cpu_leaves = [t for t in tensors_in(cpu_args, torch) if t.requires_grad] + [
        p for p in cpu_module.parameters() if p.requires_grad
    ]
    device_leaves = [t for t in tensors_in(device_args, torch) if t.requires_grad] + [
        p for p in device_module.parameters() if p.requires_grad
    ]
    generator = torch.Generator().manual_seed(SEED + 2)
    grads = [torch.randn(t.shape, dtype=t.dtype, generator=generator) for t in cpu_outs]
    cpu_grads = torch.autograd.grad(cpu_outs, cpu_leaves, grads, allow_unused=True)
    device_grads = torch.autograd.grad(
        device_outs, device_leaves, [g.to(device_type) for g in grads], allow_unused=True
    )
    pairs = [(d, c) for d, c in zip(device_grads, cpu_grads) if not (d is None and c is None)]
    if any((d is None) != (c is None) for d, c in pairs):
        raise AssertionError(
            f"input {index} ({module_input.desc or 'default'}), backward: a gradient exists on one side only"
        )
    _agree(
        case,
        torch,
        device_type,
        [d for d, _ in pairs],
        [c for _, c in pairs],
        f"input {index} ({module_input.desc or 'default'}), backward",
    )


def _failure(err: ExcInfo) -> str:
    """The error without the line PyTorch's TestCase appends ("To execute this test, run ...")."""
    exc = err[1]
    assert exc is not None  # unittest reports a failure or an error with the exception it caught
    return message(exc).split(" To execute this test")[0]


class _Result(unittest.TestResult):
    """The outcome of one test, as a task result."""

    def __init__(self) -> None:
        super().__init__()
        self.task: TaskResult = {"outcome": "passed"}

    def addFailure(self, test: unittest.TestCase, err: ExcInfo) -> None:
        self.task = {"outcome": "failed", "error": _failure(err)}

    def addError(self, test: unittest.TestCase, err: ExcInfo) -> None:
        self.task = {"outcome": "failed", "error": _failure(err)}

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        self.task = {"outcome": "skipped", "error": f"skipped by PyTorch's module_db or the test: {reason}"[:400]}

    def addExpectedFailure(self, test: unittest.TestCase, err: ExcInfo) -> None:
        self.task = {"outcome": "skipped", "error": f"an expected failure in PyTorch's module_db: {_failure(err)}"}


def main(argv: Optional[List[str]] = None) -> int:
    args = arguments("The module worker of the sweep: PyTorch's device-generic module tests.").parse_args(argv)
    torch = start_torch(args)
    absent = unavailable(torch) if KIND in args.kinds.split(",") else None
    if absent is not None:  # a capability the device lacks: one reason, not a failure per module
        return serve(args, torch, [], lambda task: {}, {"absent": f"module tests: {absent}"})
    cls, tests = module_tests(torch)
    wanted = {o for o in args.ops.split(",") if o}
    dtypes, kinds = set(args.dtypes.split(",")), set(args.kinds.split(","))
    selected = [
        task
        for _method, task in tests
        if task["dtype"] in dtypes
        and KIND in kinds
        and (not wanted or task["op"] in wanted or task["op"].rsplit(".", 1)[0] in wanted)
    ]
    if cls is not None:
        cls.setUpClass()

    def run(task: ModuleTask) -> TaskResult:
        assert cls is not None  # without the class there are no tests, so no task to run
        result = _Result()
        cls(task["test"]).run(result)
        return result.task

    return serve(args, torch, selected, run)


if __name__ == "__main__":
    sys.exit(main())
