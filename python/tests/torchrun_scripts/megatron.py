"""A Megatron-style tensor-parallel MLP (tensor parallel 2, data parallel over the rest) whose
process groups live in a module's globals (megatron_state). CPU. Saves each step's loss and the
final weights and gradients of this rank's shards.
Usage: torchrun --nproc-per-node N megatron.py OUT_DIR   (N even)"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

import megatron_layers
import megatron_state


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    megatron_state.initialize_model_parallel(2)
    torch.manual_seed(0)
    w1, b1, w2, b2 = torch.randn(16, 8) * 0.3, torch.randn(16) * 0.1, torch.randn(8, 16) * 0.3, \
        torch.randn(8) * 0.1
    up = megatron_layers.ColumnParallelLinear(w1, b1)
    down = megatron_layers.RowParallelLinear(w2, b2)
    params = list(up.parameters()) + list(down.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    dp_group = megatron_state.get_data_parallel_group()
    torch.manual_seed(7 + dist.get_rank(group=dp_group))  # each data-parallel replica its batch
    losses = []
    for step in range(3):
        x, y = torch.randn(4, 8), torch.randn(4, 8)
        opt.zero_grad()
        loss = nn.functional.mse_loss(down(torch.relu(up(x))), y)
        loss.backward()
        for p in params:
            dist.all_reduce(p.grad, group=dp_group)
            p.grad /= dist.get_world_size(group=dp_group)
        opt.step()
        losses.append(loss.detach())
    torch.save({"losses": torch.stack(losses), "weights": [p.detach() for p in params],
                "grads": [p.grad for p in params]},
               os.path.join(sys.argv[1], "megatron.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
