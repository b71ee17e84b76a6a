"""Per-call cost of twinccl.distributed from Python (not a test; numbers depend on the machine).

    PYTHONPATH=build/python python3 bench/python_call_overhead.py [calls]
"""
import sys
import time

import numpy as np

import twinccl
import twinccl.distributed as dist

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000

for world in (2, 8):
    def step(rank):
        x = np.ones(256, np.float32)
        for _ in range(CALLS):
            dist.all_reduce(x)
    start = time.perf_counter()
    twinccl.run(step, world_size=world)
    elapsed = time.perf_counter() - start
    print("world %d: %d all_reduce of 1 KiB per rank: %.1f us per call"
          % (world, CALLS, elapsed / CALLS * 1e6))
