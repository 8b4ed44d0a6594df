"""Device strings and the torch.npu module."""

import os

import pytest
import torch

from .support import same


def test_device_strings():
    assert torch.device("npu").type == "npu"
    assert str(torch.device("npu:1")) == "npu:1"
    assert torch.ones(1, device="npu:0").device == torch.device("npu:0")
    assert torch.ones(1, device="npu").device.index == 0


def test_module_basics():
    assert torch.npu.is_available()
    expected = int(os.environ.get("ADAPTER_MATRIX_DEVICE_COUNT", "2"))
    assert torch.npu.device_count() == expected >= 2
    assert torch.npu.current_device() == 0
    torch.npu.synchronize()
    assert torch._C._get_privateuse1_backend_name() == "npu"


def test_set_device_and_context_manager():
    torch.npu.set_device(1)
    assert torch.npu.current_device() == 1
    assert torch.empty(1, device="npu").device == torch.device("npu:1")
    torch.npu.set_device("npu:0")
    with torch.npu.device(1):
        assert torch.npu.current_device() == 1
        t = torch.zeros(2, device="npu")
    assert torch.npu.current_device() == 0
    assert t.device == torch.device("npu:1")


def test_tensors_on_device_1_compute_there():
    a = torch.arange(6.0).reshape(2, 3)
    d = a.to("npu:1")
    out = d * 2 + 1
    assert out.device == torch.device("npu:1")
    same(out, a * 2 + 1)
    moved = d.to("npu:0")
    assert moved.device == torch.device("npu:0")
    same(moved, a)


def test_invalid_device_index_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"Invalid device index|invalid device"):
        torch.empty(1, device=f"npu:{torch.npu.device_count()}")


def test_manual_seed_through_torch_manual_seed():
    torch.manual_seed(123)
    a = torch.rand(5, device="npu")
    torch.manual_seed(123)
    b = torch.rand(5, device="npu")
    same(a, b.cpu())


def test_streams_and_events_like_cuda(npu):
    default = torch.npu.current_stream()
    assert default == torch.npu.default_stream() and default.stream_id == 0
    s = torch.npu.Stream()
    assert isinstance(s, torch.Stream) and s != default and s.device_index == torch.npu.current_device()
    with torch.npu.stream(s):
        assert torch.npu.current_stream() == s
        y = torch.ones(3, device=npu) * 2
        y.record_stream(s)  # accepted: memory is never reused while a stream could use it
    assert torch.npu.current_stream() == default
    torch.npu.set_stream(s)
    assert torch.npu.current_stream() == s
    torch.npu.set_stream(default)
    s.wait_stream(default)
    assert s.query() and s.record_event().query()
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    (torch.randn(64, 64, device=npu) @ torch.randn(64, 64, device=npu)).sum().item()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    torch.npu.synchronize()
    assert torch.npu.Stream(device=1).device_index == 1
