"""A data-parallel training step on 8 emulated ranks, and its simulated time on a DGX H100.

    PYTHONPATH=build/python python3 examples/python/train_step.py

Each rank computes a local gradient, averages it with all_reduce (in place, NCCL's exact
result), and shards the parameters ZeRO-style (reduce_scatter_tensor, all_gather_into_tensor).
"""
import numpy as np

import twinccl
import twinccl.distributed as dist

WORLD, PARAMS = 8, 1 << 20


def step(rank):
    params = np.ones(PARAMS, np.float32)
    grad = np.full(PARAMS, float(rank + 1), np.float32)  # this rank's gradient
    twinccl.compute(seconds=2e-3)  # the backward pass, for the simulated time
    dist.all_reduce(grad, op=dist.ReduceOp.AVG)
    assert (grad == (WORLD + 1) / 2).all()

    shard = np.empty(PARAMS // WORLD, np.float32)  # ZeRO: each rank owns one shard
    dist.reduce_scatter_tensor(shard, np.full(PARAMS, 1.0, np.float32))
    work = dist.all_gather_into_tensor(params, shard - 0.5 * shard, async_op=True)
    work.wait()
    assert (params == WORLD / 2).all()


if __name__ == "__main__":
    report = twinccl.run(step, world_size=WORLD, topology="dgx-h100")
    print(report)
    print("total simulated time: %.1f us" % report.total_us)
