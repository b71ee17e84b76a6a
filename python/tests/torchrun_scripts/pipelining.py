"""torch.distributed.pipelining as a user writes it: an MLP of max(8, 2 x world) layers cut into
stages by hand (PipelineStage) and run with ScheduleGPipe, Schedule1F1B (one stage per rank) and
ScheduleInterleaved1F1B, ScheduleLoopedBFS (two stages per rank), and cut by the tracer frontend
(`pipeline()` with `SplitPoint`s, `build_stage`); max(4, world) micro-batches. Each schedule's
step returns the last stage's micro-batch losses; every stage's gradients are saved and checked
against the same model run whole on one rank (no communication) within 1e-6. CPU.
Usage: torchrun --nproc-per-node N pipelining.py OUT_DIR"""
import copy
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe,
                                          ScheduleInterleaved1F1B, ScheduleLoopedBFS,
                                          SplitPoint, pipeline)

WIDTH = 16
MICRO = BATCH = None  # micro-batches (max(4, world)) and rows (2 per micro-batch): main()


class MLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


def loss_fn(output, target):
    return nn.functional.mse_loss(output, target)


def reference(model, x, y):
    """The whole model on this rank: per micro-batch losses and the gradients averaged over the
    micro-batches (the schedules' `scale_grads=True` default divides the sum by their number)."""
    model = copy.deepcopy(model)
    losses = []
    for xm, ym in zip(x.chunk(MICRO), y.chunk(MICRO)):
        loss = loss_fn(model(xm), ym)
        loss.backward()
        losses.append(loss.detach())
    return torch.stack(losses), {n: p.grad / MICRO for n, p in model.named_parameters()}


def stage_module(model, first, count):
    """Layers [first, first + count) of the model as one stage (a copy)."""
    stage = MLP(0)
    stage.layers = nn.ModuleList(copy.deepcopy(model.layers[first:first + count]))
    return stage, first


def run(name, schedule_class, model, x, y, stages_per_rank, out):
    rank, world = dist.get_rank(), dist.get_world_size()
    n_stages = world * stages_per_rank
    per_stage = len(model.layers) // n_stages
    # interleaved: rank r holds stages r, r + world, ... (torch's looped assignment)
    indices = [rank + k * world for k in range(stages_per_rank)]
    modules = [stage_module(model, i * per_stage, per_stage) for i in indices]
    stages = [PipelineStage(m, i, n_stages, torch.device("cpu"))
              for (m, _), i in zip(modules, indices)]
    if stages_per_rank == 1:
        schedule = schedule_class(stages[0], n_microbatches=MICRO, loss_fn=loss_fn)
    else:
        schedule = schedule_class(stages, n_microbatches=MICRO, loss_fn=loss_fn)
    losses = []
    if rank == 0:
        schedule.step(x)
    elif n_stages - 1 in indices:
        schedule.step(target=y, losses=losses)
    else:
        schedule.step()
    grads = {}
    for (module, first), i in zip(modules, indices):
        for k, layer in enumerate(module.layers):
            grads["layers.%d.weight" % (first + k)] = layer.weight.grad
            grads["layers.%d.bias" % (first + k)] = layer.bias.grad
    out[name] = {"losses": torch.stack(losses) if losses else torch.zeros(0), "grads": grads}


def run_traced(model, x, y, out):
    rank, world = dist.get_rank(), dist.get_world_size()
    per_stage = len(model.layers) // world
    split_spec = {"layers.%d" % (k * per_stage): SplitPoint.BEGINNING for k in range(1, world)}
    pipe = pipeline(copy.deepcopy(model), mb_args=(x.chunk(MICRO)[0],), split_spec=split_spec)
    stage = pipe.build_stage(rank, torch.device("cpu"))
    schedule = ScheduleGPipe(stage, n_microbatches=MICRO, loss_fn=loss_fn)
    losses = []
    if rank == 0:
        schedule.step(x)
    elif rank == world - 1:
        schedule.step(target=y, losses=losses)
    else:
        schedule.step()
    grads = {n: p.grad for n, p in stage.submod.named_parameters()}
    out["traced"] = {"losses": torch.stack(losses) if losses else torch.zeros(0),
                     "grads": {n.replace("_", "."): g for n, g in grads.items()}}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    global MICRO, BATCH
    MICRO = max(4, world)  # interleaved 1F1B wants a multiple of the ranks
    BATCH = 2 * MICRO
    torch.manual_seed(0)
    model = MLP(max(8, 2 * world))  # two stages per rank when interleaved
    x, y = torch.randn(BATCH, WIDTH), torch.randn(BATCH, WIDTH)
    expected_losses, expected_grads = reference(model, x, y)
    out = {}
    run("gpipe", ScheduleGPipe, model, x, y, 1, out)
    run("1f1b", Schedule1F1B, model, x, y, 1, out)
    run("interleaved_1f1b", ScheduleInterleaved1F1B, model, x, y, 2, out)
    run("looped_bfs", ScheduleLoopedBFS, model, x, y, 2, out)
    run_traced(model, x, y, out)
    for name, result in out.items():
        if len(result["losses"]):
            torch.testing.assert_close(result["losses"], expected_losses, rtol=1e-6, atol=1e-6,
                                       msg=lambda m: "%s losses: %s" % (name, m))
        assert result["grads"], name
        for what, grad in result["grads"].items():
            torch.testing.assert_close(grad, expected_grads[what], rtol=1e-6, atol=1e-6,
                                       msg=lambda m: "%s %s: %s" % (name, what, m))
    torch.save(out, os.path.join(sys.argv[1], "pipelining.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
