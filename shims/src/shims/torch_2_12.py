"""torch 2.12: ``torch.accelerator.empty_host_cache()``, answered by the host allocator
registered since 2.8 (before that registration it crashed the process), and the
registry for a PrivateUse1 Kineto activity profiler (``REGISTER_PRIVATEUSE1_PROFILER``),
through which the C++ core hands the profiler one device event per npu op
(``csrc/kineto_plugin.cpp``, gate ADAPTER_KINETO_PLUGIN): ``ProfilerActivity.PrivateUse1``."""

from __future__ import annotations

from .torch_2_9 import Shim as _Previous


class Shim(_Previous):
    era = "2.12"
    capabilities = {
        k: v for k, v in _Previous.capabilities.items() if k not in ("empty_host_cache", "profiler_activity")
    }
