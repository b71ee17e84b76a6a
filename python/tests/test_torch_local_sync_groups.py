"""new_group(ranks, use_local_synchronization=True) on TwinCCL's torch backend: called by every
rank (a loop over all groups) it works, non-members getting NON_GROUP_MEMBER as torch gives them;
called by the members only (what torch allows with that option) the members' split of the world
cannot complete, and the typed error says so (TwinCCL's groups are split from the world; before,
the error did not name the option)."""
import time

import pytest
from torch_backend_support import needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402

import twinccl  # noqa: E402


@needs_torch2
def test_every_rank_calling_new_group_with_local_synchronization():
    """Overlapping groups (each rank in two): before, each rank split only for its own groups,
    so the world's splits paired different groups ("ranks disagree on the group")."""
    rings = ([0, 1], [1, 2], [2, 3], [0, 3])

    def script(rank):
        mine = []
        for ranks in rings:
            group = dist.new_group(ranks, use_local_synchronization=True)
            if rank in ranks:
                mine.append(group)
            else:
                assert group is dist.GroupMember.NON_GROUP_MEMBER
        sums = []
        for group in mine:
            x = torch.ones(1) * (rank + 1)
            dist.all_reduce(x, group=group)
            sums.append(x.item())
        return sums

    results = run_script(script)
    assert results == [[3.0, 5.0], [3.0, 5.0], [5.0, 7.0], [7.0, 5.0]]


@needs_torch2
def test_members_only_new_group_with_local_synchronization_is_a_typed_error_saying_why():
    errors = {}

    def script(rank):
        try:
            if rank < 2:
                dist.new_group([0, 1], use_local_synchronization=True)
            dist.barrier()
        except twinccl.Error as e:
            errors[rank] = e
            raise

    start = time.monotonic()
    with pytest.raises(twinccl.Error):
        run_script(script)
    assert time.monotonic() - start < 5
    # The first member to fail names the option (the others may be woken with AbortedError).
    members = [str(errors[r]) for r in (0, 1) if r in errors]
    assert any("use_local_synchronization=True) was called by its members only" in text
               and "called split" in text and "called barrier" in text for text in members), \
        errors
