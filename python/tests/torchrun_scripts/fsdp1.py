"""FSDP1 (FullyShardedDataParallel) training loops, CPU: FULL_SHARD with a per-layer wrap policy,
gradient clipping, a full state dict and the optimizer's (FSDP.optim_state_dict, whose profiler
keeps per-process state around collectives); HYBRID_SHARD over a 2 x (N/2) device mesh (shard
within a row, replicate across rows). FSDP1 frees each all-gather's output with resize_(0): a
backend that leaves a tensor's storage unresizable fails its first backward. Saves each step's
loss and the final full state dicts.
Usage: torchrun --nproc-per-node N fsdp1.py OUT_DIR  (N even)"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FullStateDictConfig, FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import ShardingStrategy, StateDictType
from torch.distributed.fsdp.wrap import ModuleWrapPolicy


def make_model():
    torch.manual_seed(0)  # the same model on every rank
    return nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.Linear(16, 16), nn.GELU(),
                         nn.Linear(16, 4))


def train(model, rank, clip):
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    torch.manual_seed(100 + rank)  # each rank its own batches
    losses = []
    for step in range(3):
        x, y = torch.randn(4, 12), torch.randn(4, 4)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        if clip:
            model.clip_grad_norm_(0.5)
        opt.step()
        losses.append(loss.detach())
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=True, rank0_only=False)):
        state = model.state_dict()
    optim = FSDP.optim_state_dict(model, opt)["state"]
    return torch.stack(losses), state, [optim[k][s] for k in sorted(optim) for s in sorted(optim[k])
                                        if torch.is_tensor(optim[k][s])]


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cpu = torch.device("cpu")
    full = FSDP(make_model(), auto_wrap_policy=ModuleWrapPolicy({nn.Linear}),
                sharding_strategy=ShardingStrategy.FULL_SHARD, device_id=cpu,
                use_orig_params=True)
    full_losses, full_state, full_optim = train(full, rank, clip=True)
    mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("replicate", "shard"))
    hybrid = FSDP(make_model(), sharding_strategy=ShardingStrategy.HYBRID_SHARD, device_id=cpu,
                  device_mesh=mesh)
    hybrid_losses, hybrid_state, _ = train(hybrid, rank, clip=False)
    torch.save({"losses": torch.stack([full_losses, hybrid_losses]),
                "weights": list(full_state.values()) + list(hybrid_state.values()),
                "optimizer": full_optim},
               os.path.join(sys.argv[1], "fsdp1.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
