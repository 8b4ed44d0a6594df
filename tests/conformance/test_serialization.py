"""torch.save / torch.load of device tensors and modules."""

import io

import torch

from .support import requires, same

pytestmark = requires("serialization")


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def test_save_load_to_npu_and_cpu(npu):
    c = torch.randn(3, 4)
    d = c.to(npu)
    back = _round_trip({"t": d, "view": d[1:]}, map_location="npu")
    assert back["t"].device.type == "npu"
    same(back["t"], c)
    same(back["view"], c[1:])
    on_cpu = _round_trip({"t": d}, map_location="cpu")
    assert on_cpu["t"].device.type == "cpu" and torch.equal(on_cpu["t"], c)
    kept = _round_trip(d)  # no map_location: back where it was saved
    assert kept.device.type == "npu"
    same(kept, c)


def test_cpu_checkpoint_loads_onto_the_device(npu):
    c = torch.arange(10.0)
    d = _round_trip(c, map_location="npu")
    assert d.device == torch.device("npu:0")
    same(d, c)
    d1 = _round_trip(c, map_location="npu:1")
    assert d1.device == torch.device("npu:1")


def test_state_dict_of_a_device_module_loads_into_a_cpu_module(npu):
    torch.manual_seed(0)
    dev = torch.nn.Linear(4, 2).npu()
    state = _round_trip(dev.state_dict(), map_location="cpu")
    cpu = torch.nn.Linear(4, 2)
    cpu.load_state_dict(state)
    x = torch.randn(3, 4)
    same(dev(x.npu()), cpu(x))
    dev2 = torch.nn.Linear(4, 2).npu()
    dev2.load_state_dict(_round_trip(dev.state_dict(), map_location="npu"))
    same(dev2.weight, dev.weight.cpu())
