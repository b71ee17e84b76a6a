"""One DDP training step of a ~10M-parameter MLP on 8 ranks: emulated (TwinCCL as torch's backend,
ranks as threads of this process) and under torchrun with Gloo (8 processes), side by side (not a
test; figures depend on the machine and its load). Needs a Python with torch 2.x:

    PYTHONPATH=build/python python3 bench/torch_ddp_step.py [--world 8] [--steps 3] [--no-gloo]

The runs execute the same `train` below, unmodified (emulated with each rank_state: "isolated",
the rank baton, runs one rank's Python, and its compute, at a time; "shared" lets the ranks'
compute run in parallel); the script prints wall time per step, the
emulated run's simulated step time on a DGX H100, and how far the final weights of the two runs
are apart (Gloo sums in another order than NCCL's ring, so they agree to rounding, not bit for
bit).
"""
import argparse
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

HIDDEN, WIDE, BATCH = 1024, 4096, 32  # 2 x (1024 x 4096) + 1024 x 1024: ~9.4M parameters


def model():
    gen = torch.Generator().manual_seed(0)
    m = nn.Sequential(nn.Linear(HIDDEN, WIDE), nn.ReLU(), nn.Linear(WIDE, HIDDEN), nn.ReLU(),
                      nn.Linear(HIDDEN, HIDDEN))
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
    return m


def train(rank, steps):
    """The training script: returns (seconds per step after one warm-up step, weight checksum)."""
    dist.init_process_group("gloo")
    ddp = DDP(model())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(100 + dist.get_rank())
    x, y = torch.randn(BATCH, HIDDEN, generator=gen), torch.randn(BATCH, HIDDEN, generator=gen)
    times = []
    for _ in range(steps + 1):
        start = time.perf_counter()
        opt.zero_grad()
        nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - start)
    flat = torch.cat([p.detach().flatten() for p in ddp.parameters()])
    dist.destroy_process_group()
    return sum(times[1:]) / steps, flat


def emulated(world, steps, rank_state):
    import twinccl
    results = {}
    start = time.perf_counter()
    report = twinccl.run(lambda rank: results.__setitem__(rank, train(rank, steps)),
                         world_size=world, torch_distributed=True, topology="dgx-h100",
                         rank_state=rank_state)
    total = time.perf_counter() - start
    return max(r[0] for r in results.values()), results[0][1], total, report


def worker(steps, out):
    per_step, flat = train(int(os.environ["RANK"]), steps)
    if int(os.environ["RANK"]) == 0:
        torch.save({"per_step": per_step, "flat": flat}, out)


def gloo(world, steps):
    out = "/tmp/twinccl_bench_ddp_gloo_%d.pt" % os.getpid()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                    "--nproc-per-node", str(world), os.path.abspath(__file__), "--worker",
                    "--steps", str(steps), "--out", out], check=True)
    total = time.perf_counter() - start
    data = torch.load(out)
    os.remove(out)
    return data["per_step"], data["flat"], total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--world", type=int, default=8)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--no-gloo", action="store_true")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.worker:
        return worker(args.steps, args.out)
    params = sum(p.numel() for p in model().parameters())
    print("DDP step, %.1fM parameters, %d ranks, batch %d per rank, %d timed steps"
          % (params / 1e6, args.world, BATCH, args.steps))
    for state in ("isolated", "shared"):
        step, flat, total, report = emulated(args.world, args.steps, state)
        print("  twinccl, %-8s  %8.1f ms per step, %6.1f s whole run; simulated on dgx-h100: "
              "%.1f us of communication for the whole run (%d operations)"
              % (state + ":", step * 1e3, total, report.total_us, len(report.ops)))
    if not args.no_gloo:
        g_step, g_flat, g_total = gloo(args.world, args.steps)
        print("  torchrun + gloo:   %8.1f ms per step, %6.1f s whole run (8 processes)"
              % (g_step * 1e3, g_total))
        print("  final weights: max |twinccl - gloo| = %.3g" % float((flat - g_flat).abs().max()))


if __name__ == "__main__":
    main()
