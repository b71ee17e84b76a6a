"""all_reduce and broadcast take a CPU torch tensor's memory as it is (twinccl/_tensors.py's
memory(): its data_ptr and nbytes, no NumPy view): a view at an offset changes only its own
elements, bfloat16 and a Parameter work, the checks still refuse what cannot be used in place."""
import pytest

import twinccl
import twinccl.distributed as dist

torch = pytest.importorskip("torch")


def test_views_types_and_parameters_through_all_reduce_and_broadcast():
    out = {}

    def fn(rank):
        base = torch.arange(6, dtype=torch.float32) + 10 * rank
        dist.all_reduce(base[2:4])  # storage offset 2: elements 2 and 3 only
        half = torch.full((3,), 1.5 + rank, dtype=torch.bfloat16)
        dist.all_reduce(half)
        weight = torch.nn.Parameter(torch.full((2,), float(rank)))
        dist.broadcast(weight, src=1)
        tail = torch.arange(4, dtype=torch.int64) * (rank + 1)
        dist.broadcast(tail[1:], src=0)
        empty = torch.ones(0)
        dist.all_reduce(empty)
        out[rank] = (base.tolist(), half.float().tolist(), weight.tolist(), tail.tolist())
    twinccl.run(fn, world_size=2)
    for rank in range(2):
        base, half, weight, tail = out[rank]
        assert base == [10 * rank, 10 * rank + 1, 14, 16, 10 * rank + 4, 10 * rank + 5]
        assert half == [4.0] * 3
        assert weight == [1.0, 1.0]
        assert tail == [0, 1, 2, 3]


def test_what_cannot_be_used_in_place_is_still_refused():
    def fn(rank):
        with pytest.raises(twinccl.InvalidArgument, match="contiguous"):
            dist.all_reduce(torch.ones(4, 4).t())
        with pytest.raises(twinccl.InvalidArgument, match="not supported"):
            dist.broadcast(torch.ones(2, dtype=torch.complex64), src=0)
    twinccl.run(fn, world_size=2)
