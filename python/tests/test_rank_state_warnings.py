"""Each rank of twinccl.run(rank_state="isolated") its own `warnings` filters, as each torchrun
worker process has: `warnings.filterwarnings("ignore")` on ranks other than 0 is common; shared by
the rank threads, it silenced rank 0's warnings too."""
import warnings

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from launcher_support import launch


def test_each_rank_its_own_filters_and_showwarning():
    shown = []
    callers = warnings.filters[:]

    def fn(rank):
        if rank == 0:
            warnings.simplefilter("always")
        else:
            warnings.filterwarnings("ignore")

        def show(message, category, filename, lineno, file=None, line=None):
            shown.append((rank, str(message)))
        warnings.showwarning = show
        x = np.ones(2)
        for step in range(3):  # hand-overs between the ranks' warnings
            dist.all_reduce(x)
            warnings.warn("step %d rank %d" % (step, rank))
    twinccl.run(fn, world_size=3, timeout_s=30)
    assert shown == [(0, "step %d rank 0" % step) for step in range(3)]
    assert warnings.filters == callers and warnings.showwarning.__name__ != "show"


def test_a_warning_another_rank_ignored_is_shown_on_rank_0():
    """Python remembers a warning it ignored or showed in the registry (each module's
    __warningregistry__, here one dict for all ranks, as a library module's) under the filters'
    version; a hand-over to a rank with other filters bumps that version, as filterwarnings does,
    so what rank 1 ignored is not taken as seen by rank 0."""
    registry = {}
    shown = []

    def fn(rank):
        warnings.resetwarnings()
        warnings.simplefilter("default" if rank == 0 else "ignore")
        warnings.showwarning = lambda message, *args, **kwargs: shown.append((rank,
                                                                              str(message)))
        if rank == 1:  # ignored, remembered
            warnings.warn_explicit("deprecated", UserWarning, "library.py", 7, registry=registry)
        dist.all_reduce(np.ones(2))
        if rank == 0:  # after rank 1's
            warnings.warn_explicit("deprecated", UserWarning, "library.py", 7, registry=registry)
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert shown == [(0, "deprecated")]


def test_torchrun_script_ignoring_warnings_off_rank_0(tmp_path):
    """The launcher, as torchrun with Gloo: rank 0's warning on stderr, rank 1's ignored."""
    pytest.importorskip("torch")
    script = tmp_path / "warn_per_rank.py"
    script.write_text(
        "import warnings\n"
        "import torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "rank = dist.get_rank()\n"
        "if rank != 0:\n"
        "    warnings.filterwarnings('ignore')\n"
        "dist.barrier()\n"
        "warnings.warn('a warning from rank %d' % rank)\n"
        "dist.destroy_process_group()\n")
    out = launch(script)
    assert out.returncode == 0, out.stderr
    assert "a warning from rank 0" in out.stderr and "from rank 1" not in out.stderr, out.stderr
