"""twinccl.mindspore (comm_func's (output, handle) shapes) and twinccl.cuda_comm.scatter
(torch.cuda.comm.scatter's chunk_sizes and dim), against hand-computed results."""
import numpy as np
import pytest

import twinccl
import twinccl.cuda_comm as cuda_comm
import twinccl.mindspore as comm_func
from conftest import run_ranks


def test_mindspore_shapes(world_size):
    def rank(r):
        x = np.full((2, 3), float(r), np.float32)
        gathered, handle = comm_func.all_gather_into_tensor(x, async_op=True)
        handle.wait()
        grad = np.arange(world_size * 2 * 3, dtype=np.float64).reshape(world_size * 2, 3)
        part, none = comm_func.reduce_scatter_tensor(grad, op="sum")
        summed, _ = comm_func.all_reduce(np.full(4, r + 1, np.int32), op="max")
        return gathered, part, none, summed
    for r, (gathered, part, none, summed) in enumerate(run_ranks(rank, world_size)):
        assert gathered.shape == (world_size * 2, 3)
        for p in range(world_size):
            assert (gathered[2 * p:2 * p + 2] == p).all()
        expect = world_size * np.arange(world_size * 6, dtype=np.float64).reshape(-1, 3)
        np.testing.assert_array_equal(part, expect[2 * r:2 * r + 2])
        assert none is None and (summed == world_size).all()


def test_mindspore_torch_and_errors():
    torch = pytest.importorskip("torch")

    def rank(r):
        out, _ = comm_func.all_gather_into_tensor(torch.full((2,), r, dtype=torch.bfloat16))
        with pytest.raises(twinccl.InvalidArgument, match="divide"):
            comm_func.reduce_scatter_tensor(torch.zeros(5))
        with pytest.raises(twinccl.InvalidArgument, match="op="):
            comm_func.all_reduce(torch.zeros(1), op="xor")
        return out
    for out in run_ranks(rank, 2):
        assert out.dtype == torch.bfloat16 and out.tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("dim", [0, 1])
def test_cuda_comm_scatter_chunk_sizes_and_dim(dim):
    world = 3
    full = np.arange(10 * 6, dtype=np.float32).reshape(10, 6) if dim == 0 else \
        np.arange(4 * 10, dtype=np.float32).reshape(4, 10)
    sizes = [3, 0, 7]

    def rank(r):
        mine = cuda_comm.scatter(full if r == 1 else np.zeros_like(full), chunk_sizes=sizes,
                                 dim=dim, src=1)
        even = cuda_comm.scatter(full, dim=dim, src=0)  # torch.chunk's sizes: 4, 4, 2
        out = np.zeros_like(even)
        assert cuda_comm.scatter(full, dim=dim, src=0, out=out) is out
        return mine, even, out
    starts = np.cumsum([0] + sizes)
    for r, (mine, even, out) in enumerate(run_ranks(rank, world)):
        index = [slice(None)] * 2
        index[dim] = slice(starts[r], starts[r + 1])
        np.testing.assert_array_equal(mine, full[tuple(index)])
        index[dim] = slice(4 * r, min(4 * r + 4, 10))
        np.testing.assert_array_equal(even, full[tuple(index)])
        np.testing.assert_array_equal(out, even)


def test_cuda_comm_scatter_errors():
    def rank(r):
        with pytest.raises(twinccl.InvalidArgument, match="devices"):
            cuda_comm.scatter(np.zeros(4, np.float32), devices=[0, 1])
        with pytest.raises(twinccl.InvalidArgument, match="sum to"):
            cuda_comm.scatter(np.zeros(4, np.float32), chunk_sizes=[1, 1])
        return True
    assert run_ranks(rank, 2) == [True, True]
