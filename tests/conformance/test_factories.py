"""Factories on the device equal their CPU counterparts."""

import pytest
import torch

from .support import same

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_filled_factories(npu, dtype):
    same(torch.zeros(3, 4, dtype=dtype, device=npu), torch.zeros(3, 4, dtype=dtype))
    same(torch.ones(2, 5, dtype=dtype, device=npu), torch.ones(2, 5, dtype=dtype))
    same(torch.full((3,), 1, dtype=dtype, device=npu), torch.full((3,), 1, dtype=dtype))
    e = torch.empty(4, 3, dtype=dtype, device=npu)
    assert e.shape == (4, 3) and e.dtype == dtype and e.device.type == "npu"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64], ids=str)
def test_arange_and_eye(npu, dtype):
    same(torch.arange(5, dtype=dtype, device=npu), torch.arange(5, dtype=dtype))
    same(torch.arange(1, 10, 3, dtype=dtype, device=npu), torch.arange(1, 10, 3, dtype=dtype))
    same(torch.eye(3, dtype=dtype, device=npu), torch.eye(3, dtype=dtype))
    same(torch.eye(2, 4, dtype=dtype, device=npu), torch.eye(2, 4, dtype=dtype))


def test_linspace_and_tensor_from_data(npu):
    same(torch.linspace(0, 1, 7, device=npu), torch.linspace(0, 1, 7))
    data = [[1.5, -2.0], [3.25, 4.0]]
    same(torch.tensor(data, device=npu), torch.tensor(data))
    same(torch.tensor([True, False], device=npu), torch.tensor([True, False]))
    same(torch.tensor(7, device=npu), torch.tensor(7))


def test_randn_matches_cpu_with_the_same_seed(npu):
    torch.npu.manual_seed(0)
    a = torch.randn(4, 4, device=npu)
    torch.manual_seed(0)
    same(a, torch.randn(4, 4))


def test_like_factories_keep_device(npu):
    x = torch.randn(2, 3, device=npu)
    for made in (
        torch.zeros_like(x),
        torch.ones_like(x),
        torch.empty_like(x),
        torch.full_like(x, 2.0),
        torch.rand_like(x),
    ):
        assert made.device == x.device and made.shape == x.shape
