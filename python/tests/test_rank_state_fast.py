"""The rank baton's fast hand-over (python/src/rank_slots.h): the generators' words and the dicts
of the rank state are swapped in C++, without _rank_state.py's swap, while no rank imports a
module. A rank's draws must still give the sequence its own process would under torchrun, also
when a Python swap comes after fast ones (its copies are older then: the slots' values win)."""
import ctypes
import importlib
import os
import random
import sys

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from twinccl import _twinccl

STEPS = 6
_libc = ctypes.CDLL(None)
_libc.getenv.restype = ctypes.c_char_p
_owner = None  # rebound by each rank: a module global of the user's code, per rank


def _generators():
    torch = sys.modules.get("torch")
    return torch


def _draw():
    torch = _generators()
    return (random.random(), random.gauss(0, 1), float(np.random.rand()),
            np.random.standard_normal(),
            torch.randn(1, dtype=torch.float64).item() if torch else None)


def _reference(rank, steps):
    """What rank `rank`'s own process draws (seeded as fn seeds it)."""
    saved = (random.getstate(), np.random.get_state())
    torch = _generators()
    torch_saved = torch.get_rng_state() if torch else None
    try:
        _seed(rank)
        return [_draw() for _ in range(steps)]
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])
        if torch:
            torch.set_rng_state(torch_saved)


def _seed(rank):
    random.seed(100 + rank)
    np.random.seed(200 + rank)
    if _generators():
        _generators().manual_seed(300 + rank)


def _ranks_drawing(import_at=None, module=None):
    drawn, seen, imported = {}, {}, {}

    def fn(rank):
        global _owner
        _seed(rank)
        for step in range(STEPS):
            drawn.setdefault(rank, []).append(_draw())
            _owner = rank
            if step == import_at and rank == 1:
                importlib.import_module(module)  # sys.modules grows: the next hand-over is Python's
            dist.all_reduce(np.ones(1, np.float32))
            seen.setdefault(rank, []).append((_owner, os.environ["RANK"],
                                              _libc.getenv(b"RANK").decode()))
            imported.setdefault(rank, []).append(module in sys.modules)
    before = _twinccl._hand_overs()
    twinccl.run(fn, world_size=4, timeout_s=60)
    after = _twinccl._hand_overs()
    _ranks_drawing.imported = imported
    return drawn, seen, after[0] - before[0], after[1] - before[1]


def test_draws_across_fast_hand_overs_give_each_ranks_own_sequence():
    pytest.importorskip("torch")
    caller = (random.getstate(), np.random.get_state())
    drawn, seen, fast, python = _ranks_drawing()
    for rank in range(4):
        assert drawn[rank] == _reference(rank, STEPS), rank
        assert seen[rank] == [(rank, str(rank), str(rank))] * STEPS  # C's environment too
    # Every rank's first arrival (and the last hand-over, back to the caller) is Python's; the
    # rest need no Python (the figures prove the fast path ran).
    assert python <= 4 + 2 and fast >= 4 * (STEPS - 2), (fast, python)
    assert (random.getstate(), np.random.get_state()[1].tolist()) == \
        (caller[0], caller[1][1].tolist())
    assert _owner is None


def test_a_python_swap_after_fast_ones_installs_each_ranks_newest_state():
    # A library module imported by rank 1 mid-run makes its next hand-over Python's: the Python
    # swap's own copies of ranks 0, 2, 3 are then older than the slots' (they drew since).
    module = next((m for m in ("graphlib", "colorsys", "tomllib", "netrc", "sched")
                   if m not in sys.modules), None)
    if module is None:
        pytest.skip("every candidate module is imported already")
    drawn, seen, fast, python = _ranks_drawing(import_at=2, module=module)
    for rank in range(4):
        assert drawn[rank] == _reference(rank, STEPS), rank
        assert seen[rank] == [(rank, str(rank), str(rank))] * STEPS  # C's environment too
    assert fast > 0 and python > 5, (fast, python)


def test_a_module_of_the_users_imported_by_one_rank_stays_its_own(tmp_path, monkeypatch):
    # As under the launcher, whose ranks each import the script's modules: the module is in
    # sys.modules for rank 1 only, after its import, also across fast hand-overs.
    (tmp_path / "fast_path_user_module.py").write_text("VALUE = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    drawn, seen, fast, python = _ranks_drawing(import_at=1, module="fast_path_user_module")
    for rank in range(4):
        assert drawn[rank] == _reference(rank, STEPS), rank
        assert seen[rank] == [(rank, str(rank), str(rank))] * STEPS  # C's environment too
        assert _ranks_drawing.imported[rank] == [rank == 1 and step >= 1 for step in range(STEPS)]
    assert "fast_path_user_module" not in sys.modules
    assert fast >= 4 * (STEPS - 3), (fast, python)
