"""Automatic mixed precision."""

import torch

from .support import requires, same


@requires("autocast")
def test_autocast_bf16_linear_matches_cpu(npu):
    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 4)
    x = torch.randn(5, 8)
    dev = torch.nn.Linear(8, 4).npu()
    dev.load_state_dict(lin.state_dict())
    with torch.autocast("npu", dtype=torch.bfloat16):
        out = dev(x.npu())
        assert torch.is_autocast_enabled("npu") if hasattr(torch, "get_autocast_dtype") else True
        elementwise = out + 1  # not on the lower-precision list: stays bf16 from its input
    assert out.dtype == torch.bfloat16 and elementwise.dtype == torch.bfloat16
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = lin(x)
    same(out, expected, rtol=1.6e-2, atol=1e-2)
    assert dev(x.npu()).dtype == torch.float32  # off again outside the context


@requires("grad_scaler")
def test_grad_scaler_scales_and_steps(npu):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1).npu()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("npu", init_scale=1024.0)
    before = model.weight.detach().cpu().clone()
    loss = model(torch.randn(8, 4, device=npu)).pow(2).mean()
    scaler.scale(loss).backward()
    assert model.weight.grad.abs().sum().item() > 0
    scaler.step(opt)
    scaler.update()
    assert not torch.equal(model.weight.detach().cpu(), before)
    assert scaler.get_scale() == 1024.0  # finite gradients: no back-off
