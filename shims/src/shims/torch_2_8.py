"""torch 2.8: the host-allocator registry (``at::getHostAllocator``): the C++ core
registers the device's pinned allocator there (gate ADAPTER_HOST_ALLOCATOR_REGISTRY). The profiler's key_averages() shows npu op
times again (first release verified after 2.4)."""

from __future__ import annotations

from .torch_2_7 import Shim as _Previous


class Shim(_Previous):
    era = "2.8"
    capabilities = {
        k: v for k, v in _Previous.capabilities.items() if k not in ("host_allocator", "profiler_device_time")
    }
