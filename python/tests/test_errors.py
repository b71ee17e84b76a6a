"""Misuse from Python (docs/misuse.md): typed exceptions naming the Python file:line of each
rank's call, never a hang."""
import time

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from conftest import raised_before_deadline, site_of


def test_call_sites_are_python_lines():
    assert twinccl._twinccl._call_sites_supported()
    assert twinccl._twinccl._describe_call_site("/a/b/train.py", 42) == "train.py:42"


def test_count_mismatch_names_each_ranks_python_line():
    def rank(r):
        if r == 0:
            dist.all_reduce(np.zeros(4, np.float32))  # MARK-A
        else:
            dist.all_reduce(np.zeros(8, np.float32))  # MARK-B
    error = raised_before_deadline(twinccl.MismatchError, rank, 3)
    message = str(error)
    assert site_of(__file__, "MARK-A") in message, message
    assert site_of(__file__, "MARK-B") in message, message
    assert ".cc:" not in message  # no C++ binding lines


def test_rank_that_skips_a_collective_fails_fast():
    def rank(r):
        if r != 1:
            dist.all_reduce(np.zeros(4, np.float32))  # MARK-SKIP
    error = raised_before_deadline(twinccl.Error, rank, 4)
    assert "rank 1" in str(error)
    assert site_of(__file__, "MARK-SKIP") in str(error)


def test_p2p_deadlock_is_detected():
    def rank(r):
        x = np.zeros(2, np.float32)
        dist.recv(x, src=1 - r)  # MARK-DEADLOCK: both wait for the other
        dist.send(x, dst=1 - r)
    with pytest.raises(twinccl.DeadlockError) as e:
        twinccl.run(rank, world_size=2, timeout_s=30)
    assert site_of(__file__, "MARK-DEADLOCK") in str(e.value)


def test_timeout_when_a_rank_is_busy():
    def rank(r):
        if r == 0:
            time.sleep(1.0)  # Python work longer than the timeout, not in any TwinCCL call
        dist.barrier()
    with pytest.raises((twinccl.TimeoutError, twinccl.AbortedError)):
        twinccl.run(rank, world_size=2, timeout_s=0.3)


def test_python_exception_of_a_rank_propagates():
    def rank(r):
        if r == 2:
            raise ValueError("boom on rank 2")
        dist.all_reduce(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="boom on rank 2"):
        twinccl.run(rank, world_size=4, timeout_s=30)


def test_work_never_waited_is_reported():
    def rank(r):
        dist.all_reduce(np.zeros(4, np.float32), async_op=True)  # MARK-NOWAIT
    with pytest.raises(twinccl.InvalidArgument) as e:
        twinccl.run(rank, world_size=2, timeout_s=30)
    assert site_of(__file__, "MARK-NOWAIT") in str(e.value)


def test_root_mismatch_and_bad_arguments():
    def rank(r):
        dist.broadcast(np.zeros(4, np.float32), src=r)  # ranks disagree about the root
    with pytest.raises(twinccl.MismatchError, match="root|src"):
        twinccl.run(rank, world_size=2, timeout_s=30)

    def reduce_scatter_bad(r):
        dist.reduce_scatter_tensor(np.zeros(3, np.float32), np.zeros(5, np.float32))
    with pytest.raises(twinccl.InvalidArgument):
        twinccl.run(reduce_scatter_bad, world_size=2, timeout_s=30)


def test_outside_a_run_and_after_it():
    with pytest.raises(twinccl.InvalidArgument, match="inside the function given to twinccl.run"):
        dist.get_rank()
    kept = {}

    def rank(r):
        kept[r] = dist.new_group([0, 1])
    twinccl.run(rank, world_size=2)
    with pytest.raises(twinccl.InvalidArgument, match="has returned"):
        dist.get_rank(kept[0])


def test_configuration_errors():
    with pytest.raises(twinccl.ConfigError):
        twinccl.run(lambda r: None, world_size=0)
    with pytest.raises(twinccl.ConfigError, match="4096"):
        twinccl.run(lambda r: None, world_size=100000)  # refused before any thread or memory
    with pytest.raises(twinccl.ConfigError, match="check"):
        twinccl.run(lambda r: None, world_size=2, check=5)
    with pytest.raises(twinccl.ConfigError):
        twinccl.run(lambda r: None, world_size=2, topology="no-such-topology")
    with pytest.raises(twinccl.InvalidArgument):
        twinccl.run(42, world_size=2)


def test_errors_are_one_family():
    for name in ["InvalidArgument", "MismatchError", "TimeoutError", "AbortedError",
                 "DeadlockError", "ConfigError"]:
        assert issubclass(getattr(twinccl, name), twinccl.Error)
    assert issubclass(twinccl.Error, RuntimeError)


def test_gil_is_released_while_ranks_wait():
    """Rank 0 runs pure Python (it needs the GIL) while the others wait in a barrier: it can only
    finish if the waiting ranks released the GIL (else the run ends in TimeoutError)."""
    def rank(r):
        if r == 0:
            end, n = time.monotonic() + 0.3, 0
            while time.monotonic() < end:
                n += 1
        dist.barrier()
    start = time.monotonic()
    twinccl.run(rank, world_size=4, timeout_s=5)
    assert time.monotonic() - start < 4


def test_gather_and_scatter_lists_only_on_the_root():
    messages = {}

    def rank(r):
        x = np.ones(2, np.float32)
        for op, kwargs in (("gather", {"gather_list": [x, x] if r == 1 else None, "dst": 0}),
                           ("scatter", {"scatter_list": [x, x] if r == 1 else None, "src": 0})):
            try:
                getattr(dist, op)(x, **kwargs)
            except twinccl.InvalidArgument as e:
                messages[(op, r)] = str(e)

    twinccl.run(rank, world_size=2, timeout_s=5)  # refused before anything is issued
    for op, arg, role in (("gather", "gather_list", "destination"),
                          ("scatter", "scatter_list", "source")):
        assert messages[(op, 0)] == "%s: %s must be given on the %s rank 0" % (op, arg, role)
        assert messages[(op, 1)].startswith("%s: %s must NOT be given on non-%s rank 1"
                                            % (op, arg, role))
