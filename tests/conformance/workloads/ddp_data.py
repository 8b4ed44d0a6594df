"""The model and data of the distributed workload, shared by the ranks and the CPU reference."""

from __future__ import annotations

from typing import Iterator, List, Tuple

import torch

STEPS = 4
BATCH = 16  # split evenly between the ranks


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def batches() -> Iterator[Tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(1)
    for _ in range(STEPS):
        x = torch.randn(BATCH, 8, generator=g)
        yield x, x[:, :4].sin()


def reference_training(world: int) -> List[List[float]]:
    """Single-process CPU training on the same data, with DDP's gradient: each rank's
    gradient of its shard's loss, scaled by 1/world and summed (exact for two ranks)."""
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, foreach=True)
    for x, y in batches():
        grads = []
        for rank in range(world):
            shard = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
            model.zero_grad()
            torch.nn.functional.mse_loss(model(x[shard]), y[shard]).backward()
            grads.append([p.grad * (1.0 / world) for p in model.parameters()])
        for p, *per_rank in zip(model.parameters(), *grads):
            total = per_rank[0]
            for g in per_rank[1:]:
                total = total + g
            p.grad = total
        optimizer.step()
    return [p.detach().flatten().tolist() for p in model.parameters()]
