"""Planted misuses in torch 2.x scripts on TwinCCL's backend: a typed error naming the script's
line on every rank that waits, in well under 2 s (NCCL would hang; Gloo aborts after its
timeout), including when the collective is issued by torch's C++ (DDP's reducer in backward())."""
import os
import time

import pytest
from torch_backend_support import TORCH2, torch

import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402

import twinccl  # noqa: E402

HERE = os.path.basename(__file__)


def line_of(marker):
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            if marker in text and "line_of(" not in text:
                return "%s:%d" % (HERE, number)
    raise AssertionError(marker)


def run_recording(script):
    """Runs script on 4 ranks; returns (error of the run, {rank: its error}, seconds from the
    misuse to the run's end)."""
    errors, misuse_at = {}, []

    def rank_main(rank):
        try:
            script(rank, misuse_at)
        except BaseException as e:  # noqa: B036 (recorded, then raised as it is)
            errors[rank] = e
            raise

    with pytest.raises(twinccl.Error) as raised:
        twinccl.run(rank_main, world_size=4, torch_distributed=True, timeout_s=30)
    return raised.value, errors, time.monotonic() - min(misuse_at)


def test_a_rank_skipping_ddps_last_all_reduce_is_named_on_every_waiting_rank():
    from torch.nn.parallel import DistributedDataParallel as DDP

    def script(rank, misuse_at):
        model = DDP(nn.Linear(4, 2))
        steps = 2 if rank == 3 else 3  # rank 3 has one batch fewer
        for _ in range(steps):
            model(torch.ones(2, 4)).sum().backward()  # MARK-BACKWARD
        misuse_at.append(time.monotonic())

    error, errors, seconds = run_recording(script)
    site = line_of("MARK-BACKWARD")
    assert sorted(errors) == [0, 1, 2]  # rank 3 returned; the others were waiting for it
    for rank, e in errors.items():
        # torch 1.x's autograd engine turns it into RuntimeError("AbortedError: ..."), which the
        # run raises typed again (the run's own error below).
        assert isinstance(e, twinccl.Error) or (not TORCH2 and "Error: " in str(e)), (rank, e)
        assert site in str(e) and "rank 3" in str(e) and "returned" in str(e), str(e)
    assert isinstance(error, twinccl.Error) and site in str(error)
    assert seconds < 2.0


def test_a_wrong_dtype_on_one_rank_is_a_mismatch_on_every_rank():
    def script(rank, misuse_at):
        t = torch.ones(3, dtype=torch.float64 if rank == 1 else torch.float32)
        misuse_at.append(time.monotonic())
        dist.all_reduce(t)  # MARK-DTYPE

    error, errors, seconds = run_recording(script)
    site = line_of("MARK-DTYPE")
    assert sorted(errors) == [0, 1, 2, 3]
    for e in errors.values():
        assert isinstance(e, twinccl.MismatchError), e
        assert "float64" in str(e) and "rank 1 (%s)" % site in str(e), str(e)
    assert seconds < 2.0


def test_a_rank_with_a_shorter_shard_in_fsdp_style_all_gather_is_named():
    def script(rank, misuse_at):
        shard = torch.ones(3 if rank == 2 else 4)
        out = torch.empty(16)
        misuse_at.append(time.monotonic())
        dist.all_gather_into_tensor(out, shard)  # MARK-GATHER

    error, errors, seconds = run_recording(script)
    site = line_of("MARK-GATHER")
    assert sorted(errors) == [0, 1, 2, 3]
    for e in errors.values():
        assert isinstance(e, twinccl.Error) and site in str(e), str(e)
    assert seconds < 2.0


def test_ranks_passing_new_group_different_lists_are_named():
    def script(rank, misuse_at):
        misuse_at.append(time.monotonic())
        dist.new_group([0, 1] if rank != 2 else [0, 2])  # MARK-GROUP

    error, errors, seconds = run_recording(script)
    site = line_of("MARK-GROUP")
    # Ranks 0 and 1 made [0, 1] (by themselves, as torch's backends do); rank 2 waits for rank 0
    # in [0, 2] (torch + gloo: until the store's timeout) and is told at once that it never came.
    # Told by whichever sees it first: the meeting ("subcommunicator #0 on comm 'group 1': rank 1
    # (...) waits for rank 0, whose function already returned without calling it") or the
    # deadlock checker ("rank 2 (rank 1 of 'group 1') waits in subcommunicator ..., but rank 0's
    # function already returned without calling it").
    text = str(error)
    assert isinstance(error, twinccl.AbortedError) and site in text, text
    assert "subcommunicator" in text and "'group 1'" in text and "rank 0" in text, text
    assert "function already returned without calling it" in text, text
    assert seconds < 2.0


def test_a_model_of_another_dtype_on_one_rank_is_named_at_ddps_construction():
    from torch.nn.parallel import DistributedDataParallel as DDP

    def script(rank, misuse_at):
        model = nn.Linear(4, 2).to(torch.float64 if rank == 1 else torch.float32)
        misuse_at.append(time.monotonic())
        DDP(model)  # MARK-DDP  (its C++ broadcasts rank 0's parameters)

    error, errors, seconds = run_recording(script)
    site = line_of("MARK-DDP")
    assert isinstance(error, twinccl.MismatchError), error
    assert "float64" in str(error) and "rank 1 (%s)" % site in str(error), str(error)
    assert seconds < 2.0
