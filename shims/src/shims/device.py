"""``torch.npu``: the device module of the reference adapter.

Registered under the device's name at activation (``torch._register_device_module``),
so torch's own code (``torch.manual_seed``, checkpointing, ``torch.autocast``,
``torch.get_device_module``) finds it like ``torch.cuda``. Everything here is the same on
every torch release; what an era adds is attached by its shim.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Union

import torch

from . import properties as _properties
from . import streams as _streams

# The device queries and host memory functions of properties.py, re-exported: torch.npu is
# this module, and `import x as x` marks each as part of its API for linters and type checkers.
from .properties import get_device_capability as get_device_capability
from .properties import get_device_properties as get_device_properties
from .properties import host_memory_stats as host_memory_stats
from .properties import mem_get_info as mem_get_info
from .properties import reset_accumulated_host_memory_stats as reset_accumulated_host_memory_stats
from .properties import reset_peak_host_memory_stats as reset_peak_host_memory_stats
from .streams import Event, Stream, StreamContext

_core: Any = None  # the C++ core, set by the activation
default_generators: Sequence[torch.Generator] = ()

DeviceLike = Union[None, int, str, torch.device]

__all__ = [
    "is_available",
    "is_initialized",
    "device_count",
    "current_device",
    "set_device",
    "device",
    "synchronize",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "get_rng_state_all",
    "set_rng_state_all",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "reset_accumulated_memory_stats",
    "empty_cache",
    "get_amp_supported_dtype",
    "is_bf16_supported",
    "get_device_name",
    "default_generators",
    "Stream",
    "Event",
    "StreamContext",
    "stream",
    "current_stream",
    "default_stream",
    "set_stream",
    *_properties.__all__[1:],  # device queries and host memory (properties.py)
]


def _index(where: DeviceLike) -> int:
    """A device index from None (the current device), an int, 'npu:1' or a torch.device."""
    if where is None:
        return _core.current_device()
    if isinstance(where, int):
        return where
    dev = torch.device(where)
    if dev.type != torch._C._get_privateuse1_backend_name():
        raise ValueError(f"expected a {torch._C._get_privateuse1_backend_name()} device, got {dev}")
    return _core.current_device() if dev.index is None else dev.index


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return _core is not None


def _lazy_init() -> None:
    """Nothing to initialise lazily: the device is ready once activated."""


def _is_in_bad_fork() -> bool:
    return False  # host memory survives fork


def device_count() -> int:
    return _core.device_count()


def current_device() -> int:
    return _core.current_device()


def set_device(where: DeviceLike) -> None:
    _core.set_device(_index(where))


class device:
    """Context manager that makes a device current, like ``torch.cuda.device``."""

    def __init__(self, where: DeviceLike) -> None:
        self.index = _index(where)
        self.previous = -1

    def __enter__(self) -> None:
        self.previous = _core.current_device()
        _core.set_device(self.index)

    def __exit__(self, *exc: object) -> None:
        _core.set_device(self.previous)


def synchronize(where: DeviceLike = None) -> None:
    """Work is synchronous on this device; validates the index only."""
    index = _index(where)
    if not 0 <= index < device_count():
        raise RuntimeError(f"invalid device index {index}")


def current_stream(where: DeviceLike = None) -> Stream:
    """The current stream of a device (this thread's)."""
    index = _index(where)
    return Stream._wrap(_core.current_stream_id(index), index)


def default_stream(where: DeviceLike = None) -> Stream:
    return Stream._wrap(0, _index(where))


def set_stream(stream: torch.Stream) -> None:
    """Make ``stream`` the current stream of its device."""
    if stream is not None:
        _core.set_current_stream_id(stream.device_index, stream.stream_id)


def stream(stream: torch.Stream | None) -> StreamContext:
    """Context manager: ``with torch.npu.stream(s):`` runs its body with ``s`` current."""
    return StreamContext(stream)


def manual_seed(seed: int) -> None:
    default_generators[current_device()].manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for generator in default_generators:
        generator.manual_seed(int(seed))


def seed() -> None:
    default_generators[current_device()].seed()


def seed_all() -> None:
    new = default_generators[0].seed()
    for generator in default_generators[1:]:
        generator.manual_seed(new)


def initial_seed() -> int:
    return default_generators[current_device()].initial_seed()


def get_rng_state(where: DeviceLike = None) -> torch.Tensor:
    return default_generators[_index(where)].get_state()


def set_rng_state(state: torch.Tensor, where: DeviceLike = None) -> None:
    default_generators[_index(where)].set_state(state)


def get_rng_state_all() -> List[torch.Tensor]:
    return [g.get_state() for g in default_generators]


def set_rng_state_all(states: Sequence[torch.Tensor]) -> None:
    for generator, state in zip(default_generators, states):
        generator.set_state(state)


def memory_stats(where: DeviceLike = None) -> Dict[str, int]:
    return dict(_core.memory_stats(_index(where)))


def memory_allocated(where: DeviceLike = None) -> int:
    return _core.memory_stats(_index(where))["allocated_bytes.all.current"]


def max_memory_allocated(where: DeviceLike = None) -> int:
    return _core.memory_stats(_index(where))["allocated_bytes.all.peak"]


memory_reserved = memory_allocated  # nothing is cached: reserved == allocated
max_memory_reserved = max_memory_allocated


def reset_peak_memory_stats(where: DeviceLike = None) -> None:
    _core.reset_peak_memory_stats(_index(where))


def reset_accumulated_memory_stats(where: DeviceLike = None) -> None:
    _core.reset_accumulated_memory_stats(_index(where))


def empty_cache() -> None:
    """Nothing is cached: freed memory goes straight back to the host."""


def get_amp_supported_dtype() -> List[torch.dtype]:
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def get_device_name(where: DeviceLike = None) -> str:
    return f"adapter-matrix reference npu:{_index(where)} (host memory)"


def _attach(core: Any) -> None:
    """Bind the C++ core (called once by the activation)."""
    global _core, default_generators
    _core = core
    _streams._core = core
    default_generators = tuple(core.default_generator(i) for i in range(core.device_count()))
