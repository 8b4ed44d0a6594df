"""Computation on the device equals the same computation on CPU."""

import pytest
import torch

from .support import same


@pytest.fixture
def pair(npu):
    torch.manual_seed(7)
    c = torch.randn(6, 8)
    return c.to(npu), c


def test_elementwise_and_broadcasting(pair):
    d, c = pair
    row_c = torch.randn(8)
    same(d + row_c.npu(), c + row_c)
    same(d * 3 - 1, c * 3 - 1)
    same(torch.exp(d).sin() / (d.abs() + 1), torch.exp(c).sin() / (c.abs() + 1))
    same(d[:, :1] * d[:1, :], c[:, :1] * c[:1, :])
    same(d + torch.tensor(2.5), c + 2.5)  # a 0-dim CPU tensor is a scalar, as on CUDA


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.int64], ids=str)
def test_dtypes(npu, dtype):
    c = (torch.randn(5, 5) * 4).to(dtype)
    d = c.to(npu)
    same(d + d, c + c)
    same(d * 2, c * 2)
    same(d.sum(), c.sum())
    same(d > 0, c > 0)


def test_bool_ops(npu):
    c = torch.tensor([True, False, True, True])
    d = c.to(npu)
    same(d & ~d, c & ~c)
    same(d.any(), c.any())
    same(d.sum(), c.sum())


def test_views_slicing_transpose(pair):
    d, c = pair
    same(d[1:4, ::2], c[1:4, ::2])
    same(d.t(), c.t())
    same(d.view(4, 12), c.view(4, 12))
    same(d.reshape(2, 24), c.reshape(2, 24))
    same(d.permute(1, 0).contiguous(), c.permute(1, 0).contiguous())
    same(d.unsqueeze(0).expand(3, 6, 8), c.unsqueeze(0).expand(3, 6, 8))
    same(d.narrow(1, 2, 3), c.narrow(1, 2, 3))
    same(d.diagonal(), c.diagonal())
    assert d.t().data_ptr() == d.data_ptr()  # a view shares the device memory


def test_non_contiguous_inputs(pair):
    d, c = pair
    same(d.t() @ d, c.t() @ c)
    same(d[:, ::2] + d[:, 1::2], c[:, ::2] + c[:, 1::2])
    same(torch.sigmoid(d.t()), torch.sigmoid(c.t()))


def test_in_place_ops_on_views(pair):
    d, c = pair
    d[1:3, 2:5].add_(10)
    c[1:3, 2:5].add_(10)
    same(d, c)
    d.t()[0].mul_(-1)
    c.t()[0].mul_(-1)
    same(d, c)
    d[:, 0] = 5.0
    c[:, 0] = 5.0
    same(d, c)
    d.diagonal().zero_()
    c.diagonal().zero_()
    same(d, c)


def test_out_variants_resize_the_output(npu):
    c = torch.randn(3, 4)
    d = c.to(npu)
    out_d = torch.empty(0, device=npu)
    out_c = torch.empty(0)
    torch.add(d, 1, out=out_d)
    torch.add(c, 1, out=out_c)
    same(out_d, out_c)
    out_d.resize_(0)  # reusing an out= tensor of another shape: empty it first
    torch.mm(d, d.t(), out=out_d)
    same(out_d, torch.mm(c, c.t()))


def test_matmul_family(npu):
    torch.manual_seed(1)
    a, b = torch.randn(7, 5), torch.randn(5, 3)
    same(a.npu() @ b.npu(), a @ b)
    bat = torch.randn(4, 3, 5)
    same(torch.bmm(bat.npu(), bat.npu().transpose(1, 2)), torch.bmm(bat, bat.transpose(1, 2)))
    same(torch.addmm(torch.ones(7, 3).npu(), a.npu(), b.npu()), torch.addmm(torch.ones(7, 3), a, b))
    same(torch.einsum("ij,jk->ik", a.npu(), b.npu()), torch.einsum("ij,jk->ik", a, b))


def test_reductions_and_softmax(pair):
    d, c = pair
    same(d.sum(), c.sum())
    same(d.mean(dim=1), c.mean(dim=1))
    same(d.max(dim=0), tuple(c.max(dim=0)))
    same(d.argmin(), c.argmin())
    same(d.std(dim=1), c.std(dim=1))
    same(d.norm(), c.norm())
    same(torch.softmax(d, dim=1), torch.softmax(c, dim=1))
    same(torch.log_softmax(d, dim=0), torch.log_softmax(c, dim=0))
    same(d.cumsum(1), c.cumsum(1))
    same(torch.sort(d, dim=1).values, torch.sort(c, dim=1).values)
    same(torch.topk(d, 3).values, torch.topk(c, 3).values)
    assert d.sum().item() == c.sum().item()


def test_indexing(pair, npu):
    d, c = pair
    idx = torch.tensor([0, 3, 5])
    same(d[idx], c[idx])  # CPU index tensor, as CUDA allows
    same(d[idx.to(npu)], c[idx])
    same(d[idx, 1:3], c[idx, 1:3])
    same(d[:, torch.tensor([7, 0])], c[:, torch.tensor([7, 0])])
    mask_c = c > 0.5
    same(d[mask_c.to(npu)], c[mask_c])
    d[mask_c.to(npu)] = 0.0
    c[mask_c] = 0.0
    same(d, c)
    d.index_add_(0, idx.to(npu), torch.ones(3, 8, device=npu))
    c.index_add_(0, idx, torch.ones(3, 8))
    same(d, c)
    same(
        torch.gather(d, 1, torch.tensor([[0], [1], [2], [3], [4], [5]], device=npu)),
        torch.gather(c, 1, torch.tensor([[0], [1], [2], [3], [4], [5]])),
    )
    same(d.nonzero(), c.nonzero())


def test_cat_stack_where(pair):
    d, c = pair
    same(torch.cat([d, d * 2], dim=0), torch.cat([c, c * 2], dim=0))
    same(torch.stack([d, d], dim=1), torch.stack([c, c], dim=1))
    same(torch.where(d > 0, d, -d), torch.where(c > 0, c, -c))
    same(torch.chunk(d, 3)[1], torch.chunk(c, 3)[1])
    same(torch.split(d, 5, dim=1)[1], torch.split(c, 5, dim=1)[1])


def test_complex_conjugate_views(npu):
    c = torch.randn(4, dtype=torch.complex64)
    d = c.to(npu)
    same(d.conj(), c.conj())
    same(d.conj().imag.sum(), c.conj().imag.sum())
    same((d.conj() * d).real, (c.conj() * c).real)
    same(torch.neg(d.conj()).resolve_neg().resolve_conj(), torch.neg(c.conj()).resolve_neg().resolve_conj())


def test_printing_does_not_crash(pair):
    d, _ = pair
    assert "device='npu:0'" in repr(d)
    assert "npu" in str(d[0, :3])


def test_zero_tensors_from_autograd_read_as_zeros(npu):
    # sgn's gradient is an "efficient zero tensor": no memory, a ZeroTensor dispatch key.
    x_c = torch.randn(5, requires_grad=True)
    x_d = x_c.detach().to(npu).requires_grad_()
    (g_c,) = torch.autograd.grad(torch.sgn(x_c).sum(), x_c)
    (g_d,) = torch.autograd.grad(torch.sgn(x_d).sum(), x_d)
    assert g_d.device.type == "npu"
    same(g_d, g_c)
    same(g_d + 1, g_c + 1)
    z = torch._efficientzerotensor(3, device=npu)
    same(z, torch.zeros(3))
    same(z * torch.ones(3, device=npu), torch.zeros(3))


@pytest.mark.parametrize("dtype", [torch.qint8, torch.quint8, torch.qint32])
def test_quantize_per_tensor_gives_a_quantized_device_tensor(npu, dtype):
    x = torch.randn(4, 6)
    q_c = torch.quantize_per_tensor(x, 0.05, 2, dtype)
    q_d = torch.quantize_per_tensor(x.to(npu), 0.05, 2, dtype)
    assert q_d.is_quantized and q_d.device.type == "npu" and q_d.dtype == dtype
    assert (q_d.q_scale(), q_d.q_zero_point()) == (q_c.q_scale(), q_c.q_zero_point())
    same(q_d.int_repr(), q_c.int_repr())
    same(q_d.dequantize(), q_c.dequantize())
    back = q_d.cpu()
    assert back.is_quantized and torch.equal(back.int_repr(), q_c.int_repr())
    moved = q_c.to(npu)
    assert moved.is_quantized and moved.device.type == "npu"
    same(moved[1:3].int_repr(), q_c[1:3].int_repr())
