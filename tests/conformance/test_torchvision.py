"""torchvision on the device: an extension of torch, with C++ operators of its own, on npu.

torchvision registers its operators (``torchvision::nms``, ``roi_align`` and its backward, ...)
for CPU and CUDA and knows nothing of npu. They reach the device through the adapter's boxed
fallback for PrivateUse1, not a registration: the dispatcher finds no npu kernel, the
fallback runs torchvision's CPU kernel on the device's own memory (docs/companions.md says
why). So the results must be identical to CPU, bit for bit.

Each cell installs the torchvision that pairs with its torch (``ci: companions:`` in
compat.yaml); a cell whose torch has no torchvision wheel for its Python skips this module
with that reason.
"""

from __future__ import annotations

import copy

import pytest
import torch

from .support import same

torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed in this cell")
from torchvision import ops  # noqa: E402


def _boxes(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 50
    wh = torch.rand(n, 2, generator=g) * 20 + 1
    return torch.cat([xy, xy + wh], dim=1)


def test_torchvision_operators_reach_the_device_through_the_fallback():
    # the mechanism this module relies on: CPU kernels, no npu registration; and the one
    # registration the core makes for an era: torch < 2.10 has no AutogradPrivateUse1 fallback
    from packaging.version import Version

    import shims

    registered = shims.current().registrations["autograd_registered"]
    assert registered == (Version(torch.__version__).release[:2] < (2, 10)), "docs/companions.md says torch 2.1-2.9"
    has_kernel = getattr(torch._C, "_dispatch_has_kernel_for_dispatch_key", None)
    if has_kernel is None:
        pytest.skip("this torch cannot list kernels per dispatch key")
    for op in ("torchvision::nms", "torchvision::roi_align", "torchvision::_roi_align_backward"):
        assert has_kernel(op, "CPU"), op
        assert not has_kernel(op, "PrivateUse1"), f"{op} has an npu kernel: the docs say it goes through the fallback"


def test_resnet18_forward_and_backward_are_identical_to_cpu(npu):
    torch.manual_seed(0)
    cpu = torchvision.models.resnet18(weights=None, num_classes=10)
    dev = copy.deepcopy(cpu).to(npu)
    x = torch.randn(2, 3, 64, 64)
    out_cpu, out_dev = cpu(x), dev(x.to(npu))
    same(out_dev, out_cpu)
    out_cpu.logsumexp(dim=1).sum().backward()
    out_dev.logsumexp(dim=1).sum().backward()
    for (name, p_dev), p_cpu in zip(dev.named_parameters(), cpu.parameters()):
        assert p_dev.grad is not None, name
        same(p_dev.grad, p_cpu.grad)
    for b_dev, b_cpu in zip(dev.buffers(), cpu.buffers()):  # batch-norm running statistics
        same(b_dev, b_cpu)


def test_resnet18_eval_is_identical_to_cpu(npu):
    torch.manual_seed(1)
    cpu = torchvision.models.resnet18(weights=None, num_classes=10).eval()
    dev = copy.deepcopy(cpu).to(npu)
    x = torch.randn(3, 3, 48, 48)
    with torch.no_grad():
        same(dev(x.to(npu)), cpu(x))


def test_nms_on_npu_tensors_is_identical_to_cpu(npu):
    boxes, scores = _boxes(200, 0), torch.rand(200, generator=torch.Generator().manual_seed(1))
    kept = ops.nms(boxes.to(npu), scores.to(npu), 0.3)
    same(kept, ops.nms(boxes, scores, 0.3))
    assert 0 < kept.numel() < 200  # the threshold removed some boxes and kept others
    labels = torch.randint(0, 4, (200,), generator=torch.Generator().manual_seed(2))
    same(
        ops.batched_nms(boxes.to(npu), scores.to(npu), labels.to(npu), 0.5), ops.batched_nms(boxes, scores, labels, 0.5)
    )


@pytest.mark.parametrize("aligned", [False, True])
def test_roi_align_forward_and_backward_are_identical_to_cpu(npu, aligned):
    torch.manual_seed(2)
    features = torch.randn(2, 4, 32, 32)
    rois = torch.cat([torch.tensor([[0.0], [1.0], [1.0]]), _boxes(3, 3) * 0.5], dim=1)
    feat_cpu = features.clone().requires_grad_()
    feat_dev = features.to(npu).requires_grad_()
    out_cpu = ops.roi_align(feat_cpu, rois, (7, 7), spatial_scale=0.5, sampling_ratio=2, aligned=aligned)
    out_dev = ops.roi_align(feat_dev, rois.to(npu), (7, 7), spatial_scale=0.5, sampling_ratio=2, aligned=aligned)
    same(out_dev, out_cpu)
    weights = torch.randn(out_cpu.shape)
    (out_cpu * weights).sum().backward()
    (out_dev * weights.to(npu)).sum().backward()
    assert feat_dev.grad.device.type == "npu"
    same(feat_dev.grad, feat_cpu.grad)


def test_roi_pool_is_identical_to_cpu(npu):
    torch.manual_seed(3)
    features = torch.randn(1, 2, 16, 16)
    rois = torch.cat([torch.zeros(4, 1), _boxes(4, 4) * 0.25], dim=1)
    same(ops.roi_pool(features.to(npu), rois.to(npu), (4, 4), 1.0), ops.roi_pool(features, rois, (4, 4), 1.0))


def test_mixing_devices_is_an_error_not_a_silent_copy(npu):
    boxes, scores = _boxes(10, 5), torch.rand(10)
    with pytest.raises(RuntimeError, match="same device"):
        ops.nms(boxes.to(npu), scores, 0.5)
