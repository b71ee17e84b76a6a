"""A process group's timeout, honoured (_wait_timeout.py): init_process_group(timeout=),
new_group(timeout=) and dist.set_timeout bound a rank's waits in the group's operations, shorter
or longer than twinccl.run's timeout_s, as under Gloo (which gave "Timed out waiting 2000ms")
and NCCL's watchdog; before, the emulator ignored them: a rank waited the run's timeout_s (300 s
under twinccl.torchrun) for a peer the script had given 2 s, and a script that gave a slow rank
an hour failed after 300 s. A group made without a timeout (torch hands it its 30-minute default)
keeps the run's."""
import datetime
import time

import pytest
from torch_backend_support import needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402

import twinccl  # noqa: E402
import twinccl.distributed as tdist  # noqa: E402

pytestmark = needs_torch2
HALF_SECOND = datetime.timedelta(seconds=0.5)


def late_rank_script(make_group, late_rank=3, late_s=3.0):
    """Every rank but `late_rank` all-reduces in the group at once; it comes after late_s."""
    def script(rank):
        group = make_group(rank)
        if rank == late_rank:
            time.sleep(late_s)  # gives up its turn; cut short when the run stops
        if group is not None:
            t = torch.ones(2)
            dist.all_reduce(t, group=group)
            return t.tolist()
    return script


def test_init_process_group_timeout_ends_the_wait_long_before_the_runs():
    def make(rank):
        dist.init_process_group("nccl", timeout=HALF_SECOND)  # the run's group: its timeout
        return dist.group.WORLD
    start = time.monotonic()
    with pytest.raises(twinccl.TimeoutError) as raised:
        run_script(late_rank_script(make), timeout_s=60)
    assert time.monotonic() - start < 2.5  # not the run's 60 s, nor the late rank's 3 s
    text = str(raised.value)
    assert "waited for rank(s) 3 to arrive for 0.5" in text, text
    assert "(init_process_group(timeout=0:00:00.500000))" in text, text


def test_a_timeout_longer_than_the_runs_waits_for_a_late_rank():
    def make(rank):
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=5))
        return dist.group.WORLD
    assert run_script(late_rank_script(make, late_s=1.5), timeout_s=0.5) == [[4.0, 4.0]] * 4


def test_a_rank_computing_past_the_runs_timeout_is_waited_for_under_a_longer_one():
    """Rank 0 runs Python (holds its turn) past the run's timeout_s while the others wait for
    their turn to reach the all_reduce: under torch they would wait in it, up to the group's
    timeout; so they wait for their turn that long (before: the run stopped at timeout_s)."""
    def script(rank):
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=5))
        if rank == 0:
            start = time.monotonic()
            while time.monotonic() - start < 1.5:
                sum(range(1000))
        t = torch.ones(2)
        dist.all_reduce(t)
        return t.tolist()
    assert run_script(script, timeout_s=0.5) == [[4.0, 4.0]] * 4


def test_new_group_timeout_bounds_that_group_only():
    def make(rank):
        group = dist.new_group([1, 3], timeout=HALF_SECOND)  # every rank calls it, as in torch
        return group if rank in (1, 3) else None
    with pytest.raises(twinccl.TimeoutError, match=r"waited for rank\(s\) 1 to arrive for 0\.5"
                       r"\d* s \(new_group\(timeout=0:00:00\.500000\)\)"):
        run_script(late_rank_script(make), timeout_s=60)


def test_a_group_made_without_a_timeout_keeps_the_runs():
    def make(rank):
        group = dist.new_group([0, 3])  # torch passes its 30-minute default
        return group if rank in (0, 3) else None
    with pytest.raises(twinccl.TimeoutError, match=r"for 0\.5\d* s \(TWINCCL_TIMEOUT_S\)"):
        run_script(late_rank_script(make, late_s=3.0), timeout_s=0.5)


def test_set_timeout_bounds_later_recvs_and_refuses_a_number():
    def script(rank):
        if rank == 0:
            with pytest.raises(TypeError, match="must be a datetime.timedelta, got 2"):
                dist.set_timeout(2)
            dist.set_timeout(HALF_SECOND)
            dist.recv(torch.zeros(2), src=1)
        elif rank == 1:
            time.sleep(3)
            dist.send(torch.ones(2), dst=0)
    start = time.monotonic()
    with pytest.raises(twinccl.TimeoutError, match=r"waited for a send from rank 1 for 0\.5\d* s "
                       r"\(dist\.set_timeout\(timeout=0:00:00\.500000\)\)"):
        run_script(script, timeout_s=60)
    assert time.monotonic() - start < 2.5


def test_twinccl_distributed_takes_the_same_timeouts():
    def fn(rank):
        group = tdist.new_group([0, 1], timeout=HALF_SECOND)
        if rank == 1:
            time.sleep(3)
        if rank in (0, 1):
            tdist.barrier(group=group)
    with pytest.raises(twinccl.TimeoutError, match=r"\(new_group\(timeout=0:00:00\.500000\)\)"):
        twinccl.run(fn, world_size=3, timeout_s=60)

    def refused(rank):
        with pytest.raises(TypeError, match=r"init_process_group\(timeout=5\): the timeout must be"):
            tdist.init_process_group(timeout=5)
        with pytest.raises(twinccl.InvalidArgument, match="must be > 0"):
            tdist.set_timeout(datetime.timedelta(0))
    twinccl.run(refused, world_size=2)
