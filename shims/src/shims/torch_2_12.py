"""torch 2.12: ``torch.accelerator.empty_host_cache()``, answered by the host allocator
registered since 2.8 (before that registration it crashed the process), and the
Kineto activity-profiler plugin registry for PrivateUse1, which the device does not use
(declared absent below, with the reason)."""

from __future__ import annotations

from .torch_2_9 import Shim as _Previous


class Shim(_Previous):
    era = "2.12"
    capabilities = {
        **{k: v for k, v in _Previous.capabilities.items() if k != "empty_host_cache"},
        "profiler_activity": "not built: a Kineto plugin (REGISTER_PRIVATEUSE1_PROFILER) is compiled against "
        "libkineto's IActivityProfiler with USE_KINETO, which the core does not do yet; the profiler stubs time "
        "npu ops instead (capability profiler)",
    }
