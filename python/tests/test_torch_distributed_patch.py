"""twinccl.run(..., torch_distributed=True): unmodified torch.distributed code on the emulator."""
import os

import pytest

import twinccl

torch = pytest.importorskip("torch")
import torch.distributed as tdist  # noqa: E402  (after the skip)

HERE = os.path.basename(__file__)


def unmodified_step(rank):
    """Written against torch.distributed only."""
    tdist.init_process_group("nccl")
    x = torch.full((6,), float(rank + 1))
    tdist.all_reduce(x, op=tdist.ReduceOp.SUM)
    out = torch.empty(tdist.get_world_size() * 6)
    tdist.all_gather_into_tensor(out, x)
    shard = torch.empty(2)
    tdist.reduce_scatter_tensor(shard, torch.arange(6.0))
    tdist.barrier()
    return x, out, shard, tdist.get_rank()


def test_unmodified_torch_distributed_code():
    original = tdist.all_reduce
    results = {}
    twinccl.run(lambda r: results.__setitem__(r, unmodified_step(r)), world_size=3,
                torch_distributed=True)
    assert tdist.all_reduce is original  # restored
    for r in range(3):
        x, out, shard, rank = results[r]
        assert rank == r and (x == 6).all() and (out == 6).all()
        assert shard.tolist() == [3.0 * (2 * r), 3.0 * (2 * r + 1)]


def test_torch_distributed_mismatch_names_the_user_line():
    def step(rank):
        tdist.all_reduce(torch.zeros(2 + rank))  # MARK-TORCH
    with pytest.raises(twinccl.MismatchError) as e:
        twinccl.run(step, world_size=2, torch_distributed=True)
    with open(__file__) as f:
        line = next(n for n, text in enumerate(f, 1) if "MARK-TORCH" in text and "next(" not in text)
    assert "%s:%d" % (HERE, line) in str(e.value)
    assert tdist.all_reduce.__module__.startswith("torch")
