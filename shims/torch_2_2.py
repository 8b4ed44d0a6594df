"""torch 2.2: CPU's ``scaled_dot_product_attention`` asks its kernel chooser (and takes its
flash kernel for most inputs), but only CUDA, CPU and HIP ask: every other device gets the
math composite until torch 2.4 asks any device that registered a chooser. Attention on
npu therefore agrees with CPU to float rounding here, not bit for bit."""

from __future__ import annotations

from .torch_2_1 import Shim as _Previous


class Shim(_Previous):
    era = "2.2"
    capabilities = {
        **_Previous.capabilities,
        "sdpa_cpu_kernels": "torch 2.2-2.3 send devices other than CUDA/CPU/HIP to SDPA's math path while CPU "
        "takes its flash kernel (torch 2.4 asks the device's chooser)",
    }
