"""An FSDP2 training loop (fully_shard on every layer and the root), CPU. Saves each step's loss,
the final (gathered) weights and gradients.
Usage: torchrun --nproc-per-node N fsdp2.py OUT_DIR"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import fully_shard


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)  # the same model on every rank
    model = nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.Linear(16, 16), nn.GELU(),
                          nn.Linear(16, 4))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    torch.manual_seed(100 + rank)  # each rank its own batches
    losses = []
    for step in range(3):
        x, y = torch.randn(4, 12), torch.randn(4, 4)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    torch.save({"losses": torch.stack(losses),
                "weights": [p.full_tensor().detach() for p in model.parameters()],
                "grads": [p.grad.full_tensor() for p in model.parameters()]},
               os.path.join(sys.argv[1], "fsdp2.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
