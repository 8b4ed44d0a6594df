"""What the device says about itself: properties, capability, free memory, host memory.

The device is host memory driven by the host's CPU kernels, so every answer is a fact of
the host, read when asked (memory changes): total and available physical memory, the CPUs
this process may run on, the CPU's model name. Shaped like ``torch.cuda``'s functions,
because code written for accelerators (FSDP's memory checks, inductor's heuristics,
training scripts' logging) calls them by those names on ``torch.get_device_module()``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, NamedTuple, Tuple

__all__ = [
    "DeviceProperties",
    "get_device_properties",
    "get_device_capability",
    "mem_get_info",
    "host_memory_stats",
    "reset_peak_host_memory_stats",
    "reset_accumulated_host_memory_stats",
]

# The device's own version, reported where CUDA reports its compute capability. It is not
# a CUDA capability: code that compares it with (8, 0) to decide on bf16 or TF32 must not
# take CUDA paths for this device, and (1, 0) is below every CUDA architecture it tests for.
CAPABILITY: Tuple[int, int] = (1, 0)


class DeviceProperties(NamedTuple):
    """``torch.npu.get_device_properties(i)``: the fields torch's generic code reads of a device."""

    name: str
    total_memory: int  # bytes of physical host memory
    major: int
    minor: int
    multi_processor_count: int  # CPUs this process may run on (the device's parallelism)
    is_integrated: bool  # memory is shared with the host, as on an integrated GPU
    index: int  # type: ignore[assignment]  # the field torch's device properties name so; shadows tuple.index


def _page_bytes(what: str) -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf(what)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _index(where: Any) -> int:
    from . import device

    index = device._index(where)
    if not 0 <= index < device.device_count():
        raise RuntimeError(
            f"Invalid device index {index} for the npu device: there are {device.device_count()} devices"
        )
    return index


def get_device_properties(where: Any = None) -> DeviceProperties:
    from . import device

    index = _index(where)
    major, minor = CAPABILITY
    return DeviceProperties(
        name=f"{device.get_device_name(index)} on {_cpu_model()}",
        total_memory=_page_bytes("SC_PHYS_PAGES"),
        major=major,
        minor=minor,
        multi_processor_count=_usable_cpus(),
        is_integrated=True,
        index=index,
    )


def get_device_capability(where: Any = None) -> Tuple[int, int]:
    """``(major, minor)`` of the device (see ``CAPABILITY``: not a CUDA capability)."""
    _index(where)
    return CAPABILITY


def mem_get_info(where: Any = None) -> Tuple[int, int]:
    """``(free, total)`` bytes: available and total physical host memory (device memory is host memory)."""
    _index(where)
    return _page_bytes("SC_AVPHYS_PAGES"), _page_bytes("SC_PHYS_PAGES")


def host_memory_stats() -> Dict[str, int]:
    """Counts of the pinned host allocator (``pin_memory()``), keyed like ``torch.cuda.host_memory_stats``."""
    from . import device

    return dict(device._core.host_memory_stats())


def reset_peak_host_memory_stats() -> None:
    from . import device

    device._core.reset_host_memory_stats(peak=True, accumulated=False)


def reset_accumulated_host_memory_stats() -> None:
    from . import device

    device._core.reset_host_memory_stats(peak=False, accumulated=True)
