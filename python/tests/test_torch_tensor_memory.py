"""Every call takes a CPU torch tensor's memory as it is (twinccl/_tensors.py's array(): its
data_ptr and nbytes, no NumPy view): a view at an offset changes only its own elements, bfloat16
and a Parameter work, the storage stays resizable, float8 moves as its bytes, the checks still
refuse what cannot be used in place."""
import pytest

import twinccl
import twinccl.distributed as dist

torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402

from torch_backend_support import needs_torch2, run_script  # noqa: E402


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


def _resizable(tensors):
    return [t.untyped_storage().resizable() for t in tensors]


def test_every_call_leaves_the_tensors_storage_resizable():
    """Every call takes a torch tensor as it is, never through Tensor.numpy(), which makes its
    storage unresizable for good: FSDP (FullyShardedDataParallel) frees its all-gather's output
    with resize_(0) after each use ("Trying to resize storage that is not resizable")."""
    out = {}

    def fn(rank):
        seen = []

        def fresh(n, dtype=torch.float32):
            t = (torch.arange(n) + 10 * rank).to(dtype)
            seen.append(t)
            return t
        gathered = fresh(4)
        dist.all_gather_into_tensor(gathered, fresh(2))
        scattered = fresh(2)
        dist.reduce_scatter_tensor(scattered, fresh(4))
        parts = [fresh(2), fresh(2)]
        dist.all_gather(parts, fresh(2, torch.bfloat16).float())
        swapped = fresh(4)
        dist.all_to_all_single(swapped, fresh(4))
        dist.reduce(fresh(3), dst=0)
        dist.gather(fresh(2), gather_list=[fresh(2), fresh(2)] if rank == 0 else None, dst=0)
        dist.scatter(fresh(2), scatter_list=[fresh(2), fresh(2)] if rank == 1 else None, src=1)
        if rank == 0:
            dist.send(fresh(3), dst=1)
        else:
            dist.recv(fresh(3), src=0)
        peer = 1 - rank
        got = fresh(2, torch.bfloat16)
        for w in dist.batch_isend_irecv([dist.P2POp(dist.isend, fresh(2, torch.bfloat16), peer),
                                         dist.P2POp(dist.irecv, got, peer)]):
            w.wait()
        flags = (torch.ones(3, dtype=torch.bool))
        seen.append(flags)
        dist.all_reduce(flags)
        dist.broadcast(fresh(2), src=0)
        out[rank] = (_resizable(seen), gathered.tolist(), got.float().tolist())
        for t in seen:  # what FSDP does with its all-gather's output
            t.untyped_storage().resize_(0)
    twinccl.run(fn, world_size=2)
    for rank in range(2):
        resizable, gathered, got = out[rank]
        assert all(resizable), resizable
        assert gathered == [0.0, 1.0, 10.0, 11.0]
        assert got == [10.0 * (1 - rank), 10.0 * (1 - rank) + 1]


@needs_torch2
def test_float8_is_moved_as_its_bytes_and_its_reductions_refused():
    """torch.float8_e4m3fn / e5m2 (FSDP2's float8 all-gather) through torch.distributed: moved as
    their bytes, as NCCL moves ncclFloat8e4m3 / e5m2 (Gloo has no float8); a reduction is an
    InvalidArgument naming the type, not a sum of bytes."""

    def script(rank):
        got = []
        for dt in (torch.float8_e4m3fn, torch.float8_e5m2):
            x = (torch.arange(4, dtype=torch.float32) * (rank + 1)).to(dt)
            gathered = torch.empty(8, dtype=dt)
            tdist.all_gather_into_tensor(gathered, x)
            swapped = torch.empty(4, dtype=dt)
            tdist.all_to_all_single(swapped, x)
            root = x.clone()
            tdist.broadcast(root, src=1)
            with pytest.raises(twinccl.InvalidArgument, match="float8.*cannot be reduced"):
                tdist.all_reduce(x)
            with pytest.raises(twinccl.InvalidArgument, match="float8.*cannot be reduced"):
                tdist.reduce_scatter_tensor(torch.empty(2, dtype=dt), x)
            got.append([t.view(torch.uint8).tolist() for t in (gathered, swapped, root)])
        with pytest.raises(twinccl.InvalidArgument, match="float8.*cannot be reduced"):
            dist.all_reduce(torch.zeros(2, dtype=torch.float8_e4m3fn))  # twinccl.distributed
        return got
    results = run_script(script, world_size=2)
    for k, dt in enumerate((torch.float8_e4m3fn, torch.float8_e5m2)):
        x = [(torch.arange(4, dtype=torch.float32) * (r + 1)).to(dt).view(torch.uint8).tolist()
             for r in range(2)]
        for rank in range(2):
            gathered, swapped, root = results[rank][k]
            assert gathered == x[0] + x[1]
            assert swapped == x[0][2 * rank:2 * rank + 2] + x[1][2 * rank:2 * rank + 2]
            assert root == x[1]
