"""python3 -m twinccl.launch: torch.distributed.launch's command line (deprecated in torch, still in
job scripts). As torch's launch, each rank's script gets `--local-rank=N` before its own arguments
unless --use-env; LOCAL_RANK is set either way. Before, there was no such launcher: the job script's
`python -m torch.distributed.launch` line had no TwinCCL counterpart, and twinccl.torchrun passes
no --local-rank (torchrun's rule), so a script whose argparse reads it ran with its default."""
import subprocess
import sys
import textwrap

import pytest

from launcher_support import ENV

pytest.importorskip("torch")

SCRIPT = textwrap.dedent('''
    import argparse, os, sys
    import torch, torch.distributed as dist
    parser = argparse.ArgumentParser()
    parser.add_argument("--local-rank", "--local_rank", type=int, default=-1)
    parser.add_argument("--lr", type=float)
    args = parser.parse_args()
    dist.init_process_group("gloo", init_method="env://")
    t = torch.tensor([float(args.local_rank)])
    dist.all_reduce(t)
    print("rank %d argv %s local_rank %d LOCAL_RANK %s sum %g"
          % (dist.get_rank(), sys.argv[1:], args.local_rank, os.environ["LOCAL_RANK"], t.item()))
''')


@pytest.mark.parametrize("use_env", [False, True])
def test_each_rank_gets_its_local_rank_as_torchs_launch_passes_it(tmp_path, use_env):
    (tmp_path / "train.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "twinccl.launch", "--nproc_per_node=2",
                           "--nnodes=2"] + (["--use_env"] if use_env else []) +
                          ["train.py", "--lr", "0.5"], capture_output=True, text=True,
                          timeout=120, env=ENV, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = sorted(line for line in done.stdout.splitlines() if line.startswith("rank"))
    if use_env:
        assert lines == ["rank %d argv ['--lr', '0.5'] local_rank -1 LOCAL_RANK %d sum -4"
                         % (r, r % 2) for r in range(4)]
    else:
        assert lines == ["rank %d argv ['--local-rank=%d', '--lr', '0.5'] local_rank %d "
                         "LOCAL_RANK %d sum 2" % (r, r % 2, r % 2, r % 2) for r in range(4)]
