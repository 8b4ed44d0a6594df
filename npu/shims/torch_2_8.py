"""torch 2.8: the host-allocator registry (``at::getHostAllocator``): the C++ core
registers the device's pinned allocator there (gate ADAPTER_HOST_ALLOCATOR_REGISTRY)."""

from __future__ import annotations

from .torch_2_7 import Shim as _Previous


class Shim(_Previous):
    era = "2.8"
    capabilities = {k: v for k, v in _Previous.capabilities.items() if k != "host_allocator"}
