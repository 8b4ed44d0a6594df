"""torch.accelerator and torch.get_device_module, where the release has them."""

import torch

from .support import requires


@requires("accelerator")
def test_accelerator_api(npu):
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "npu"
    assert torch.accelerator.device_count() == torch.npu.device_count()
    torch.accelerator.synchronize()


@requires("accelerator_memory")
def test_accelerator_memory_stats(npu):
    before = torch.accelerator.memory_allocated()
    x = torch.empty(1 << 16, dtype=torch.uint8, device=npu)
    assert torch.accelerator.memory_allocated() - before == 1 << 16
    del x


@requires("get_device_module")
def test_get_device_module(npu):
    assert torch.get_device_module("npu") is torch.npu
