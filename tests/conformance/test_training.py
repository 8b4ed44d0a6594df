"""Modules, autograd and optimizers on the device follow CPU step for step."""

import copy

import pytest
import torch

from .support import same

# The device runs the CPU kernels on the same memory, so training is expected to be
# bitwise identical; the stated tolerance only absorbs a differently ordered reduction
# should a torch release pick another kernel for the device.
TOLERANCE = {"rtol": 1e-6, "atol": 1e-7}


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)
    )


def test_module_npu_moves_parameters_and_buffers(npu):
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    cpu = copy.deepcopy(net)
    net.npu()
    for p in list(net.parameters()) + list(net.buffers()):
        assert p.device.type == "npu"
    for (_name, a), (_, b) in zip(net.state_dict().items(), cpu.state_dict().items()):
        same(a, b)


def test_autograd_through_an_mlp(npu):
    cpu = _mlp()
    dev = copy.deepcopy(cpu).npu()
    x = torch.randn(16, 10)
    cpu(x).pow(2).mean().backward()
    dev(x.npu()).pow(2).mean().backward()
    for a, b in zip(dev.parameters(), cpu.parameters()):
        same(a.grad, b.grad, **TOLERANCE)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_twenty_training_steps_match_cpu(npu, optimizer):
    cpu = _mlp()
    dev = copy.deepcopy(cpu).npu()

    def make(params):
        if optimizer == "sgd":
            return torch.optim.SGD(params, lr=0.01, momentum=0.9)
        return torch.optim.Adam(params, lr=1e-2)

    opt_c, opt_d = make(cpu.parameters()), make(dev.parameters())
    torch.manual_seed(1)
    x = torch.randn(64, 10)
    y = x[:, :3].sum(dim=1, keepdim=True) * 0.5  # a target the MLP can learn
    losses_c, losses_d = [], []
    for _ in range(20):
        for net, opt, losses, xx, yy in ((cpu, opt_c, losses_c, x, y), (dev, opt_d, losses_d, x.npu(), y.npu())):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(net(xx), yy)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert losses_d == pytest.approx(losses_c, rel=1e-6, abs=1e-7)
    assert losses_d[-1] < losses_d[0]  # it actually trained
    for a, b in zip(dev.parameters(), cpu.parameters()):
        same(a, b, **TOLERANCE)


def test_conv_batchnorm_updates_running_stats(npu):
    torch.manual_seed(3)
    cpu = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
    dev = copy.deepcopy(cpu).npu()
    x = torch.randn(2, 3, 8, 8)
    out_c, out_d = cpu(x), dev(x.npu())
    same(out_d, out_c, **TOLERANCE)
    same(dev[1].running_mean, cpu[1].running_mean, **TOLERANCE)
    same(dev[1].running_var, cpu[1].running_var, **TOLERANCE)
    assert dev[1].num_batches_tracked.item() == 1


def test_dropout_is_reproducible_with_the_device_seed(npu):
    x = torch.ones(1000, device=npu)
    torch.npu.manual_seed(11)
    a = torch.nn.functional.dropout(x, 0.5)
    torch.npu.manual_seed(11)
    b = torch.nn.functional.dropout(x, 0.5)
    same(a, b.cpu())
    assert 300 < int((a == 0).sum().item()) < 700


def test_attention_with_a_mask_that_needs_a_gradient_matches_cpu(npu):
    # A learned additive mask (relative position biases, ALiBi-style) needs its gradient, which
    # CPU's flash kernel cannot give: CPU's kernel chooser reads requires_grad and takes the
    # math path, and npu must make the same choice rather than fail in backward.
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 3, 8, requires_grad=True) for _ in range(3))
    mask = torch.randn(3, 3, requires_grad=True)
    leaves = [q, k, v, mask]
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    on_npu = [t.detach().npu().requires_grad_() for t in leaves]
    out_npu = torch.nn.functional.scaled_dot_product_attention(*on_npu[:3], attn_mask=on_npu[3])
    grad = torch.randn_like(out)
    out.backward(grad)
    out_npu.backward(grad.npu())
    same(out_npu, out)
    for a, b in zip(on_npu, leaves):
        same(a.grad, b.grad)
