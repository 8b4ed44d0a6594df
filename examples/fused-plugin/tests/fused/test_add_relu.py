"""tiny_fused's op on tiny-openreg's device gives what the same computation gives on CPU, its
output comes from the adapter's allocator, and the op library was built for this stack."""

import importlib.metadata as metadata

import pytest
import tiny_fused
import tiny_openreg
import torch
from packaging.requirements import Requirement


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("alpha", [1.0, -0.5, 2.5])
def test_the_device_kernel_agrees_with_the_same_computation_on_cpu(dtype, alpha):
    generator = torch.Generator().manual_seed(57)
    a = torch.randn(3, 5, generator=generator, dtype=dtype)
    b = torch.randn(3, 5, generator=generator, dtype=dtype)
    got = tiny_fused.add_relu(a.to("tinyreg"), b.to("tinyreg"), alpha)
    assert got.device.type == "tinyreg"
    torch.testing.assert_close(got.cpu(), torch.relu(a + alpha * b))


def test_the_device_kernel_broadcasts_and_reads_strided_inputs():
    a = torch.randn(4, 1)
    b = torch.randn(6, 4).t()  # not contiguous
    got = tiny_fused.add_relu(a.to("tinyreg"), b.to("tinyreg"))
    torch.testing.assert_close(got.cpu(), torch.relu(a + b))


def test_the_cpu_kernel_is_the_reference_computation():
    a, b = torch.randn(8), torch.randn(8)
    torch.testing.assert_close(tiny_fused.add_relu(a, b, 3.0), torch.relu(a + 3.0 * b))


def test_the_output_is_allocated_by_the_adapters_allocator():
    a = torch.ones(16).to("tinyreg")
    before = tiny_openreg.allocations()
    tiny_fused.add_relu(a, a)
    assert tiny_openreg.allocations() == before + 1


def test_the_wheel_says_which_torch_and_adapter_it_was_built_for():
    pins = {r.name: r.specifier for r in map(Requirement, metadata.requires("tiny-fused") or ())}
    assert torch.__version__.split("+")[0] in pins["torch"]
    assert metadata.version("tiny-openreg") in pins["tiny-openreg"]
