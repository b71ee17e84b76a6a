"""Per-call cost from Python of a tiny all_reduce (8 bytes per rank) on emulated ranks, by path
(not a test; figures depend on the machine and its load). Run with a torch 2.x Python:

    PYTHONPATH=build/python python3 bench/python_torch_call_overhead.py [calls] [world] [states]

states: "isolated" (the rank baton: each rank its own process state), "shared" (plain threads)
or "both" (the default).

The same call from C++ (bench_emu_collective_latency --bytes=8 WORLD, from build/bench or
$TWINCCL_CPP_BENCH) is run first, and each path is given as a multiple of it: the load average is
printed too (on a loaded machine wall times vary 2-4x; the CPU time is the steadier figure).

Paths: twinccl.distributed on a NumPy array and on a torch tensor; torch.distributed.all_reduce
with TwinCCL as torch's backend (torch_distributed=True), blocking and async_op + wait; the
backend's ProcessGroup.allreduce called directly (what DDP's C++ reducer reaches).
"""
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch
import torch.distributed as tdist

import twinccl
import twinccl.distributed as tw

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
WORLD = int(sys.argv[2]) if len(sys.argv) > 2 else 8
STATES = ["isolated", "shared"] if len(sys.argv) < 4 or sys.argv[3] == "both" else [sys.argv[3]]


def twinccl_numpy(rank):
    x = np.ones(2, np.float32)
    for _ in range(CALLS):
        tw.all_reduce(x)


def twinccl_torch(rank):
    x = torch.ones(2)
    for _ in range(CALLS):
        tw.all_reduce(x)


def torch_blocking(rank):
    x = torch.ones(2)
    for _ in range(CALLS):
        tdist.all_reduce(x)


def torch_async(rank):
    x = torch.ones(2)
    for _ in range(CALLS):
        tdist.all_reduce(x, async_op=True).wait()


def process_group_direct(rank):
    x = [torch.ones(2)]
    pg = tdist.distributed_c10d._get_default_group()
    opts = tdist.AllreduceOptions()
    for _ in range(CALLS):
        pg.allreduce(x, opts).wait()


PATHS = [("twinccl.distributed, numpy", twinccl_numpy, False),
         ("twinccl.distributed, torch", twinccl_torch, False),
         ("torch.distributed.all_reduce", torch_blocking, True),
         ("torch.distributed async + wait", torch_async, True),
         ("ProcessGroup.allreduce direct", process_group_direct, True)]

def cpp_figures():
    """(wall us, CPU us) per call of the C++ benchmark, or None where it is not built."""
    binary = os.environ.get("TWINCCL_CPP_BENCH") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench",
        "bench_emu_collective_latency")
    if not os.path.exists(binary):
        return None
    out = subprocess.run([binary, "--bytes=8", str(WORLD)], capture_output=True, text=True,
                         timeout=300).stdout
    found = re.search(r"([0-9.]+) us/call,\s+([0-9.]+) CPU us/call", out)
    return (float(found.group(1)), float(found.group(2))) if found else None


print("load average %.1f %.1f %.1f (1, 5, 15 min)" % os.getloadavg())
CPP = cpp_figures()
if CPP:
    print("world %d, C++      bench_emu_collective_latency --bytes=8: %7.1f us wall, %7.1f us CPU "
          "per call" % (WORLD, CPP[0], CPP[1]))


def versus_cpp(wall, cpu):
    return "  (%.1fx / %.1fx C++)" % (wall / CPP[0], cpu / CPP[1]) if CPP else ""


# Wall time per call, and the process's CPU time per call (all ranks together: what a loaded
# machine's wall-clock figure hides). Best of REPEATS runs each.
REPEATS = 3
for state in STATES:
    for name, fn, torch_mode in PATHS:
        wall, cpu = [], []
        for _ in range(REPEATS):
            start, start_cpu = time.perf_counter(), time.process_time()
            twinccl.run(fn, world_size=WORLD, torch_distributed=torch_mode, rank_state=state)
            wall.append((time.perf_counter() - start) / CALLS * 1e6)
            cpu.append((time.process_time() - start_cpu) / CALLS * 1e6)
        print("world %d, %-8s %-32s %7.1f us wall, %7.1f us CPU per call (%d calls, best of %d)%s"
              % (WORLD, state, name + ":", min(wall), min(cpu), CALLS, REPEATS,
                 versus_cpp(min(wall), min(cpu))))
