"""torch's DDP tutorial, CPU: every rank seeds torch with its own seed, builds the model (DDP
broadcasts rank 0's weights), and trains on its own partition of the data through a shuffling
DataLoader, with dropout. Saves each step's loss, the final weights and gradients.
Usage: torchrun --nproc-per-node N ddp_tutorial.py OUT_DIR"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


class ToyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = nn.Linear(10, 16)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.2)
        self.net2 = nn.Linear(16, 5)

    def forward(self, x):
        return self.net2(self.drop(self.relu(self.net1(x))))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1000 + rank)  # each rank its own seed: initial weights, dropout, shuffling
    model = DDP(ToyModel())
    data = torch.Generator().manual_seed(0)
    x, y = torch.randn(8 * world, 10, generator=data), torch.randn(8 * world, 5, generator=data)
    mine = TensorDataset(x[rank::world], y[rank::world])
    loader = DataLoader(mine, batch_size=4, shuffle=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for epoch in range(2):
        for inputs, labels in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(inputs), labels)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
    torch.save({"losses": torch.stack(losses),
                "weights": [p.detach() for p in model.parameters()],
                "grads": [p.grad for p in model.parameters()]},
               os.path.join(sys.argv[1], "ddp_tutorial.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
