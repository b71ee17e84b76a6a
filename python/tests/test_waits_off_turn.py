"""Ranks that take turns running Python wait on multiprocessing's objects for each other
(_waits_off_turn.py): what `mp.spawn(fn, args=(queue, event, barrier))` hands its ranks. Before,
the waiting rank kept its turn while it blocked, the rank that would put or set never ran, and
the run stalled until its timeout ("rank 0 waited 5.0 s for its turn to run Python")."""
import multiprocessing
import multiprocessing.connection
import queue
import threading
import time

import pytest
import twinccl
from twinccl import _twinccl
from torch_backend_support import needs_torch2, run_script

pytestmark = needs_torch2


def test_ranks_wait_for_each_others_queue_event_and_pipe():
    ctx = multiprocessing.get_context("spawn")
    event, items, simple = ctx.Event(), ctx.Queue(), ctx.SimpleQueue()
    (mine, theirs), (left, right) = ctx.Pipe(), ctx.Pipe()

    def script(rank):
        if rank == 0:  # comes second: the others wait for it already
            time.sleep(0.3)
            items.put("item")
            simple.put("simple")
            theirs.send("piped")
            right.send_bytes(b"bytes")
            event.set()
            return "sent"
        if rank == 1:
            return [event.wait(), items.get(), simple.get(), mine.recv()]
        ready = multiprocessing.connection.wait([left])
        return [ready == [left], left.recv_bytes()]
    assert run_script(script, world_size=3, timeout_s=20) == [
        "sent", [True, "item", "simple", "piped"], [True, b"bytes"]]


def test_their_timeouts_hold_on_a_rank():
    ctx = multiprocessing.get_context("spawn")
    event, items, (mine, _) = ctx.Event(), ctx.Queue(), ctx.Pipe()

    def script(rank):
        start = time.monotonic()
        try:
            items.get(timeout=0.2)
            return "got"
        except queue.Empty:
            pass
        waited = [event.wait(0.2), mine.poll(0.2), multiprocessing.connection.wait([mine], 0.2)]
        return waited + [0.75 < time.monotonic() - start < 10]
    assert run_script(script, world_size=2, timeout_s=20) == [[False, False, [], True]] * 2


def test_ranks_meet_at_a_multiprocessing_barrier_and_its_timeout_breaks_it():
    ctx = multiprocessing.get_context("spawn")
    barrier, lonely = ctx.Barrier(3), ctx.Barrier(2)

    def script(rank):
        if rank == 2:
            time.sleep(0.3)  # the others wait at the barrier already
        index = barrier.wait(timeout=20)
        if rank == 0:
            try:
                lonely.wait(timeout=0.2)  # its other party never comes
            except threading.BrokenBarrierError:
                return index, "broken"
        return index, None
    got = run_script(script, world_size=3, timeout_s=20)
    assert sorted(index for index, _ in got) == [0, 1, 2], got
    assert [broken for _, broken in got] == ["broken", None, None], got


def test_a_rank_waiting_on_a_queue_or_pipe_is_stopped_when_another_fails():
    """The wait on a Queue's or a Pipe's descriptor (poll(2), the turn given up) ends with the
    run's AbortedError once another rank fails, as torchrun's stop ends a worker blocked there."""
    ctx = multiprocessing.get_context("spawn")
    items, (mine, _) = ctx.Queue(), ctx.Pipe()
    stopped = {}

    def script(rank):
        if rank == 0:
            time.sleep(0.3)  # the others wait already
            raise ValueError("bad batch on rank 0")
        try:
            return items.get() if rank == 1 else mine.recv()  # nobody ever sends
        except twinccl.AbortedError as e:
            stopped[rank] = str(e)
            raise
    start = time.monotonic()
    with pytest.raises(ValueError, match="bad batch on rank 0"):
        run_script(script, world_size=3, timeout_s=60)
    assert time.monotonic() - start < 30  # the stop, not the run's 60 s timeout, ended them
    assert sorted(stopped) == [1, 2], stopped
    for message in stopped.values():
        assert "was cut short: the run stopped (rank 0 failed: ValueError: bad batch" in message


def test_the_descriptor_wait_itself():
    """twinccl._wait_readable_off_turn outside a run: input present, the time up, bad arguments."""
    reader, writer = multiprocessing.Pipe(duplex=False)
    assert _twinccl._wait_readable_off_turn([reader.fileno()], 0.05) is False
    writer.send_bytes(b"x")
    assert _twinccl._wait_readable_off_turn([reader.fileno()], 5.0) is True
    for fds, seconds in (([], 1.0), ([-1], 1.0), ([reader.fileno()], -1.0),
                         ([reader.fileno()], float("inf")), ([reader.fileno()], float("nan"))):
        with pytest.raises(ValueError):
            _twinccl._wait_readable_off_turn(fds, seconds)
