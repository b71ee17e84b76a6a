"""The Python API used wrongly on purpose (docs/python.md): every misuse is a typed error naming
the argument, the rank and the line, at once, never a TypeError from the binding, a value
silently rounded or ignored, a race on another rank's objects, or a 300 s timeout."""
import pathlib
import sys
import threading
import time

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from conftest import site_of


def nothing(rank):
    pass


@pytest.mark.parametrize("kwargs, error, text", [
    ({"world_size": 2 ** 40}, twinccl.ConfigError, "world_size=1099511627776 must be in [1, 4096]"),
    ({"world_size": 2.0}, twinccl.InvalidArgument, "world_size must be an int, got 2.0"),
    ({"check": "on"}, twinccl.InvalidArgument, "check must be an int, got 'on'"),
    ({"check": 1.7}, twinccl.InvalidArgument, "check must be an int, got 1.7"),
    ({"check": 9}, twinccl.ConfigError, "check=9 must be in [0, 2]"),
    ({"timeout_s": float("inf")}, twinccl.ConfigError, "timeout_s=inf must be > 0"),
    ({"timeout_s": 1e300}, twinccl.ConfigError, "timeout_s=1e+300 must be > 0 and at most 1e+07"),
    ({"timeout_s": float("nan")}, twinccl.ConfigError, "timeout_s=nan must be > 0"),
    ({"timeout_s": "5"}, twinccl.InvalidArgument, "timeout_s must be a number of seconds"),
    ({"topology": 5}, twinccl.InvalidArgument, "topology must be a str or None, got 5"),
    ({"algorithm": 3}, twinccl.InvalidArgument, "algorithm must be a str or None, got 3"),
    ({"algorithm": "rnig"}, twinccl.ConfigError, "algorithm 'rnig' (TWINCCL_ALGO, "
                                                "twinccl.run(algorithm=...)"),
    ({"trace_path": 7}, twinccl.InvalidArgument, "trace_path must be a str or path or None"),
    ({"max_p2p_lane_threads": 2 ** 40}, twinccl.ConfigError, "max_p2p_lane_threads="),
    # Every other emulator option is a keyword too, checked by its row of the options table.
    ({"channels": 0}, twinccl.ConfigError, "twinccl.run: channels=0 must be in [1, 64]"),
    ({"chunk_elements": 1.5}, twinccl.InvalidArgument, "chunk_elements must be an int, got 1.5"),
    ({"p2p_per_peer_streams": 1}, twinccl.InvalidArgument,
     "p2p_per_peer_streams must be True or False, got 1"),
    ({"flight_recorder_ops": 0}, twinccl.ConfigError, "flight_recorder_ops=0 must be in [1, "),
])
def test_run_arguments_are_checked(kwargs, error, text):
    args = {"world_size": 2, "timeout_s": 10}
    args.update(kwargs)
    with pytest.raises(error) as e:
        twinccl.run(nothing, **args)
    assert text in str(e.value)


def test_an_unknown_keyword_is_a_type_error_listing_the_options():
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_lanes'") as e:
        twinccl.run(nothing, world_size=2, max_lanes=4)
    assert "max_p2p_lane_threads" in str(e.value)


def test_run_accepts_paths_and_bool_check(tmp_path):
    path = tmp_path / "run.trace.json"
    twinccl.run(lambda r: dist.all_reduce(np.ones(4)), world_size=2, trace_path=path, check=True)
    assert isinstance(path, pathlib.Path) and path.stat().st_size > 0


def test_async_and_generator_rank_functions_are_refused():
    async def coroutine_rank(rank):
        dist.barrier()

    def generator_rank(rank):
        yield dist.barrier()
    for fn, text in ((coroutine_rank, "is an async function"),
                     (generator_rank, "is a generator function")):
        with pytest.raises(twinccl.InvalidArgument, match=text):
            twinccl.run(fn, world_size=2)
    # Not recognisable before the call (a plain function returning a coroutine): its result says so.
    with pytest.raises(twinccl.InvalidArgument, match=r"fn\(\d\) returned <coroutine"):
        twinccl.run(lambda r: coroutine_rank(r), world_size=2)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_a_rank_exception_says_which_rank_raised_it():
    def rank(r):
        if r == 2:
            {}["missing"]
        dist.barrier()
    with pytest.raises(KeyError) as e:
        twinccl.run(rank, world_size=4, timeout_s=20)
    assert e.value.__notes__ == ["(raised on rank 2 of twinccl.run(world_size=4))"]
    assert e.traceback[-1].name == "rank"  # the traceback still ends at the user's line


def handed_over(world_size=2):
    """Rank 0 hands an object to rank 1 through a closure (a shared dict and an event: ranks that
    wait for each other in Python need twinccl.run(rank_state="shared"))."""
    box, ready = {}, threading.Event()

    def give(obj):
        box["obj"] = obj
        ready.set()

    def take():
        assert ready.wait(10)
        return box["obj"]
    return give, take


def test_a_work_waited_on_by_another_rank_is_refused():
    give, take = handed_over()

    def rank(r):
        if r == 0:
            work = dist.all_reduce(np.ones(4), async_op=True)
            give(work)
            work.wait()
        else:
            take().wait()  # would block outside the deadlock checker until the timeout
    start = time.monotonic()
    with pytest.raises(twinccl.InvalidArgument,
                       match="this Work belongs to rank 0, which issued its operation, but is "
                             "waited on by rank 1's thread"):
        twinccl.run(rank, world_size=2, timeout_s=20, rank_state="shared")
    assert time.monotonic() - start < 10


def test_a_group_used_by_another_rank_or_thread_is_refused():
    give, take = handed_over()

    def rank(r):
        group = dist.new_group([0, 1])
        if r == 0:
            give(group)
        else:
            dist.all_reduce(np.ones(4), group=take())  # rank 0's communicator
        dist.all_reduce(np.ones(4), group=group)
    with pytest.raises(twinccl.InvalidArgument,
                       match="communicator 'group1' belongs to rank 0 but is used on rank 1's "
                             "thread"):
        twinccl.run(rank, world_size=2, timeout_s=20, rank_state="shared")

    errors = []

    def rank_with_a_thread(r):
        group = dist.new_group([0, 1])

        def helper():
            try:
                dist.all_reduce(np.ones(4), group=group)
            except twinccl.InvalidArgument as e:
                errors.append(str(e))
        t = threading.Thread(target=helper)
        t.start()
        t.join()
    twinccl.run(rank_with_a_thread, world_size=2, timeout_s=20)
    assert len(errors) == 2 and all("a thread that is not one of twinccl.run's rank threads"
                                    in e for e in errors), errors


def test_new_group_ranks_must_agree_and_be_ints():
    def rank(r):
        dist.new_group([0] if r == 0 else [0, 1])  # MARK-GROUP
    with pytest.raises(twinccl.InvalidArgument) as e:
        twinccl.run(rank, world_size=2, timeout_s=20)
    assert "new_group on rank 1 (%s): ranks disagree on the group: this rank passed ranks=[0, 1]"\
        ", but only 1 rank(s) passed the same list" % site_of(__file__, "MARK-GROUP") \
        in str(e.value)
    for ranks, text in ((5, "ranks must be a list of ranks, got 5"),
                        ("01", "ranks must be a list of ranks"),
                        ([0, 1.5], r"ranks=\[0, 1.5\] must be ints"),
                        ([0, True], "must be ints")):
        with pytest.raises(twinccl.InvalidArgument, match=text):
            twinccl.run(lambda r: dist.new_group(ranks), world_size=2, timeout_s=20)


def test_compute_arguments_are_numbers():
    for bad in ("1", None, True):
        with pytest.raises(twinccl.InvalidArgument, match="twinccl.compute: seconds must be a "
                                                          "number"):
            twinccl.run(lambda r: twinccl.compute(bad), world_size=1)
    # Beyond what a trace holds: refused at the call, not by the replay after the run.
    for seconds, flops in ((float("inf"), 0), (1e300, 0), (0, float("inf")), (-1, 0)):
        with pytest.raises(twinccl.InvalidArgument, match="twinccl.compute: seconds=.* must be "
                                                          ">= 0, seconds at most 1000000"):
            twinccl.run(lambda r: twinccl.compute(seconds, flops), world_size=1,
                        topology="dgx-h100")


def test_report_save_trace_takes_a_path(tmp_path):
    report = twinccl.run(lambda r: dist.all_reduce(np.ones(4)), world_size=2, topology="dgx-h100")
    report.save_trace(tmp_path / "a.json")
    assert (tmp_path / "a.json").stat().st_size > 0
    with pytest.raises(twinccl.InvalidArgument, match="path must be a str or path, got 123"):
        report.save_trace(123)


def test_an_output_list_holding_one_array_twice_is_refused():
    # `[out] * world_size` (or the input listed twice): every rank's data lands in one array and
    # only the last stays. Before: returned normally with [2, 2, 2, 2] on both ranks.
    def gather_twice(rank):
        out = np.zeros(4, np.float32)
        dist.all_gather([out, out], np.full(4, rank + 1.0, np.float32))

    def all_to_all_overlapping(rank):
        block = np.zeros(6, np.float32)
        dist.all_to_all([block[0:4], block[2:6]], [np.ones(4, np.float32)] * 2)
    for fn, text in ((gather_twice, "tensor_list[0] and tensor_list[1] are the same memory: "
                                    "rank 0's and rank 1's data would both be written there"),
                     (all_to_all_overlapping, "output_list[0] and output_list[1] overlap in 8 "
                                              "bytes")):
        with pytest.raises(twinccl.InvalidArgument) as e:
            twinccl.run(fn, world_size=2, timeout_s=20)
        assert text in str(e.value)
    # Distinct views of one array, side by side, stay legal.
    def side_by_side(rank):
        block = np.zeros(8, np.float32)
        dist.all_gather([block[0:4], block[4:8]], np.full(4, rank + 1.0, np.float32))
        assert block.tolist() == [1.0] * 4 + [2.0] * 4
    twinccl.run(side_by_side, world_size=2, timeout_s=20)


def test_gather_list_twice_and_all_to_all_over_its_input_are_refused():
    def gather_twice(rank):
        y = np.zeros(4, np.float32)
        dist.gather(np.full(4, rank + 1.0, np.float32), [y, y] if rank == 0 else None, dst=0)

    def all_to_all_into_inputs(rank):
        a, b = np.ones(4, np.float32), np.zeros(4, np.float32)
        dist.all_to_all([b, a], [a, b])
    # Which pair is named depends on the arrays' addresses (both pairs share memory).
    for fn, text in ((gather_twice, r"gather_list\[0\] and gather_list\[1\] are the same memory"),
                     (all_to_all_into_inputs, r"output_list\[[01]\] and input_list\[[01]\] are "
                                              r"the same memory: the operation would write an "
                                              r"input")):
        with pytest.raises(twinccl.InvalidArgument, match=text):
            twinccl.run(fn, world_size=2, timeout_s=20)


def test_all_gather_input_listed_as_another_ranks_entry_gives_torchs_result():
    # torch gathers into a flat buffer, then copies out: the input is read whole first. Before,
    # rank 0's input (also its tensor_list[1]) was overwritten by rank 1's data before it was
    # sent to itself: [[2, 2], [2, 2]] instead of [[1, 1], [2, 2]].
    def fn(rank):
        x = np.full(2, rank + 1.0, np.float32)
        lst = [np.zeros(2, np.float32), np.zeros(2, np.float32)]
        lst[1 - rank] = x
        dist.all_gather(lst, x)
        return [a.tolist() for a in lst]
    from conftest import run_ranks
    assert run_ranks(fn, 2) == [[[1.0, 1.0], [2.0, 2.0]]] * 2


def test_work_wait_takes_torchs_timeout():
    # Before: TypeError from the binding ("incompatible function arguments").
    import datetime

    def fn(rank):
        x = np.ones(4, np.float32)
        w = dist.all_reduce(x, async_op=True)
        assert w.wait(timeout=datetime.timedelta(seconds=30)) is True
        assert w.wait(0) is True and w.wait() is True
        for bad, text in ((float("nan"), "must be >= 0 seconds"), (-1, "must be >= 0 seconds"),
                          ("5", "must be a datetime.timedelta or a number of seconds, got '5'")):
            with pytest.raises(twinccl.InvalidArgument, match=text):
                w.wait(timeout=bad)
        if rank == 0:  # rank 1 joins late: a short timeout ends in TimeoutError, then it completes
            w = dist.all_reduce(x, async_op=True)
            with pytest.raises(twinccl.TimeoutError, match="did not complete within timeout="):
                w.wait(timeout=datetime.timedelta(milliseconds=20))
            w.wait()
        else:
            time.sleep(0.3)
            dist.all_reduce(x)
    twinccl.run(fn, world_size=2, timeout_s=20)


def test_a_long_rank_list_is_cut_in_messages():
    with pytest.raises(twinccl.InvalidArgument) as e:
        twinccl.run(lambda r: dist.new_group(list(range(100000))), world_size=2, timeout_s=20)
    assert "ranks=[0, 1, 2," in str(e.value) and "... (100000 entries)]" in str(e.value)
    assert len(str(e.value)) < 400
