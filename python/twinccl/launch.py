"""torch.distributed.launch's interface on emulated ranks (deprecated in torch, still in many job
scripts: `python -m torch.distributed.launch --nproc_per_node=8 train.py ARGS`):
`python3 -m twinccl.launch --nproc_per_node=8 train.py ARGS`.

The same launcher as twinccl.torchrun (its options, each rank's process state, the failure
report), and as torch's launch each rank's script gets `--local-rank=N` (N its local rank) before
its own arguments unless `--use-env` is given (LOCAL_RANK is set either way): a script that parses
`--local-rank` / `--local_rank` with argparse gets it as under torch's launch.
"""
import sys

from .torchrun import main

if __name__ == "__main__":
    sys.exit(main(launch=True))
