"""atexit.register on a rank of twinccl.run: each rank's exit handlers run when its function ends,
on its thread with its own state (environment, torch.distributed's group), last registered first,
as each torchrun worker process runs its own at exit. Before, they ran once the process ended, on
the caller's thread: a handler saw no RANK in os.environ and torch.distributed uninitialised."""
import atexit
import os
import threading

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from launcher_support import RANK_PRELUDE, launch


@pytest.mark.parametrize("rank_state", ["isolated", "shared"])
def test_each_rank_runs_its_own_handlers_when_its_function_ends(rank_state):
    ran = []
    lock = threading.Lock()

    def note(what, rank, extra=None):
        with lock:
            ran.append((what, rank, extra, os.environ.get("RANK") if rank_state == "isolated"
                        else None))

    def fn(rank):
        atexit.register(note, "first", rank)
        atexit.register(note, "second", rank, extra=rank * 10)
        def dropped():
            note("dropped", rank)
        atexit.register(dropped)
        atexit.register(dropped)
        atexit.unregister(dropped)  # every registration of it, as Python's
        dist.all_reduce(np.ones(2))
        with lock:
            ran.append(("returns", rank, None, None))
    twinccl.run(fn, world_size=3, timeout_s=30, rank_state=rank_state)
    assert atexit.register.__module__ == "atexit"  # Python's own again after the run
    for rank in range(3):
        mine = [r for r in ran if r[1] == rank]
        env = str(rank) if rank_state == "isolated" else None
        assert mine == [("returns", rank, None, None), ("second", rank, rank * 10, env),
                        ("first", rank, None, env)], mine


def test_a_failing_handler_is_reported_and_the_others_run(capfd):
    ran = []

    def fn(rank):
        atexit.register(ran.append, rank)
        atexit.register(lambda: 1 / 0)
        atexit.register(lambda: (_ for _ in ()).throw(SystemExit(3)))  # silent, as Python's
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert sorted(ran) == [0, 1]
    err = capfd.readouterr().err
    assert err.count("Exception ignored in atexit callback") == 2, err
    assert "ZeroDivisionError" in err and "SystemExit" not in err, err


def test_handlers_run_while_the_ranks_torch_group_lives():
    torch = pytest.importorskip("torch")
    tdist = pytest.importorskip("torch.distributed")
    seen = {}

    def fn(rank):
        def bye():
            t = torch.ones(1)
            tdist.all_reduce(t)  # a collective in an exit handler, as in a process
            seen[rank] = (tdist.is_initialized(), t.item())
            tdist.destroy_process_group()
        atexit.register(bye)
    twinccl.run(fn, world_size=2, timeout_s=30, torch_distributed=True)
    assert seen == {0: (True, 2.0), 1: (True, 2.0)}


def test_threads_a_rank_starts_and_the_caller_keep_pythons_atexit(monkeypatch):
    from twinccl import _rank_atexit
    routed = []
    monkeypatch.setattr(_rank_atexit, "_real_register",
                        lambda func, *args, **kwargs: routed.append(func) or func)
    ran = []

    def on_thread():
        ran.append("thread")

    def fn(rank):
        if rank == 0:
            t = threading.Thread(target=lambda: atexit.register(on_thread))
            t.start()
            t.join()
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert routed == [on_thread] and ran == []  # Python's atexit keeps it for the process's end


def test_a_librarys_handler_stays_one_per_process(tmp_path, monkeypatch):
    """A library is one per process here (MindSpore registers its runtime's cleanup at import):
    run at a rank's end it tore down what the other ranks used ("No CommManager instance
    found"); it goes to Python's atexit."""
    from twinccl import _rank_atexit
    (tmp_path / "fake_library_exit.py").write_text(
        "import atexit\n"
        "ran = []\n"
        "def setup(rank):\n"
        "    atexit.register(ran.append, rank)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TWINCCL_SHARED_MODULES", "fake_library_exit")
    monkeypatch.setattr(_rank_atexit, "_classifier", [])  # judged with that setting
    import fake_library_exit
    routed = []
    monkeypatch.setattr(_rank_atexit, "_real_register",
                        lambda func, *args, **kwargs: routed.append(args) or func)

    def fn(rank):
        fake_library_exit.setup(rank)
        atexit.register(fake_library_exit.ran.append, "user %d" % rank)
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert sorted(routed) == [(0,), (1,)]
    assert sorted(fake_library_exit.ran) == ["user 0", "user 1"]


OS_EXIT_SCRIPT = RANK_PRELUDE + '''
child = os.fork()
if child == 0:  # a process forked from a rank (as a DataLoader worker) ends itself with os._exit
    os._exit(7)
assert os.waitpid(child, 0)[1] >> 8 == 7
if rank > 0:
    os._exit(int(sys.argv[1]) if rank == 1 else 0)
time.sleep(0.5)  # rank 0 goes on after the others ended: the process must still be here
print("rank", rank, "finished", t.item(), flush=True)
'''


def test_os_exit_on_a_rank_ends_that_rank_alone_and_skips_its_handlers(tmp_path):
    """Before, a script's `os._exit(0)` on the first rank to reach it ended the whole process:
    the other ranks' work was lost and the launcher exited 0."""
    script = tmp_path / "os_exit.py"
    script.write_text(OS_EXIT_SCRIPT)
    done = launch(script, nproc=3, cwd=tmp_path, args=[0])
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "rank 0 finished 3.0" in done.stdout, out
    assert [line for line in done.stdout.splitlines() if line.startswith("atexit")] == \
        ["atexit 0"], out
    failed = launch(script, nproc=3, cwd=tmp_path, args=[4])  # a status: the launch fails
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "exitcode  : 4" in failed.stderr, failed.stderr
