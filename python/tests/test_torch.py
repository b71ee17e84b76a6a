"""twinccl.distributed on CPU torch tensors: in place, zero-copy, torch's types (bfloat16 too),
and the issue's snippet."""
import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from conftest import run_ranks

torch = pytest.importorskip("torch")


def test_issue_snippet_exact_results():
    seen = {}

    def step(rank):
        x = torch.full((1024,), float(rank + 1))
        dist.all_reduce(x)  # in place
        out = torch.empty(8 * 1024)
        work = dist.all_gather_into_tensor(out, x, async_op=True)
        work.wait()
        shard = torch.empty(1024 // 8)
        dist.reduce_scatter_tensor(shard, x)
        seen[rank] = (x.clone(), out.clone(), shard.clone())
    report = twinccl.run(step, world_size=8, topology="dgx-h100")
    for rank in range(8):
        x, out, shard = seen[rank]
        assert torch.equal(x, torch.full((1024,), 36.0))
        assert torch.equal(out, torch.full((8 * 1024,), 36.0))
        assert torch.equal(shard, torch.full((128,), 8 * 36.0))
    kinds = sorted({op["kind"] for op in report.ops})
    assert kinds == ["all_gather", "all_reduce", "reduce_scatter"]


def test_zero_copy_views_and_dtypes(world_size):
    def rank(r):
        big = torch.zeros(4, 6)
        row = big[1]  # a contiguous view: all_reduce writes into big's memory
        row.fill_(r + 1)
        dist.all_reduce(row)
        bf = torch.full((5,), 1.5, dtype=torch.bfloat16)
        dist.all_reduce(bf)
        half = torch.full((5,), 0.25, dtype=torch.float16)
        dist.all_reduce(half, op=dist.ReduceOp.MAX)
        i8 = torch.full((3,), r, dtype=torch.int8)
        dist.all_reduce(i8, op=dist.ReduceOp.MIN)
        grad = torch.ones(3, requires_grad=True)  # parameters' tensors work as in torch
        dist.all_reduce(grad.data)
        return big, bf, half, i8
    expect = world_size * (world_size + 1) / 2
    for big, bf, half, i8 in run_ranks(rank, world_size):
        assert (big[1] == expect).all() and (big[0] == 0).all() and (big[2:] == 0).all()
        assert torch.equal(bf, torch.full((5,), 1.5 * world_size, dtype=torch.bfloat16))
        assert (half == 0.25).all() and (i8 == 0).all()


def test_torch_reduce_op_and_lists():
    import torch.distributed as tdist

    def rank(r):
        x = torch.tensor([float(r), 10.0 - r])
        dist.all_reduce(x, op=tdist.ReduceOp.MAX)  # torch's own ReduceOp values are accepted
        parts = [torch.empty(2) for _ in range(3)]
        dist.all_gather(parts, torch.tensor([r, r + 0.5]))
        return x, parts
    for x, parts in run_ranks(rank, 3):
        assert x.tolist() == [2.0, 10.0]
        assert [p.tolist() for p in parts] == [[0, 0.5], [1, 1.5], [2, 2.5]]


def test_unsupported_arguments_raise():
    def rank(r):
        with pytest.raises(twinccl.InvalidArgument, match="contiguous"):
            dist.all_reduce(torch.zeros(4, 4).t())
        with pytest.raises(twinccl.InvalidArgument, match="not supported"):
            dist.all_reduce(torch.zeros(2, dtype=torch.int16))
        with pytest.raises(twinccl.InvalidArgument, match="tag"):
            dist.send(torch.zeros(1), dst=0, tag=3)
        with pytest.raises(twinccl.InvalidArgument, match="source rank is required"):
            dist.recv(torch.zeros(1))
        with pytest.raises(twinccl.InvalidArgument, match="device_ids"):
            dist.barrier(device_ids=[0])
        with pytest.raises(twinccl.InvalidArgument, match="BAND|not supported"):
            dist.all_reduce(torch.zeros(1, dtype=torch.int32), op="BAND")
        with pytest.raises(twinccl.InvalidArgument, match="PREMUL_SUM needs"):
            dist.all_reduce(torch.zeros(1), op=dist.ReduceOp.PREMUL_SUM)
        with pytest.raises(twinccl.InvalidArgument, match="out of range"):
            dist.broadcast(torch.zeros(1), src=5)
        with pytest.raises(twinccl.InvalidArgument, match="expected a torch.Tensor"):
            dist.all_reduce([1.0, 2.0])
        return True
    assert run_ranks(rank, 2) == [True, True]


def test_numpy_without_torch_types():
    def rank(r):
        x = np.arange(4, dtype=np.float32)
        t = torch.from_numpy(x)  # shares memory: both see the result
        dist.all_reduce(t)
        return x
    for x in run_ranks(rank, 3):
        assert x.tolist() == [0, 3, 6, 9]
