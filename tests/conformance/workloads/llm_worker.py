"""One rank of an LLM-parallelism case (started as a script, twice; see test_llm_parallel.py).

    python llm_worker.py CASE RANK WORLD INIT_FILE OUT_JSON [ARG]  (dcp: a folder; teardown: a count)

CASE is ``collectives``, ``teardown``, ``fsdp``, ``fsdp2``, ``tp``, ``dcp`` or ``ddp_compiled``. Each trains llm_data's
GPT-2 on ``npu:RANK`` over the ``npu_gloo`` group (or checks the collectives those need)
and writes the losses and the full (unsharded) parameters as JSON, for the test to compare
with the same training on CPU in one process.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    case, rank, world, init_file, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    import torch
    import torch.distributed as dist

    import shims  # noqa: F401 - activates npu and registers its process group backend

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import llm_data

    device = torch.device("npu", rank)
    torch.npu.set_device(device)
    dist.init_process_group("npu_gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    run = {
        "collectives": collectives,
        "teardown": teardown,
        "fsdp": fsdp,
        "fsdp2": fsdp2,
        "tp": tensor_parallel,
        "dcp": checkpoint,
        "ddp_compiled": ddp_compiled,
    }[case]
    result = run(llm_data, rank, world, device, *sys.argv[6:])
    dist.barrier()
    dist.destroy_process_group()
    with open(out, "w") as fh:
        json.dump(result, fh)


def _mesh(world: int):
    try:
        from torch.distributed.device_mesh import init_device_mesh
    except ImportError:  # torch 2.1
        from torch.distributed._tensor.device_mesh import init_device_mesh
    return init_device_mesh("npu", (world,))


def collectives(data, rank: int, world: int, device) -> dict:
    import torch
    import torch.distributed as dist

    out = {}
    gathered = torch.empty(2 * world, device=device)
    dist.all_gather_into_tensor(gathered, torch.full((2,), float(rank + 1), device=device))
    out["all_gather_into_tensor"] = gathered.cpu().tolist()
    scattered = torch.empty(2, device=device)
    dist.reduce_scatter_tensor(scattered, torch.arange(2.0 * world, device=device) * (rank + 1))
    out["reduce_scatter_tensor"] = scattered.cpu().tolist()
    # The group's name and its backend for npu: what DeviceMesh and c10d's dispatcher ops ask.
    group = dist.group.WORLD
    out["group_name"] = group.group_name if hasattr(group, "group_name") else None
    out["npu_backend"] = group._get_backend(device).__class__.__name__ if hasattr(group, "_get_backend") else None
    mesh = _mesh(world)
    out["mesh"] = str(mesh.device_type)
    out["on_device"] = all(t.device == device for t in (gathered, scattered))
    return out


def teardown(data, rank: int, world: int, device, groups: str) -> dict:
    """Groups destroyed right after their collectives, as FSDP's and DeviceMesh's are at the end.

    gloo's destructor joins its worker threads while a worker may still be freeing the last
    collective's tensors, which takes the GIL; before the fix this hung in about one of 60.
    """
    import torch
    import torch.distributed as dist

    total = 0.0
    for _ in range(int(groups)):
        group = dist.new_group(list(range(world)))
        t = torch.ones(1024, device=device)
        dist.all_reduce(t, group=group)  # the Python group's path
        gathered = torch.empty(1024 * world, device=device)
        dist.all_gather_into_tensor(gathered, t, group=group)  # the C++ backend's path
        total += float(gathered.sum())
        dist.destroy_process_group(group)
    return {"groups": int(groups), "total": total}


def _result(data, losses, parameters) -> dict:
    return {"losses": losses, "parameters": [p.detach().cpu().flatten().tolist() for p in parameters]}


def fsdp(data, rank: int, world: int, device) -> dict:
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    model = FSDP(data.make_model().to(device), device_id=device)
    losses = data.train_data_parallel(model, rank, world, device)
    with FSDP.summon_full_params(model):
        return _result(data, losses, model.parameters())


def fsdp2(data, rank: int, world: int, device) -> dict:
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # torch 2.4-2.5
        from torch.distributed._composable.fsdp import fully_shard

    model = data.make_model().to(device)
    fully_shard(model, mesh=_mesh(world))
    losses = data.train_data_parallel(model, rank, world, device)
    return _result(data, losses, [p.full_tensor() for p in model.parameters()])


def ddp_compiled(data, rank: int, world: int, device) -> dict:
    """DDP around the model, compiled with inductor, with npu:0 current on every rank (a job
    that never calls set_device): DDP's reducer calls the group from compiled code, and
    rank 1's compiled graphs run on npu:1."""
    import torch
    import torch._inductor.config as config
    from torch.nn.parallel import DistributedDataParallel as DDP

    config.compile_threads = 1
    torch.npu.set_device(0)
    model = data.make_model().to(device)
    compiled = torch.compile(DDP(model, device_ids=[device]))
    losses = data.train_data_parallel(compiled, rank, world, device)
    return _result(data, losses, model.parameters())


def tensor_parallel(data, rank: int, world: int, device) -> dict:
    from torch.distributed.tensor.parallel import parallelize_module

    model = data.make_model().to(device)
    parallelize_module(model, _mesh(world), data.tensor_parallel_plan())
    losses = data.train(model, data.batches(), device)
    return _result(data, losses, [_full(p) for p in model.parameters()])


def _full(p):
    """A parameter's whole value: DTensors are gathered, replicated parameters are as they are."""
    if hasattr(p, "full_tensor"):
        return p.full_tensor()
    if hasattr(p, "redistribute"):  # torch 2.1's DTensor
        from torch.distributed._tensor import Replicate

        return p.redistribute(p.device_mesh, [Replicate()] * p.device_mesh.ndim).to_local()
    return p


def checkpoint(data, rank: int, world: int, device, folder: str) -> dict:
    """Train with FSDP, save the sharded state with torch.distributed.checkpoint, load it into
    a fresh FSDP model, and report both models' full parameters."""
    import torch
    import torch.distributed.checkpoint as dcp
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import StateDictType

    trained = FSDP(data.make_model().to(device), device_id=device)
    data.train_data_parallel(trained, rank, world, device)
    with FSDP.state_dict_type(trained, StateDictType.SHARDED_STATE_DICT):
        state = trained.state_dict()
        shards_on_npu = all(_local(v).device == device for v in state.values() if isinstance(v, torch.Tensor))
        (dcp.save if hasattr(dcp, "save") else dcp.save_state_dict)(state, storage_writer=dcp.FileSystemWriter(folder))

    torch.manual_seed(1234)  # different weights: loading must replace every one
    fresh = FSDP(data.make_model(seed=99).to(device), device_id=device)
    with FSDP.state_dict_type(fresh, StateDictType.SHARDED_STATE_DICT):
        state = fresh.state_dict()
        (dcp.load if hasattr(dcp, "load") else dcp.load_state_dict)(state, storage_reader=dcp.FileSystemReader(folder))
        fresh.load_state_dict(state)
    with FSDP.summon_full_params(trained), FSDP.summon_full_params(fresh):
        return {
            "saved": [p.detach().cpu().flatten().tolist() for p in trained.parameters()],
            "loaded": [p.detach().cpu().flatten().tolist() for p in fresh.parameters()],
            "shards_on_npu": shards_on_npu,
        }


def _local(t):
    if hasattr(t, "to_local"):
        return t.to_local()
    if hasattr(t, "local_tensor"):  # ShardedTensor (torch 2.1's sharded state dict)
        return t.local_tensor()
    return t


if __name__ == "__main__":
    main()
