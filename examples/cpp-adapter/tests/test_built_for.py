"""The extension was compiled against the torch it runs on (the cell built it in place), and its
device holds tensors."""

import tiny_accel
import torch


def test_the_extension_was_compiled_against_the_running_torch():
    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    assert tiny_accel.built_for() == (major, minor)


def test_a_tensor_lives_on_the_tiny_device():
    made = torch.empty(2, 3, device="tiny")
    assert made.device == torch.device("tiny", 0) and made.shape == (2, 3)


def test_the_matrix_supports_this_environment():
    assert tiny_accel.support.usable and tiny_accel.support.outcome in ("supported", "experimental")
