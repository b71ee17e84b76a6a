"""Each rank of twinccl.run(rank_state="isolated") its own builtins and sys.stdout/sys.stderr, as
each torchrun worker process has: torchvision's reference scripts (and DETR, DeiT, MAE...) silence
print on ranks other than 0 by replacing builtins.print, others point sys.stdout at os.devnull.
Shared by the rank threads, the last rank's replacement won: rank 0's output vanished silently."""
import builtins
import io
import sys

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from launcher_support import launch


def test_each_rank_replaces_print_for_itself_and_the_caller_keeps_its_own():
    callers_print = builtins.print
    printed = []

    def fn(rank):
        # torchvision references/classification/utils.py setup_for_distributed(is_master)
        builtin_print = builtins.print

        def print(*args, **kwargs):  # noqa: A001 (the point: a rank's own print)
            force = kwargs.pop("force", False)
            if rank == 0 or force:
                printed.append((rank, args))
                builtin_print(*args, **kwargs)
        builtins.print = print
        builtins.twinccl_test_rank_name = rank  # a name a rank adds is its own too
        x = np.ones(2)
        for step in range(3):  # hand-overs between the ranks' prints
            dist.all_reduce(x)
            builtins.print("step", step, "on rank", rank)
            assert builtins.twinccl_test_rank_name == rank
    twinccl.run(fn, world_size=3, timeout_s=30)
    assert printed == [(0, ("step", s, "on rank", 0)) for s in range(3)]
    assert builtins.print is callers_print
    assert not hasattr(builtins, "twinccl_test_rank_name")


def test_each_rank_redirects_its_own_stdout_and_stderr(capsys):
    own = {}

    def fn(rank):
        if rank != 0:
            sys.stdout = own.setdefault(("out", rank), io.StringIO())
            sys.stderr = own.setdefault(("err", rank), io.StringIO())
        x = np.ones(2)
        for step in range(2):
            dist.all_reduce(x)
            print("out", step, "rank", rank)
            print("err", step, "rank", rank, file=sys.stderr)
    twinccl.run(fn, world_size=3, timeout_s=30)
    captured = capsys.readouterr()  # the caller's stdout and stderr: rank 0's lines only
    assert captured.out == "out 0 rank 0\nout 1 rank 0\n"
    assert captured.err == "err 0 rank 0\nerr 1 rank 0\n"
    for rank in (1, 2):
        assert own[("out", rank)].getvalue() == "out 0 rank %d\nout 1 rank %d\n" % (rank, rank)
        assert own[("err", rank)].getvalue() == "err 0 rank %d\nerr 1 rank %d\n" % (rank, rank)
    assert sys.stdout is not own[("out", 1)] and sys.stderr is not own[("err", 2)]


def test_torchrun_script_silencing_print_off_rank_0(tmp_path):
    """The launcher: rank 0's print reaches the terminal, rank 1's does not (as torchrun)."""
    script = tmp_path / "silence.py"
    script.write_text(  # torchvision's references/classification/utils.py, as a script does it
        "import builtins\n"
        "import torch.distributed as dist\n"
        "def setup_for_distributed(is_master):\n"
        "    builtin_print = builtins.print\n"
        "    def print(*args, **kwargs):\n"
        "        force = kwargs.pop('force', False)\n"
        "        if is_master or force:\n"
        "            builtin_print(*args, **kwargs)\n"
        "    builtins.print = print\n"
        "dist.init_process_group('gloo')\n"
        "rank = dist.get_rank()\n"
        "setup_for_distributed(rank == 0)\n"
        "dist.barrier()\n"
        "print('hello from rank', rank)\n"
        "print('forced from rank', rank, force=True)\n"
        "dist.destroy_process_group()\n")
    pytest.importorskip("torch")  # the launcher's rank function sets torch.distributed up
    out = launch(script)
    assert out.returncode == 0, out.stderr
    lines = sorted(out.stdout.splitlines())
    assert lines == ["forced from rank 0", "forced from rank 1", "hello from rank 0"], out.stdout
