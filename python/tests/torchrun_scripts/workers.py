"""What a plain PyTorch training script does around DDP: DataLoader worker processes over a
DistributedSampler (forked, the Linux default, from a Dataset that sleeps as one reading files
does; and from a fork server, Python 3.14's default), activation checkpointing with dropout inside
the checkpointed block (recomputed in backward from the rank's saved random state), and
torch.compile of the DDP model (TorchDynamo + Inductor, CPU). Checks that every rank's workers
see its RANK and read its own shard; saves the losses, weights and gradients.
Usage: torchrun --nproc-per-node N workers.py OUT_DIR"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Files(Dataset):
    """Sample i, as read from a file (a short sleep), with the RANK its worker sees."""
    def __init__(self):
        torch.manual_seed(0)
        self.x, self.y = torch.randn(32, 6), torch.randn(32, 2)

    def __len__(self):
        return 32

    def __getitem__(self, i):
        time.sleep(0.001)
        return self.x[i], self.y[i], i, int(os.environ["RANK"])


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 16))
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        return self.head(torch.relu(checkpoint(self.block, x, use_reentrant=False)))


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    data = Files()
    torch.manual_seed(0)
    model = DDP(Net())
    # Inductor by default; the test suite picks a backend without g++'s minutes (aot_eager)
    compiled = torch.compile(model, backend=os.environ.get("WORKERS_COMPILE_BACKEND", "inductor"))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(10 + rank)  # each rank its own dropout masks
    sampler = DistributedSampler(data, shuffle=True, seed=3)
    loaders = {"fork": DataLoader(data, batch_size=4, sampler=sampler, num_workers=2, timeout=60),
               "forkserver": DataLoader(data, batch_size=4, sampler=sampler, num_workers=1,
                                        multiprocessing_context="forkserver", timeout=60)}
    losses = []
    for epoch, (how, loader) in enumerate(sorted(loaders.items())):
        sampler.set_epoch(epoch)
        seen = []
        for x, y, index, worker_rank in loader:
            assert worker_rank.tolist() == [rank] * len(index), (how, rank, worker_rank)
            seen += index.tolist()
            for m in (model, compiled):  # eager and compiled, each a step (DDP rebuilds its
                # buckets in the second forward: the compiled one)
                opt.zero_grad()
                loss = nn.functional.mse_loss(m(x), y)
                loss.backward()
                opt.step()
                losses.append(loss.detach())
        assert seen == list(sampler), (how, rank, seen)  # this rank's shard, in order
        everyone = [None] * world
        dist.all_gather_object(everyone, seen)
        assert sorted(sum(everyone, [])) == list(range(32)), everyone
    torch.save({"losses": torch.stack(losses),
                "weights": [p.detach() for p in model.parameters()],
                "grads": [p.grad for p in model.parameters()]},
               os.path.join(sys.argv[1], "workers.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
