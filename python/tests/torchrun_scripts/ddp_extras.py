"""DistributedDataParallel beyond the tutorial, as training code uses it: gradient accumulation
with no_sync(), find_unused_parameters=True (a branch taken on some steps), static_graph=True,
communication hooks (fp16 and bf16 compression, PowerSGD with error feedback), and uneven inputs
under the Join context manager (each rank its own number of batches; DDP shadows the missing
all-reduces). CPU. Saves losses, gradients and weights per variant.
Usage: torchrun --nproc-per-node N ddp_extras.py OUT_DIR"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from torch.distributed.algorithms.join import Join
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(nn.Module):
    def __init__(self, side):
        super().__init__()
        self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 4)
        self.side = nn.Linear(16, 4) if side else None  # used on odd steps only

    def forward(self, x, use_side=False):
        h = torch.relu(self.a(x))
        return self.side(h) if use_side else self.b(h)


def train(name, out, steps=4, accumulate=1, hook=None, state=None, uneven=False, **ddp_args):
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(Net(ddp_args.get("find_unused_parameters", False)), **ddp_args)
    if hook is not None:
        model.register_comm_hook(state, hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(100 + rank)
    batches = steps + (rank if uneven else 0)
    losses = []
    with Join([model], enable=uneven):
        for step in range(batches):
            x, y = torch.randn(4, 8), torch.randn(4, 4)
            use_side = ddp_args.get("find_unused_parameters", False) and step % 2 == 1
            last_micro = (step + 1) % accumulate == 0
            if last_micro:
                loss = nn.functional.mse_loss(model(x, use_side), y)
                loss.backward()
                opt.step()
                opt.zero_grad()
            else:
                with model.no_sync():
                    loss = nn.functional.mse_loss(model(x, use_side), y)
                    loss.backward()
            losses.append(loss.detach())
    out[name] = {"losses": torch.stack(losses),
                 "weights": [p.detach().clone() for p in model.parameters()]}


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    out = {}
    train("plain", out)
    train("no_sync", out, accumulate=2)
    train("unused", out, find_unused_parameters=True)
    train("static", out, static_graph=True)
    train("fp16", out, hook=default_hooks.fp16_compress_hook)
    train("bf16", out, hook=default_hooks.bf16_compress_hook)
    state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                                        start_powerSGD_iter=2, min_compression_rate=0.5,
                                        random_seed=0)
    train("powersgd", out, steps=5, hook=powerSGD_hook.powerSGD_hook, state=state)
    train("join", out, uneven=True)
    torch.save(out, os.path.join(sys.argv[1], "ddp_extras.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
