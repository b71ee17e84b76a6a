"""torch.distributed.monitored_barrier on TwinCCL's backend (torch 2.x). torch refused every
TwinCCL group ("monitored_barrier requires a group with a CPU-capable backend (e.g. GLOO)") in a
script that had asked for gloo: a TwinCCL group is a ProcessGroup subclass with no backend
registered in it. Now the emulator's barrier, waited for up to the timeout."""
import datetime
import time

import pytest
from torch_backend_support import needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402

import twinccl  # noqa: E402

pytestmark = needs_torch2


def test_every_rank_passes_monitored_barrier():
    def script(rank):
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=20), wait_all_ranks=True)
        dist.monitored_barrier()
        group = dist.new_group([0, 2])
        if rank in (0, 2):
            dist.monitored_barrier(group=group, timeout=datetime.timedelta(seconds=20))
        t = torch.ones(2) * rank
        dist.all_reduce(t)
        return t.tolist()
    assert run_script(script) == [[6.0, 6.0]] * 4


def test_a_rank_late_past_the_timeout_is_a_typed_error_on_the_others():
    raised = {}

    def script(rank):
        if rank == 3:
            time.sleep(3)  # away past the others' timeout (gives up its turn meanwhile)
            return
        try:
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=0.5))
        except twinccl.Error as e:
            raised[rank] = e
            raise
    start = time.monotonic()
    with pytest.raises(twinccl.TimeoutError, match="monitored_barrier"):
        run_script(script)
    assert time.monotonic() - start < 10
    # Every waiting rank ends typed: its own timeout, or the run's stop that the first timeout made
    # (AbortedError: ranks take turns running Python, so on a loaded host a rank can begin its
    # wait long enough after another's that the other's timeout stops the run first).
    assert sorted(raised) == [0, 1, 2], raised
    timed_out = sorted(r for r, e in raised.items() if isinstance(e, twinccl.TimeoutError))
    assert timed_out, raised
    assert all(isinstance(e, twinccl.AbortedError) for r, e in raised.items()
               if r not in timed_out), raised
    first = str(raised[timed_out[0]])
    assert "test_torch_monitored_barrier.py:%d" % (
        script.__code__.co_firstlineno + 5) in first, first
    assert "within timeout=0.5 s" in first, first
