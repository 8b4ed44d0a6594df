"""The workloads again, compiled with torch.compile's default backend (inductor) on npu.

Each compiled npu run is compared with the same computation in eager mode on CPU (which
npu eager equals bit for bit: test_models.py). Inductor fuses and vectorises, so its
kernels round differently from the eager kernels: COMPILED is float32 rounding, a little
looser after several optimizer steps (STEPS). Compiling is the cost here (seconds per
graph on 2 cores): the models are the small ones of test_models.py.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from ..support import requires, same
from .models import GPT2, Bert, ConvNet, RecurrentLM, greedy_generate

pytestmark = [pytest.mark.suite("workloads"), requires("inductor")]

COMPILED = {"rtol": 1e-5, "atol": 1e-5}
STEPS = {"rtol": 1e-4, "atol": 1e-5}  # after a few optimizer steps


@pytest.fixture(autouse=True)
def _compile_in_process():
    import torch._dynamo
    import torch._inductor.config as config

    config.compile_threads = 1  # each test is a forked child: no compile worker pool
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _tokens(batch: int, length: int, vocab: int, seed: int) -> torch.Tensor:
    return torch.randint(1, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def _train(model, optimizer, batches, loss_of):
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        loss = loss_of(model, batch)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _to(batch, device):
    return tuple(t.to(device) for t in batch) if isinstance(batch, tuple) else batch.to(device)


def _train_compiled_against_cpu(make, optimizer, batches, loss_of):
    """CPU eager training and compiled npu training of the same model on the same batches."""
    cpu = make()
    dev = copy.deepcopy(cpu).to("npu")
    compiled = torch.compile(dev)
    losses_cpu = _train(cpu, optimizer(cpu.parameters()), batches, loss_of)
    losses_dev = _train(compiled, optimizer(dev.parameters()), [_to(b, "npu") for b in batches], loss_of)
    assert losses_dev == pytest.approx(losses_cpu, rel=STEPS["rtol"], abs=STEPS["atol"])
    return cpu, dev


def _gpt2() -> GPT2:
    torch.manual_seed(0)
    return GPT2()


def test_compiled_gpt2_adamw_steps_match_cpu(npu):
    """Tied embeddings (one parameter, two uses), attention, AdamW (its step stays eager)."""
    batches = [_tokens(4, 16, 96, seed) for seed in range(3)]
    cpu, dev = _train_compiled_against_cpu(
        _gpt2,
        lambda ps: torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.1, foreach=True),
        batches,
        lambda m, ids: F.cross_entropy(m(ids)[:, :-1].reshape(-1, 96), ids[:, 1:].reshape(-1)),
    )
    assert dev.lm_head.weight is dev.wte.weight
    for a, b in zip(dev.parameters(), cpu.parameters()):
        same(a, b, **STEPS)


@requires("inductor_dynamic_shapes")
def test_compiled_gpt2_generation_matches_cpu(npu):
    cpu = _gpt2().eval()
    dev = copy.deepcopy(cpu).to(npu)
    prompt = _tokens(2, 5, 96, seed=7)
    out_cpu = greedy_generate(cpu, prompt, new_tokens=4)
    out_dev = greedy_generate(torch.compile(dev, dynamic=True), prompt.to(npu), new_tokens=4)
    same(out_dev, out_cpu)


def test_compiled_bert_with_padding_mask_matches_cpu(npu):
    torch.manual_seed(1)
    cpu = Bert().eval()
    dev = copy.deepcopy(cpu).to(npu)
    ids = _tokens(3, 12, 96, seed=3)
    mask = torch.ones_like(ids)
    mask[0, 8:] = 0
    mask[2, 5:] = 0
    ids = ids * mask
    token_types = torch.zeros_like(ids)
    token_types[:, 6:] = 1
    with torch.no_grad():
        out_cpu = cpu(ids, mask, token_types)
        out_dev = torch.compile(dev)(ids.to(npu), mask.to(npu), token_types.to(npu))
    same(out_dev, out_cpu, **COMPILED)


def test_compiled_lstm_language_model_trains_like_cpu(npu):
    def make():
        torch.manual_seed(2)
        return RecurrentLM("lstm")

    batches = [_tokens(4, 10, 64, seed) for seed in range(3)]
    _train_compiled_against_cpu(
        make, lambda ps: torch.optim.SGD(ps, lr=0.1, foreach=True), batches, lambda m, ids: m.loss(ids)
    )


def test_compiled_conv_net_with_batchnorm_trains_like_cpu(npu):
    def make():
        torch.manual_seed(5)
        return ConvNet()

    g = torch.Generator().manual_seed(6)
    batches = [(torch.randn(8, 3, 16, 16, generator=g), torch.randint(0, 10, (8,), generator=g)) for _ in range(3)]
    cpu, dev = _train_compiled_against_cpu(
        make,
        lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, foreach=True),
        batches,
        lambda m, b: F.cross_entropy(m(b[0]), b[1]),
    )
    for a, b in zip(dev.state_dict().values(), cpu.state_dict().values()):
        same(a, b, **STEPS)  # parameters and BatchNorm running statistics


def test_compiled_adamw_step_matches_cpu(npu):
    """The optimizer step itself compiled (torch.compile of optimizer.step)."""
    torch.manual_seed(3)
    params_cpu = [torch.randn(16, 8), torch.randn(8)]
    grads = [torch.randn_like(p) for p in params_cpu]
    params_dev = [p.to(npu) for p in params_cpu]
    for params, device in ((params_cpu, "cpu"), (params_dev, npu)):
        for p, g in zip(params, grads):
            p.grad = g.to(device)
    opt_cpu = torch.optim.AdamW(params_cpu, lr=1e-2, weight_decay=0.1)
    opt_dev = torch.optim.AdamW(params_dev, lr=1e-2, weight_decay=0.1)
    step = torch.compile(opt_dev.step)
    for _ in range(2):
        opt_cpu.step()
        step()
    same(params_dev, params_cpu, **COMPILED)
