"""A 2-D DeviceMesh (data parallel x tensor parallel of 2) training an MLP block with tensor and
sequence parallelism (parallelize_module), data-parallel gradients averaged over the mesh's "dp"
dimension. CPU. Saves the loss, the output shard, the gathered gradients and final weights.
Usage: torchrun --nproc-per-node N mesh_2d.py OUT_DIR   (N even)"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard
from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                               SequenceParallel, parallelize_module)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8)

    def forward(self, x):
        return self.down(torch.relu(self.up(self.norm(x))))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world // 2, 2), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    model = parallelize_module(Block(), mesh["tp"], {
        "norm": SequenceParallel(),
        "up": ColwiseParallel(input_layouts=Shard(1)),
        "down": RowwiseParallel(output_layouts=Shard(1)),
    })
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dp, tp = mesh["dp"].get_local_rank(), mesh["tp"].get_local_rank()
    torch.manual_seed(50 + dp)  # each data-parallel replica its own batch
    losses = []
    for step in range(2):
        x = torch.randn(2, 6, 8)[:, tp * 3:tp * 3 + 3]  # this rank's half of the sequence
        opt.zero_grad()
        out = model(x)
        loss = out.pow(2).mean()
        loss.backward()
        for p in model.parameters():  # data parallel: average over the dp dimension
            dist.all_reduce(p.grad.to_local(), group=mesh["dp"].get_group())
            p.grad.to_local().div_(mesh["dp"].size())
        opt.step()
        losses.append(loss.detach())
    torch.save({"losses": torch.stack(losses), "out": (out + 0).detach(),  # a plain tensor
                "weights": [p.full_tensor().detach() for p in model.parameters()],
                "grads": [p.grad.full_tensor() for p in model.parameters()]},
               os.path.join(sys.argv[1], "mesh_2d.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
