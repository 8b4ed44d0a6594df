"""The toy device, as a user meets it in a cell: `import torch` activates it through autoload."""

import torch
import toy_adapter


def test_import_torch_renames_privateuse1_to_toy():
    assert torch._C._get_privateuse1_backend_name() == "toy"


def test_the_device_and_its_generated_methods_exist():
    assert str(torch.device("toy", 0)) == "toy:0"
    assert hasattr(torch.Tensor, "is_toy") and hasattr(torch.nn.Module, "toy")
    assert torch.toy.device_count() == 0  # a skeleton: no kernels, no memory


def test_require_chose_the_era_of_this_torch():
    assert toy_adapter.support.outcome == "supported"
    assert toy_adapter.support.shim == "toy_adapter.eras.torch_2_10"
