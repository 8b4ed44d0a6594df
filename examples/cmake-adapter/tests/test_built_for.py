"""The device library was compiled against the torch it runs on (the cell built it), the wheel
carried it as package data, and its device holds tensors."""

import os

import tiny_openreg
import torch


def test_the_device_library_was_compiled_against_the_running_torch():
    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    assert tiny_openreg.built_for() == (major, minor)


def test_the_library_is_package_data_beside_the_stub():
    lib = os.path.join(os.path.dirname(tiny_openreg.__file__), "lib", "libtiny_openreg.so")
    assert os.path.isfile(lib)


def test_a_tensor_lives_on_the_tinyreg_device():
    made = torch.empty(4, device="tinyreg")
    assert made.device == torch.device("tinyreg", 0) and made.numel() == 4


def test_the_matrix_supports_this_environment():
    assert tiny_openreg.support.usable and tiny_openreg.support.outcome in ("supported", "experimental")


def test_a_plugin_finds_the_header_and_library_the_wheel_ships():
    assert os.path.isfile(os.path.join(tiny_openreg.get_include(), "tiny_openreg.h"))
    assert os.path.isfile(os.path.join(tiny_openreg.get_lib(), "libtiny_openreg.so"))


def test_tensors_go_to_the_device_and_back_through_its_allocator():
    before = tiny_openreg.allocations()
    source = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    there = source.to("tinyreg")
    assert there.device.type == "tinyreg" and tiny_openreg.allocations() > before
    assert torch.equal(there.cpu(), source)
