"""Runs mindspore_code.py and torch_code.py, unmodified, on the same 4 emulated ranks (each rank
runs each script as msrun/torchrun would run it in its process) and checks they agree; then the
MindSpore script's simulated time on a DGX H100.

    PYTHONPATH=build/python python3 examples/python/mindspore_mapping/run_both.py
"""
import os
import runpy

import numpy as np

import twinccl

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 4
results = {}


def rank_main(rank):
    for name in ("mindspore_code.py", "torch_code.py"):
        results[(name, rank)] = runpy.run_path(os.path.join(HERE, name))["results"]


twinccl.run(rank_main, world_size=WORLD, mindspore=True, torch_distributed=True)
for rank in range(WORLD):
    ms, th = results[("mindspore_code.py", rank)], results[("torch_code.py", rank)]
    for op in ms:
        assert np.array_equal(ms[op], th[op]), (rank, op, ms[op], th[op])
print("MindSpore and torch agree on %d ranks: %s" % (WORLD, ", ".join(sorted(ms))))

report = twinccl.run(lambda rank: runpy.run_path(os.path.join(HERE, "mindspore_code.py")),
                     world_size=WORLD, mindspore=True, topology="dgx-h100")
print(report)
