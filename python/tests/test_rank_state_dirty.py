"""The rank state's dirty checks (python/twinccl/_rank_state.py, _rank_random.py): a hand-over
copies a part only when it changed since it was installed, so a change that a fingerprint or a
version tag missed would leak one rank's state into another's. These cases differ in the one
detail such a check could miss."""
import os

import pytest

import twinccl
import twinccl.distributed as dist
from twinccl._rank_state import RankStates, torchrun_environ


def test_torch_states_that_differ_only_in_the_cached_normal_sample_stay_per_rank():
    torch = pytest.importorskip("torch")
    # A size-1 float64 randn draws two normals and keeps the second for the next call: after one
    # draw (rank 0) and two (rank 1) the generators differ only in that cached sample.
    torch.manual_seed(3)
    reference = [torch.randn(1, dtype=torch.float64).item() for _ in range(4)]
    states = RankStates(2, lambda rank: torchrun_environ(rank, 2), isolate_modules=False)
    drawn = {0: [], 1: []}
    states.swap(-1, 0)
    try:
        for leaving, arriving, draws in ((-1, 0, 1), (0, 1, 2), (1, 0, 1), (0, 1, 1)):
            if leaving != -1:
                states.swap(leaving, arriving)
            if len(drawn[arriving]) == 0:
                torch.manual_seed(3)
            drawn[arriving] += [torch.randn(1, dtype=torch.float64).item() for _ in range(draws)]
    finally:
        states.swap(1, -1)
    assert drawn[0] == reference[:2]
    assert drawn[1] == reference[:3]


def test_an_environment_change_by_one_rank_between_collectives_stays_its_own():
    seen = {}

    def fn(rank):
        for step in range(3):
            if rank == 1:
                os.environ["TWINCCL_TEST_STEP"] = str(step)
            dist.barrier()
            seen.setdefault(rank, []).append((os.environ.get("TWINCCL_TEST_STEP"),
                                              os.environ["RANK"]))
    twinccl.run(fn, world_size=3, timeout_s=30)
    assert seen[0] == [(None, "0")] * 3
    assert seen[2] == [(None, "2")] * 3
    assert seen[1] == [("0", "1"), ("1", "1"), ("2", "1")]
    assert "TWINCCL_TEST_STEP" not in os.environ
