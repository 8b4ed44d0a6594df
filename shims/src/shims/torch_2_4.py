"""torch 2.4: torch.autocast keeps the PrivateUse1 autocast state itself (the device
module needs only ``get_amp_supported_dtype``), checkpointing uses ``torch.autocast``,
and ``torch.get_device_module`` and ``add_safe_globals`` exist. SDPA asks the device's kernel
chooser, so npu runs CPU's attention kernels (C++ gate ADAPTER_SDPA_CHOICE_STUB). Inductor
takes a C++ wrapper class per device (``cpp_wrapper=True``). DTensor tensor parallel keeps
replicated parameters in sync across ranks (first release verified). Dynamo supports
Python 3.12 (2.2-2.3 refused it)."""

from __future__ import annotations

import types
from typing import Dict, Tuple

from .torch_2_3 import Shim as _Previous


class Shim(_Previous):
    era = "2.4"
    capabilities = {
        **{
            k: v
            for k, v in _Previous.capabilities.items()
            if k
            not in (
                "get_device_module",
                "safe_globals",
                "sdpa_cpu_kernels",
                "inductor_cpp_wrapper",
            )
        },
        "profiler_device_time": "torch 2.4-2.7's key_averages() report 0 device time for npu ops although the "
        "stubs record their events (measured on 2.4.1 and 2.6.0; works on 2.8)",
    }
    on_python: Dict[str, Tuple[str, str]] = {}

    def extend_device_module(self, module: types.ModuleType) -> None:
        """The five-function autocast protocol and ``amp.autocast`` are gone."""
