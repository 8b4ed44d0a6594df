"""What training code asks the device besides ops: host memory, device facts, timing, the profiler."""

from __future__ import annotations

import json
import os
import time
import warnings

import pytest
import torch

import shims

from .support import requires, same


def _host_memory() -> tuple:
    page = os.sysconf("SC_PAGE_SIZE")
    return page * os.sysconf("SC_AVPHYS_PAGES"), page * os.sysconf("SC_PHYS_PAGES")


# -- host (pinned) memory ------------------------------------------------------------------


@requires("empty_host_cache")
def test_empty_host_cache_after_device_allocations_does_not_crash(npu):
    # Used to end the process with SIGSEGV: no host allocator was registered for npu.
    x = torch.randn(1024, device=npu)
    pinned = (
        torch.randn(256).pin_memory(npu) if shims.capability("default_pin_memory") else torch.randn(256).pin_memory()
    )
    torch.accelerator.empty_host_cache()
    assert pinned.is_pinned()
    torch.accelerator.empty_host_cache()  # again, with nothing pinned
    assert torch.equal(x.cpu(), x.cpu())


@requires("host_allocator")
def test_pinned_memory_is_counted_in_the_host_memory_stats(npu):
    torch.npu.reset_peak_host_memory_stats()
    before = torch.npu.host_memory_stats()
    pinned = torch.empty(1 << 16, dtype=torch.uint8).pin_memory()
    during = torch.npu.host_memory_stats()
    assert pinned.is_pinned()
    assert during["allocated_bytes.current"] - before["allocated_bytes.current"] == 1 << 16
    assert during["allocations.current"] - before["allocations.current"] == 1
    del pinned
    after = torch.npu.host_memory_stats()
    assert after["allocated_bytes.current"] == before["allocated_bytes.current"]
    assert after["allocated_bytes.peak"] >= before["allocated_bytes.current"] + (1 << 16)
    assert torch.npu._core.host_allocator_registered()


def test_pinned_copies_survive_without_a_host_allocator_registry(npu):
    """Before 2.8 (no registry) the same APIs keep working through the hooks."""
    c = torch.randn(64)
    pinned = c.pin_memory(npu) if shims.capability("default_pin_memory") else c.pin_memory()
    assert torch.equal(pinned.to(npu).cpu(), c)
    assert torch.npu._core.host_allocator_registered() == (shims.capability("host_allocator") is None)


# -- device facts ----------------------------------------------------------------------------


def test_device_properties_are_host_facts(npu):
    props = torch.npu.get_device_properties(1)
    _free, total = _host_memory()
    assert props.total_memory == total
    assert props.multi_processor_count == len(os.sched_getaffinity(0))
    assert "npu:1" in props.name
    assert (props.major, props.minor) == torch.npu.get_device_capability(1)
    with pytest.raises(RuntimeError, match="Invalid device index 7"):
        torch.npu.get_device_properties(7)


def test_mem_get_info_is_free_and_total_host_memory(npu):
    free, total = torch.npu.mem_get_info(0)
    host_free, host_total = _host_memory()
    assert total == host_total
    assert 0 < free <= total
    assert abs(free - host_free) < total // 10  # other processes allocate in between


@requires("accelerator")
def test_event_elapsed_time_measures_host_time(npu):
    start, end = (torch.Event(device=npu, enable_timing=True) for _ in range(2))
    start.record()
    time.sleep(0.05)
    end.record()
    end.synchronize()
    assert 45.0 <= start.elapsed_time(end) < 2000.0  # milliseconds


@requires("empty_host_cache")
def test_accelerator_graph_fails_with_a_message_that_names_the_device(npu):
    with pytest.raises(RuntimeError, match="Graph is not supported on device type: npu"):
        torch.accelerator.Graph()


# -- the profiler ----------------------------------------------------------------------------


@requires("profiler")
def test_profiler_times_npu_ops_without_warnings(npu, capfd):
    x = torch.randn(64, 64, device=npu)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with torch.autograd.profiler.profile(use_device="npu") as prof:
            x.mm(x).relu()
    assert "PrivateUse1 used in profiler but not enabled" not in capfd.readouterr().err
    assert any(e.key == "aten::mm" for e in prof.key_averages())


@requires("profiler_device_time")
def test_profiler_reports_npu_op_times(npu):
    x = torch.randn(64, 64, device=npu)
    with torch.autograd.profiler.profile(use_device="npu") as prof:
        x.mm(x)
    mm = next(e for e in prof.key_averages() if e.key == "aten::mm")
    assert _device_time(mm, "self_") > 0


@requires("profiler")
def test_profiler_counts_npu_memory_also_for_fallback_outputs(npu):
    x = torch.randn(64, 64, device=npu)
    with torch.autograd.profiler.profile(use_device="npu", profile_memory=True) as prof:
        empty = torch.empty(1 << 20, device=npu)  # 4 MiB from the device allocator
        product = x.mm(x)  # output made by CPU's kernel and adopted by the device
    events = {e.key: e for e in prof.key_averages()}

    def device_memory(e):
        if hasattr(e, "self_device_memory_usage"):
            return e.self_device_memory_usage
        return e.self_privateuse1_memory_usage  # torch 2.1-2.3

    assert device_memory(events["aten::empty"]) == 4 << 20
    assert device_memory(events["aten::mm"]) == product.numel() * 4
    assert events["aten::mm"].self_cpu_memory_usage == 0  # not counted twice, as CPU memory
    del empty


@requires("profiler")
def test_profiler_chrome_trace_holds_the_npu_ops(npu, tmp_path):
    x = torch.randn(16, 16, device=npu)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        x.mm(x)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert any(e.get("name") == "aten::mm" for e in events)
    assert any(e.get("name") == "[memory]" and e.get("args", {}).get("Device Type") == 20 for e in events)


# -- ProfilerActivity.PrivateUse1: the core's Kineto plugin (csrc/kineto_plugin.cpp) ---------


def _device_time(event, prefix=""):
    """An event's (``prefix="self_"``: self) device time; torch 2.1-2.3 name it after the
    device kind (``privateuse1_time_total``)."""
    found = getattr(event, f"{prefix}device_time_total", None)
    return getattr(event, f"{prefix}privateuse1_time_total") if found is None else found


def _device_profile(*activities):
    from torch.profiler import ProfilerActivity, profile

    return profile(activities=[ProfilerActivity.CPU, *activities])


def _npu_events(prof):
    """The device events of a profile: the npu op events the core handed Kineto."""
    return [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]


@requires("profiler_activity")
def test_profiler_activity_shows_npu_events_with_device_time_in_key_averages(npu):
    x, w = torch.randn(64, 64), torch.randn(64, 64)
    xd, wd = x.to(npu), w.to(npu)
    with _device_profile(torch.profiler.ProfilerActivity.PrivateUse1) as prof:
        out = xd.mm(wd) + xd
    same(out, x.mm(w) + x)
    events = {e.key: e for e in prof.key_averages()}
    for op in ("aten::mm", "aten::add"):
        kernel = events[f"{op} (npu)"]  # the device's event for the op
        assert kernel.device_type == torch.autograd.DeviceType.PrivateUse1
        assert kernel.count == 1 and kernel.device_time_total > 0
        assert kernel.self_cpu_time_total == 0  # device time only, not counted as CPU time
        # ... and the CPU op that issued it carries its time as device time
        assert events[op].self_device_time_total == pytest.approx(kernel.device_time_total)
    assert {e.device_index for e in _npu_events(prof)} == {torch.npu.current_device()}


@requires("profiler_activity")
def test_profiler_activity_events_name_their_device_and_follow_backward(npu):
    second = torch.device("npu", 1)
    x = torch.randn(8, 8, device=second, requires_grad=True)
    with _device_profile(torch.profiler.ProfilerActivity.PrivateUse1) as prof:
        x.mm(x).sum().backward()  # backward runs on autograd's thread for npu:1
    assert x.grad is not None
    mm_kernels = [e for e in _npu_events(prof) if e.name == "aten::mm (npu)"]
    assert len(mm_kernels) == 3  # forward, and two in the backward of mm
    assert {e.device_index for e in _npu_events(prof)} == {1}
    # every mm kernel is attributed to an aten::mm CPU op, the backward ones included
    cpu_mm = [e for e in prof.events() if e.name == "aten::mm" and e.device_type == torch.autograd.DeviceType.CPU]
    assert sorted(len(e.kernels) for e in cpu_mm) == [1, 1, 1]


@requires("profiler_activity")
def test_profiler_activity_records_one_event_per_op_also_when_a_direct_kernel_hands_over(npu):
    """Integer div promotes to float: the direct kernel gives the call to the fallback, and
    the profile still shows one device event for it, as for a float div it runs itself."""
    a, b = torch.arange(1, 7), torch.arange(2, 8)
    with _device_profile(torch.profiler.ProfilerActivity.PrivateUse1) as prof:
        ints = torch.div(a.to(npu), b.to(npu))
        floats = torch.div(a.float().to(npu), b.float().to(npu))
    same(ints, torch.div(a, b))
    same(floats, torch.div(a.float(), b.float()))
    assert [e.name for e in _npu_events(prof) if e.name == "aten::div (npu)"] == ["aten::div (npu)"] * 2


@requires("profiler_activity")
def test_profiler_activity_events_are_in_the_chrome_trace(npu, tmp_path):
    x = torch.randn(32, 32, device=npu)
    with _device_profile(torch.profiler.ProfilerActivity.PrivateUse1) as prof:
        x.mm(x).relu()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernels = {e["name"]: e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"}
    assert {"aten::mm (npu)", "aten::relu (npu)"} <= set(kernels)
    mm = kernels["aten::mm (npu)"]
    assert mm["dur"] > 0 and mm["args"]["device"] == "npu:0"
    # its row is the device's, named after it ...
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert names[mm["pid"]] == "npu"
    # ... and it points at the CPU op that issued it, which encloses it in time
    cpu_mm = next(e for e in events if e.get("cat") == "cpu_op" and e.get("name") == "aten::mm")
    assert mm["args"]["External id"] == cpu_mm["args"]["External id"]
    assert cpu_mm["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= cpu_mm["ts"] + cpu_mm["dur"] + 1  # 1 us: rounding


@requires("profiler")
def test_profiler_records_no_npu_events_when_the_activity_is_not_requested(npu, tmp_path):
    x = torch.randn(32, 32, device=npu)
    x.mm(x)  # outside any profile: nothing is recorded, nothing carried into the next one
    with _device_profile() as prof:  # CPU only
        x.mm(x)
    assert _npu_events(prof) == []
    assert _device_time(next(e for e in prof.key_averages() if e.key == "aten::mm")) == 0
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    assert not [e for e in json.loads(path.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    if shims.capability("profiler_activity") is None:  # and a profile that asks still gets its events
        with _device_profile(torch.profiler.ProfilerActivity.PrivateUse1) as again:
            x.mm(x)
        assert [e.name for e in _npu_events(again)] == ["aten::mm (npu)"]
