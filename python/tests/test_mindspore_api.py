"""twinccl.mindspore (comm_func's shapes) and twinccl.mindspore_mint (mint.distributed /
ops.communication) on NumPy arrays: every function's shapes, results, handles, placeholders,
group names and uneven splits, as MindSpore documents them. test_mindspore_real.py repeats the
checks on MindSpore tensors when MindSpore is installed."""
import numpy as np
import pytest

import twinccl
import twinccl.mindspore as cf
import twinccl.mindspore_mint as mint

from conftest import run_ranks


def comm_func_checks(rank, tensor, to_numpy):
    """Every comm_func function once, on tensors made by `tensor(numpy array)`; asserts results."""
    n = cf.get_group_size()
    x = tensor(np.full((2, 3), rank + 1, np.float32))
    total = n * (n + 1) / 2
    out, h = cf.all_reduce(x)
    assert h is None and out.shape == (2, 3) and (to_numpy(out) == total).all()
    assert (to_numpy(x) == rank + 1).all()  # a new output; the input is left alone
    out, h = cf.all_reduce(x, op="max", async_op=True)
    h.wait()
    assert (to_numpy(out) == n).all()
    g, h = cf.all_gather_into_tensor(x, async_op=True)
    h.wait()
    assert g.shape == (2 * n, 3) and to_numpy(g)[::2, 0].tolist() == list(range(1, n + 1))
    rs, h = cf.reduce_scatter_tensor(tensor(np.ones((2 * n, 3), np.float32)))
    assert h is None and rs.shape == (2, 3) and (to_numpy(rs) == n).all()
    r = cf.reduce(x, dst=n - 1)
    if rank == n - 1:
        assert r.shape == (2, 3) and (to_numpy(r) == total).all()
    else:  # MindSpore: other ranks get a shape-[1] tensor with no meaning
        assert r.shape == (1,) and to_numpy(r).tolist() == [0]
    b = cf.broadcast(x, src=0)
    assert b.shape == (2, 3) and (to_numpy(b) == 1).all()
    gi = cf.gather_into_tensor(x, dst=0)
    assert gi.shape == ((2 * n, 3) if rank == 0 else (1,))
    full = tensor(np.arange(2 * n, dtype=np.float32).reshape(2 * n, 1) * (rank == 0))
    st = cf.scatter_tensor(full, src=0)
    assert st.shape == (2, 1) and to_numpy(st).ravel().tolist() == [2 * rank, 2 * rank + 1]
    assert cf.barrier() is None
    # uneven all_to_all: rank r sends r + 1 rows to every rank
    t = tensor(np.full((n * (rank + 1), 2), rank, np.float32))
    rows = [p + 1 for p in range(n)]
    o, h = cf.all_to_all_single_with_output_shape((sum(rows), 2), t, rows, [rank + 1] * n,
                                                  async_op=True)
    h.wait()
    assert o.shape == (sum(rows), 2)
    assert to_numpy(o)[:, 0].tolist() == [p for p in range(n) for _ in range(p + 1)]
    pieces, _ = cf.all_to_all_with_output_shape(
        [(p + 1,) for p in range(n)],
        [tensor(np.full(rank + 1, 10 * rank + p, np.float32)) for p in range(n)])
    assert [to_numpy(a).tolist() for a in pieces] == [[10 * p + rank] * (p + 1) for p in range(n)]
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    res = cf.batch_isend_irecv([cf.P2POp("isend", x, nxt), cf.P2POp(cf.irecv, x, prv)])
    assert isinstance(res, tuple) and len(res) == 2
    assert (to_numpy(res[0]) == 0).all() and (to_numpy(res[1]) == prv + 1).all()
    if n > 1:
        if rank == 0:
            cf.send(x, dst=1)
            assert cf.isend(x, dst=1).wait() in (None, True)
        if rank == 1:
            y = cf.recv(tensor(np.zeros((2, 3), np.float32)), src=0)
            assert (to_numpy(y) == 1).all()
            y, h = cf.irecv(tensor(np.zeros((2, 3), np.float32)), src=0)
            h.wait()
            assert (to_numpy(y) == 1).all()
    return True


def test_comm_func_every_function_numpy(world_size):
    def rank(r):
        cf.init()
        return comm_func_checks(r, lambda a: a, np.asarray)
    assert all(run_ranks(rank, world_size))


def test_named_groups_and_management():
    def rank(r):
        cf.init()
        assert cf.get_rank() == r and cf.get_group_size("nccl_world_group") == 4
        cf.create_group("odd", [1, 3])  # every rank calls it; only 1 and 3 are members
        if r % 2:
            out, _ = cf.all_reduce(np.array([r], np.int64), group="odd")
            assert out.tolist() == [4]
            assert cf.get_rank("odd") == r // 2 and cf.get_group_size("odd") == 2
            assert cf.get_world_rank_from_group_rank("odd", 1) == 3
            assert cf.get_group_rank_from_world_rank(3, "odd") == 1
            assert cf.get_process_group_ranks("odd") == [1, 3]
            assert cf.broadcast(np.array([r]), src=3, group="odd").tolist() == [3]
            with pytest.raises(twinccl.InvalidArgument, match="src=0 is not a rank of group"):
                cf.broadcast(np.array([r]), src=0, group="odd")
            cf.destroy_group("odd")
        # members destroyed it; ranks 0 and 2 were never members
        with pytest.raises(twinccl.InvalidArgument, match="no group named 'odd'" if r % 2 else
                           r"rank %d is not a member of group 'odd' \(world ranks \[1, 3\]\)" % r):
            cf.all_reduce(np.zeros(1), group="odd")
    run_ranks(rank, 4)


def test_comm_func_errors():
    def rank(r):
        with pytest.raises(twinccl.InvalidArgument, match="op='avg' is not one of"):
            cf.all_reduce(np.zeros(2), op="avg")  # comm_func has no avg (mint has)
        with pytest.raises(twinccl.InvalidArgument, match="divide"):
            cf.reduce_scatter_tensor(np.zeros((3, 2)))
        with pytest.raises(twinccl.InvalidArgument, match="async_op must be a bool"):
            cf.all_gather_into_tensor(np.zeros(2), async_op=1)
        with pytest.raises(twinccl.InvalidArgument, match="tag=3"):
            cf.send(np.zeros(2), dst=1 - r, tag=3)
        with pytest.raises(twinccl.InvalidArgument, match="output_split_sizes has 3 entries"):
            cf.all_to_all_single_with_output_shape((2,), np.zeros(2), [1, 1, 0], [1, 1])
        with pytest.raises(twinccl.InvalidArgument, match="group must be a group name"):
            cf.barrier(group=3)
    run_ranks(rank, 2)


def mint_checks(rank, tensor, to_numpy):
    """Every mint.distributed / ops.communication collective once, in place."""
    n = mint.get_world_size()
    x = tensor(np.full((2, 2), rank + 1, np.float32))
    assert mint.all_reduce(x) is None and (to_numpy(x) == n * (n + 1) / 2).all()
    x = tensor(np.full((2, 2), rank + 1, np.float32))
    h = mint.all_reduce(x, op="avg", async_op=True)
    h.wait()
    assert (to_numpy(x) == (n + 1) / 2).all()
    rows = [p + 1 for p in range(n)]
    out = tensor(np.zeros((sum(rows), 2), np.float32))
    mint.all_gather_into_tensor_uneven(out, tensor(np.full((rank + 1, 2), rank, np.float32)),
                                       output_split_sizes=rows)
    assert to_numpy(out)[:, 0].tolist() == [p for p in range(n) for _ in range(p + 1)]
    full = np.arange(sum(rows) * 2, dtype=np.float32).reshape(sum(rows), 2)
    mine = tensor(np.zeros((rank + 1, 2), np.float32))
    mint.reduce_scatter_tensor_uneven(mine, tensor(full), input_split_sizes=rows, op="max")
    first = sum(rows[:rank])
    assert (to_numpy(mine) == full[first:first + rank + 1]).all()
    o = tensor(np.zeros(sum(rows), np.float32))
    mint.all_to_all_single(o, tensor(np.full(n * (rank + 1), rank, np.float32)), rows,
                           [rank + 1] * n)
    assert to_numpy(o).tolist() == [p for p in range(n) for _ in range(p + 1)]
    # all_to_all_v_c: rank i sends j + 1 rows (of 2) to rank j, valued 10 i + j
    sent = np.concatenate([np.full((p + 1, 2), 10 * rank + p, np.float32) for p in range(n)])
    o = tensor(np.zeros((n * (rank + 1), 2), np.float32))
    assert mint.all_to_all_v_c(o, tensor(sent), [j + 1 for _ in range(n) for j in range(n)]) \
        is None
    assert to_numpy(o)[:, 1].tolist() == [10 * p + rank for p in range(n) for _ in range(rank + 1)]
    with pytest.raises(twinccl.InvalidArgument, match="output is float32, input is int32"):
        mint.all_to_all_v_c(o, tensor(sent.astype(np.int32)), [1] * (n * n))
    g = tensor(np.zeros((n, 2), np.float32))
    mint.all_gather_into_tensor(g, tensor(np.full((1, 2), rank, np.float32)))
    assert to_numpy(g)[:, 0].tolist() == list(range(n))
    s = tensor(np.zeros((1, 2), np.float32))
    mint.reduce_scatter_tensor(s, tensor(np.ones((n, 2), np.float32)))
    assert (to_numpy(s) == n).all()
    y = tensor(np.full(3, rank, np.float32))
    mint.broadcast(y, src=n - 1)
    assert (to_numpy(y) == n - 1).all()
    y = tensor(np.full(3, rank, np.float32))
    mint.reduce(y, dst=0, op="sum")
    if rank == 0:
        assert (to_numpy(y) == n * (n - 1) / 2).all()
    lst = [tensor(np.zeros(1, np.float32)) for _ in range(n)]
    mint.all_gather(lst, tensor(np.full(1, rank, np.float32)))
    assert [to_numpy(a).tolist() for a in lst] == [[p] for p in range(n)]
    gt = tensor(np.zeros(n, np.float32))
    mint.gather_into_tensor(gt, tensor(np.full(1, rank, np.float32)), dst=0)
    if rank == 0:
        assert to_numpy(gt).tolist() == list(range(n))
    st = tensor(np.zeros(1, np.float32))
    mint.scatter_tensor(st, tensor(np.arange(n, dtype=np.float32)), src=0)
    assert to_numpy(st).tolist() == [rank]
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    r = tensor(np.zeros(2, np.float32))
    handles = mint.batch_isend_irecv([mint.P2POp(mint.isend, tensor(np.full(2, rank, np.float32)),
                                                 nxt), mint.P2POp("irecv", r, prv)])
    assert len(handles) == 1
    handles[0].wait()
    assert (to_numpy(r) == prv).all()
    objects = [None] * n
    mint.all_gather_object(objects, {"rank": rank})
    assert objects == [{"rank": p} for p in range(n)]
    mint.barrier()
    return True


def test_mint_every_function_numpy(world_size):
    def rank(r):
        mint.init_process_group()
        return mint_checks(r, lambda a: a, np.asarray)
    assert all(run_ranks(rank, world_size))


def test_mint_groups_p2p_and_errors():
    def rank(r):
        mint.init_process_group(world_size=3)
        g = mint.new_group([2, 0])
        assert (g == "") == (r == 1)  # MindSpore: a non-member gets no group
        if g:
            assert g.startswith("hccl_2_") and mint.get_process_group_ranks(g) == [0, 2]
            assert mint.get_rank(g) == r // 2 and mint.get_group_rank(g, 2) == 1
            assert mint.get_global_rank(g, 1) == 2
            x = np.full(2, r, np.int32)
            mint.all_reduce(x, group=g)
            assert x.tolist() == [2, 2]
        assert mint.new_group() == "hccl_world_group" and mint.get_backend() == "hccl"
        if r == 0:
            mint.send(np.full(2, 7, np.float32), dst=1)
            mint.send_object_list(["hello", 3], dst=2)
        if r == 1:
            x = np.zeros(2, np.float32)
            assert mint.recv(x, src=0) == 0 and x.tolist() == [7, 7]
        if r == 2:
            objs = [None, None]
            assert mint.recv_object_list(objs, src=0) == 0 and objs == ["hello", 3]
        with pytest.raises(twinccl.InvalidArgument, match="dst=%d is this rank" % r):
            mint.send(np.zeros(1), dst=r)
        with pytest.raises(twinccl.InvalidArgument, match="op='prod' is not one of"):
            mint.reduce_scatter_tensor_uneven(np.zeros(1), np.zeros(3), op="prod")
        with pytest.raises(twinccl.InvalidArgument, match="split sizes need"):
            mint.all_gather_into_tensor_uneven(np.zeros(4), np.zeros(2), [1, 1, 1])
        with pytest.raises(twinccl.InvalidArgument, match="C-contiguous to be written"):
            mint.all_reduce(np.zeros((4, 4))[:, 1])  # reshape(-1) of it is a copy
        assert cf.all_reduce(np.ones((4, 4))[:, 1])[0].tolist() == [3] * 4  # read: fine
    run_ranks(rank, 3)


def test_mindspore_switch_needs_mindspore():
    try:
        import mindspore  # noqa: F401
    except ImportError:
        with pytest.raises(twinccl.InvalidArgument, match="needs MindSpore"):
            twinccl.run(lambda r: None, world_size=1, mindspore=True)
    else:
        pytest.skip("MindSpore is installed: test_mindspore_real.py runs the switch")
