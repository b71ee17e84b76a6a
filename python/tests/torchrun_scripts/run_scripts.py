"""Runs torchrun scripts one after the other in this process, each as its own `__main__` with
`sys.argv = [script, OUT_DIR]` (as `torchrun ... script OUT_DIR` would), so that one launch (one
torch import per rank) runs them all.

One thing differs from a fresh process per script: after destroy_process_group torch counts its
groups from 0 again, so the next script's groups would reuse the names (the store keys) of the
previous script's, and Gloo's connection set-up can read a previous group's stale addresses (seen
to hang). Each script's groups are given names of their own by starting the count at
1000 * (k + 1) (from 0, the first script's first group would take the name of the default group
that twinccl.torchrun makes before the script runs: "group name has already been created").

Usage: torchrun --nproc-per-node N run_scripts.py OUT_DIR script.py [script.py ...]"""
import os
import runpy
import sys

import torch.distributed.distributed_c10d as c10d


def main():
    out, scripts = sys.argv[1], sys.argv[2:]
    here = os.path.dirname(os.path.abspath(__file__))
    for k, name in enumerate(scripts):
        path = os.path.join(here, name)
        sys.argv = [path, out]
        c10d._world.group_count = 1000 * (k + 1)
        runpy.run_path(path, run_name="__main__")


if __name__ == "__main__":
    main()
