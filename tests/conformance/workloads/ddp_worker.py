"""One rank of the workloads group's distributed run (started as a script, twice).

    python ddp_worker.py RANK WORLD INIT_FILE OUT_JSON

Joins the group with ``init_process_group()`` and no backend argument (the device's
default), checks the collectives on npu tensors, then trains a DDP-wrapped model on
``npu:RANK`` with this rank's shard of the data and writes everything as JSON.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    rank, world, init_file, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    import torch
    import torch.distributed as dist

    import shims  # noqa: F401 - activates npu and registers its process group backend

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from ddp_data import batches, make_model

    device = torch.device("npu", rank)
    torch.npu.set_device(device)
    dist.init_process_group(init_method=f"file://{init_file}", rank=rank, world_size=world)
    result = {"backend": str(dist.get_backend()), "collectives": collectives(rank, world, device)}

    model = make_model().to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    optimizer = torch.optim.Adam(ddp.parameters(), lr=1e-2, foreach=True)  # npu's default; the reference uses it too
    losses = []
    for x, y in batches():
        shard = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x[shard].to(device)), y[shard].to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    result["losses"] = losses
    result["parameters"] = [p.detach().cpu().flatten().tolist() for p in model.parameters()]
    result["devices"] = sorted({str(p.device) for p in model.parameters()})
    dist.barrier()
    dist.destroy_process_group()
    with open(out, "w") as fh:
        json.dump(result, fh)


def collectives(rank: int, world: int, device):
    import torch
    import torch.distributed as dist

    out = {}
    t = torch.full((4,), float(rank + 1), device=device)
    dist.all_reduce(t)
    out["all_reduce"] = t.cpu().tolist()
    b = torch.arange(3.0, device=device) * (rank + 1)
    dist.broadcast(b, src=0)
    out["broadcast"] = b.cpu().tolist()
    gathered = [torch.empty(2, device=device) for _ in range(world)]
    dist.all_gather(gathered, torch.full((2,), float(rank), device=device))
    out["all_gather"] = [g.cpu().tolist() for g in gathered]
    scattered = torch.empty(2, device=device)
    dist.reduce_scatter(scattered, [torch.full((2,), float(10 * rank + i), device=device) for i in range(world)])
    out["reduce_scatter"] = scattered.cpu().tolist()
    dist.barrier()
    out["on_device"] = all(x.device == device for x in [t, b, scattered, *gathered])
    return out


if __name__ == "__main__":
    main()
