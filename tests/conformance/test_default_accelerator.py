"""APIs that pick the accelerator themselves, and a torch built with another accelerator.

PyPI's torch wheels are CUDA builds: next to npu, such a build must be reported once at
activation (what it changes on this release, and the CPU build to install instead); a
CPU build must not be. Where the release routes the default-accelerator APIs to the
registered PrivateUse1 device, they must pin for npu even on a CUDA build.
"""

from __future__ import annotations

import os
import subprocess
import sys

import torch
from torch.utils.data import DataLoader

import shims
from adapter_matrix.check.accelerators import CPU_INDEX, IGNORE_ENV, other_accelerators

from .support import requires, same


@requires("default_pin_memory")
def test_pin_memory_without_a_device_pins_for_npu(npu):
    c = torch.arange(6.0)
    pinned = c.pin_memory()
    assert pinned.is_pinned() and not c.is_pinned()
    assert torch.equal(pinned, c)
    assert torch.empty(3, pin_memory=True).is_pinned()
    same(pinned.to(npu, non_blocking=True), c)


@requires("dataloader_pin_memory")
def test_dataloader_pins_for_npu_without_a_device(npu):
    batch = next(iter(DataLoader([torch.arange(2.0)] * 4, batch_size=2, pin_memory=True)))
    assert batch.is_pinned()
    same(batch.to(npu), torch.arange(2.0).expand(2, 2))


def _activate_in_a_fresh_process(tmp_path, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != IGNORE_ENV}
    full.update(env)
    # cwd elsewhere: the checkout must not shadow the installed packages
    return subprocess.run(
        [sys.executable, "-c", "import torch, shims; torch.ones(1, device='npu')"],
        cwd=tmp_path,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_torch_built_with_another_accelerator_is_reported_once_a_cpu_build_not(tmp_path):
    proc = _activate_in_a_fresh_process(tmp_path)
    assert proc.returncode == 0, proc.stderr
    others = other_accelerators(torch)
    if not others:  # a CPU build: nothing to say
        assert "OtherAcceleratorWarning" not in proc.stderr
        return
    assert proc.stderr.count("OtherAcceleratorWarning") == 1, proc.stderr
    assert f"torch {torch.__version__} is built with {' and '.join(others)}" in proc.stderr
    assert f"pip install 'torch=={torch.__version__.split('+')[0]}' --index-url {CPU_INDEX}" in proc.stderr
    state = shims.current()
    for feature in ("default_pin_memory", "dataloader_pin_memory"):  # what this release routes to CUDA
        why = state.shim.capability(feature)
        assert (why is None) or (why in proc.stderr), feature
    quiet = _activate_in_a_fresh_process(tmp_path, **{IGNORE_ENV: "1"})
    assert quiet.returncode == 0 and "OtherAcceleratorWarning" not in quiet.stderr
