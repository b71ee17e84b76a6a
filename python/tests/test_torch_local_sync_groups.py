"""new_group(ranks, use_local_synchronization=True) on TwinCCL's torch backend, as torch has it:
the members only call it (a non-member gets NON_GROUP_MEMBER at once), and the group is made by
them alone (the emulator's subcommunicator, as torch's NCCL backend with ncclCommInitRank).
Before, a group was a split of the whole world, so members-only calls could not complete.
Where torch itself would wait for ever (members whose torch names for the group differ), a typed
error says why, at once."""
import time

import pytest
from torch_backend_support import needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402

import twinccl  # noqa: E402


@needs_torch2
def test_members_only_new_group_with_local_synchronization():
    """torch's documented use (the same runs under torchrun + gloo): ranks 0 and 1 make [0, 1],
    ranks 2 and 3 make [2, 3], each pair without the others; then the world is used."""
    def script(rank):
        pair = [0, 1] if rank < 2 else [2, 3]
        group = dist.new_group(pair, use_local_synchronization=True)
        x = torch.ones(1) * (rank + 1)
        dist.all_reduce(x, group=group)
        y = torch.ones(1)
        dist.all_reduce(y)
        dist.barrier()
        return x.item(), dist.get_rank(group), dist.get_world_size(group), y.item()

    assert run_script(script) == [(3.0, 0, 2, 4.0), (3.0, 1, 2, 4.0), (7.0, 0, 2, 4.0),
                                  (7.0, 1, 2, 4.0)]


@needs_torch2
def test_a_non_member_gets_non_group_member_and_is_not_waited_for():
    def script(rank):
        if rank == 3:
            group = dist.new_group([0, 1, 2], use_local_synchronization=True)
            return group is dist.GroupMember.NON_GROUP_MEMBER
        group = dist.new_group([0, 1, 2], use_local_synchronization=True)
        x = torch.ones(1)
        dist.all_reduce(x, group=group)
        return x.item()

    assert run_script(script) == [3.0, 3.0, 3.0, True]


@needs_torch2
def test_members_whose_torch_names_differ_get_a_typed_error_not_a_hang():
    """Every rank looping over overlapping groups with use_local_synchronization=True: torch
    (2.15) names each group after its ranks and the groups the rank made before, which a
    non-member does not count, so rank 1 and rank 2 ask for [1, 2] under different names and
    torchrun + gloo waits until its timeout (checked by hand). Here: MismatchError at once,
    naming both and why."""
    rings = ([0, 1], [1, 2], [2, 3], [0, 3])
    errors = {}

    def script(rank):
        try:
            for ranks in rings:
                group = dist.new_group(ranks, use_local_synchronization=True)
                if rank in ranks:
                    x = torch.ones(1)
                    dist.all_reduce(x, group=group)
        except twinccl.Error as e:
            errors[rank] = str(e)
            raise

    start = time.monotonic()
    with pytest.raises(twinccl.Error):
        run_script(script)
    assert time.monotonic() - start < 5
    mismatch = [t for t in errors.values() if "asked for 'group " in t]
    assert mismatch and "of ranks [1,2]" in mismatch[0] \
        and "_world.group_count" in mismatch[0], errors
