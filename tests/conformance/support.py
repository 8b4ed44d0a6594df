"""Helpers of the conformance suite: comparisons with CPU and capability skips."""

from __future__ import annotations

import pytest
import torch

import shims  # activates the device (building it on first use)

DEVICE = torch.device("npu")


def requires(feature: str):
    """Skip unless the active shim declares ``feature`` available on this torch."""
    reason = shims.capability(feature)
    return pytest.mark.skipif(reason is not None, reason=f"capability {feature} absent: {reason}")


def same(device_result, cpu_result, exact: bool = True, **tolerances) -> None:
    """``device_result`` lives on npu and equals ``cpu_result`` (bitwise unless told otherwise)."""
    if isinstance(device_result, (tuple, list)):
        assert len(device_result) == len(cpu_result)
        for d, c in zip(device_result, cpu_result):
            same(d, c, exact, **tolerances)
        return
    assert device_result.device.type == "npu", device_result.device
    if exact and not tolerances:
        tolerances = {"rtol": 0, "atol": 0}
    torch.testing.assert_close(device_result.cpu(), cpu_result, equal_nan=True, **tolerances)
