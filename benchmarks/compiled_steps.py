"""torch.compile (inductor) on npu against CPU, in one run, printed as ratios (npu / CPU).

    python benchmarks/compiled_steps.py [--steps 3] [--layers 12]

1. Compile time: the first compiled train step (forward, backward; inductor writes and
   builds C++ kernels) of the same model on each device, inductor's caches off so both
   compile from scratch. Target: npu <= 1.3x CPU.
2. The compiled train step of GPT-2 small's shape (12 layers, width 768, 12 heads, 50257
   tokens, tied embeddings; batch 1 x 64 tokens; AdamW outside the graph): median step,
   CPU and npu alternating. Target: npu <= 1.1x CPU.

npu runs the kernels inductor writes for CPU (shims/inductor.py), so both sides run the
same machine code; the difference is the device's eager ops between graphs (the optimizer)
and its allocations.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def measure(steps: int, layers: int) -> dict:
    os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")  # both sides compile from scratch
    import torch
    import torch._inductor.config

    import shims  # noqa: F401 - activates npu
    from tests.conformance.workloads.models import GPT2

    torch._inductor.config.compile_threads = 1  # the same for both sides; no worker pool start-up in the timing
    # One-time costs (inductor's imports, its precompiled header) would go to whichever side
    # compiles first: pay them before timing, on each device.
    for where in ("cpu", "npu"):
        torch._dynamo.reset()
        torch.compile(lambda x: (x.sin() @ x).sum(-1))(
            torch.randn(8, 8, device=where, requires_grad=True)
        ).sum().backward()
    torch.manual_seed(0)
    cpu = GPT2(vocab=50257, positions=1024, width=768, layers=layers, heads=12)
    dev = copy.deepcopy(cpu).to("npu")
    ids = torch.randint(0, 50257, (1, 64))
    runs, compile_s = {}, {}
    for name, model, batch in (("cpu", cpu, ids), ("npu", dev, ids.to("npu"))):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
        loss = torch.compile(model.loss)

        def step(batch=batch, optimizer=optimizer, loss=loss) -> None:
            optimizer.zero_grad()
            loss(batch).backward()
            optimizer.step()

        torch._dynamo.reset()
        start = time.perf_counter()
        step()  # compiles forward and backward
        compile_s[name] = time.perf_counter() - start
        runs[name] = step
    times = {"cpu": [], "npu": []}
    for name in ("cpu", "npu"):
        runs[name]()  # warm up (optimizer state, allocator)
    for _ in range(steps):
        for name in ("cpu", "npu"):
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    c, d = statistics.median(times["cpu"]), statistics.median(times["npu"])
    return {
        "compile": {
            "cpu_s": round(compile_s["cpu"], 2),
            "npu_s": round(compile_s["npu"], 2),
            "ratio": round(compile_s["npu"] / compile_s["cpu"], 3),
        },
        "train_step": {"cpu_s": round(c, 3), "npu_s": round(d, 3), "ratio": round(d / c, 3)},
        "torch": torch.__version__,
        "layers": layers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--layers", type=int, default=12, help="GPT-2 small has 12")
    args = parser.parse_args()
    print(json.dumps(measure(args.steps, args.layers), indent=2))


if __name__ == "__main__":
    main()
