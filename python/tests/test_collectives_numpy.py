"""Every twinccl.distributed function on NumPy arrays, against hand-computed results, at world
sizes 1, 3 and 8."""
import gc
import weakref

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from conftest import run_ranks


def values(rank, n, dtype=np.float32):
    """Rank r's input: r*100 + 0, 1, ..., n-1."""
    return (np.arange(n) + 100 * rank).astype(dtype)


def test_rank_and_size(world_size):
    got = run_ranks(lambda r: (dist.get_rank(), dist.get_world_size(), dist.is_initialized()),
                    world_size)
    assert got == [(r, world_size, True) for r in range(world_size)]


@pytest.mark.parametrize("op,expect", [
    (dist.ReduceOp.SUM, lambda xs: sum(xs)),
    (dist.ReduceOp.PRODUCT, lambda xs: np.prod(xs, axis=0)),
    (dist.ReduceOp.MIN, lambda xs: np.min(xs, axis=0)),
    (dist.ReduceOp.MAX, lambda xs: np.max(xs, axis=0)),
    (dist.ReduceOp.AVG, lambda xs: sum(xs) / len(xs)),
])
def test_all_reduce(world_size, op, expect):
    n = 7
    inputs = [values(r, n, np.float64) / 64 + 1 for r in range(world_size)]

    def rank(r):
        x = inputs[r].copy()
        assert dist.all_reduce(x, op=op) is None
        return x
    for got in run_ranks(rank, world_size):
        np.testing.assert_allclose(got, expect(inputs), rtol=1e-12)


def test_all_reduce_premul_sum_and_integers(world_size):
    def rank(r):
        x = np.full(5, 2.0, dtype=np.float32)
        dist.all_reduce(x, op=dist._make_nccl_premul_sum(r + 1))  # sum of 2*(r+1)
        y = np.full(3, r + 1, dtype=np.int64)
        dist.all_reduce(y, op=dist.ReduceOp.AVG)  # integer avg truncates (NCCL)
        return x, y
    for x, y in run_ranks(rank, world_size):
        assert (x == world_size * (world_size + 1)).all()
        assert (y == (world_size * (world_size + 1) // 2) // world_size).all()


def test_broadcast_and_reduce(world_size):
    src = world_size - 1

    def rank(r):
        b = values(r, 6)
        dist.broadcast(b, src=src)
        red = values(r, 6)
        dist.reduce(red, dst=0, op=dist.ReduceOp.SUM)
        return b, red
    got = run_ranks(rank, world_size)
    for b, _ in got:
        np.testing.assert_array_equal(b, values(src, 6))
    np.testing.assert_array_equal(got[0][1], sum(values(r, 6) for r in range(world_size)))


def test_all_gather_list_and_tensor(world_size):
    def rank(r):
        x = values(r, 4)
        parts = [np.zeros(4, np.float32) for _ in range(world_size)]
        dist.all_gather(parts, x)
        out = np.zeros((world_size, 4), np.float32)
        dist.all_gather_into_tensor(out, x)
        return parts, out
    for parts, out in run_ranks(rank, world_size):
        for p in range(world_size):
            np.testing.assert_array_equal(parts[p], values(p, 4))
            np.testing.assert_array_equal(out[p], values(p, 4))


def test_reduce_scatter_list_and_tensor(world_size):
    def rank(r):
        full = values(r, 3 * world_size)
        out = np.zeros(3, np.float32)
        dist.reduce_scatter_tensor(out, full)
        out_list = np.zeros(3, np.float32)
        dist.reduce_scatter(out_list, [full[3 * p:3 * p + 3].copy() for p in range(world_size)],
                            op=dist.ReduceOp.MAX)
        return out, out_list
    total = sum(values(r, 3 * world_size) for r in range(world_size))
    for r, (out, out_list) in enumerate(run_ranks(rank, world_size)):
        np.testing.assert_array_equal(out, total[3 * r:3 * r + 3])
        np.testing.assert_array_equal(out_list, values(world_size - 1, 3 * world_size)[3 * r:3 * r + 3])


def test_all_to_all_and_single(world_size):
    def rank(r):
        ins = [np.full(2, 10 * r + p, np.int32) for p in range(world_size)]
        outs = [np.zeros(2, np.int32) for _ in range(world_size)]
        dist.all_to_all(outs, ins)
        single_in = np.concatenate(ins)
        single_out = np.zeros_like(single_in)
        dist.all_to_all_single(single_out, single_in)
        # uneven: rank r sends p+1 rows of 2 to rank p, receives r+1 rows from each
        send = np.concatenate([np.full((p + 1, 2), 100 * r + p, np.int64)
                               for p in range(world_size)])
        recv = np.zeros(((r + 1) * world_size, 2), np.int64)
        dist.all_to_all_single(recv, send, output_split_sizes=[r + 1] * world_size,
                               input_split_sizes=[p + 1 for p in range(world_size)])
        return outs, single_out, recv
    for r, (outs, single, recv) in enumerate(run_ranks(rank, world_size)):
        for p in range(world_size):
            assert (outs[p] == 10 * p + r).all()
            assert (single[2 * p:2 * p + 2] == 10 * p + r).all()
            assert (recv[(r + 1) * p:(r + 1) * (p + 1)] == 100 * p + r).all()


def test_gather_and_scatter(world_size):
    dst = world_size // 2

    def rank(r):
        lst = [np.zeros(3, np.float64) for _ in range(world_size)] if r == dst else None
        dist.gather(values(r, 3, np.float64), gather_list=lst, dst=dst)
        mine = np.zeros(3, np.float64)
        src_list = [values(p, 3, np.float64) * 2 for p in range(world_size)] if r == dst else None
        dist.scatter(mine, scatter_list=src_list, src=dst)
        return lst, mine
    for r, (lst, mine) in enumerate(run_ranks(rank, world_size)):
        np.testing.assert_array_equal(mine, values(r, 3, np.float64) * 2)
        if r == dst:
            for p in range(world_size):
                np.testing.assert_array_equal(lst[p], values(p, 3, np.float64))


def test_send_recv_ring(world_size):
    """Around the ring with isend/irecv, batch_isend_irecv and send/recv. Even ranks send first
    (the irecv-first ring is in test_p2p_streams.py); blocking send/recv must be ordered."""
    def rank(r):
        if world_size == 1:
            return values(r, 4, np.uint8)
        nxt, prv = (r + 1) % world_size, (r - 1) % world_size
        got = np.zeros(4, np.uint8)
        if r % 2 == 0:
            works = [dist.isend(values(r, 4, np.uint8), dst=nxt), dist.irecv(got, src=prv)]
        else:
            works = [dist.irecv(got, src=prv), dist.isend(values(r, 4, np.uint8), dst=nxt)]
        for w in works:
            w.wait()
        assert (got == values(prv, 4, np.uint8)).all()
        back = np.zeros(4, np.uint8)
        ops = [dist.P2POp(dist.irecv, back, nxt), dist.P2POp(dist.isend, got, prv)]
        for work in dist.batch_isend_irecv(ops):  # one group: any order works
            work.wait()
        if r % 2 == 0:
            dist.send(back, dst=nxt)
            assert dist.recv(got, src=prv) == prv
        else:
            assert dist.recv(got, src=prv) == prv
            dist.send(back, dst=nxt)
        return back
    for r, back in enumerate(run_ranks(rank, world_size)):
        np.testing.assert_array_equal(back, values(r, 4, np.uint8))


def test_async_work_and_barrier(world_size):
    def rank(r):
        x = np.ones(1000, np.float32)
        work = dist.all_reduce(x, async_op=True)
        assert isinstance(work, twinccl.Work)
        work.wait()
        assert work.is_completed()
        b = dist.barrier(async_op=True)
        b.wait()
        dist.barrier()
        return x
    for x in run_ranks(rank, world_size):
        assert (x == world_size).all()


def test_new_group(world_size):
    members = list(range(0, world_size, 2))  # even ranks

    def rank(r):
        g = dist.new_group(members)
        if r not in members:
            assert g is dist.GroupMember.NON_GROUP_MEMBER
            assert dist.get_rank(g) == -1
            with pytest.warns(UserWarning):
                assert dist.all_reduce(np.ones(1, np.float32), group=g) is None
            with pytest.warns(UserWarning):
                assert dist.broadcast(np.ones(1, np.float32), src=0, group=g) is None
            with pytest.raises(twinccl.InvalidArgument, match="not a member"):
                dist.get_global_rank(g, 0)
            return None
        x = np.full(2, float(r), np.float32)
        dist.all_reduce(x, group=g)
        b = np.full(2, float(r), np.float32)
        dist.broadcast(b, src=members[-1], group=g)  # src is a global rank, as in torch
        return dist.get_rank(g), dist.get_world_size(g), x, b
    for r, got in enumerate(run_ranks(rank, world_size)):
        if r in members:
            grank, gsize, x, b = got
            assert (grank, gsize) == (members.index(r), len(members))
            assert (x == sum(members)).all() and (b == members[-1]).all()


def test_new_group_made_by_its_members_only(world_size):
    """use_local_synchronization=True (torch's option): only the members call new_group; a
    non-member's call returns NON_GROUP_MEMBER at once. Before: the option was refused."""
    members = list(range(1, world_size))

    def rank(r):
        if r == 0:  # never calls it for `members`; its own group of one, made alone
            g = dist.new_group([0], use_local_synchronization=True)
            assert dist.new_group(members, use_local_synchronization=True) is \
                dist.GroupMember.NON_GROUP_MEMBER
            return dist.get_world_size(g)
        g = dist.new_group(members, use_local_synchronization=True)
        x = np.full(2, float(r), np.float32)
        dist.all_reduce(x, group=g)
        return dist.get_rank(g), float(x[0])
    got = run_ranks(rank, world_size)
    assert got[0] == 1
    assert got[1:] == [(m - 1, float(sum(members))) for m in members]


def test_object_collectives(world_size):
    def rank(r):
        objs = [None] * world_size
        dist.all_gather_object(objs, {"rank": r, "name": "x" * r})
        lst = [("hello", r)] if r == 0 else [None]
        dist.broadcast_object_list(lst, src=0)
        return objs, lst
    for objs, lst in run_ranks(rank, world_size):
        assert objs == [{"rank": p, "name": "x" * p} for p in range(world_size)]
        assert lst == [("hello", 0)]


def test_gather_object_and_scatter_object_list(world_size):
    dst = world_size - 1

    def rank(r):
        got = [None] * world_size if r == dst else None
        dist.gather_object({"r": r, "pad": "y" * (3 * r)}, got, dst=dst)
        out = [None]
        dist.scatter_object_list(out, [("to", p, [0] * p) for p in range(world_size)]
                                 if r == 0 else None, src=0)
        return got, out[0]
    for r, (got, mine) in enumerate(run_ranks(rank, world_size)):
        assert mine == ("to", r, [0] * r)
        if r == dst:
            assert got == [{"r": p, "pad": "y" * (3 * p)} for p in range(world_size)]


def test_zero_length_and_bfloat16_types():
    def rank(r):
        empty = np.zeros(0, np.float32)
        dist.all_reduce(empty)
        u = np.full(3, r + 1, np.uint64)
        dist.all_reduce(u, op=dist.ReduceOp.MAX)
        return u
    for u in run_ranks(rank, 3):
        assert (u == 3).all()


def test_arrays_of_dropped_works_live_until_done_and_are_released():
    refs = []

    def rank(r):
        for _ in range(10):  # check=0 allows dropping Works; the arrays must outlive the ops
            a = np.ones(1 << 14, np.float32)
            refs.append(weakref.ref(a))
            dist.all_reduce(a, async_op=True)
            del a
        dist.barrier()
    twinccl.run(rank, world_size=4, check=0, timeout_s=20)
    gc.collect()
    assert len(refs) == 40 and all(ref() is None for ref in refs)  # no reference leaked


def test_in_place_views_as_fsdp_uses_them(world_size):
    """NCCL's in-place rules on views of one array; other overlaps are refused."""
    def rank(r):
        out = np.zeros(3 * world_size, np.float32)
        out[3 * r:3 * r + 3] = r + 1
        dist.all_gather_into_tensor(out, out[3 * r:3 * r + 3])
        full = np.arange(3 * world_size, dtype=np.float32)
        dist.reduce_scatter_tensor(full[3 * r:3 * r + 3], full)
        x = np.ones(2 * world_size, np.float32)
        if world_size > 1:
            with pytest.raises(twinccl.InvalidArgument, match="overlap"):
                dist.all_gather_into_tensor(x, x[1:3])
        return out, full[3 * r:3 * r + 3]
    for r, (out, mine) in enumerate(run_ranks(rank, world_size)):
        np.testing.assert_array_equal(out, np.repeat(np.arange(1, world_size + 1), 3))
        np.testing.assert_array_equal(mine, world_size * np.arange(3 * r, 3 * r + 3))
