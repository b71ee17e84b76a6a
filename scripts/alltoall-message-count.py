#!/usr/bin/env python3
"""Issue 24, alltoall on EFA: the network messages NCCL's p2p schedule sends per GPU, beside the
held-out p5 alltoall rows (docs/fidelity.md, "Issue 24, alltoall over EFA").

How it works. For each `aws-efa` alltoall row printed by `scripts/fidelity-report.sh --rows`
(read from stdin), it applies NVIDIA/nccl v2.27.7-1's rules for a grouped send/recv across nodes
(the run's NCCL): each of the (nranks - 8) remote peers gets bytes / nranks; its parts
(enqueue.cc:895-904: minPartSize = chunk/2, maxPartSize = chunk, starting from nChannelsMin,
which :1042 halves while nChannelsMin x nranks > p2pnChannels, doubling up to
p2pnChannelsPerPeer) and its network chunk (:845-846: a quarter of NCCL_P2P_NET_CHUNKSIZE below
one chunk, half below 8 chunks); messages = peers x parts x chunks per part. It prints the
model's error before, and the error with `--per-message-us` (default 3, aws-ofi-nccl v1.16.3
include/nccl_ofi_param.h:317 TUNER_NET_COMP_OVERHEAD) added per message: a hypothesis, not the
model (see the docs). p2pnChannels 32 and p2pnChannelsPerPeer 4 are assumed (p5's NCCL log is
not public); 8 or 16 channels and 2 per peer give the same result on these rows.

  scripts/fidelity-report.sh --rows | scripts/alltoall-message-count.py [--chunk-bytes 524288]

The model now prices these messages itself (sim/src/p2p_net_messages.cc: 1 us of host time per
send and per receive completion, the rows carrying the run's chunk as p2p_net_chunk_bytes), so
run on today's --rows output this script adds the charge twice; it stays as the record of the
first reading (docs/fidelity.md, "Issue 24, p2p network messages").
"""
import argparse
import re
import sys


def messages(nodes, size, chunk_param, per_peer=4, p2p_channels=32, gpus_per_node=8):
    nranks = nodes * gpus_per_node
    peer = size // nranks
    n_min = per_peer
    while n_min * nranks > p2p_channels and n_min > 1:
        n_min //= 2
    chunk = chunk_param
    if peer < chunk_param:
        chunk //= 4
    elif peer < 8 * chunk_param:
        chunk //= 2
    min_part, max_part = chunk_param // 2, chunk_param
    parts = min(n_min, -(-peer // min_part))
    part = max(min_part, -(-peer // parts))
    while part > max_part and parts <= per_peer // 2:
        parts *= 2
        part = -(-peer // parts)
    part_bytes = -(-(-(-peer // parts)) // 4096) * 4096  # device.h:253 ncclP2pPartBounds
    return (nranks - gpus_per_node) * parts * -(-part_bytes // chunk)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunk-bytes", type=int, default=524288,
                    help="NCCL_P2P_NET_CHUNKSIZE of the run (the p5 rows': 524288)")
    ap.add_argument("--per-message-us", type=float, default=3.0)
    args = ap.parse_args()
    pattern = re.compile(r"p5 (\d+) nodes, alltoall (\S+) (MiB|GiB) on .*?Simple ([\d.]+) us, "
                         r"measured ([\d.]+)")
    large = [0, 0, 0]  # rows, within 10% before, after
    for line in sys.stdin:
        m = pattern.search(line)
        if not m:
            continue
        nodes = int(m.group(1))
        size = int(float(m.group(2)) * (2**20 if m.group(3) == "MiB" else 2**30))
        pred, meas = float(m.group(4)), float(m.group(5))
        msgs = messages(nodes, size, args.chunk_bytes)
        after = pred + args.per_message_us * msgs
        before_err, after_err = pred / meas - 1, after / meas - 1
        if size >= 64 * 2**20:
            large[0] += 1
            large[1] += abs(before_err) <= 0.10
            large[2] += abs(after_err) <= 0.10
        print(f"{nodes:2d} nodes {size >> 20:5d} MiB  messages/GPU {msgs:5d}  "
              f"before {before_err * 100:+6.1f}%  with {args.per_message_us:g} us/message "
              f"{after_err * 100:+6.1f}%")
    print(f">= 64 MiB within 10%: before {large[1]}/{large[0]}, with the per-message term "
          f"{large[2]}/{large[0]}")


if __name__ == "__main__":
    main()
