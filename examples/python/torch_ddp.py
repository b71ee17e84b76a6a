"""An unmodified DistributedDataParallel script on 4 emulated ranks, with TwinCCL as torch 2.x's
backend, and its simulated time on a DGX H100.

    PYTHONPATH=build/python python3 examples/python/torch_ddp.py     (a Python with torch 2.x)

`train` is written for torchrun (init_process_group("gloo"), DDP, a DistributedSampler); inside
twinccl.run(..., torch_distributed=True) DDP's reducer reaches the emulator: NCCL's results, a
misuse named by its line, the trace replayed on the topology.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import twinccl


def train(rank):
    dist.init_process_group("gloo")
    torch.manual_seed(0)  # each rank its own generator (twinccl.run's rank_state="isolated")
    data = TensorDataset(torch.randn(256, 32), torch.randn(256, 1))  # the same on every rank
    model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)))
    sampler = DistributedSampler(data, shuffle=True, seed=1)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()  # DDP all-reduces the gradients here
            opt.step()
        if dist.get_rank() == 0:
            print("epoch %d: loss %.4f" % (epoch, loss.item()))
    dist.destroy_process_group()


if __name__ == "__main__":
    print(twinccl.run(train, world_size=4, torch_distributed=True, topology="dgx-h100"))
