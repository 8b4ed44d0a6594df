"""``torch.distributed`` for npu tensors: the ``npu_gloo`` process-group backend.

Device memory is host memory, so collectives need no device transport: each call hands
gloo CPU tensors that alias the device tensors' memory (no copy), so gloo reads and
writes device memory in place. A collective finishes before the call returns, as
everything on this device does; its ``Work`` (made by the C++ core) is complete and its
future holds the caller's device tensors (DDP reads its buckets back from there). CPU tensors pass
through to gloo unchanged, so one group serves both devices.

The backend is a Python ``ProcessGroup``: the form every torch release from 2.1 accepts
from a backend's creator function (C++ callers such as DDP's reducer reach it through
torch's Python-process-group trampoline). How ``init_process_group()`` without a
backend finds it differs by release; the era shims register it (``register``).
"""

from __future__ import annotations

import datetime
import inspect
from typing import Any, Callable, List

import torch

from ._after_import import after_import

__all__ = ["BACKEND", "ProcessGroupNpu", "register", "create"]

BACKEND = "npu_gloo"

_core: Any = None  # the C++ core (host_alias), set by the shim


def _is_device_tensor(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.device.type == "npu"


class _Aliases:
    """Host aliases made for one call (kept alive until the collective is done)."""

    def __init__(self) -> None:
        self.keep: List[torch.Tensor] = []

    def host(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            if not _is_device_tensor(value):
                return value
            alias = _core.host_alias(value)
            self.keep.append(alias)
            return alias
        if isinstance(value, (list, tuple)):
            return type(value)(self.host(v) for v in value)
        return value


def _flat(value: Any) -> List[torch.Tensor]:
    """The tensors of a collective's first argument (its outputs, or its in-place tensors)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat(v)]
    return []


# Collectives, by the name ProcessGroup calls them, that take tensors (or lists of them)
# and return a Work. Each runs on host aliases and then stands for the device tensors.
_COLLECTIVES = (
    "allreduce",
    "allreduce_coalesced",
    "broadcast",
    "allgather",
    "allgather_coalesced",
    "reduce",
    "gather",
    "scatter",
    "alltoall",
    "alltoall_base",
    "send",
    "recv",
    "recv_anysource",
)


def _make_collective(name: str) -> Callable[..., Any]:
    def collective(self: ProcessGroupNpu, *args: Any, **kwargs: Any) -> Any:
        aliases = _Aliases()
        host_args = [aliases.host(a) for a in args]
        getattr(self._gloo, name)(*host_args, **kwargs).wait()
        return self._done(_flat(args[0]) if args else [])

    collective.__name__ = name
    collective.__doc__ = f"gloo's {name}, on host aliases of the device tensors."
    return collective


def _reduce_scatter_by_allreduce(
    gloo: Any, rank: int, outputs: List[torch.Tensor], inputs: List[List[torch.Tensor]], opts: Any
) -> None:
    """reduce_scatter for gloo builds without it (torch 2.1-2.7 at least): rank r's output is
    the reduction of every rank's contribution r: all-reduce each index in turn, keep r."""
    import torch.distributed as dist

    allreduce_opts = dist.AllreduceOptions()
    allreduce_opts.reduceOp = opts.reduceOp
    for output, contributions in zip(outputs, inputs):
        for index, contribution in enumerate(contributions):  # every rank, the same sequence
            reduced = contribution.clone()
            gloo.allreduce([reduced], allreduce_opts).wait()  # one tensor: gloo sums a list's tensors together
            if index == rank:
                output.copy_(reduced)


def _process_group_class() -> type:
    import torch.distributed as dist

    class ProcessGroupNpu(dist.ProcessGroup):
        """gloo over the host memory behind npu tensors (and CPU tensors as they are)."""

        def __init__(self, store: Any, rank: int, size: int, timeout: datetime.timedelta) -> None:
            super().__init__(rank, size)
            self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
            # Callers that ask the group for its backend of a device type (c10d's dispatcher
            # ops: FSDP, DTensor's functional collectives) and the group's name (DeviceMesh)
            # need a C++ backend registered on it; it works like this class (gloo_backend.cpp).
            self._backend = _core.gloo_backend(self._gloo)
            for device in ("npu", "cpu"):
                self._register_backend(torch.device(device), dist.ProcessGroup.BackendType.CUSTOM, self._backend)
            # torch 2.15 looks the default backend up by type and fails when none is set (2.1 has no setter)
            if hasattr(self, "_set_default_backend"):
                self._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)

        def getBackendName(self) -> str:
            return BACKEND

        def name(self) -> str:
            return BACKEND

        def _done(self, result: List[torch.Tensor]) -> Any:
            return _core.done_work(result)  # a C++ Work: see shims/csrc/distributed.cpp

        def shutdown(self) -> None:
            # destroy_process_group() shuts its groups down (torch 2.x); gloo joins its worker
            # threads only in its destructor, so let it go now, while the interpreter is alive,
            # rather than during interpreter exit.
            self._gloo = None
            _core.release_gloo(self._backend)

        def barrier(self, *args: Any, **kwargs: Any) -> Any:
            self._gloo.barrier().wait()
            return self._done([])

        def monitored_barrier(self, *args: Any, **kwargs: Any) -> None:
            self._gloo.barrier().wait()

        # gloo's Python binding lacks the two coalesced tensor collectives (DTensor's
        # functional collectives and FSDP2 call them): one tensor collective per pair.
        def allgather_into_tensor_coalesced(
            self, outputs: List[torch.Tensor], inputs: List[torch.Tensor], opts: Any = None
        ) -> Any:
            for output, input in zip(outputs, inputs):
                self._allgather_base(output, input, *([] if opts is None else [opts]))
            return self._done(outputs)

        def reduce_scatter_tensor_coalesced(
            self, outputs: List[torch.Tensor], inputs: List[torch.Tensor], opts: Any = None
        ) -> Any:
            for output, input in zip(outputs, inputs):
                self._reduce_scatter_base(output, input, opts)
            return self._done(outputs)

        def _allgather_base(self, output: torch.Tensor, input: torch.Tensor, opts: Any = None) -> Any:
            aliases = _Aliases()
            host_out, host_in = aliases.host(output), aliases.host(input)
            try:
                self._gloo._allgather_base(host_out, host_in, *([] if opts is None else [opts])).wait()
            except RuntimeError as exc:
                if "no support for _allgather_base" not in str(exc):
                    raise
                # gloo of torch 2.1-2.2: gather into the output's chunks, one per rank
                self._gloo.allgather([list(host_out.view(-1).chunk(self.size()))], [host_in.view(-1)]).wait()
            return self._done([output])

        def _reduce_scatter_base(self, output: torch.Tensor, input: torch.Tensor, opts: Any = None) -> Any:
            import torch.distributed as dist

            opts = dist.ReduceScatterOptions() if opts is None else opts
            aliases = _Aliases()
            host_out, host_in = aliases.host(output), aliases.host(input)
            try:
                self._gloo._reduce_scatter_base(host_out, host_in, opts).wait()
            except RuntimeError as exc:
                if "does not support" not in str(exc):
                    raise
                chunks = list(host_in.flatten().chunk(self.size()))
                _reduce_scatter_by_allreduce(self._gloo, self.rank(), [host_out.view(-1)], [chunks], opts)
            return self._done([output])

        def reduce_scatter(
            self, outputs: List[torch.Tensor], inputs: List[List[torch.Tensor]], opts: Any = None
        ) -> Any:
            import torch.distributed as dist

            opts = dist.ReduceScatterOptions() if opts is None else opts
            aliases = _Aliases()
            host_out, host_in = aliases.host(outputs), aliases.host(inputs)
            try:
                self._gloo.reduce_scatter(host_out, host_in, opts).wait()
            except RuntimeError as exc:
                if "does not support reduce_scatter" not in str(exc):
                    raise
                _reduce_scatter_by_allreduce(self._gloo, self.rank(), host_out, host_in, opts)
            return self._done(_flat(outputs))

    for name in _COLLECTIVES:
        setattr(ProcessGroupNpu, name, _make_collective(name))
    after_import("torch._dynamo", lambda: _outside_dynamo(ProcessGroupNpu))
    return ProcessGroupNpu


def _outside_dynamo(cls: type) -> None:
    """Run the group's methods without torch.compile. C++ callers enter them from compiled
    code (DDP's reducer rebuilding its buckets in a compiled forward), and dynamo traced
    them there and failed on the group's own attributes ("Member '_gloo' is not registered
    for this opaque object type", torch 2.13). Done once torch._dynamo is imported, which
    a job that never compiles does not pay for."""
    import torch._dynamo

    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value) and not name.startswith("__"):
            setattr(cls, name, torch._dynamo.disable(value))


ProcessGroupNpu: Any = None


def create(store: Any, rank: int, size: int, timeout: datetime.timedelta) -> Any:
    """The creator function ``Backend.register_backend`` is given."""
    global ProcessGroupNpu
    if ProcessGroupNpu is None:
        ProcessGroupNpu = _process_group_class()
    return ProcessGroupNpu(store, rank, size, timeout)


def register(core: Any = None, **options: Any) -> bool:
    """Register ``npu_gloo`` for the npu device (once); False when torch has no distributed."""
    global _core
    if core is not None:
        _core = core
    import torch.distributed as dist

    if not dist.is_available() or not dist.is_gloo_available():
        return False
    if BACKEND.upper() in dist.Backend._plugins:
        return True
    dist.Backend.register_backend(BACKEND, create, devices=["npu"], **options)
    return True


def _entry_point() -> None:
    """The ``torch.distributed.backends`` entry point (torch 2.14+): activate the device,
    which registers the backend."""
    import shims  # noqa: F401 - activation registers the backend
