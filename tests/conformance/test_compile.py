"""torch.compile on npu: capture (FakeTensor), the eager/aot_eager backends and inductor.

Every compiled result is compared with the same computation in eager mode on CPU. Inductor
writes CPU's C++ kernels for npu (shims/inductor.py), and CPU's own compiled kernels round
differently from its eager ones (fused, vectorised reductions), so inductor results are
compared to float32 rounding (COMPILED); the eager and aot_eager backends run the eager
kernels and must be bitwise equal.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import shims

from .support import DEVICE, requires, same

pytestmark = pytest.mark.suite("compile")

# Inductor's fused C++ kernels against eager kernels (sums in another order): float32 rounding.
COMPILED = {"rtol": 1e-5, "atol": 1e-5}


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """One compile per test, in this process: no compile worker pool (each test is a fork)."""
    import torch._dynamo

    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _inductor_in_process():
    import torch._inductor.config as config

    config.compile_threads = 1


class Attention(torch.nn.Module):
    def __init__(self, dim: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


def _attention_inputs(device):
    torch.manual_seed(0)
    x = torch.randn(2, 5, 16)
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    return x.to(device), mask.to(device)


def test_sdpa_under_fake_tensor_mode():
    """The kernel chooser answers for FakeTensors without touching real memory."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    q, k, v = (torch.randn(2, 2, 5, 8, device=DEVICE, requires_grad=True) for _ in range(3))
    with FakeTensorMode() as mode:
        fq, fk, fv = (mode.from_tensor(t) for t in (q, k, v))
        out = F.scaled_dot_product_attention(fq, fk, fv, is_causal=True)
        out.sum().backward()
    assert out.device.type == "npu"
    assert out.shape == (2, 2, 5, 8) and fq.grad.shape == q.shape


def test_sdpa_under_meta_tensors():
    q = torch.randn(2, 2, 5, 8, device="meta")
    assert F.scaled_dot_product_attention(q, q, q).shape == (2, 2, 5, 8)


@requires("dynamo")
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_compiled_attention_matches_cpu(backend):
    if backend == "inductor":
        if (why := _inductor_absent()) is not None:
            pytest.skip(why)
        _inductor_in_process()
    torch.manual_seed(0)
    cpu_model = Attention()
    npu_model = Attention().to(DEVICE)
    npu_model.load_state_dict(cpu_model.state_dict())
    compiled = torch.compile(npu_model, backend=backend)
    x, mask = _attention_inputs(DEVICE)
    out = compiled(x, mask)
    out.square().mean().backward()
    x_cpu, mask_cpu = _attention_inputs("cpu")
    expected = cpu_model(x_cpu, mask_cpu)
    expected.square().mean().backward()
    # eager kernels are bitwise CPU's, except SDPA where npu cannot take CPU's fused kernel
    # (capability sdpa_cpu_kernels: measured on 2.3, whose CPU takes it with a mask)
    rounded = backend == "inductor" or shims.capability("sdpa_cpu_kernels") is not None
    tolerance = COMPILED if rounded else {}
    same(out, expected, **tolerance)
    same([p.grad for p in npu_model.parameters()], [p.grad for p in cpu_model.parameters()], **tolerance)


def _inductor_absent():
    why = shims.capability("inductor")
    return None if why is None else f"capability inductor absent: {why}"


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16), torch.nn.Linear(16, 4))


@requires("inductor")
def test_inductor_trains_an_mlp_like_cpu():
    """Default torch.compile: forward, a reduction, backward and an SGD step."""
    _inductor_in_process()
    cpu_model, npu_model = _mlp(), _mlp().to(DEVICE)
    x = torch.randn(6, 8)
    compiled = torch.compile(npu_model)
    loss = compiled(x.to(DEVICE)).softmax(-1).sum(0).square().sum()
    loss.backward()
    expected = cpu_model(x).softmax(-1).sum(0).square().sum()
    expected.backward()
    same(loss, expected, **COMPILED)
    same([p.grad for p in npu_model.parameters()], [p.grad for p in cpu_model.parameters()], **COMPILED)


@requires("inductor")
def test_inductor_makes_tensors_on_a_device_named_without_an_index():
    """``device="npu"`` inside a compiled function: inductor asks the device interface for
    the current index (found by the op sweep's compiled sample: arange, signal.windows.hann)."""
    _inductor_in_process()

    def fn(x):
        return x + torch.arange(x.shape[0], device=DEVICE)

    x = torch.randn(5)
    out = torch.compile(fn, fullgraph=True, dynamic=False)(x.to(DEVICE))
    assert out.device.index == torch.npu.current_device()
    same(out, x + torch.arange(5), **COMPILED)


@requires("inductor")
def test_inductor_compiles_for_a_device_that_is_not_the_current_one():
    """A model on npu:1 while npu:0 is current, as on every rank but the first of a job that
    keeps the default device: CPU's wrapper names a buffer's device by type only, so the
    buffers went to npu:0 ("found at least two devices, npu:1 and npu:0", 0.2.0)."""
    _inductor_in_process()
    assert torch.npu.current_device() == 0
    cpu_model, npu_model = _mlp(), _mlp().to("npu:1")
    x = torch.randn(6, 8)
    out = torch.compile(npu_model)(x.to("npu:1"))
    out.square().sum().backward()
    expected = cpu_model(x)
    expected.square().sum().backward()
    assert out.device == torch.device("npu", 1)
    same(out, expected, **COMPILED)
    same([p.grad for p in npu_model.parameters()], [p.grad for p in cpu_model.parameters()], **COMPILED)


@requires("inductor")
def test_inductor_still_compiles_for_cpu_once_npu_is_registered():
    """npu's registration answers inductor's per-device questions (scheduling, backend,
    CPU-like nodes) for npu only: a CPU model compiled after an npu one is CPU's as before
    (a wrong answer broke CPU's code generation on 2.8, whose backend query has no argument)."""
    _inductor_in_process()
    x = torch.randn(6, 8)
    torch.compile(_mlp().to(DEVICE))(x.to(DEVICE))
    cpu_model = _mlp()
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(cpu_model)(x), cpu_model(x), **COMPILED)


@requires("inductor")
def test_inductor_cache_keys_name_npus_code_generator():
    """Inductor's FX graph cache keys code by torch's sources; after an adapter upgrade it
    served the older adapter's code (the npu:1 case above kept failing until the cache was
    cleared). From 2.8 a device pass's uuid is part of the key: npu's names its generator."""
    from torch._inductor.codegen import common

    _inductor_in_process()
    torch.compile(_mlp().to(DEVICE))(torch.randn(6, 8, device=DEVICE))
    passes = getattr(common, "custom_backend_passes", None)
    if passes is None:
        pytest.skip("before torch 2.8 device passes are not part of inductor's cache key")
    import shims.inductor

    digest = hashlib.sha256(Path(shims.inductor.__file__).read_bytes()).hexdigest()[:16]
    assert passes.get("npu") is not None, "torch registered npu again, without its pass"
    assert passes["npu"].uuid() == f"shims.inductor {digest}"


@requires("inductor_cpp_wrapper")
def test_inductor_cpp_wrapper_matches_cpu():
    _inductor_in_process()
    cpu_model, npu_model = _mlp(), _mlp().to(DEVICE)
    x = torch.randn(6, 8)
    with torch.no_grad():
        out = torch.compile(npu_model, options={"cpp_wrapper": True})(x.to(DEVICE))
        same(out, cpu_model(x), **COMPILED)


def test_activation_does_not_import_inductor():
    """Registration is lazy: activating the adapter and using the device import no module of
    torch._inductor that ``import torch`` alone does not (2.5's torch.export imports
    inductor's config itself; the code generators, seconds of imports, stay unloaded)."""
    listing = "print(sorted(m for m in sys.modules if m.startswith('torch._inductor')))"
    plain = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")  # 2.5+: import torch would activate npu
    torch_alone = _run_python(f"import sys, torch; {listing}", plain)
    activated = _run_python(f"import sys, torch, shims; torch.ones(2, device='npu'); {listing}", dict(os.environ))
    assert activated == torch_alone
    assert "'torch._inductor.graph'" not in activated


def _run_python(code: str, env: dict) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()
