"""torch.distributed's point-to-point semantics (docs/python.md): isend/irecv progress per pair of
ranks, as ProcessGroupNCCL's per-pair communicators; order within a (src, dst) pair is kept; true
deadlocks are still reported with the Python lines, never a hang."""

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from conftest import raised_before_deadline, run_ranks, site_of


def payload(r, n=5):
    return np.arange(n, dtype=np.float32) + 100.0 * r


@pytest.mark.parametrize("world_size", [2, 3, 8])
def test_irecv_before_isend_ring(world_size):
    """The common torch pattern: every rank posts its irecv first (a DeadlockError when all p2p of
    a communicator ran in issue order)."""
    def rank(r):
        n = dist.get_world_size()
        got = np.zeros(5, np.float32)
        req_r = dist.irecv(got, src=(r - 1) % n)
        req_s = dist.isend(payload(r), dst=(r + 1) % n)
        req_r.wait()
        req_s.wait()
        return got
    for r, got in enumerate(run_ranks(rank, world_size)):
        np.testing.assert_array_equal(got, payload((r - 1) % world_size))


def test_blocking_recv_before_isend_ring():
    """A blocking recv does not hold back the isend issued before it."""
    def rank(r):
        got = np.zeros(5, np.float32)
        req_s = dist.isend(payload(r), dst=(r + 1) % 3)
        dist.recv(got, src=(r - 1) % 3)
        req_s.wait()
        return got
    for r, got in enumerate(run_ranks(rank, 3)):
        np.testing.assert_array_equal(got, payload((r - 1) % 3))


def test_exchange_both_directions_in_any_order():
    """Both ranks isend then irecv to each other (and the reverse): sends and recvs of one pair
    run on their own streams."""
    def rank(r):
        got = np.zeros(5, np.float32)
        if r == 0:
            works = [dist.isend(payload(r), dst=1), dist.irecv(got, src=1)]
        else:
            works = [dist.irecv(got, src=0), dist.isend(payload(r), dst=0)]
        for w in reversed(works):
            w.wait()
        return got
    got = run_ranks(rank, 2)
    np.testing.assert_array_equal(got[0], payload(1))
    np.testing.assert_array_equal(got[1], payload(0))


def test_order_within_a_pair_is_kept():
    """Three isends to one peer arrive in issue order, whatever order the Works are waited in."""
    def rank(r):
        if r == 0:
            works = [dist.isend(payload(k, 3 + k), dst=1) for k in range(3)]
            dist.send(payload(7, 2), dst=1)  # blocking, after the isends: arrives last
        else:
            got = [np.zeros(3 + k, np.float32) for k in range(3)]
            works = [dist.irecv(g, src=0) for g in got]
            last = np.zeros(2, np.float32)
        for w in reversed(works):
            w.wait()
        if r == 1:
            dist.recv(last, src=0)
            return got + [last]
    got = run_ranks(rank, 2)[1]
    for k in range(3):
        np.testing.assert_array_equal(got[k], payload(k, 3 + k))
    np.testing.assert_array_equal(got[3], payload(7, 2))


def test_mixed_with_collectives_and_batches():
    """An async all_reduce in flight, then the irecv-first ring, batch_isend_irecv (each op on its
    pair's stream, as torch) and a blocking all_reduce: all results right."""
    def rank(r):
        n = dist.get_world_size()
        x = np.full(4, float(r + 1), np.float32)
        pending = dist.all_reduce(x, async_op=True)
        got = np.zeros(5, np.float32)
        req_r = dist.irecv(got, src=(r - 1) % n)
        req_s = dist.isend(payload(r), dst=(r + 1) % n)
        req_r.wait()
        req_s.wait()
        pending.wait()
        back = np.zeros(5, np.float32)
        ops = [dist.P2POp(dist.irecv, back, (r + 1) % n),
               dist.P2POp(dist.isend, got, (r - 1) % n)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        y = np.full(3, float(r), np.float64)
        dist.all_reduce(y)
        return got, back, x, y
    n = 4
    for r, (got, back, x, y) in enumerate(run_ranks(rank, n)):
        np.testing.assert_array_equal(got, payload((r - 1) % n))
        np.testing.assert_array_equal(back, payload(r))
        np.testing.assert_array_equal(x, np.full(4, 10.0, np.float32))
        np.testing.assert_array_equal(y, np.full(3, 6.0))


def test_true_deadlock_both_wait_in_irecv():
    """Both ranks wait on an irecv whose sender never sends: a DeadlockError naming the lines."""
    def rank(r):
        got = np.zeros(2, np.float32)
        work = dist.irecv(got, src=1 - r)  # MARK-IRECV: nobody ever sends
        work.wait()
    error = raised_before_deadline(twinccl.DeadlockError, rank, 2)
    assert site_of(__file__, "MARK-IRECV") in str(error), str(error)


def test_mutual_blocking_sends_still_deadlock():
    """A blocking send waits for its recv (torch's too): a ring of blocking sends first is a
    deadlock, reported with the lines."""
    def rank(r):
        dist.send(payload(r), dst=(r + 1) % 3)  # MARK-SEND: everyone sends, nobody receives
        dist.recv(np.zeros(5, np.float32), src=(r - 1) % 3)
    error = raised_before_deadline(twinccl.DeadlockError, rank, 3)
    assert site_of(__file__, "MARK-SEND") in str(error), str(error)


def test_irecv_from_a_rank_that_returned_fails_fast():
    def rank(r):
        if r == 0:
            dist.irecv(np.zeros(2, np.float32), src=1).wait()  # MARK-GONE
    error = raised_before_deadline((twinccl.AbortedError, twinccl.DeadlockError), rank, 2)
    assert site_of(__file__, "MARK-GONE") in str(error), str(error)


def test_isend_never_waited_is_reported():
    def rank(r):
        if r == 0:
            dist.isend(payload(r), dst=1)  # MARK-UNWAITED
        else:
            dist.recv(np.zeros(5, np.float32), src=0)
    with pytest.raises(twinccl.InvalidArgument) as e:
        twinccl.run(rank, world_size=2, timeout_s=30)
    assert site_of(__file__, "MARK-UNWAITED") in str(e.value), str(e.value)


def test_irecv_first_ring_replays_on_a_topology(tmp_path):
    """The trace says send/recv ran per pair ("p2p_streams": "per_peer"), so the simulator's
    replay orders them the same way instead of reporting a replay deadlock."""
    def rank(r):
        n = dist.get_world_size()
        got = np.zeros(1024, np.float32)
        req_r = dist.irecv(got, src=(r - 1) % n)
        req_s = dist.isend(np.full(1024, float(r), np.float32), dst=(r + 1) % n)
        req_r.wait()
        req_s.wait()
    path = tmp_path / "ring.trace.json"
    report = twinccl.run(rank, world_size=4, topology="dgx-h100", trace_path=str(path))
    assert len(report.ops) == 4 and report.total_us > 0
    assert '"p2p_streams":"per_peer"' in path.read_text()


def all_to_all_by_p2p(r):
    """Every rank's irecv from and isend to every peer in flight at once."""
    n = dist.get_world_size()
    got = np.zeros((n, 2), np.float32)
    works = [dist.irecv(got[q], src=q) for q in range(n) if q != r]
    works += [dist.isend(payload(r, 2), dst=q) for q in range(n) if q != r]
    for w in works:
        w.wait()
    return got


def test_max_p2p_lane_threads_bounds_the_lane_threads():
    """twinccl.run(max_p2p_lane_threads=): 4 ranks x 3 irecvs in flight need more than 4 lane
    threads: ConfigError naming the setting; the default runs it; nonsense values are refused."""
    with pytest.raises(twinccl.ConfigError) as e:
        twinccl.run(all_to_all_by_p2p, world_size=4, timeout_s=20, max_p2p_lane_threads=4)
    assert "max_p2p_lane_threads = 4: TWINCCL_MAX_P2P_LANE_THREADS, " \
           "twinccl.run(max_p2p_lane_threads=...)" in str(e.value)
    for r, got in enumerate(run_ranks(all_to_all_by_p2p, 4, max_p2p_lane_threads=24)):
        for q in range(4):
            if q != r:
                np.testing.assert_array_equal(got[q], payload(q, 2))
    for bad in (0, -5, 2 ** 20 + 1):
        with pytest.raises(twinccl.ConfigError, match=r"max_p2p_lane_threads=%d must be in "
                                                      r"\[1, 1048576\]" % bad):
            twinccl.run(all_to_all_by_p2p, world_size=2, max_p2p_lane_threads=bad)
    for bad in ("8", 8.0, None, True):
        with pytest.raises(twinccl.InvalidArgument, match="max_p2p_lane_threads must be an int"):
            twinccl.run(all_to_all_by_p2p, world_size=2, max_p2p_lane_threads=bad)
