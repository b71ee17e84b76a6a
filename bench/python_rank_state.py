"""Cost of each rank's own process state (twinccl.run's rank_state, docs/python.md): the per-call
cost of an all_reduce from Python with ranks taking turns ("isolated", the default) against plain
threads ("shared"), and the cost of one hand-over by _rank_state.py's swap (saving one rank's
state and installing another's; the rank baton's slots do most hand-overs without it). Not a
test; numbers depend on the machine and its load.

    PYTHONPATH=build/python python3 bench/python_rank_state.py [calls]
"""
import sys
import time

import numpy as np

import twinccl
import twinccl.distributed as dist
from twinccl._rank_state import RankStates, torchrun_environ

try:
    import torch  # noqa: F401  (its generator is part of every hand-over when imported)
except ImportError:
    torch = None

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000


def per_call_us(world, rank_state):
    def step(rank):
        x = np.ones(256, np.float32)
        for _ in range(CALLS):
            dist.all_reduce(x)
    start = time.perf_counter()
    twinccl.run(step, world_size=world, rank_state=rank_state)
    return (time.perf_counter() - start) / CALLS * 1e6


for world in (2, 8):
    shared = per_call_us(world, "shared")
    isolated = per_call_us(world, "isolated")
    print("world %d: all_reduce of 1 KiB from Python: %.1f us per call isolated, %.1f us shared"
          % (world, isolated, shared))



def hand_over_us(states, blocks=300, block=100):
    """Swaps between 4 ranks, as the baton does (this module's globals are swapped too: what
    is assigned here in between is the ranks', so the figures are locals): (mean, best block's
    mean) in us; the best block is what the swap costs when no other process takes the core."""
    states.swap(-1, 0)
    for i in range(8):  # every rank arrived once
        states.swap(i % 4, (i + 1) % 4)
    count, best = 0, float("inf")
    start = time.perf_counter()
    for _ in range(blocks):
        block_start = time.perf_counter()
        for _ in range(block):
            states.swap(count % 4, (count + 1) % 4)
            count += 1
        best = min(best, time.perf_counter() - block_start)
    elapsed = time.perf_counter() - start
    states.swap(count % 4, -1)
    return elapsed / count * 1e6, best / block * 1e6


states = RankStates(4, lambda rank: torchrun_environ(rank, 4))
mean_us, best_us = hand_over_us(states)
print("one hand-over by _rank_state's swap (most hand-overs need none: python/src/rank_slots.h) "
      "(torch %s, numpy, random, environ, argv, torch.distributed, %d module(s) of "
      "yours): %.1f us (best block of 100: %.1f us)"
      % ("imported" if torch else "absent",
         len(states.modules._before) if states.modules else 0, mean_us, best_us))
