"""The model and data of the distributed workload, shared by the ranks and the CPU reference."""

from __future__ import annotations

from typing import Iterator, Tuple

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
