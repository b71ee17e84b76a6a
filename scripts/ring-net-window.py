#!/usr/bin/env python3
"""Issue 24, p5 ring all_gather over EFA: how long one channel of NCCL's ring takes, step by step,
when each network slot comes back only after a round trip (data one way + control message back).

What it shows (docs/fidelity.md, "Issue 24, the ring's slot round trip on EFA (efastep round)";
the first look was the efaag round, "Issue 24, p5 all_gather over EFA"). With AWS's 20 us each
way (the defaults) the window adds little: 32 nodes at an 8 KiB step 1285 us (1166 without it),
against ~2700 us measured at 32 MiB. With the efastep round's fitted 85 us slot round trip
(`--hop-us 20 --ctrl-us 65`: ~45 us of proxy passes beyond AWS's 2 x 20 us, put on the control
side) 2 / 4 / 8 / 16 / 32 nodes at a 16 KiB step take 123 / 294 / 637 / 1323 / 2694 us, ~80 us a
node as measured (240 / 389 / 714 / 1337 / 2700 us; the 2 - 4 node rows carry bandwidth time
too). The model charges this window in closed form (sim/src/net_window.cc,
ring_net_window_wait_us); this script is the step-by-step check, not part of the model.

How it works. A ring of 8 x nodes ranks; rank r's step k sends block r - k to r + 1 (NVIDIA/nccl
v2.27.7-1: nranks - 1 steps, the chain through every rank; graph/connect.cc:93-111 leaves a node at
one rank, so the link from local rank 7 crosses the network). A rank's step starts when its
previous step is written and the block of its predecessor's previous step arrived. NVLink hops take
--nvlink-us (NCCL's ring LL128 figure 1.9) plus the bytes at --channel-gbps. A network hop: the
GPU writes the step into its slot, then the message is an RDMA write into the buffer named by the
receiver's control message (aws-ofi-nccl v1.16.3 src/nccl_ofi_rdma.cpp:907-918, 3196-3201; above
eager_max_size 8 KiB, include/nccl_ofi_param.h:256), sent --ctrl-us after the receiver consumed
the step NCCL_STEPS = 8 before (device.h:25); the sender's slot of step k - 8 is back after its
write completed. Data and control each take --hop-us (AWS's tuner: 20 us, nccl_ofi_model.cpp:15).
It prints the call's time per node count with and without the window.

  scripts/ring-net-window.py [--hop-us 20] [--ctrl-us 20] [--step-bytes 8192 ...]
  scripts/ring-net-window.py --hop-us 20 --ctrl-us 65 --step-bytes 16384   # the fitted 85 us
"""
import argparse


def ring_time_us(nodes, step_bytes, hop, ctrl, nvlink, channel_gbps, slots):
    n = 8 * nodes
    steps = n - 1
    write = step_bytes / (channel_gbps * 1e3)  # us per step at the channel's rate
    start = [[0.0] * steps for _ in range(n)]
    arrive = [[0.0] * steps for _ in range(n)]
    posted = [[0.0] * steps for _ in range(n)]
    for k in range(steps):
        for r in range(n):
            t = 0.0
            if k > 0:
                t = max(start[r][k - 1] + write, arrive[(r - 1) % n][k - 1])
            network = r % 8 == 7
            if network and k >= slots:
                t = max(t, posted[r][k - slots] + write + hop)  # the sender's slot back
            start[r][k] = t
            if network:
                ready = t + write
                if k >= slots:  # the receiver consumed step k - slots, then sent its control
                    ready = max(ready, start[(r + 1) % n][k - slots + 1] + ctrl)
                posted[r][k] = ready
                arrive[r][k] = ready + hop + write
            else:
                arrive[r][k] = t + nvlink + write
    return max(arrive[r][steps - 1] for r in range(n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hop-us", type=float, default=20.0)
    ap.add_argument("--ctrl-us", type=float, default=20.0)
    ap.add_argument("--nvlink-us", type=float, default=1.9)
    ap.add_argument("--channel-gbps", type=float, default=23.0)
    ap.add_argument("--step-bytes", type=float, nargs="+", default=[8192.0, 65536.0])
    a = ap.parse_args()
    print("nodes  step_bytes  window_us  no_window_us")
    for nodes in (2, 4, 8, 16, 32):
        for b in a.step_bytes:
            w = ring_time_us(nodes, b, a.hop_us, a.ctrl_us, a.nvlink_us, a.channel_gbps, 8)
            nw = ring_time_us(nodes, b, a.hop_us, a.ctrl_us, a.nvlink_us, a.channel_gbps, 10**9)
            print(f"{nodes:5d}  {b:10.0f}  {w:9.0f}  {nw:12.0f}")


if __name__ == "__main__":
    main()
