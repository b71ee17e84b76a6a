#!/usr/bin/env python3
"""Issue 24, collectives on EFA: the network completions NCCL's proxy thread handles per GPU in a
p5 ring/LL128 or tree/LL128 all_reduce, and what 1 us of host time each would do to the model's
prediction, composed with the wire two ways (docs/fidelity.md, "Issue 24, the proxy thread").

How it works. For each `aws-efa` p5 all_reduce row that the model runs as ring/LL128
or tree/LL128 (read from `scripts/fidelity-report.sh --rows` on stdin), it counts the network
messages per node under NVIDIA/nccl v2.27.7-1's rules: an LL128 step is buffSizes[LL128] /
NCCL_STEPS = 614400 B on the wire, 576000 B of data (init.cc:619, device.h:25, :110-111); every
message completes once at its sender and once at its receiver.
  ring: each channel leaves a node at one GPU and enters it at another (graph/connect.cc:44-49),
        so every step of every loop is 1 send + 1 receive per node and channel: 2 x 2(n-1) x loops
        x channels, loops = ceil(bytes / (channels x n x 576000)).
  tree: the tree/LL128 chunk (enqueue.cc:2031-2039, halved from 576000 while chunks per channel <
        (1 + log2 nodes + 0.1 ppn) x 64 / ppn, then x 16 / ppn); channels c and c + nCh carry the
        two trees of a double binary tree, a node interior in one (2 children + parent: 3 sends,
        3 receives a chunk) and a leaf in the other (1 + 1): 4 x channels x chunks per node; on
        2 nodes a node is the root of one tree and the leaf of the other: 2 x channels x chunks.
Completions are spread over the node's 8 GPUs' proxy threads (one per GPU, proxy.cc:979-986; the
graph channels start at GPUs next to their NICs, on p5 all 8). host = completions per GPU x
--host-us (aws-ofi-nccl v1.16.3 include/nccl_ofi_param.h:313-317, "~1us to write that completion
up to the host stack"; the model's own figure is sim/src/p2p_net_messages.cc). It prints the
thread's load (host / predicted time) and the error if the host time were added in series, or
hidden behind the wire (max: what NCCL's polling loop with 8 steps in flight per connection does
while the load stays below 1). NCCL's channel count for these runs is not published: 32 assumed
(the tree rows' 58 chunks a channel at 32 - 256 MiB fit it).

  scripts/fidelity-report.sh --rows | scripts/efa-proxy-load.py [--host-us 1] [--channels 32]
      [--sends-only]
"""
import argparse
import math
import re
import sys

LL128_STEP_DATA = 576000
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def ring_completions_per_node(nodes, size, channels, ppn):
    n = nodes * ppn
    loops = math.ceil(size / (channels * n * LL128_STEP_DATA))
    return 2 * 2 * (n - 1) * loops * channels


def tree_completions_per_node(nodes, size, channels, ppn):
    chunk = LL128_STEP_DATA
    steps = 1 + math.log2(nodes) + 0.1 * ppn
    while size // (channels * chunk) < steps * 64 / ppn and chunk > 131072:
        chunk //= 2
    while size // (channels * chunk) < steps * 16 / ppn and chunk > 32768:
        chunk //= 2
    per_chunk = 2 if nodes == 2 else 4  # 2 nodes: each node the root of one tree, a leaf of the other
    return per_chunk * channels * math.ceil(size / (channels * chunk))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host-us", type=float, default=1.0)
    ap.add_argument("--channels", type=int, default=32)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--sends-only", action="store_true",
                    help="count send completions only: NCCL asks the plugin to skip an LL/LL128 "
                    "receive's completion (net.cc:1365, NCCL_NET_OPTIONAL_RECV_COMPLETION=1)")
    a = ap.parse_args()
    row = re.compile(r"all_reduce (\d+) (\w+) on aws-p5-(\d+) -g 1: (ring|tree)/LL128 "
                     r"([\d.]+) us, measured ([\d.]+) us")
    print("nodes size algo | error now | host/GPU us, load | serial | hidden (max)")
    for line in sys.stdin:
        m = row.search(line)
        if not m:
            continue
        nodes, size = int(m.group(3)), int(m.group(1)) * UNITS[m.group(2)]
        algo, pred, meas = m.group(4), float(m.group(5)), float(m.group(6))
        count = ring_completions_per_node if algo == "ring" else tree_completions_per_node
        host = count(nodes, size, a.channels, a.gpus_per_node) / a.gpus_per_node * a.host_us
        if a.sends_only:
            host /= 2
        serial, hidden = pred + host, max(pred, host)
        print(f"{nodes:2d} {m.group(1):>4} {m.group(2)} {algo}/LL128 | {pred / meas - 1:+6.1%} | "
              f"{host:6.0f} {host / pred:4.2f} | {serial / meas - 1:+6.1%} | "
              f"{hidden / meas - 1:+6.1%}")


if __name__ == "__main__":
    main()
