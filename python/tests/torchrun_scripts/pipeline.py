"""A GPipe pipeline schedule, one stage per rank: micro-batches forward through the stages and
gradients back, each hop over batch_isend_irecv. CPU. Saves the last stage's losses and every
stage's gradients.
Usage: torchrun --nproc-per-node N pipeline.py OUT_DIR"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn


def exchange(op, tensor, peer):
    for work in dist.batch_isend_irecv([dist.P2POp(op, tensor, peer)]):
        work.wait()


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)  # each stage its own weights
    stage = nn.Linear(8, 8)
    micro_batches = 3
    saved, losses = [], []
    torch.manual_seed(99)
    inputs = [torch.randn(2, 8) for _ in range(micro_batches)]
    targets = [torch.randn(2, 8) for _ in range(micro_batches)]
    for m in range(micro_batches):  # forward
        if rank == 0:
            x = inputs[m]
        else:
            x = torch.empty(2, 8)
            exchange(dist.irecv, x, rank - 1)
            x.requires_grad_()
        y = torch.tanh(stage(x))
        saved.append((x, y))
        if rank + 1 < world:
            exchange(dist.isend, y.detach(), rank + 1)
    for m in reversed(range(micro_batches)):  # backward
        x, y = saved[m]
        if rank + 1 < world:
            grad = torch.empty(2, 8)
            exchange(dist.irecv, grad, rank + 1)
            y.backward(grad)
        else:
            loss = nn.functional.mse_loss(y, targets[m])
            loss.backward()
            losses.append(loss.detach())
        if rank > 0:
            exchange(dist.isend, x.grad, rank - 1)
    torch.save({"losses": torch.stack(losses) if losses else torch.zeros(0),
                "grads": [p.grad for p in stage.parameters()]},
               os.path.join(sys.argv[1], "pipeline.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
