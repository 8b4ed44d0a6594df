"""Device memory: real pointers and statistics."""

import torch


def test_data_ptr_is_real_and_stable(npu):
    d = torch.randn(256, device=npu)
    p = d.data_ptr()
    assert p != 0
    d.add_(1)
    assert d.data_ptr() == p
    assert d[10:].data_ptr() == p + 10 * d.element_size()


def test_memory_stats_rise_and_fall(npu):
    before = torch.npu.memory_allocated()
    torch.npu.reset_peak_memory_stats()
    x = torch.empty(1 << 20, dtype=torch.uint8, device=npu)
    assert torch.npu.memory_allocated() - before == 1 << 20
    y = x.float()  # 4 MiB more
    peak = torch.npu.max_memory_allocated()
    assert peak >= before + 5 * (1 << 20)
    del x, y
    assert torch.npu.memory_allocated() == before
    assert torch.npu.max_memory_allocated() == peak
    torch.npu.reset_peak_memory_stats()
    assert torch.npu.max_memory_allocated() == before


def test_memory_is_counted_per_device(npu):
    before0, before1 = torch.npu.memory_allocated(0), torch.npu.memory_allocated(1)
    x = torch.empty(4096, dtype=torch.uint8, device="npu:1")
    assert torch.npu.memory_allocated(1) - before1 == 4096
    assert torch.npu.memory_allocated(0) == before0
    del x
    assert torch.npu.memory_allocated(1) == before1


def test_resizing_an_npu_1_tensor_allocates_on_npu_1():
    """resize_ grows a tensor into new storage: it belongs to the tensor's device, not the
    current one (npu:0), in the storage's device and in the per-device statistics."""
    cpu = torch.arange(8, dtype=torch.float32)
    x = cpu.to("npu:1")
    before0, before1 = torch.npu.memory_allocated(0), torch.npu.memory_allocated(1)
    x.resize_(1024)
    cpu.resize_(1024)
    assert x.device == torch.device("npu:1")
    assert x.untyped_storage().device == torch.device("npu:1")
    assert torch.npu.memory_allocated(1) - before1 == (1024 - 8) * 4  # the new block, less the old one
    assert torch.npu.memory_allocated(0) == before0
    assert torch.equal(x[:8].cpu(), cpu[:8])  # the old elements are kept, as on CPU
    x.add_(1)  # the grown tensor computes on npu:1
    assert x.device == torch.device("npu:1")
    assert torch.npu.memory_allocated(0) == before0
