"""The same work on npu and on CPU, in one run, printed as ratios (device time / CPU time).

    python benchmarks/device_ops.py

Device memory is host memory and the device runs the CPU kernels on it without
copying, so large ops should cost what they cost on CPU (target <= 1.05x). Small ops
pay the device's per-op overhead on top of CPU's. Through the boxed fallback that is host
aliases of the inputs and the adoption of the output as device memory. The hot
elementwise ops (add, sub, mul, div, ...) have direct kernels (the core's direct.cpp)
that run CPU's structured implementation on the device tensors themselves, so
16-element adds should cost at most 1.2x CPU.
One intra-op thread, so that both sides measure the same kernels; each case is timed as
the median of several repetitions, alternating CPU and device.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Dict

import torch

import shims  # noqa: F401  (activates npu)


def _median_seconds(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _ratio(make: Callable[[torch.device], Callable[[], object]], repeat: int, rounds: int = 5) -> Dict[str, float]:
    cpu_run, npu_run = make(torch.device("cpu")), make(torch.device("npu"))
    cpu_run(), npu_run()  # warm up
    cpu_t, npu_t = [], []
    for _ in range(rounds):
        cpu_t.append(_median_seconds(cpu_run, repeat))
        npu_t.append(_median_seconds(npu_run, repeat))
    c, d = statistics.median(cpu_t), statistics.median(npu_t)
    return {"cpu_ms": c * 1e3, "npu_ms": d * 1e3, "ratio": d / c}


def big_add(dev: torch.device) -> Callable[[], object]:
    a = torch.randn(16 * 1024 * 1024, device=dev)
    b = torch.randn(16 * 1024 * 1024, device=dev)
    return lambda: torch.add(a, b)


def matmul(dev: torch.device) -> Callable[[], object]:
    a = torch.randn(1024, 1024, device=dev)
    b = torch.randn(1024, 1024, device=dev)
    return lambda: a @ b


def small_adds(dev: torch.device) -> Callable[[], object]:
    a = torch.randn(16, device=dev)
    b = torch.randn(16, device=dev)

    def run() -> None:
        for _ in range(10_000):
            torch.add(a, b)

    return run


CASES = [
    ("16M-element add", big_add, 9, 1.05),
    ("1024x1024 matmul", matmul, 7, 1.05),
    ("10,000 adds of 16 elements", small_adds, 3, 1.2),
]


def main() -> None:
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 intra-op thread; ratio = npu time / CPU time in the same run")
    for name, make, repeat, target in CASES:
        r = _ratio(make, repeat)
        verdict = "ok" if r["ratio"] <= target else "over target"
        print(
            f"{name:<28} cpu {r['cpu_ms']:9.3f} ms  npu {r['npu_ms']:9.3f} ms  ratio {r['ratio']:.2f}  (target <= {target}: {verdict})"
        )


if __name__ == "__main__":
    main()
