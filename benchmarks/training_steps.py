"""Training steps on npu and on CPU, in one run, printed as ratios (npu time / CPU time).

    python benchmarks/training_steps.py [--steps 3] [--skip-ddp]

1. A GPT-2-sized train step (GPT-2 small's shape: 12 layers, width 768, 12 heads, 50257
   tokens, tied embeddings; batch 1 x 64 tokens; AdamW): forward, backward, optimizer
   step. Target: npu <= 1.3x CPU. Timed as the median step, CPU and npu alternating.
2. A DDP step over two processes: npu_gloo on npu tensors against gloo on CPU tensors,
   same model (a 4-layer MLP of width 1024) and data; one intra-op thread per process so
   the two ranks do not fight over the two cores. Reports each side's median step.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _gpt2_step_ratio(steps: int) -> dict:
    import torch

    import shims  # noqa: F401 - activates npu
    from tests.conformance.workloads.models import GPT2

    torch.manual_seed(0)
    cpu = GPT2(vocab=50257, positions=1024, width=768, layers=12, heads=12)
    dev = copy.deepcopy(cpu).to("npu")
    ids = torch.randint(0, 50257, (1, 64))
    runs = {}
    for name, model, batch in (("cpu", cpu, ids), ("npu", dev, ids.to("npu"))):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)

        def step(model=model, batch=batch, optimizer=optimizer) -> None:
            optimizer.zero_grad()
            model.loss(batch).backward()
            optimizer.step()

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
    return {"cpu_s": round(c, 3), "npu_s": round(d, 3), "ratio": round(d / c, 3)}


def _ddp_worker(rank: int, world: int, device: str, init_file: str, steps: int, out: str) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    if device == "npu":
        import shims  # noqa: F401

        torch.npu.set_device(rank)
        where = torch.device("npu", rank)
        backend = None  # the device's default: npu_gloo
    else:
        where = torch.device("cpu")
        backend = "gloo"
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world)
    torch.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(where)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank] if device == "npu" else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-3, foreach=True)
    x = torch.randn(32, 1024, device=where)
    times = []
    for i in range(steps + 1):
        start = time.perf_counter()
        optimizer.zero_grad()
        ddp(x).square().mean().backward()
        optimizer.step()
        if i:  # the first step builds DDP's buckets
            times.append(time.perf_counter() - start)
    dist.destroy_process_group()
    with open(out, "w") as fh:
        json.dump(times, fh)


def _ddp_median(device: str, steps: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--ddp-worker",
                    str(rank),
                    "2",
                    device,
                    f"{tmp}/init",
                    str(steps),
                    f"{tmp}/{rank}.json",
                ]
            )
            for rank in range(2)
        ]
        for proc in procs:
            if proc.wait(timeout=900) != 0:
                raise SystemExit(f"a {device} DDP rank failed")
        samples = [t for rank in range(2) for t in json.loads(Path(f"{tmp}/{rank}.json").read_text())]
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--ddp-steps", type=int, default=10)
    parser.add_argument("--skip-ddp", action="store_true")
    parser.add_argument("--ddp-worker", nargs=6, metavar=("RANK", "WORLD", "DEVICE", "INIT", "STEPS", "OUT"))
    args = parser.parse_args()
    if args.ddp_worker:
        rank, world, device, init, steps, out = args.ddp_worker
        _ddp_worker(int(rank), int(world), device, init, int(steps), out)
        return
    report = {"gpt2_train_step": _gpt2_step_ratio(args.steps)}
    if not args.skip_ddp:
        cpu = _ddp_median("cpu", args.ddp_steps)
        npu = _ddp_median("npu", args.ddp_steps)
        report["ddp_step"] = {"cpu_gloo_s": round(cpu, 4), "npu_gloo_s": round(npu, 4), "ratio": round(npu / cpu, 3)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
