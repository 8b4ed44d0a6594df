"""Workloads: small models of the kinds people train, on npu and on CPU, compared.

Each model is built in the test with random weights (no downloads; see models.py for why
by hand). The device runs CPU's kernels on the same memory, so results are bitwise equal
to CPU wherever PyTorch runs the same kernels on both. One place it does not: nn.LSTM and
nn.GRU layers. CPU projects the whole sequence's inputs with one GEMM (T*B rows) before
the time loop, accelerators project step by step (B rows) into PyTorch's fused cells, and
BLAS picks shape-dependent kernels, so those agree to float32 rounding (RNN_TOLERANCE).
``test_recurrent_layers_equal_cpu_cells_step_by_step`` shows the device's cells equal
CPU's bit for bit when CPU runs the same per-step computation.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

import shims

from ..support import requires, same
from .models import GPT2, Bert, ConvNet, RecurrentLM, greedy_generate
from .ranks import run_ranks, start_reference

pytestmark = pytest.mark.suite("workloads")  # its own group in a cell's record

# Optimizers pick their implementation by device: the multi-tensor (foreach) one on
# accelerators, npu included, the per-tensor loop on CPU. Both sides use the same one.
FOREACH = {"foreach": True}

# Where SDPA cannot run CPU's kernel on npu (torch 2.2-2.3: capability sdpa_cpu_kernels),
# attention goes through the math composite and agrees with CPU to float32 rounding.
ATTENTION = {} if shims.capability("sdpa_cpu_kernels") is None else {"rtol": 1e-4, "atol": 1e-5}

# Measured differences are ~4e-6 after a few steps; the bound leaves room for other BLAS builds.
RNN_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def _tokens(batch: int, length: int, vocab: int, seed: int) -> torch.Tensor:
    return torch.randint(1, vocab, (batch, length), generator=torch.Generator().manual_seed(seed))


def _train(model: torch.nn.Module, optimizer: torch.optim.Optimizer, steps, loss_of) -> list:
    losses = []
    for batch in steps:
        optimizer.zero_grad()
        loss = loss_of(model, batch)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _to(batch, device):
    return tuple(t.to(device) for t in batch) if isinstance(batch, tuple) else batch.to(device)


def _same_losses(device_losses, cpu_losses, tolerance) -> None:
    if tolerance:
        assert device_losses == pytest.approx(cpu_losses, rel=tolerance["rtol"], abs=tolerance["atol"])
    else:
        assert device_losses == cpu_losses  # every step, to the bit


def _train_both(make, optimizer, batches, loss_of):
    """Train one model on CPU and a copy of it on npu with the same batches."""
    cpu = make()
    dev = copy.deepcopy(cpu).to("npu")
    losses_cpu = _train(cpu, optimizer(cpu.parameters()), batches, loss_of)
    losses_dev = _train(dev, optimizer(dev.parameters()), [_to(b, "npu") for b in batches], loss_of)
    return cpu, dev, losses_cpu, losses_dev


# -- GPT-2 ---------------------------------------------------------------------------------


def _gpt2() -> GPT2:
    torch.manual_seed(0)
    return GPT2()


def test_gpt2_to_npu_keeps_lm_head_tied_to_the_embedding(npu):
    model = _gpt2().to(npu)
    assert model.lm_head.weight is model.wte.weight
    assert model.wte.weight.device.type == "npu"
    assert len(list(model.parameters())) == len(list(_gpt2().parameters()))  # one tensor, counted once


def test_parameter_data_moves_between_cpu_and_npu_in_place(npu):
    p = torch.nn.Parameter(torch.randn(4, 3))
    before = p.detach().clone()
    p.data = p.data.to(npu)
    assert p.device.type == "npu" and isinstance(p, torch.nn.Parameter)
    same(p.detach(), before)
    p.data = p.data.cpu()
    assert p.device.type == "cpu"
    assert torch.equal(p.detach(), before)


def test_gpt2_five_adamw_steps_match_cpu_bitwise(npu):
    batches = [_tokens(4, 16, 96, seed) for seed in range(5)]
    cpu, dev, losses_cpu, losses_dev = _train_both(
        _gpt2,
        lambda ps: torch.optim.AdamW(ps, lr=1e-3, weight_decay=0.1, **FOREACH),
        batches,
        lambda m, ids: m.loss(ids),
    )
    _same_losses(losses_dev, losses_cpu, ATTENTION)
    assert dev.lm_head.weight is dev.wte.weight  # still one tensor after training
    for (_name, a), (_, b) in zip(dev.named_parameters(), cpu.named_parameters()):
        same(a, b, **ATTENTION)


def test_gpt2_greedy_generation_matches_cpu(npu):
    cpu = _gpt2().eval()
    dev = copy.deepcopy(cpu).to(npu)
    prompt = _tokens(2, 5, 96, seed=7)
    out_cpu = greedy_generate(cpu, prompt, new_tokens=12)
    out_dev = greedy_generate(dev, prompt.to(npu), new_tokens=12)
    same(out_dev, out_cpu)
    same(dev(out_dev), cpu(out_cpu), **ATTENTION)  # and the logits behind them


# -- BERT ----------------------------------------------------------------------------------


def test_bert_eval_with_attention_mask_matches_cpu(npu):
    torch.manual_seed(1)
    cpu = Bert().eval()
    dev = copy.deepcopy(cpu).to(npu)
    ids = _tokens(3, 12, 96, seed=3)
    mask = torch.ones_like(ids)
    mask[0, 8:] = 0  # padded sequences
    mask[2, 5:] = 0
    ids = ids * mask
    token_types = torch.zeros_like(ids)
    token_types[:, 6:] = 1
    with torch.no_grad():
        out_cpu = cpu(ids, mask, token_types)
        out_dev = dev(ids.to(npu), mask.to(npu), token_types.to(npu))
    same(out_dev, out_cpu, **ATTENTION)


# -- recurrent language models -------------------------------------------------------------


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_recurrent_language_model_trains_like_cpu(npu, kind):
    def make():
        torch.manual_seed(2)
        return RecurrentLM(kind)

    batches = [_tokens(4, 12, 64, seed) for seed in range(4)]
    # CPU's LSTM would otherwise run oneDNN's fused layer: compare with PyTorch's own cells.
    with torch.backends.mkldnn.flags(enabled=False):
        cpu, dev, losses_cpu, losses_dev = _train_both(
            make, lambda ps: torch.optim.Adam(ps, lr=1e-2, **FOREACH), batches, lambda m, ids: m.loss(ids)
        )
    _same_losses(losses_dev, losses_cpu, RNN_TOLERANCE)
    assert losses_dev[-1] < losses_dev[0]
    for a, b in zip(dev.parameters(), cpu.parameters()):
        same(a, b, **RNN_TOLERANCE)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_recurrent_layers_equal_cpu_cells_step_by_step(npu, kind):
    torch.manual_seed(4)
    layer = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind](6, 8)
    cell = {"lstm": torch.nn.LSTMCell, "gru": torch.nn.GRUCell}[kind](6, 8)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(layer, f"{name}_l0"))
    dev = copy.deepcopy(layer).to(npu)
    x = torch.randn(5, 3, 6)

    out_dev, _ = dev(x.to(npu))
    out_dev.sum().backward()

    state = None
    outputs = []
    for t in range(x.shape[0]):  # CPU, one step at a time: the computation the device does
        state = cell(x[t], state)
        outputs.append(state[0] if kind == "lstm" else state)
    out_cpu = torch.stack(outputs)
    out_cpu.sum().backward()

    same(out_dev, out_cpu)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        same(getattr(dev, f"{name}_l0").grad, getattr(cell, name).grad)


# -- convolutional network with BatchNorm --------------------------------------------------


def test_conv_net_with_batchnorm_trains_like_cpu_bitwise(npu):
    def make():
        torch.manual_seed(5)
        return ConvNet()

    g = torch.Generator().manual_seed(6)
    batches = [(torch.randn(8, 3, 16, 16, generator=g), torch.randint(0, 10, (8,), generator=g)) for _ in range(4)]
    cpu, dev, losses_cpu, losses_dev = _train_both(
        make,
        lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, **FOREACH),
        batches,
        lambda m, b: torch.nn.functional.cross_entropy(m(b[0]), b[1]),
    )
    _same_losses(losses_dev, losses_cpu, None)
    for a, b in zip(dev.state_dict().values(), cpu.state_dict().values()):
        same(a, b)  # parameters and BatchNorm running statistics
    dev.eval()
    cpu.eval()
    with torch.no_grad():
        same(dev(batches[0][0].to(npu)), cpu(batches[0][0]))


# -- data-parallel training over two processes ---------------------------------------------


@requires("distributed")
def test_two_process_ddp_matches_single_process_cpu_training(npu, tmp_path: Path):
    world = 2
    reference = start_reference("ddp_data", "reference_training", tmp_path, str(world))  # beside the ranks
    results = run_ranks(Path(__file__).with_name("ddp_worker.py"), tmp_path, world)

    for rank, result in enumerate(results):
        c = result["collectives"]
        assert c["on_device"]
        assert c["all_reduce"] == [3.0] * 4
        assert c["broadcast"] == [0.0, 1.0, 2.0]
        assert c["all_gather"] == [[0.0, 0.0], [1.0, 1.0]]
        assert c["reduce_scatter"] == [float(sum(10 * r + rank for r in range(world)))] * 2
        assert result["devices"] == [f"npu:{rank}"]

    assert results[0]["parameters"] == results[1]["parameters"]  # the replicas stayed in sync
    assert results[0]["parameters"] == reference.result()  # and equal CPU training, to the bit
