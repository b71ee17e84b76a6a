"""os.chdir and os.umask on a rank of twinccl.run: each rank its own working directory and umask,
as each torchrun worker process. Before, a rank's chdir moved every rank (and the caller): the
others' relative files landed in the last rank's directory."""
import errno
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from twinccl import _rank_cwd

needs_unshare = pytest.mark.skipif(_rank_cwd._refused != 0,
                                   reason="this system refuses unshare(CLONE_FS): %s"
                                   % os.strerror(_rank_cwd._refused or 0))


@needs_unshare
@pytest.mark.parametrize("rank_state", ["isolated", "shared"])
def test_each_rank_has_its_own_working_directory(tmp_path, rank_state):
    caller = os.getcwd()
    seen = {}

    def fn(rank):
        os.makedirs(tmp_path / ("run%d" % rank))
        os.chdir(tmp_path / ("run%d" % rank))
        dist.all_reduce(np.ones(2))  # every rank has moved before any writes
        with open("metrics.txt", "w") as f:  # relative: the rank's own directory
            f.write(str(rank))
        from_thread = []
        t = threading.Thread(target=lambda: from_thread.append(os.getcwd()))
        t.start()
        t.join()
        child = subprocess.run([sys.executable, "-c", "import os; print(os.getcwd())"],
                               capture_output=True, text=True, check=True).stdout.strip()
        seen[rank] = (os.getcwd(), from_thread[0], child)
    twinccl.run(fn, world_size=3, timeout_s=60, rank_state=rank_state)
    for rank in range(3):
        mine = str(tmp_path / ("run%d" % rank))
        assert seen[rank] == (mine, mine, mine), seen
        assert (tmp_path / ("run%d" % rank) / "metrics.txt").read_text() == str(rank)
    assert os.getcwd() == caller  # the caller never moved


@needs_unshare
def test_each_rank_has_its_own_umask(tmp_path):
    modes = {}

    def fn(rank):
        os.umask(0o077 if rank == 0 else 0o002)
        dist.barrier()
        path = tmp_path / ("f%d" % rank)
        path.write_text("x")
        modes[rank] = path.stat().st_mode & 0o777
    before = os.umask(0o022)
    os.umask(before)
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert modes == {0: 0o600, 1: 0o664}, {r: oct(m) for r, m in modes.items()}
    after = os.umask(before)
    assert after == before  # the caller's umask untouched


@needs_unshare
def test_a_rank_starts_in_the_callers_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seen = []
    twinccl.run(lambda rank: seen.append(os.getcwd()), world_size=2, timeout_s=30)
    assert seen == [str(tmp_path)] * 2


def test_where_unshare_is_refused_a_move_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(_rank_cwd, "_refused", errno.EPERM)
    monkeypatch.setattr(_rank_cwd, "_unshare_fs", lambda: errno.EPERM)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    stayed = []

    def fn(rank):
        os.chdir(str(tmp_path))  # where every rank is: runs (Hydra's same directory)
        stayed.append(rank)
        if rank == 1:
            os.chdir("sub")
    with pytest.raises(twinccl.ConfigError) as e:
        twinccl.run(fn, world_size=2, timeout_s=30)
    text = str(e.value)
    assert "os.chdir('sub') on rank 1 would move every rank's working directory" in text, text
    assert "unshare(CLONE_FS): Operation not permitted" in text, text
    assert sorted(stayed) == [0, 1]
    assert os.getcwd() == str(tmp_path)
    assert os.chdir is _rank_cwd._real_chdir  # Python's own again after the run
