"""Random numbers: seeding, generators, states."""

import torch

from .support import requires, same


def test_manual_seed_reproduces_and_matches_cpu(npu):
    torch.npu.manual_seed(42)
    a = torch.randn(100, device=npu)
    torch.npu.manual_seed(42)
    b = torch.randn(100, device=npu)
    same(a, b.cpu())
    torch.manual_seed(42)
    same(a, torch.randn(100))


def test_device_stream_is_independent_of_the_cpu_generator(npu):
    # (torch.manual_seed seeds every device, so only torch.npu.manual_seed is used here)
    torch.npu.manual_seed(5)
    torch.rand(100)  # draws from the CPU generator in between...
    a = torch.rand(10, device=npu)
    torch.npu.manual_seed(5)
    b = torch.rand(10, device=npu)  # ...do not shift the device's stream
    same(a, b.cpu())


@requires("generator")
def test_device_generator(npu):
    g = torch.Generator(device=npu)
    assert g.device.type == "npu"
    g.manual_seed(9)
    a = torch.randn(8, device=npu, generator=g)
    g.manual_seed(9)
    b = torch.randn(8, device=npu, generator=g)
    same(a, b.cpu())
    cg = torch.Generator().manual_seed(9)
    same(a, torch.randn(8, generator=cg))


def test_rng_state_round_trip(npu):
    torch.npu.manual_seed(3)
    state = torch.npu.get_rng_state()
    a = torch.rand(6, device=npu)
    torch.npu.set_rng_state(state)
    same(torch.rand(6, device=npu), a.cpu())


def test_devices_have_their_own_generators(npu):
    torch.npu.manual_seed_all(4)
    a = torch.rand(5, device="npu:0")
    b = torch.rand(5, device="npu:1")
    same(a, b.cpu())  # same seed, separate streams
    assert len(torch.npu.default_generators) == torch.npu.device_count()


def test_fork_rng_restores_the_device_state(npu):
    torch.npu.manual_seed(8)
    expected = torch.rand(4, device=npu)
    torch.npu.manual_seed(8)
    with torch.random.fork_rng(devices=[0], device_type="npu"):
        torch.rand(100, device=npu)
    same(torch.rand(4, device=npu), expected.cpu())
