"""torchtitan's checkpointing on a 2-D model: FSDP2 over "fsdp" and tensor parallelism
(parallelize_module) over "tp" of a (world/2 x 2) DeviceMesh; the model and optimizer state
saved with torch.distributed.checkpoint (get_state_dict, dcp.save), training continued, then a
fresh model loaded from it (dcp.load, set_state_dict) resumes with the same losses. Also
dcp.async_save, and the full state dict gathered to rank 0 then loaded with
broadcast_from_rank0 (torchtitan's export and its load of a Hugging Face checkpoint). CPU. Saves
the losses, the weights and gradients, the full state dict; checks the checkpoint's file names.
Usage: torchrun --nproc-per-node N checkpoint.py OUT_DIR   (N even)"""
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                     get_state_dict, set_model_state_dict,
                                                     set_state_dict)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module


def build(mesh):
    torch.manual_seed(0)  # the same model on every rank
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    parallelize_module(model, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
    fully_shard(model, mesh=mesh["fsdp"])
    return model, torch.optim.AdamW(model.parameters(), lr=0.01)


def train(model, opt, steps, dp):
    losses = []
    for step in steps:
        batch = torch.Generator().manual_seed(100 * dp + step)  # each replica its own batches
        x, y = torch.randn(4, 8, generator=batch), torch.randn(4, 8, generator=batch)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses


def load(mesh, path):
    model, opt = build(mesh)
    state = dict(zip(("model", "optim"), get_state_dict(model, opt)))
    dcp.load(state, checkpoint_id=path)
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return model, opt


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    # dimension names other than mesh_2d.py's: run_scripts.py runs both in one process, where
    # DTensor caches equal meshes (the earlier one's groups destroyed); torchrun does not
    mesh = init_device_mesh("cpu", (world // 2, 2), mesh_dim_names=("fsdp", "tp"))
    dp = mesh["fsdp"].get_local_rank()
    out = sys.argv[1]
    model, opt = build(mesh)
    losses = train(model, opt, range(2), dp)
    model_state, optim_state = get_state_dict(model, opt)
    dcp.save({"model": model_state, "optim": optim_state}, checkpoint_id=os.path.join(out, "step2"))
    went_on = train(model, opt, range(2, 4), dp)
    model, opt = load(mesh, os.path.join(out, "step2"))
    resumed = train(model, opt, range(2, 4), dp)
    assert all(torch.equal(a, b) for a, b in zip(went_on, resumed)), (went_on, resumed)

    model_state, optim_state = get_state_dict(model, opt)
    done = dcp.async_save({"model": model_state, "optim": optim_state},
                          checkpoint_id=os.path.join(out, "step4"))
    done.result()
    model, opt = load(mesh, os.path.join(out, "step4"))
    losses += resumed + train(model, opt, range(4, 5), dp)

    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True,
                                                                cpu_offload=True))
    exported, _ = build(mesh)
    set_model_state_dict(exported, full if rank == 0 else {},
                         options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
    dist.barrier()
    for step in ("step2", "step4"):  # one file per rank and the metadata, as torchrun's
        files = sorted(os.listdir(os.path.join(out, step)))
        assert files == [".metadata"] + ["__%d_0.distcp" % r for r in range(world)], files
    torch.save({"losses": torch.stack(losses),
                "weights": [p.full_tensor().detach() for p in model.parameters()],
                "grads": [p.grad.full_tensor() for p in model.parameters()],
                # rank 0's only (cpu_offload); still sharded over "tp" (DTensors) in torch 2.15
                "full": [getattr(full[k], "to_local", full[k].detach)().detach() for k in sorted(full)],
                "exported": [p.full_tensor().detach() for p in exported.parameters()]},
               os.path.join(out, "checkpoint.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
