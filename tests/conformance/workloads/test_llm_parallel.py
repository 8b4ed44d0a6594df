"""LLM parallelism on npu over npu_gloo: 2 processes, compared with 1-process CPU training.

Each case trains llm_data's GPT-2 for a few AdamW steps on ``npu:0`` and ``npu:1``
(llm_worker.py) and compares the full parameters with the same training on CPU, computed
beside the ranks in a fresh process; every process runs one intra-op thread (ranks.py says
why: that is what keeps the bitwise comparisons bitwise whatever ran before).

- FSDP (data parallel, sharded parameters): each rank's gradient is divided by the world
  size and the halves summed, as the CPU reference does, with the same kernels: bit for bit
  (to rounding on 2.1-2.3, where attention runs another kernel: FSDP_TOLERANCE).
- FSDP2: measured bit for bit on torch 2.13; on 2.8 the parameters differ from the CPU
  reference by up to 1.3e-4 after 3 steps (the first step's update already differs in the
  last bits and AdamW's normalisation amplifies that for near-zero gradients); the cause in
  2.8's FSDP2 is not found yet, so the case states FSDP2_TOLERANCE on every release.
- Tensor parallel: RowwiseParallel splits the contraction of ``out`` between the ranks and
  all-reduces the two partial products, where CPU sums over the whole row in one GEMM, so
  results agree to float32 rounding (measured max difference 5.6e-6: TP_TOLERANCE).
- DDP + torch.compile (inductor), with npu:0 current on both ranks: inductor's fused kernels
  round differently from eager ones (COMPILED_STEPS).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import shims

from ..support import requires
from .ranks import run_ranks, start_reference

pytestmark = pytest.mark.suite("workloads")

WORLD = 2
TP_TOLERANCE = {"rtol": 1e-4, "atol": 5e-5}
FSDP2_TOLERANCE = {"rtol": 1e-3, "atol": 1e-3}
COMPILED_STEPS = {"rtol": 1e-4, "atol": 5e-5}  # DDP + inductor after 3 AdamW steps: 6.2e-6 on 2.13
# torch 2.1-2.3 (capability sdpa_cpu_kernels absent): npu's attention takes the math
# composite where CPU takes its flash kernel, so FSDP agrees to rounding there (measured
# 6.5e-6 on 2.1), and bit for bit from 2.4.
FSDP_TOLERANCE = {} if shims.capability("sdpa_cpu_kernels") is None else {"rtol": 1e-4, "atol": 5e-5}


def _run(case: str, tmp_path: Path, *extra: str, one_thread: bool = True) -> list:
    return run_ranks(
        Path(__file__).with_name("llm_worker.py"), tmp_path, WORLD, case, extra=extra, one_thread=one_thread
    )


def _data_parallel(tmp_path: Path, one_thread: bool = True):
    """The CPU data-parallel training the ranks must match, started now in its own process."""
    return start_reference("llm_data", "reference_data_parallel", tmp_path, str(WORLD), one_thread=one_thread)


def _close(got: list, expected: list, **tolerance) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        torch.testing.assert_close(torch.tensor(g), torch.tensor(e), **tolerance)


@requires("distributed")
def test_collectives_fsdp_and_dtensor_need_work_on_npu_tensors(npu, tmp_path):
    results = _run("collectives", tmp_path)
    for rank, r in enumerate(results):
        assert r["on_device"]
        assert r["all_gather_into_tensor"] == [1.0, 1.0, 2.0, 2.0]
        # rank r gets chunk r of sum over ranks of arange(4) * (rank + 1)
        assert r["reduce_scatter_tensor"] == [3.0 * (2 * rank), 3.0 * (2 * rank + 1)]
        # DeviceMesh reads it ("ProcessGroup name not set" before); torch 2.1 groups have no name
        assert r["group_name"] or not hasattr(torch.distributed.ProcessGroup, "group_name")
        assert r["mesh"] == "npu"
    assert results[0]["group_name"] == results[1]["group_name"]


@requires("distributed")
def test_destroying_groups_right_after_their_collectives_does_not_hang(npu, tmp_path):
    # 200 groups: without the fix, 2 runs of 2 hung before their 100th
    results = _run("teardown", tmp_path, "200")
    for r in results:
        assert r == {"groups": 200, "total": 200 * 1024 * 2 * 2.0}  # all_reduce of ones over 2 ranks, gathered twice


@requires("fsdp")
def test_fsdp_gpt2_matches_single_process_cpu_training_bitwise(npu, tmp_path):
    reference = _data_parallel(tmp_path)
    results = _run("fsdp", tmp_path)
    assert results[0]["parameters"] == results[1]["parameters"]
    if FSDP_TOLERANCE:
        _close(results[0]["parameters"], reference.result(), **FSDP_TOLERANCE)
    else:
        assert results[0]["parameters"] == reference.result()


@requires("distributed")
@requires("inductor")
def test_compiled_ddp_gpt2_matches_single_process_cpu_training(npu, tmp_path):
    """DDP + torch.compile, npu:0 current on both ranks: inductor's kernels round
    differently from eager ones, and AdamW's normalisation amplifies that (COMPILED_STEPS)."""
    # At the process's default thread count, ranks and reference alike (as 0.2.1's 66 cells
    # ran it): on torch 2.6 with one intra-op thread, the compiled ranks ended up to 4.7e-3
    # from eager CPU in 15% of the parameters, against 5e-5 at the default; the cause is not
    # found yet. The comparison states a tolerance either way, so no bitwise claim depends on it.
    reference = _data_parallel(tmp_path, one_thread=False)
    results = _run("ddp_compiled", tmp_path, one_thread=False)
    assert results[0]["parameters"] == results[1]["parameters"]  # the replicas stayed in sync
    _close(results[0]["parameters"], reference.result(), **COMPILED_STEPS)


@requires("fsdp2")
def test_fsdp2_gpt2_matches_single_process_cpu_training(npu, tmp_path):
    reference = _data_parallel(tmp_path)
    results = _run("fsdp2", tmp_path)
    assert results[0]["parameters"] == results[1]["parameters"]
    _close(results[0]["parameters"], reference.result(), **FSDP2_TOLERANCE)


@requires("tensor_parallel")
def test_tensor_parallel_gpt2_matches_cpu_training(npu, tmp_path):
    reference = start_reference("llm_data", "reference_full_batch", tmp_path)
    results = _run("tp", tmp_path)
    assert results[0]["parameters"] == results[1]["parameters"]  # gathered: every rank has the same model
    _close(results[0]["parameters"], reference.result(), **TP_TOLERANCE)
    assert results[0]["losses"] == pytest.approx(results[1]["losses"], abs=0)


@requires("fsdp")
@requires("serialization")  # torch.distributed.checkpoint writes tensors with torch.save
def test_distributed_checkpoint_saves_and_loads_the_sharded_state(npu, tmp_path):
    reference = _data_parallel(tmp_path)
    results = _run("dcp", tmp_path, str(tmp_path / "checkpoint"))
    for r in results:
        assert r["shards_on_npu"]
        assert r["loaded"] == r["saved"]  # every parameter restored to the bit
    _close(results[0]["saved"], reference.result(), **(FSDP_TOLERANCE or {"rtol": 0, "atol": 0}))
