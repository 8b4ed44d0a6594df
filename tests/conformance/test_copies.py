"""Copies between host and device, conversions, and pinned memory."""

import warnings

import pytest
import torch

from .support import requires, same


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.bool], ids=str)
def test_round_trip(npu, dtype):
    c = (torch.randn(3, 5) * 10).to(dtype)
    d = c.to(npu)
    assert d.device.type == "npu" and d.dtype == dtype
    same(d, c)
    back = d.cpu()
    assert back.device.type == "cpu"
    assert torch.equal(back, c)


def test_non_blocking_copies(npu):
    c = torch.randn(64)
    d = c.to(npu, non_blocking=True)
    torch.npu.synchronize()
    same(d, c)
    assert torch.equal(d.to("cpu", non_blocking=True), c)


def test_dtype_and_device_in_one_to(npu):
    c = torch.randn(4, 4)
    d = c.to(npu, torch.float64)
    assert d.dtype == torch.float64
    same(d, c.double())
    same(d.to(torch.bfloat16), c.double().to(torch.bfloat16))


def test_copy_into_existing_tensors(npu):
    c = torch.randn(3, 3)
    d = torch.empty(3, 3, device=npu)
    d.copy_(c)
    same(d, c)
    host = torch.empty(3, 3)
    host.copy_(d.t())
    assert torch.equal(host, c.t())
    d2 = torch.zeros(3, 3, device=npu, dtype=torch.float64)
    d2.copy_(d)  # device to device with conversion
    same(d2, c.double())


def test_tensor_npu_method_and_clone(npu):
    c = torch.arange(12.0).reshape(3, 4)
    d = c.npu()
    assert d.device.type == "npu"
    same(d.clone(), c)
    same(c.t().npu(), c.t())  # non-contiguous source


@requires("pinned_memory")
def test_pinned_memory(npu):
    # pin_memory(device)/is_pinned(device) is the API up to 2.4; later releases deprecate
    # the argument (the device comes from the accelerator) but keep it working.
    c = torch.randn(16)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The argument 'device'")
        pinned = c.pin_memory(npu)
        assert pinned.is_pinned(npu)
        assert not c.is_pinned(npu)
    assert torch.equal(pinned, c)
    same(pinned.to(npu, non_blocking=True), c)
