"""The direct kernels (the core's direct.cpp) behave as the boxed fallback they shortcut.

add, sub, mul, div (functional and in-place), sqrt, addcmul_, addcdiv_, lerp_, sum and
mean skip the boxed fallback on npu. Each edge case below is one a shortcut could get
wrong: device checks, scalars, type promotion, conj/neg bits, ZeroTensors, aliasing,
in-place identity, the device and memory accounting of outputs.
"""

import pytest
import torch

from .support import requires, same

# (name, npu call, the same on CPU): every direct kernel, called on tensors from make().
BINARY = {
    "add": lambda x, y: torch.add(x, y, alpha=2),
    "sub": lambda x, y: torch.sub(x, y, alpha=0.5),
    "mul": torch.mul,
    "div": torch.div,
    "add_": lambda x, y: x.clone().add_(y, alpha=3),
    "sub_": lambda x, y: x.clone().sub_(y),
    "mul_": lambda x, y: x.clone().mul_(y),
    "div_": lambda x, y: x.clone().div_(y),
    "addcmul_": lambda x, y: x.clone().addcmul_(y, x, value=0.5),
    "addcdiv_": lambda x, y: x.clone().addcdiv_(y, x.abs() + 1, value=-2),
    "lerp_": lambda x, y: x.clone().lerp_(y, 0.25),
}


@pytest.fixture
def operands():
    torch.manual_seed(3)
    return torch.randn(4, 5), torch.randn(4, 5)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_results_equal_cpu_also_broadcast_and_strided(npu, operands, name):
    op = BINARY[name]
    a, b = operands
    same(op(a.to(npu), b.to(npu)), op(a, b))
    same(op(a.to(npu), b[:1].to(npu)), op(a, b[:1]))  # broadcasting
    same(op(a.t().to(npu).t(), b.to(npu)[:, ::1]), op(a, b))  # non-contiguous first operand
    same(op(a.to(npu)[:, 1::2], b.to(npu)[:, :4:2]), op(a[:, 1::2], b[:, :4:2]))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_a_cpu_tensor_with_an_npu_tensor_raises_either_way_round(npu, operands, name):
    op = BINARY[name]
    a, b = operands
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device.*npu:0 and cpu"):
        op(a.to(npu), b)
    with pytest.raises(RuntimeError, match=r"Expected all tensors to be on the same device.*npu:0 and cpu"):
        op(a, b.to(npu))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_two_npu_devices_raise(operands, name):
    op = BINARY[name]
    a, b = operands
    with pytest.raises(RuntimeError, match="found at least two devices, npu:0 and npu:1"):
        op(a.to("npu:0"), b.to("npu:1"))


def test_zero_dim_cpu_tensors_are_scalars(npu, operands):
    a, _ = operands
    d = a.to(npu)
    s = torch.tensor(2.5)
    same(d + s, a + s)
    same(s - d, s - a)  # the CPU scalar first: npu still decides the device
    same(d * torch.tensor(3), a * torch.tensor(3))
    same(d.clone().div_(s), a.clone().div_(s))
    same(d.clone().addcmul_(d, s), a.clone().addcmul_(a, s))
    same(d.clone().lerp_(s.expand(()), 0.5), a.clone().lerp_(s, 0.5))


@pytest.mark.parametrize(
    "make",
    [
        lambda: (torch.arange(6), torch.randn(6)),  # int64 and float32
        lambda: (torch.arange(6, dtype=torch.int32), torch.arange(6, dtype=torch.uint8)),
        lambda: (torch.randn(6, dtype=torch.bfloat16), torch.randn(6, dtype=torch.float64)),
        lambda: (torch.randn(6, dtype=torch.complex64), torch.randn(6)),
        lambda: (torch.arange(1, 7), torch.tensor(2.5, dtype=torch.float64)),  # a CPU scalar does not promote to double
    ],
    ids=["int64-float32", "int32-uint8", "bfloat16-float64", "complex64-float32", "int64-cpu-scalar"],
)
def test_type_promotion_is_cpu_s(npu, make):
    a, b = make()
    bd = b if b.dim() == 0 else b.to(npu)
    for op in (torch.add, torch.sub, torch.mul, torch.div):
        if op is torch.sub and a.dtype == torch.bool:
            continue
        r = op(a.to(npu), bd)
        assert r.dtype == op(a, b).dtype, op
        same(r, op(a, b))


@pytest.mark.parametrize(
    "dtype",
    [torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float64, torch.complex64],
)
def test_operands_of_one_dtype_give_cpu_s_results_errors_and_strides(npu, dtype):
    """Operands of one dtype on one device run CPU's structured implementation on the device
    tensors themselves; every dtype its kernels serve must come out as CPU's, and what CPU
    refuses (sub of bools, integer division in place) must be refused with CPU's words."""
    torch.manual_seed(4)
    a = (torch.randn(2, 3, 4, 5) * 4).to(dtype)
    b = (torch.randn(2, 3, 4, 5) * 4 + 5).to(dtype)
    cl = torch.channels_last
    cases = list(BINARY.items()) + [("sqrt", lambda x, y: torch.sqrt(x.abs() if x.dtype != torch.bool else x))]
    for name, op in cases:
        for x, y in ((a, b), (a.to(memory_format=cl), b.to(memory_format=cl)), (a[:, 1:], b[:1, 1:])):
            try:
                expected = op(x, y)
            except RuntimeError as cpu_error:
                with pytest.raises(RuntimeError) as npu_error:
                    op(x.to(npu), y.to(npu))
                assert str(npu_error.value) == str(cpu_error), name
                continue
            result = op(x.to(npu), y.to(npu))
            assert result.dtype == expected.dtype, name
            assert result.stride() == expected.stride(), name  # channels-last stays channels-last
            same(result, expected)


def test_named_operands_keep_their_names_as_on_cpu(npu):
    try:
        x = torch.randn(2, 3, names=("N", "C"))
        expected = x + x, x.clone().mul_(x), x.sqrt()
    except (RuntimeError, TypeError):  # a release without named tensors (2.13 dropped names=)
        pytest.skip("this torch has no named tensors")
    d = x.to(npu)
    result = d + d, d.clone().mul_(d), d.sqrt()
    assert [r.names for r in result] == [e.names for e in expected]
    same([r.rename(None) for r in result], [e.rename(None) for e in expected])


def test_an_in_place_op_that_cannot_hold_the_promoted_type_raises_as_on_cpu(npu):
    i = torch.arange(4)
    with pytest.raises(RuntimeError, match="can't be cast") as on_cpu:
        i.clone().add_(torch.randn(4))
    with pytest.raises(RuntimeError, match="can't be cast") as on_npu:
        i.to(npu).add_(torch.randn(4, device=npu))
    assert str(on_npu.value) == str(on_cpu.value)


def test_conjugate_and_negative_views_are_read_as_such(npu):
    torch.manual_seed(0)
    c = torch.randn(5, dtype=torch.complex64)
    d = c.to(npu)
    for op in (torch.add, torch.sub, torch.mul, torch.div):
        same(op(d.conj(), d), op(c.conj(), c))
        same(op(d, d.conj()), op(c, c.conj()))
        same(op(d._neg_view(), d), op(c._neg_view(), c))
    same(d.clone().mul_(d.conj()), c.clone().mul_(c.conj()))
    same(d.conj().sum(), c.conj().sum())


def test_host_aliases_reused_across_calls_take_each_operand_as_it_is(npu):
    """The direct kernels recycle their host aliases (one per device operand) from call to
    call: nothing of an earlier operand (dtype, conj/neg bit, shape, offset, bytes) may leak
    into a later one."""
    torch.manual_seed(1)
    c = torch.randn(6, dtype=torch.complex64)
    f = torch.randn(3, 4, dtype=torch.float64)
    i = torch.arange(12, dtype=torch.int32).reshape(4, 3)
    dc, df, di = c.to(npu), f.to(npu), i.to(npu)
    for _ in range(3):  # each round reuses the aliases the previous calls handed back
        same(torch.mul(dc.conj(), dc._neg_view()), torch.mul(c.conj(), c._neg_view()))
        same(torch.add(dc, dc), torch.add(c, c))
        same(torch.sub(df[1:, ::2], df[:2, 1::2]), torch.sub(f[1:, ::2], f[:2, 1::2]))
        same(torch.add(di.t(), di.t()[:1]), torch.add(i.t(), i.t()[:1]))
        same(df.sum(dim=0), f.sum(dim=0))
        same(dc.clone().mul_(dc.conj()), c.clone().mul_(c.conj()))


def test_zero_tensors_read_as_zeros(npu):
    z = torch._efficientzerotensor(3, device=npu)
    x = torch.randn(3)
    for op in (torch.add, torch.sub, torch.mul):
        same(op(z, x.to(npu)), op(torch._efficientzerotensor(3), x))
        same(op(x.to(npu), z), op(x, torch._efficientzerotensor(3)))


def test_in_place_ops_return_the_tensor_itself_and_write_through_views(npu, operands):
    a, b = operands
    d, e = a.to(npu), b.to(npu)
    ptr = d.data_ptr()
    for name in ("add_", "sub_", "mul_", "div_"):
        assert getattr(d, name)(e) is d
    assert d.addcmul_(e, e) is d and d.addcdiv_(e, e.abs() + 1) is d and d.lerp_(e, 0.5) is d
    assert d.data_ptr() == ptr
    c = a.clone()
    for name in ("add_", "sub_", "mul_", "div_"):
        getattr(c, name)(b)
    c.addcmul_(b, b).addcdiv_(b, b.abs() + 1).lerp_(b, 0.5)
    same(d, c)
    base_c, base_d = a.clone(), a.to(npu)
    base_c[1:3].mul_(b[1:3])
    base_d[1:3].mul_(e[1:3])
    same(base_d, base_c)


def test_in_place_ops_see_their_operands_alias_the_output(npu):
    x = torch.arange(8.0)
    d = x.to(npu)
    same(d.clone().add_(d), x.clone().add_(x))  # full overlap is allowed
    d2, x2 = d.clone(), x.clone()
    same(d2.mul_(d2), x2.mul_(x2))
    # Partial overlap is refused: the host aliases of one device storage must be one host
    # storage, or the overlap check would not see it.
    with pytest.raises(RuntimeError, match="unsupported operation") as on_cpu:
        x[1:].add_(x[:-1])
    with pytest.raises(RuntimeError, match="unsupported operation") as on_npu:
        d[1:].add_(d[:-1])
    assert str(on_npu.value) == str(on_cpu.value)


def test_broadcasting_into_an_in_place_output_raises_as_on_cpu(npu):
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape") as on_cpu:
        torch.ones(3).add_(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape") as on_npu:
        torch.ones(3, device=npu).add_(torch.ones(2, 3, device=npu))
    assert str(on_npu.value) == str(on_cpu.value)


@pytest.mark.parametrize(
    "reduce",
    [
        lambda t: t.sum(),
        lambda t: t.sum(1),
        lambda t: t.sum((0, 1), keepdim=True),
        lambda t: t.sum(0, dtype=torch.float64),
        lambda t: t.mean(),
        lambda t: t.mean(-1, keepdim=True),
        lambda t: t.t().mean(0),
        lambda t: t.long().sum(1),
        lambda t: (t > 0).sum(),
        lambda t: t.sqrt(),
        lambda t: t.abs()[:, ::2].sqrt(),
    ],
    ids=[
        "sum",
        "sum-dim",
        "sum-keepdim",
        "sum-dtype",
        "mean",
        "mean-keepdim",
        "mean-strided",
        "sum-int",
        "sum-bool",
        "sqrt",
        "sqrt-strided",
    ],
)
def test_reductions_and_sqrt_equal_cpu(npu, operands, reduce):
    a, _ = operands
    same(reduce(a.to(npu)), reduce(a))


def test_mean_of_an_integer_tensor_raises_as_on_cpu(npu):
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype") as on_cpu:
        torch.arange(4).mean()
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype") as on_npu:
        torch.arange(4, device=npu).mean()
    assert str(on_npu.value) == str(on_cpu.value)


def test_outputs_live_on_their_inputs_device_and_count_there():
    a = torch.randn(256, device="npu:1")
    before0, before1 = torch.npu.memory_allocated(0), torch.npu.memory_allocated(1)
    outputs = [a + a, a - a, a * a, a / 2, a.sqrt(), a.sum(), a.mean(0, keepdim=True)]
    assert all(o.device == torch.device("npu:1") for o in outputs)
    assert all(o.untyped_storage().device == torch.device("npu:1") for o in outputs)
    assert torch.npu.memory_allocated(0) == before0
    assert torch.npu.memory_allocated(1) - before1 == 5 * 256 * 4 + 4 + 4
    del outputs
    assert torch.npu.memory_allocated(1) == before1


def test_an_output_resized_later_grows_in_device_memory(npu):
    a = torch.randn(4, device=npu)
    r = a + a
    before = torch.npu.memory_allocated()
    r.resize_(1024)
    assert r.untyped_storage().device.type == "npu"
    assert torch.npu.memory_allocated() - before == 1024 * 4 - 4 * 4


@requires("profiler")
def test_profiler_counts_direct_outputs_as_npu_memory(npu):
    x = torch.randn(64, 64, device=npu)
    with torch.autograd.profiler.profile(use_device="npu", profile_memory=True) as prof:
        total = x + x
        x.mul_(2)
    events = {e.key: e for e in prof.key_averages()}

    def device_memory(e):
        if hasattr(e, "self_device_memory_usage"):
            return e.self_device_memory_usage
        return e.self_privateuse1_memory_usage  # torch 2.1-2.3

    assert device_memory(events["aten::add"]) == total.numel() * 4
    assert events["aten::add"].self_cpu_memory_usage == 0  # not counted twice, as CPU memory
    assert device_memory(events["aten::mul_"]) == 0


def test_autograd_through_the_direct_kernels_equals_cpu(npu, operands):
    a, b = operands

    def run(x, y):
        x, y = x.clone().requires_grad_(), y.clone().requires_grad_()
        loss = ((x + y) * (x - y) / (y.abs() + 1)).sqrt().mean() + (x * 2).sum()
        loss.backward()
        return loss.detach(), x.grad, y.grad

    same(run(a.abs().to(npu) + 2, b.to(npu)), run(a.abs() + 2, b))
