"""torch.compile's default backend (inductor) on npu, by reusing CPU's C++/OpenMP code generator.

Device memory is host memory, so the kernels inductor writes for CPU run on npu tensors
as they are; what npu needs is to be *registered* under its own name: the scheduling
(``CppScheduling``), the wrapper that calls the kernels (Python, and C++ where the release
lets a device choose one), the device's op overrides and dynamo's device interface.

Registration is lazy: activation never imports ``torch._inductor`` (seconds of imports).
torch itself asks for the registration when inductor starts, through the hook the era
shim names (:data:`HOOKS`); :func:`register` does the work, once per process.

What differs inside an era is detected on the API itself (``hasattr``), never guessed
from a version: each such test below names the release that changed it.
"""

from __future__ import annotations

import inspect
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, Optional

from ._after_import import after_import

__all__ = ["HOOKS", "attach", "register"]

DEVICE = "npu"
# How torch asks for the registration, by era:
#  - "import": 2.1-2.4 read nothing from the device module; we register right after
#    torch._inductor.graph is imported (every compile imports it before it picks codegens);
#  - "module": 2.5-2.14 init_backend_registration() reads Scheduling and the wrapper
#    classes from the device module; 2.15 first calls torch.npu._inductor_backend_init().
#    Both register on the import as well (see attach), so torch's own question comes too late.
HOOKS = ("import", "module")

_lock = threading.Lock()
_registered = False
# What npu registered: device-module attribute name -> class (None: this torch has none).
_classes: Dict[str, Any] = {}


def register() -> None:
    """Register npu with inductor (imports ``torch._inductor``; idempotent)."""
    global _registered
    with _lock:
        if _registered:
            return
        _registered = True  # first: the registration reads the device module, which may ask again
        try:
            _register()
        except BaseException:
            _registered = False
            raise


def _register() -> None:
    from torch._inductor.codegen import common

    CppScheduling = _scheduling_class()
    wrapper, cpp_wrapper = _wrapper_classes()
    _classes.update(Scheduling=CppScheduling, PythonWrapperCodegen=wrapper, CppWrapperCodegen=cpp_wrapper)
    codegens: Dict[str, Any] = {"device_cpp_wrapper_codegen": cpp_wrapper}
    fx_wrapper = _classes["WrapperFxCodegen"] = _fx_wrapper_class()
    accepted = common.register_backend_for_device.__code__.co_varnames
    if fx_wrapper is not None and "device_fx_wrapper_codegen" in accepted:  # 2.9 (2.8 has the class only)
        codegens["device_fx_wrapper_codegen"] = fx_wrapper
    if "device_custom_pass" in accepted:  # 2.8+: device passes are part of the cache key
        codegens["device_custom_pass"] = _cache_key_pass()
    if cpp_wrapper is None:  # 2.1-2.3: the C++ wrapper is not a per-device class
        common.register_backend_for_device(DEVICE, CppScheduling, wrapper)
    else:  # keywords: 2.9 inserted the FX wrapper before the custom pass
        common.register_backend_for_device(DEVICE, CppScheduling, wrapper, **codegens)
    _register_op_overrides(common)
    _register_device_interface()
    _map_cpp_wrapper_device()
    _schedule_like_cpu()


def _scheduling_class() -> type:
    """CPU's scheduling (``CppScheduling``); on 2.6, one that generates its kernels as CPU's.

    2.6's kernels ask which code generator they belong to inline: ``config.cpu_backend`` for
    cpu, ``config.cuda_backend`` ("triton") for any other device. Kernels of the "triton"
    backend propagate dtypes the Triton way, and a masked load (embeddings) then reads the
    ``dtype`` of a C++ expression ("'str' object has no attribute 'dtype'"). 2.7+ ask
    ``utils.get_current_backend()``, which :func:`_generate_like_cpu` answers instead.
    """
    from torch._inductor import config, utils
    from torch._inductor.codegen import common
    from torch._inductor.codegen.cpp import CppScheduling

    if hasattr(utils, "get_current_backend") or not hasattr(common, "DtypePropagationOpsHandler"):
        return CppScheduling  # 2.1-2.5: no dtype propagation; 2.7+: answered by the backend query

    class NpuScheduling(CppScheduling):
        def codegen_node(self, node):
            with config.patch(cuda_backend=config.cpu_backend):
                return super().codegen_node(node)

        def codegen_template(self, *args, **kwargs):
            with config.patch(cuda_backend=config.cpu_backend):
                return super().codegen_template(*args, **kwargs)

    return NpuScheduling


def _wrapper_classes():
    """The Python wrapper (and C++ wrapper, 2.4+) that call CPU kernels on npu."""
    from torch._inductor import virtualized
    from torch._inductor.codegen import wrapper as wrapper_module

    base = getattr(wrapper_module, "PythonWrapperCodegen", None) or wrapper_module.WrapperCodeGen  # renamed in 2.6

    class NpuWrapperCodegen(base):  # type: ignore[misc, valid-type]
        """CPU's kernel calls for npu buffers (torch writes GPU launches for non-CPU devices)."""

        @staticmethod
        def create(is_subgraph, *args, **kwargs):  # 2.6+: classes build themselves
            if is_subgraph:
                return base.create(is_subgraph, *args, **kwargs)
            return NpuWrapperCodegen()

        # 2.8+: one helper writes every kernel call, and raises "device npu nyi" for devices
        # other than cpu/mps (2.9+) or launches them as GPU kernels (2.8).
        def _generate_kernel_call_helper(self, kernel_name, call_args, *args, device=None, triton=True, **kwargs):
            device = device or virtualized.V.graph.get_current_device_or_throw()
            if not triton and device.type == DEVICE:
                self.writeline(self.wrap_kernel_call(kernel_name, call_args))
                return None
            return super()._generate_kernel_call_helper(
                kernel_name, call_args, *args, device=device, triton=triton, **kwargs
            )

        # CPU's wrapper allocates buffers on the device named by type only (device='npu') and
        # enters no device guard (GPU types get one), so a graph on npu:1 allocated its buffers
        # on the current device, npu:0 in the caller's thread ("found at least two devices,
        # npu:1 and npu:0" at the first kernel). Name the index. 2.1 has only the buffer form.
        def make_allocation(self, name, device, *args, **kwargs):
            return _indexed(super().make_allocation(name, device, *args, **kwargs), device)

        def make_buffer_allocation(self, buffer):
            return _indexed(super().make_buffer_allocation(buffer), buffer.get_device())

    if hasattr(base, "make_allocation"):  # 2.2+: the buffer form calls this one
        del NpuWrapperCodegen.make_buffer_allocation
    else:
        del NpuWrapperCodegen.make_allocation
    if not hasattr(base, "_generate_kernel_call_helper"):
        del NpuWrapperCodegen._generate_kernel_call_helper
        routed_by_flag = {"cuda", "gpu"} & set(inspect.signature(base.generate_kernel_call).parameters)
        if not routed_by_flag:  # 2.7: generate_kernel_call launches non-CPU devices as GPU kernels

            def generate_kernel_call(self, kernel_name, call_args, *args, triton=True, **kwargs):
                if not triton and virtualized.V.graph.get_current_device_or_throw().type == DEVICE:
                    self.writeline(self.wrap_kernel_call(kernel_name, call_args))
                    return None
                return base.generate_kernel_call(self, kernel_name, call_args, *args, triton=triton, **kwargs)

            NpuWrapperCodegen.generate_kernel_call = generate_kernel_call
        # 2.1-2.6 pass the scheduling's cuda/gpu flag, False for CppScheduling: CPU's call as it is

    return NpuWrapperCodegen, _cpp_wrapper_class()


def _cache_key_pass() -> Any:
    """A graph pass that changes nothing, registered for its ``uuid()``: inductor's FX graph
    cache keys compiled code by torch's own sources, not by npu's code generator, so after an
    adapter upgrade it would serve code the older adapter generated (seen: the npu:1
    allocation fix of 0.2.1 kept failing until the cache was cleared). 2.8+ add device
    passes' uuids to the key; before 2.8 only a new torch, a changed config or a cleared
    cache misses it."""
    import hashlib

    from torch._inductor.custom_graph_pass import CustomGraphModulePass

    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]

    class NpuCodegenVersion(CustomGraphModulePass):
        def __call__(self, gm: Any) -> None:
            return None

        def uuid(self) -> str:
            return f"shims.inductor {digest}"

    return NpuCodegenVersion()


def _indexed(allocation: str, device: Any) -> str:
    """A line of wrapper code allocating on ``device`` with its index written out."""
    if device is None or device.type != DEVICE or device.index is None:
        return allocation
    return allocation.replace(f"device='{DEVICE}'", f"device='{DEVICE}:{device.index}'")


def _cpp_wrapper_class() -> Optional[type]:
    """2.4+: the C++ wrapper (``cpp_wrapper=True``): CPU's, including CPU's runtime header."""
    try:
        from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
    except ImportError:  # 2.1-2.2: CppWrapperCodeGen in wrapper.py, chosen by inductor itself
        return None
    from torch._inductor.codegen import common

    if "device_cpp_wrapper_codegen" not in common.register_backend_for_device.__code__.co_varnames:
        return None  # 2.3: CppWrapperCpu exists, but inductor picks it itself

    class NpuCppWrapper(CppWrapperCpu):
        @staticmethod
        def create(*args, **kwargs):
            return NpuCppWrapper()

        # torch includes torch/csrc/inductor/cpp_wrapper/<device>.h (cpu, cuda, mps, xpu ship)
        def add_device_include(self, device: str) -> None:  # 2.7+
            super().add_device_include("cpu" if device == DEVICE else device)

        # Extern kernels (mm, addmm, ...) go through torch's C shims, one set per device
        # (aoti_torch_cpu_addmm_out): npu tensors are host memory, so CPU's shims serve them.
        @staticmethod
        def get_c_shim_func_name(kernel: str, device: str) -> str:
            return CppWrapperCpu.get_c_shim_func_name(kernel, "cpu" if device == DEVICE else device)

    if "device" not in inspect.signature(CppWrapperCpu.get_c_shim_func_name).parameters:
        # 2.4-2.6: a method naming the shims after the wrapper's own device, "cpu" for CPU's
        # wrapper (the device argument came in 2.7)
        del NpuCppWrapper.get_c_shim_func_name
    return NpuCppWrapper


def _fx_wrapper_class() -> Optional[type]:
    try:
        from torch._inductor.codegen.wrapper_fxir import WrapperFxCodegen  # 2.9+
    except ImportError:
        return None
    return WrapperFxCodegen


def _register_op_overrides(common: ModuleType) -> None:
    """2.6+: every device needs DeviceOpOverrides (2.3-2.5 default to empty ones)."""
    try:
        from torch._inductor.codegen.cpu_device_op_overrides import CpuDeviceOpOverrides
    except ImportError:  # before 2.6: not consulted for a device without GPU kernels
        return
    # 2.6-2.11 load the built-in overrides only while the table is empty: fill it first,
    # or registering npu would leave "cpu" without its overrides.
    common.get_device_op_overrides("cpu")

    class NpuDeviceOpOverrides(CpuDeviceOpOverrides):
        def aten_device_type(self) -> str:  # 2.15: the C++ wrapper's at::kXxx comes from here
            return "at::kPrivateUse1"

    common.register_device_op_overrides(DEVICE, NpuDeviceOpOverrides())


def _register_device_interface() -> None:
    """2.2+: inductor asks dynamo's device interface for the index of a device named without
    one (``torch.arange(n, device="npu")``), and 2.6+ about every device (reductions' hints)."""
    try:
        from torch._dynamo import device_interface
    except ImportError:  # 2.1: no device interfaces yet (inductor names the device as written)
        return
    cpu_interface = getattr(device_interface, "CpuInterface", None)  # 2.6+
    if cpu_interface is None:  # 2.2-2.5: only the abstract interface, every method to fill in
        interface = _npu_interface(device_interface.DeviceInterface, runtime=True)
    else:
        interface = _npu_interface(cpu_interface, runtime=False)
    device_interface.register_interface_for_device(DEVICE, interface)


def _npu_interface(base: type, runtime: bool) -> type:
    """npu's interface: ``base`` with npu's device index, and with ``runtime`` npu's device
    count, availability, synchronization and properties too (2.2-2.5's abstract base raises
    NotImplementedError for each; 2.6+ take CPU's, which the measured cells ran with).

    The index: inductor names a device without one through ``Worker.current_device()``,
    which CPU's worker lacks (CPU needs no index). Found by the op sweep's compiled sample
    (``arange``: "type object 'Worker' has no attribute 'current_device'" on 2.6+, "No
    interface for device npu" on 2.2)."""
    import torch

    module = getattr(torch, DEVICE)

    class NpuWorker(base.Worker):  # type: ignore[name-defined]
        @staticmethod
        def current_device() -> int:
            return int(module.current_device())

        @staticmethod
        def set_device(device: int) -> None:
            module.set_device(device)

    class NpuInterface(base):
        Worker = NpuWorker

        @staticmethod
        def current_device() -> int:
            return int(module.current_device())

    if runtime:
        NpuWorker.get_device_properties = staticmethod(module.get_device_properties)
        for name in ("set_device", "device_count", "is_available", "synchronize", "get_device_properties"):
            setattr(NpuInterface, name, staticmethod(getattr(module, name)))
        # 2.2-2.5's dynamo reads ``Event`` of every registered interface while it traces
        # (InternalTorchDynamoError without it). Set after the class is made: the interface
        # metaclass wants torch's _EventBase, which npu's Event (host timing) does not extend.
        NpuInterface.Event = module.Event
    return NpuInterface


def _map_cpp_wrapper_device() -> None:
    """The C++ wrapper names devices through a table up to 2.14 (2.15 asks the op overrides)."""
    try:
        from torch._inductor.codegen import cpp_utils
    except ImportError:  # 2.1: no per-device C++ wrapper to name it for (inductor_cpp_wrapper absent)
        return
    table = getattr(cpp_utils, "DEVICE_TO_ATEN", None)
    if table is not None:
        table[DEVICE] = "at::kPrivateUse1"


def _schedule_like_cpu() -> None:
    """The one patch: inductor's scheduler keeps its GPU-only loop reordering and reindexing
    away from CPU nodes with ``node.is_cpu()`` (2.6+; "not validated for CPU codegen"), and
    would apply them to npu's nodes, which CppScheduling groups the CPU way (fails with
    "can't multiply sequence by non-int of type 'tuple'"). npu nodes are CPU nodes there."""
    from torch._inductor import scheduler

    node = scheduler.BaseSchedulerNode
    original = getattr(node, "is_cpu", None)
    if original is None or getattr(original, "_npu", False):
        return

    def is_cpu(self) -> bool:
        device = self.get_device()
        return device is not None and device.type in ("cpu", DEVICE)

    is_cpu._npu = True  # type: ignore[attr-defined]
    node.is_cpu = is_cpu
    _generate_like_cpu()


def _generate_like_cpu() -> None:
    """The second patch: ``utils.get_current_backend()`` (2.6+) names the code generator of
    the current device, and answers "triton" (config.cuda_backend) for every device it does
    not know; kernels then propagate dtypes the Triton way and masked loads (embeddings) lose
    their dtype. npu's generator is CPU's: answer config.cpu_backend. Rebound where imported."""
    import importlib

    from torch._inductor import config, utils

    original = getattr(utils, "get_current_backend", None)
    if original is None or getattr(original, "_npu", False):
        return

    def get_current_backend(device_type=None):
        from torch._inductor.virtualized import V

        if (device_type or V.graph.get_current_device_or_throw().type) == DEVICE:
            return config.cpu_backend
        return original() if device_type is None else original(device_type)  # 2.8: no argument

    get_current_backend._npu = True  # type: ignore[attr-defined]
    for name in (
        "torch._inductor.utils",
        "torch._inductor.codegen.common",
        "torch._inductor.scheduler",
        "torch._inductor.kernel.mm_common",
    ):
        module = importlib.import_module(name)
        if getattr(module, "get_current_backend", None) is original:
            module.get_current_backend = get_current_backend  # type: ignore[attr-defined]  # the codegen module of this torch; mypy sees another era's


# -- the hooks ------------------------------------------------------------------------------

# Names init_backend_registration() reads from the device module, by release: 2.5 the old
# class names, 2.6+ the new ones, 2.9+ also the FX wrapper (without it torch registers nothing).
_MODULE_ATTRIBUTES = {
    "Scheduling": "Scheduling",
    "WrapperCodeGen": "PythonWrapperCodegen",  # 2.5
    "PythonWrapperCodegen": "PythonWrapperCodegen",
    "CppWrapperCodeGen": "CppWrapperCodegen",  # 2.5
    "CppWrapperCodegen": "CppWrapperCodegen",
    "WrapperFxCodegen": "WrapperFxCodegen",  # 2.9
}


def _registered_class(name: str) -> Any:
    register()
    return _classes[_MODULE_ATTRIBUTES[name]]


def attach(module: ModuleType, hook: str) -> None:
    """Arrange for torch to register npu with inductor when inductor starts."""
    if hook == "module":
        previous = module.__dict__.get("__getattr__")

        def __getattr__(name: str) -> Any:  # PEP 562: only for names the module lacks
            if name in _MODULE_ATTRIBUTES:
                return _registered_class(name)
            if previous is not None:
                return previous(name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__  # type: ignore[method-assign]  # a module-level __getattr__ (PEP 562), set at run time
        module._inductor_backend_init = register  # type: ignore[attr-defined]  # 2.15
    elif hook != "import":
        raise ValueError(f"unknown inductor hook {hook!r}; known: {', '.join(HOOKS)}")
    # Every era: register as soon as inductor's graph module exists, before a compile asks.
    # Asked through the device module instead, 2.5-2.14 register npu's classes a second time
    # themselves, without npu's device pass, and the pass's key (_cache_key_pass) is lost.
    after_import("torch._inductor.graph", register)
