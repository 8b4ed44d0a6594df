"""Another accelerator compiled into torch: found from the module's attributes, reported once, silenceable."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import pytest

import adapter_matrix
from adapter_matrix.check.accelerators import IGNORE_ENV, describe, other_accelerators, warn_other_accelerators


def _torch(version: str, cuda=None, hip=None, xpu=False):
    return SimpleNamespace(
        __version__=version, version=SimpleNamespace(cuda=cuda, hip=hip), xpu=SimpleNamespace(_is_compiled=lambda: xpu)
    )


def test_builds_are_told_apart():
    assert other_accelerators(_torch("2.6.0+cu124", cuda="12.4")) == ["CUDA 12.4"]
    assert other_accelerators(_torch("2.6.0+rocm6.2", hip="6.2.41133")) == ["ROCm (HIP 6.2.41133)"]
    assert other_accelerators(_torch("2.6.0+xpu", xpu=True)) == ["XPU"]
    assert other_accelerators(_torch("2.6.0+cpu")) == []
    assert other_accelerators(SimpleNamespace(__version__="2.1.0")) == []  # no torch.version, no torch.xpu


def test_the_local_cpu_build_has_none():
    torch = pytest.importorskip("torch")
    if "+cpu" not in torch.__version__:
        pytest.skip(f"torch {torch.__version__} is not a CPU build")
    assert other_accelerators(torch) == []


def test_the_message_says_what_happens_and_what_to_install(monkeypatch):
    monkeypatch.delenv(IGNORE_ENV, raising=False)
    cuda = _torch("2.1.2+cu121", cuda="12.1")
    with pytest.warns(adapter_matrix.OtherAcceleratorWarning) as caught:
        message = warn_other_accelerators(cuda, "npu", ["before torch 2.5, pin_memory() means CUDA"])
    assert len(caught) == 1 and str(caught[0].message) == message
    assert message.startswith("torch 2.1.2+cu121 is built with CUDA 12.1, and the npu device runs in the same process")
    assert "\n- before torch 2.5, pin_memory() means CUDA\n" in message
    assert "pip install 'torch==2.1.2' --index-url https://download.pytorch.org/whl/cpu" in message
    assert message.endswith(f"(to silence this warning: {IGNORE_ENV}=1)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_other_accelerators(_torch("2.13.0+cpu"), "npu") is None  # a CPU build: silent


def test_it_is_silenced_by_the_variable_or_a_filter_on_its_category(monkeypatch):
    cuda = _torch("2.6.0+cu124", cuda="12.4")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setenv(IGNORE_ENV, "1")
        assert warn_other_accelerators(cuda, "npu") is None
        monkeypatch.delenv(IGNORE_ENV)
        warnings.filterwarnings("ignore", category=adapter_matrix.OtherAcceleratorWarning)
        assert warn_other_accelerators(cuda, "npu") == describe(cuda, "npu", ["CUDA 12.4"])
