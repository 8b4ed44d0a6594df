"""What a real accelerator refuses, the device refuses, with a clear message."""

import pytest
import torch


def test_mixed_device_operands_raise(npu):
    d = torch.ones(3, device=npu)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        d + torch.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(torch.ones(2, 2, device=npu), torch.ones(2, 2))


def test_tensors_on_two_devices_raise(npu):
    with pytest.raises(RuntimeError, match="npu:0 and npu:1"):
        torch.ones(2, device="npu:0") + torch.ones(2, device="npu:1")


def test_op_without_any_kernel_names_itself():
    with pytest.raises(NotImplementedError, match="_cudnn_init_dropout_state' is not implemented for the npu device"):
        torch.ops.aten._cudnn_init_dropout_state(0.1, True, 0, device="npu")
