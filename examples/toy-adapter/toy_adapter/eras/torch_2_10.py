"""torch 2.10 and later: register the ``toy`` device's name, module and generated methods."""

import types

DEVICE = "toy"


def activate() -> None:
    import torch

    if torch._C._get_privateuse1_backend_name() != DEVICE:
        torch.utils.rename_privateuse1_backend(DEVICE)
    module = types.ModuleType(f"torch.{DEVICE}")
    module.is_available = lambda: False  # no kernels and no memory: a skeleton, not a device
    module.device_count = lambda: 0
    torch._register_device_module(DEVICE, module)
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=False)
