"""The GPT-2, data and training loops of the LLM-parallelism cases, shared by the ranks
(llm_worker.py, on npu) and the single-process CPU references (test_llm_parallel.py)."""

from __future__ import annotations

from typing import Iterator, List

import torch

try:
    from .models import GPT2
except ImportError:  # imported by llm_worker.py as a script's neighbour
    from models import GPT2  # type: ignore[no-redef]

STEPS = 3
BATCH = 4  # sequences per step, split evenly between the ranks in data-parallel cases
LENGTH = 16
VOCAB = 96


def make_model(seed: int = 0) -> GPT2:
    torch.manual_seed(seed)
    return GPT2(vocab=VOCAB)


def batches() -> Iterator[torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    for _ in range(STEPS):
        yield torch.randint(1, VOCAB, (BATCH, LENGTH), generator=g)


def optimizer(parameters) -> torch.optim.Optimizer:
    # The per-tensor loop on both sides: DTensor parameters take it on every release.
    return torch.optim.AdamW(parameters, lr=1e-3, weight_decay=0.1, foreach=False)


def tensor_parallel_plan() -> dict:
    """Megatron-style MLPs: ``fc`` split by output columns, ``out`` by input rows."""
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    plan = {}
    for i in range(len(make_model().blocks)):
        plan[f"blocks.{i}.fc"] = ColwiseParallel()
        plan[f"blocks.{i}.out"] = RowwiseParallel()
    return plan


def lm_loss(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """GPT2.loss, on the logits of the wrapped model's forward: FSDP gathers the parameters
    in its forward() only, so a model method that calls the inner module would bypass it."""
    return torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def train(model: torch.nn.Module, steps, device) -> List[float]:
    """Full batches on every rank (tensor parallel) or on the single CPU reference."""
    opt = optimizer(model.parameters())
    losses = []
    for ids in steps:
        opt.zero_grad()
        loss = lm_loss(model(ids.to(device)), ids.to(device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _shard(ids: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    return ids[rank * len(ids) // world : (rank + 1) * len(ids) // world]


def train_data_parallel(model: torch.nn.Module, rank: int, world: int, device) -> List[float]:
    """This rank's shard of every batch (FSDP averages the gradients over the ranks)."""
    return train(model, (_shard(ids, rank, world) for ids in batches()), device)


def reference_data_parallel(world: int) -> List[List[float]]:
    """What data-parallel training over ``world`` ranks computes, in one CPU process: each
    rank's gradient divided by ``world`` (FSDP divides before reducing), then summed."""
    model = make_model()
    opt = optimizer(model.parameters())
    for ids in batches():
        grads = []
        for rank in range(world):
            model.zero_grad()
            shard = _shard(ids, rank, world)
            lm_loss(model(shard), shard).backward()
            grads.append([p.grad / world for p in model.parameters()])
        for p, *per_rank in zip(model.parameters(), *grads):
            total = per_rank[0]
            for g in per_rank[1:]:
                total = total + g
            p.grad = total
        opt.step()
    return [p.detach().flatten().tolist() for p in model.parameters()]


def reference_full_batch() -> List[List[float]]:
    model = make_model()
    train(model, batches(), "cpu")
    return [p.detach().flatten().tolist() for p in model.parameters()]
