"""The compiled sample's worker: ops through ``torch.compile(backend="inductor")`` on the device.

    python -m adapter_matrix.device.opsweep.compiled --device npu --activate shims \\
        --plan PLAN.json --log LOG.jsonl --ops add,mul,... [--start N]

The same protocol as the eager worker (:mod:`.process`), one task per op: kind
``compiled``, dtype float32. A task takes the op's first :data:`SAMPLES` float32 samples
(``op.sample_inputs("npu", float32)``), calls the op's function variant compiled with
inductor on the device and eagerly on CPU, and compares them with the eager sweep's
judge (:class:`.worker.TaskRunner`: same tolerances, same leniency where PyTorch skips
``test_compare_cpu``, CPU raising means the device must raise).

What keeps one op from deciding another's result:

- ``torch._dynamo.reset()`` before each op: no graph, guard or recompile count carries over;
- ``fullgraph=True``: an op dynamo cannot capture whole fails (with dynamo's reason)
  instead of passing quietly through a graph break into eager;
- ``dynamic=False``: each sample's shapes are compiled as they are (symbolic shapes are
  the capability ``inductor_dynamic_shapes``, absent on some releases);
- inductor's FX graph cache and AOT autograd cache are off, and its kernel cache lives in
  this sweep's temporary folder: nothing is served from another op, run or torch build;
- ``fallback_random=True``: random ops draw from the eager generator, seeded alike on
  both sides as in the eager sweep, so they compare value by value;
- ``compile_threads=1``: no pool of compile workers (see :func:`_configure`).

When the device declares the capability ``inductor`` absent (the activation module's
``capability(feature)``, the shims' API), the plan is empty and names the reason.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, cast

from .process import PlannedTask, TaskResult, arguments, message, serve, start_torch
from .worker import SEED, Args, TaskRunner, Twin, family_of, op_id

if TYPE_CHECKING:  # torch is imported by start_torch, in the worker process only
    from torch import dtype as DType
    from torch.testing._internal.opinfo.core import OpInfo, SampleInput

__all__ = ["CAPABILITY", "KIND", "SAMPLES", "plan", "absent_reason", "main"]

CAPABILITY = "inductor"
KIND = "compiled"
DTYPE = "float32"
SAMPLES = 1  # per op: compiling dominates the cost (two samples: 317 s for the sample on 2 busy cores)


def plan(op_db: List[OpInfo], torch: ModuleType, ops: List[str]) -> List[PlannedTask]:
    """One task per selected op whose CPU dtypes include float32, in op_db order."""
    wanted = set(ops)
    tasks: List[PlannedTask] = []
    for op in op_db:
        name = op_id(op)
        if (name in wanted or op.name in wanted) and torch.float32 in op.supported_dtypes("cpu"):
            family = family_of(op.name, [c.__name__ for c in type(op).__mro__])
            tasks.append({"op": name, "family": family, "dtype": DTYPE, "kind": KIND})
    return tasks


def absent_reason(activate: str) -> Optional[str]:
    """Why the device cannot compile with inductor, as its adapter declares it; None when
    it can, or when the activation module has no ``capability(feature)`` to ask."""
    if not activate:
        return None
    ask = getattr(importlib.import_module(activate.partition(":")[0]), "capability", None)
    if not callable(ask):
        return None
    try:
        why = ask(CAPABILITY)
    except KeyError:  # an adapter that does not know the feature: try it
        return None
    return f"capability {CAPABILITY} is absent: {why}" if why else None


class CompiledRunner(TaskRunner):
    """:class:`.worker.TaskRunner` with the device side compiled."""

    def __init__(self, torch: ModuleType, device: str, ops: Dict[str, OpInfo]) -> None:
        super().__init__(torch, device, ops)
        self.compiled: Dict[int, Callable[..., object]] = {}  # id(op) -> its compiled function, for this task
        self.device_calls = 0  # compiled calls of this task

    def samples(self, op: OpInfo, dtype: DType, grad: bool) -> List[SampleInput]:
        return super().samples(op, dtype, grad)[:SAMPLES]

    def run(self, task: PlannedTask) -> TaskResult:
        self.torch._dynamo.reset()
        self.compiled.clear()
        self.device_calls = 0
        try:
            result = super().run({**task, "kind": "forward"})
        finally:
            self.torch._dynamo.reset()
        if result["outcome"] == "passed" and not self.device_calls:  # a factory sample without a device
            return {**result, "outcome": "skipped", "error": "the sample holds no device tensor: nothing compiled"}
        return result

    def call(self, op: OpInfo, sample: SampleInput, args: Args) -> object:
        if not _on_device(args, self.torch, self.device):
            return super().call(op, sample, args)  # the CPU side: eager
        self.device_calls += 1
        fn = self.compiled.get(id(op))
        if fn is None:
            fn = self.compiled[id(op)] = self.compile(op)
        self.seed(SEED + 1)  # as the eager call on CPU's side
        # before the call: it may write to them (a Twin keeps the structure it copies)
        cpu_args = cast(Args, Twin(self.torch, self.device, grad=False)(args))
        try:
            return fn(args[0], *args[1], **args[2])
        except Exception as exc:
            raise CompileFailure(f"{self.on_cpu(op, cpu_args)}: {message(exc)}") from exc

    def compile(self, op: OpInfo) -> Callable[..., object]:
        function = op.op  # the function variant, a closure variable dynamo resolves

        def fn(first: object, *rest: object, **kwargs: object) -> object:
            return function(first, *rest, **kwargs)

        compiled: Callable[..., object] = self.torch.compile(fn, backend="inductor", fullgraph=True, dynamic=False)
        return compiled

    def on_cpu(self, op: OpInfo, cpu_args: Args) -> str:
        """Whether inductor compiles the same sample on CPU: tells a device defect from a
        limit of torch.compile itself when an expectation's reason is written."""
        self.torch._dynamo.reset()
        try:
            self.seed(SEED + 1)
            self.compile(op)(cpu_args[0], *cpu_args[1], **cpu_args[2])
        except Exception:
            return "fails on CPU too"
        finally:
            self.torch._dynamo.reset()
            self.compiled.clear()
        return "CPU compiles it"


class CompileFailure(RuntimeError):
    """torch.compile raised on the device (dynamo, inductor, or the compiled kernel); the
    message starts with whether the same sample compiles on CPU."""


def _on_device(value: object, torch: ModuleType, device: str) -> bool:
    if isinstance(value, torch.Tensor):
        return bool(value.device.type == device)
    if isinstance(value, (str, torch.device)):
        try:
            return bool(torch.device(value).type == device)
        except (RuntimeError, TypeError):
            return False
    if isinstance(value, (tuple, list)):
        return any(_on_device(v, torch, device) for v in value)
    if isinstance(value, dict):
        return any(_on_device(v, torch, device) for v in value.values())
    return False


def _configure(torch: ModuleType, cache: str) -> None:
    """Compile caches that cannot make one op's result depend on another's (module docstring)."""
    inductor = importlib.import_module("torch._inductor.config")
    # compile_threads=1: kernels compile in this process. One op's graph has a kernel or
    # two, and a pool's workers each import torch first: on torch 2.13 and 2 cores the
    # sample took 65 s of CPU in-process against 73 s with the pool (109 s and 131 s wall).
    for name, value in (("fx_graph_cache", False), ("fallback_random", True), ("compile_threads", 1)):
        if hasattr(inductor, name):
            setattr(inductor, name, value)
    functorch = importlib.import_module("torch._functorch.config")
    if hasattr(functorch, "enable_autograd_cache"):  # 2.5+
        setattr(functorch, "enable_autograd_cache", False)  # noqa: B010 (mypy does not know the attribute)
    os.makedirs(cache, exist_ok=True)


def main(argv: Optional[List[str]] = None) -> int:
    args = arguments("The compiled sample's worker (started by the runner).").parse_args(argv)
    # before torch starts: inductor reads its cache folder from the environment
    cache = os.path.join(os.path.dirname(os.path.abspath(args.plan)), "inductor-cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    torch = start_torch(args)
    absent = absent_reason(args.activate)
    tasks: List[PlannedTask] = []
    ops: Dict[str, OpInfo] = {}
    if absent is None:
        from torch.testing._internal.common_methods_invocations import op_db

        from .test_configs import configured

        op_list, _ = configured(op_db)  # the adapter's set_test_configs (torch 2.13+), as the eager sweep
        selected = [o for o in args.ops.split(",") if o]
        tasks = plan(op_list, torch, selected) if KIND in args.kinds.split(",") else []
        ops = {op_id(o): o for o in op_list}
        _configure(torch, cache)
    return serve(args, torch, tasks, CompiledRunner(torch, args.device, ops).run, {"absent": absent})


if __name__ == "__main__":
    sys.exit(main())
