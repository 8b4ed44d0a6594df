"""The worker process of the OpInfo sweep: runs ops on the device and on CPU, and compares.

    python -m adapter_matrix.device.opsweep.worker --device npu --activate shims \\
        --plan PLAN.json --log LOG.jsonl [--start N]

With ``--start 0`` the worker first writes the plan (every task of the selection, in
op_db order) to ``PLAN.json``. It then runs the tasks from ``--start`` on, and before
each one appends ``{"start": i}`` to ``LOG.jsonl`` (flushed), after it
``{"task": i, "outcome": ...}``. If the process dies (SIGSEGV, SIGABRT, a hang the
parent kills), the last ``start`` without a result names the op that killed it; the
parent (:mod:`adapter_matrix.device.opsweep.runner`) records that and starts a new
worker at the next task.

What one task compares, for one OpInfo and one dtype:

forward
    each of ``op.sample_inputs("npu", dtype)`` (built on the device, by device name), and
    its CPU copy; the op on both (the RNG seeded alike before each call: the device's
    generator draws the CPU stream); ``sample.output_process_fn_grad`` applied to both
    results; every result tensor must be on the device, and equal CPU's within the
    tolerance (below). When CPU raises for a sample the device must raise too.
backward (float32, float64)
    ``op.sample_inputs("npu", dtype, requires_grad=True)``: the gradients of every input
    that requires grad, through every differentiable output, with the same random
    output gradients on both sides.

Tolerances: the ``torch.testing.assert_close`` defaults of the result dtype, widened by
the ``toleranceOverride``/``precisionOverride`` decorators the OpInfo applies to
``TestCommon.test_compare_cpu`` (PyTorch's own device-versus-CPU test). When the OpInfo
skips that test for every device (uninitialized outputs such as ``empty_like``, or
device-specific randomness), values are compared but a difference is tolerated: the
structure, shapes, dtypes and devices must still agree, and the task notes it.
"""

from __future__ import annotations

import inspect
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple, cast

from .process import MESSAGE_CHARS, PlanAbout, PlannedTask, TaskResult, arguments, message, serve, start_torch

if TYPE_CHECKING:  # torch is imported by start_torch, in the worker process only
    from torch import Tensor
    from torch import dtype as DType
    from torch.testing._internal.opinfo.core import DecorateInfo, OpInfo, SampleInput

# A sample's arguments as an op takes them: the input, the positional and the keyword arguments.
Args = Tuple[object, Tuple[object, ...], Dict[str, object]]

__all__ = ["FAMILIES", "family_of", "main"]

# Op families for the coverage table: a namespace first, then the OpInfo class.
NAMESPACE_FAMILIES = (
    ("nn.functional.", "nn.functional"),
    ("linalg.", "linalg"),
    ("fft.", "fft"),
    ("special.", "special"),
    ("masked.", "masked"),
    ("signal.", "signal"),
    ("sparse.", "sparse"),
)
CLASS_FAMILIES = (
    ("UnaryUfuncInfo", "unary"),
    ("BinaryUfuncInfo", "binary"),
    ("ReductionOpInfo", "reduction"),
    ("SpectralFuncInfo", "fft"),
    ("ShapeFuncInfo", "shape"),
)
# "modules": PyTorch's device-generic module tests (:mod:`.generic`), in the same records
FAMILIES = tuple(
    dict.fromkeys([f for _, f in NAMESPACE_FAMILIES] + [f for _, f in CLASS_FAMILIES] + ["other", "modules"])
)
BACKWARD_DTYPES = ("float32", "float64")
SEED = 20261201


def family_of(name: str, class_names: Iterable[str]) -> str:
    """The family of an OpInfo: its namespace (``linalg.``), else its class, else ``other``."""
    for prefix, family in NAMESPACE_FAMILIES:
        if name.startswith(prefix):
            return family
    classes = set(class_names)
    for cls, family in CLASS_FAMILIES:
        if cls in classes:
            return family
    return "other"


def op_id(op: OpInfo) -> str:
    """``name`` or ``name.variant``: unique within op_db."""
    name: str = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
    return name


# -- the plan -----------------------------------------------------------------------------


def plan(
    op_db: List[OpInfo], torch: ModuleType, ops: Optional[List[str]], dtypes: List[str], kinds: List[str]
) -> List[PlannedTask]:
    """Every task of the selection: (op, dtype, kind) where CPU supports the dtype (and,
    for backward, its gradient), in op_db order."""
    wanted = set(ops) if ops else None
    tasks: List[PlannedTask] = []
    for op in op_db:
        name = op_id(op)
        if wanted is not None and name not in wanted and op.name not in wanted:
            continue
        family = family_of(op.name, [c.__name__ for c in type(op).__mro__])
        forward = op.supported_dtypes("cpu")
        backward = op.supported_backward_dtypes("cpu") if op.supports_autograd else set()
        for dtype_name in dtypes:
            dtype = getattr(torch, dtype_name)
            if "forward" in kinds and dtype in forward:
                tasks.append({"op": name, "family": family, "dtype": dtype_name, "kind": "forward"})
            if "backward" in kinds and dtype_name in BACKWARD_DTYPES and dtype in backward and dtype in forward:
                tasks.append({"op": name, "family": family, "dtype": dtype_name, "kind": "backward"})
    return tasks


# -- moving samples between devices -------------------------------------------------------


class Twin:
    """Copies a sample's arguments to CPU, and maps the device named in arguments
    (``device="npu"`` of factory samples) to CPU.

    A tensor's copy has the same storage contents, offset and strides (``as_strided``
    reads outside the view), and tensors sharing a storage on the device share one on
    CPU (in-place ops see the same aliasing). ``others`` collects the device types a
    sample names besides ours (``empty_like(x, device="cpu")``): results may live there.
    """

    def __init__(self, torch: ModuleType, device: str, grad: bool) -> None:
        self.torch = torch
        self.device = device
        self.grad = grad
        self.memo: Dict[int, Tensor] = {}  # id of a device tensor -> its CPU copy
        self.storages: Dict[Tuple[int, int], object] = {}  # (data pointer, bytes) -> the CPU copy of a storage
        self.others: Set[str] = set()
        self.touched = False  # the sample holds a device tensor or names the device

    def is_device(self, value: object) -> bool:
        if isinstance(value, self.torch.device):
            return bool(value.type == self.device)
        return isinstance(value, str) and (value == self.device or value.startswith(self.device + ":"))

    def copy(self, value: Tensor) -> Tensor:
        torch = self.torch
        value = value.detach()
        if value.layout != torch.strided or value.is_conj() or value.is_neg() or value.device.type != self.device:
            return value.to("cpu", copy=True)
        storage = value.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
        if key not in self.storages:
            self.storages[key] = storage.cpu()
        out = torch.empty((0,), dtype=value.dtype)
        return out.set_(self.storages[key], value.storage_offset(), value.size(), value.stride())

    def __call__(self, value: object) -> object:
        torch = self.torch
        if isinstance(value, torch.Tensor):
            key = id(value)
            self.touched = self.touched or value.device.type == self.device
            if key not in self.memo:
                copy = self.copy(value)
                if self.grad and value.requires_grad:
                    copy.requires_grad_(True)
                self.memo[key] = copy
            return self.memo[key]
        if self.is_device(value):
            self.touched = True
            return torch.device("cpu") if isinstance(value, torch.device) else "cpu"
        if isinstance(value, (str, torch.device)) and value != "":
            try:
                self.others.add(torch.device(value).type)
            except (RuntimeError, TypeError):
                pass  # a string that is not a device
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            return tuple(self(v) for v in value)
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        return value


def tensors_in(value: object, torch: ModuleType) -> Iterator[Tensor]:
    """The tensors inside nested tuples, lists and dicts, in order."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from tensors_in(v, torch)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v, torch)


def _unique(tensors: Iterable[Tensor]) -> List[Tensor]:
    seen: Set[int] = set()
    out: List[Tensor] = []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


# -- tolerances and PyTorch's own skips of the device-versus-CPU test ----------------------

COMPARE_TEST = ("TestCommon", "test_compare_cpu")


def _active(info: DecorateInfo, device: str, dtype: DType) -> bool:
    cls_name, test_name = COMPARE_TEST
    try:
        return bool(info.is_active(cls_name, test_name, device, dtype, {}))
    except TypeError:  # torch < 2.2: no param_kwargs
        return bool(info.is_active(cls_name, test_name, device, dtype))


def _decorations(op: OpInfo, device: str, dtype: DType) -> Iterator[Callable[..., object]]:
    for info in list(op.decorators or ()) + list(getattr(op, "skips", None) or ()):
        if hasattr(info, "is_active") and _active(info, device, dtype):
            yield from info.decorators


def tolerance(op: OpInfo, device: str, dtype: DType) -> Tuple[Optional[float], Optional[float]]:
    """(atol, rtol) overrides the OpInfo applies to test_compare_cpu for ``dtype``, or Nones."""
    atol: Optional[float] = None
    rtol: Optional[float] = None
    for decorator in _decorations(op, device, dtype):
        table = getattr(decorator, "d", None)
        if not isinstance(table, dict) or dtype not in table:
            continue
        value = table[dtype]
        if hasattr(value, "atol"):  # toleranceOverride: dtype -> tol(atol, rtol)
            atol, rtol = max(atol or 0.0, value.atol), max(rtol or 0.0, value.rtol)
        elif isinstance(value, (int, float)):  # precisionOverride: dtype -> atol
            atol = max(atol or 0.0, float(value))
    return atol, rtol


def skip_reason(op: OpInfo, device: str, dtype: DType) -> Optional[str]:
    """Why PyTorch skips test_compare_cpu for this op on every device, if it does."""
    for decorator in _decorations(op, device, dtype):
        name = getattr(decorator, "__qualname__", "")
        if name.startswith("skip."):  # unittest.skip(reason) returns a closure over reason
            reason = inspect.getclosurevars(decorator).nonlocals.get("reason")
            return str(reason or "skipped")
    return None


# -- comparing results --------------------------------------------------------------------


class Mismatch(AssertionError):
    """The device's result differs from CPU's."""


def _structure(
    device_value: object, cpu_value: object, torch: ModuleType, allowed: Set[str], where: str = "result"
) -> object:
    """``device_value`` with its tensors on CPU, after checking it has CPU's structure,
    shapes and dtypes and that its tensors are on the device (or a device type in
    ``allowed`` that the sample named)."""
    if isinstance(cpu_value, torch.Tensor):
        if not isinstance(device_value, torch.Tensor):
            raise Mismatch(f"{where}: CPU returns a tensor, the device a {type(device_value).__name__}")
        if device_value.device.type not in allowed:
            raise Mismatch(f"{where}: on {device_value.device}, not on the device")
        if device_value.dtype != cpu_value.dtype or device_value.shape != cpu_value.shape:
            raise Mismatch(
                f"{where}: {device_value.dtype}{list(device_value.shape)} on the device, {cpu_value.dtype}{list(cpu_value.shape)} on CPU"
            )
        return device_value.detach().cpu()
    if isinstance(cpu_value, (tuple, list)) and _is_sequence(cpu_value, torch):
        if not (isinstance(device_value, (tuple, list)) and _is_sequence(device_value, torch)) or len(
            device_value
        ) != len(cpu_value):
            raise Mismatch(f"{where}: CPU returns {len(cpu_value)} values, the device {type(device_value).__name__}")
        return [
            _structure(d, c, torch, allowed, f"{where}[{i}]") for i, (d, c) in enumerate(zip(device_value, cpu_value))
        ]
    return device_value


def _is_sequence(value: object, torch: ModuleType) -> bool:
    return isinstance(value, (tuple, list)) and not isinstance(value, torch.Size)


def _plain(value: object, torch: ModuleType) -> object:
    """Tuples (torch.return_types included) as lists, so both sides compare as sequences."""
    if isinstance(value, (tuple, list)) and _is_sequence(value, torch):
        return [_plain(v, torch) for v in value]
    return value


def compare(
    device_value: object,
    cpu_value: object,
    torch: ModuleType,
    allowed: Set[str],
    atol: Optional[float],
    rtol: Optional[float],
) -> None:
    """Raise :class:`Mismatch` unless the device's result equals CPU's."""
    moved = _plain(_structure(device_value, cpu_value, torch, allowed), torch)
    expected = _plain(cpu_value, torch)
    options: Dict[str, object] = {"equal_nan": True}
    if atol is not None or rtol is not None:
        options.update(atol=atol or 0.0, rtol=rtol or 0.0)
    try:
        torch.testing.assert_close(moved, expected, check_device=False, **options)
    except AssertionError as exc:
        raise Mismatch(" ".join(str(exc).split())[:MESSAGE_CHARS]) from None
    except (TypeError, ValueError):  # values assert_close does not know (dtypes, strings, None)
        if moved != expected:
            raise Mismatch(f"result {moved!r} on the device, {expected!r} on CPU"[:MESSAGE_CHARS]) from None


# -- running one task ---------------------------------------------------------------------


class TaskRunner:
    """Runs the tasks of one worker process."""

    def __init__(self, torch: ModuleType, device: str, ops: Dict[str, OpInfo]) -> None:
        self.torch = torch
        self.device = device
        self.ops = ops
        self.device_module = getattr(torch, device, None)

    def seed(self, seed: int = SEED) -> None:
        self.torch.manual_seed(seed)
        seed_all = getattr(self.device_module, "manual_seed_all", None)
        if seed_all is not None:
            seed_all(seed)

    def samples(self, op: OpInfo, dtype: DType, grad: bool) -> List[SampleInput]:
        self.seed()
        return list(op.sample_inputs(self.device, dtype, requires_grad=grad))

    def call(self, op: OpInfo, sample: SampleInput, args: Args) -> object:
        self.seed(SEED + 1)
        return op(args[0], *args[1], **args[2])

    def run(self, task: PlannedTask) -> TaskResult:
        """One task -> {outcome: passed|failed|skipped, samples, compared, error, note}."""
        torch = self.torch
        op = self.ops[task["op"]]
        dtype = getattr(torch, task["dtype"])
        grad = task["kind"] == "backward"
        try:
            samples = self.samples(op, dtype, grad)
        except Exception as exc:
            try:
                self.seed()
                list(op.sample_inputs("cpu", dtype, requires_grad=grad))
            except Exception:
                return {"outcome": "skipped", "samples": 0, "error": f"sample inputs fail on CPU too: {message(exc)}"}
            return {"outcome": "failed", "samples": 0, "error": f"sample inputs: {message(exc)}"}
        if not samples:
            return {"outcome": "skipped", "samples": 0, "error": "no sample inputs"}
        atol, rtol = tolerance(op, self.device, dtype)
        lenient = skip_reason(op, self.device, dtype)
        compared = errored = 0
        note = None
        compare_one = self.backward if grad else self.forward
        for index, sample in enumerate(samples):
            try:
                status = compare_one(op, sample, atol, rtol)
            except Mismatch as exc:
                if lenient is not None and not str(exc).startswith("structure:"):
                    note = f"values differ, tolerated (PyTorch skips test_compare_cpu: {lenient})"
                    compared += 1
                    continue
                return {
                    "outcome": "failed",
                    "samples": len(samples),
                    "compared": compared,
                    "error": f"sample {index}: {str(exc).replace('structure: ', '')}",
                }
            if status == "compared":
                compared += 1
            elif status == "both raised":
                errored += 1
        if compared == 0:
            reason = (
                "CPU raises for every sample"
                if errored
                else "no differentiable input and output"
                if grad
                else "nothing compared"
            )
            return {"outcome": "skipped", "samples": len(samples), "error": reason}
        result: TaskResult = {"outcome": "passed", "samples": len(samples), "compared": compared}
        if note:
            result["note"] = note
        return result

    def _both(
        self, op: OpInfo, sample: SampleInput, twin: Twin
    ) -> Tuple[object, object, Optional[BaseException], Optional[BaseException]]:
        device_args: Args = (sample.input, tuple(sample.args), dict(sample.kwargs))
        # before the device call: an op may write to its inputs (a Twin keeps the structure it copies)
        cpu_args = cast(Args, twin(device_args))
        outs: List[object] = [None, None]
        errors: List[Optional[BaseException]] = [None, None]
        for side, args in enumerate((device_args, cpu_args)):
            try:
                outs[side] = sample.output_process_fn_grad(self.call(op, sample, args))
            except Exception as exc:
                errors[side] = exc
        return outs[0], outs[1], errors[0], errors[1]

    def forward(self, op: OpInfo, sample: SampleInput, atol: Optional[float], rtol: Optional[float]) -> str:
        twin = Twin(self.torch, self.device, grad=False)
        with self.torch.no_grad():
            device_out, cpu_out, device_error, cpu_error = self._both(op, sample, twin)
        return self._judge(device_out, cpu_out, device_error, cpu_error, atol, rtol, twin)

    def _judge(
        self,
        device_out: object,
        cpu_out: object,
        device_error: Optional[BaseException],
        cpu_error: Optional[BaseException],
        atol: Optional[float],
        rtol: Optional[float],
        twin: Twin,
    ) -> str:
        if cpu_error is not None:
            if device_error is None:
                raise Mismatch(f"structure: CPU raises {message(cpu_error)}, the device does not")
            return "both raised"
        if device_error is not None:
            raise Mismatch(f"structure: {message(device_error)}")
        # a factory called without a device (arange(2)) builds on the default device, CPU
        allowed = {self.device} | twin.others | (set() if twin.touched else {"cpu"})
        try:
            _structure(device_out, cpu_out, self.torch, allowed)
        except Mismatch as exc:
            raise Mismatch(f"structure: {exc}") from None
        compare(device_out, cpu_out, self.torch, allowed, atol, rtol)
        return "compared"

    def backward(self, op: OpInfo, sample: SampleInput, atol: Optional[float], rtol: Optional[float]) -> str:
        torch = self.torch
        twin = Twin(torch, self.device, grad=True)
        device_args = (sample.input, tuple(sample.args), dict(sample.kwargs))
        device_inputs = [t for t in _unique(tensors_in(device_args, torch)) if t.requires_grad]
        if not device_inputs:
            return "nothing"
        device_out, cpu_out, device_error, cpu_error = self._both(op, sample, twin)
        cpu_inputs = [twin.memo[id(t)] for t in device_inputs]
        if cpu_error is not None or device_error is not None:
            return self._judge(device_out, cpu_out, device_error, cpu_error, atol, rtol, twin)

        def differentiable(value: object) -> List[Tensor]:
            return [
                t for t in tensors_in(value, torch) if t.requires_grad and (t.is_floating_point() or t.is_complex())
            ]

        device_outs, cpu_outs = differentiable(device_out), differentiable(cpu_out)
        if len(device_outs) != len(cpu_outs):
            raise Mismatch(
                f"structure: {len(device_outs)} differentiable outputs on the device, {len(cpu_outs)} on CPU"
            )
        if not cpu_outs:
            return "nothing"
        generator = torch.Generator().manual_seed(SEED + 2)
        cpu_grads = [torch.randn(t.shape, dtype=t.dtype, generator=generator) for t in cpu_outs]
        device_grads = [g.to(self.device) for g in cpu_grads]
        results: List[Optional[List[Optional[Tensor]]]] = [None, None]  # each side's gradients
        errors: List[Optional[BaseException]] = [None, None]
        for side, (outs, inputs, grads) in enumerate(
            ((device_outs, device_inputs, device_grads), (cpu_outs, cpu_inputs, cpu_grads))
        ):
            try:
                self.seed(SEED + 3)
                results[side] = list(torch.autograd.grad(outs, inputs, grads, allow_unused=True))
            except Exception as exc:
                errors[side] = exc
        if errors[1] is None and results[1] is not None:
            # an input the graph does not reach has no gradient on either side; compare the rest
            pairs = [(d, c) for d, c in zip(results[0] or [], results[1]) if not (d is None and c is None)]
            if errors[0] is None and any((d is None) != (c is None) for d, c in pairs):
                raise Mismatch("structure: an input has a gradient on one side only")
            if errors[0] is None:
                results = [[d for d, _ in pairs], [c for _, c in pairs]]
        return self._judge(results[0], results[1], errors[0], errors[1], atol, rtol, twin)


# -- the process --------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    args = arguments("The OpInfo sweep's worker (started by the runner).").parse_args(argv)
    torch = start_torch(args)
    from torch.testing._internal.common_methods_invocations import op_db

    from .test_configs import configured, excluded

    op_list, configs = configured(op_db)  # the adapter's set_test_configs (torch 2.13+)
    ops = [o for o in args.ops.split(",") if o]
    kinds = [k for k in args.kinds.split(",") if not (k == "forward" and excluded(*COMPARE_TEST))]
    tasks = plan(op_list, torch, ops or None, args.dtypes.split(","), kinds)
    about: Optional[PlanAbout] = {"configs": configs} if configs else None
    return serve(args, torch, tasks, TaskRunner(torch, args.device, {op_id(o): o for o in op_list}).run, about)


if __name__ == "__main__":
    sys.exit(main())
