"""For tests that run a script in a child Python: the environment that makes the child import
this twinccl (the build tree's or the installed one) from any directory, and the launcher run
as a user types it (`python -m twinccl.torchrun --nproc-per-node N script.py`)."""
import os
import subprocess
import sys

import twinccl

ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [os.path.dirname(os.path.dirname(os.path.abspath(twinccl.__file__)))] +
    [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


# The top of a launched test script: its rank's Gloo group, an exit handler that prints "atexit
# RANK", and one all_reduce (t == the world size); the script goes on from there.
RANK_PRELUDE = '''
import atexit, os, signal, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
atexit.register(print, "atexit", rank, flush=True)
t = torch.ones(1)
dist.all_reduce(t)
'''


def launch(script, nproc=2, cwd=None, timeout_s=30, limit_s=120, args=(), **environ):
    """The launcher's run of `script args...` on `nproc` ranks (CompletedProcess, text output);
    `environ`: variables set for it besides ENV's."""
    return subprocess.run([sys.executable, "-m", "twinccl.torchrun", "--nproc-per-node",
                           str(nproc), "--timeout-s", str(timeout_s), str(script)] +
                          [str(a) for a in args], cwd=cwd,
                          capture_output=True, text=True, env=dict(ENV, **environ),
                          timeout=limit_s)
