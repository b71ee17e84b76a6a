"""signal.signal on a rank of twinccl.run: each rank its own handlers, recorded (no signal is sent
to an emulated rank), as each torchrun worker has its own; Python allows signal.signal on the main
thread only, so a script installing a SIGTERM handler (checkpoint before a preemption) failed on
every rank with "ValueError: signal only works in main thread of the main interpreter"."""
import signal
import threading

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from launcher_support import RANK_PRELUDE, launch


@pytest.mark.parametrize("rank_state", ["isolated", "shared"])
def test_each_rank_installs_its_own_handlers_and_the_caller_keeps_its_own(rank_state):
    callers = signal.getsignal(signal.SIGTERM)
    seen = {}

    def fn(rank):
        def handler(signum, frame):
            pass
        handler.rank = rank
        previous = signal.signal(signal.SIGTERM, handler)
        dist.all_reduce(np.ones(2))  # every rank installed its handler
        mine = signal.getsignal(signal.SIGTERM)
        again = signal.signal(signal.SIGTERM, signal.SIG_IGN)
        seen[rank] = (previous, mine.rank, again.rank, signal.getsignal(signal.SIGTERM),
                      signal.getsignal(signal.SIGUSR1))
    twinccl.run(fn, world_size=3, timeout_s=30, rank_state=rank_state)
    for rank in range(3):
        assert seen[rank] == (callers, rank, rank, signal.SIG_IGN,
                              signal.getsignal(signal.SIGUSR1)), rank
    assert signal.getsignal(signal.SIGTERM) is callers  # never installed in the process
    assert signal.signal.__module__ == "signal"  # Python's own again after the run


def test_python_checks_and_threads_a_rank_starts():
    errors = {}

    def fn(rank):
        for name, call in (("range", lambda: signal.signal(0, signal.SIG_DFL)),
                           ("handler", lambda: signal.signal(signal.SIGTERM, 5)),
                           ("kill", lambda: signal.signal(signal.SIGKILL, signal.SIG_IGN))):
            try:
                call()
            except Exception as e:  # noqa: BLE001
                errors[(rank, name)] = type(e)

        def in_thread():  # a thread of a process may not install handlers either
            try:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            except ValueError as e:
                errors[(rank, "thread")] = str(e)
        t = threading.Thread(target=in_thread)
        t.start()
        t.join()
    twinccl.run(fn, world_size=2, timeout_s=30)
    for rank in range(2):
        assert errors[(rank, "range")] is ValueError
        assert errors[(rank, "handler")] is TypeError
        assert errors[(rank, "kill")] is OSError
        assert "main thread" in errors[(rank, "thread")]


def test_a_signal_a_rank_sends_itself_goes_to_its_own_handler():
    """os.kill(os.getpid(), sig) and signal.raise_signal on a rank reach that rank's handler, as
    the kernel delivers them to the one worker; before, a SIGUSR1 whose handler was only recorded
    took Python's default and killed the whole process."""
    import os
    got = {}

    def fn(rank):
        seen = []
        signal.signal(signal.SIGUSR1, lambda number, frame: seen.append((number, rank)))
        signal.signal(signal.SIGUSR2, signal.SIG_IGN)
        os.kill(os.getpid(), signal.SIGUSR1)
        signal.raise_signal(signal.SIGUSR1)
        signal.raise_signal(signal.SIGUSR2)  # ignored
        os.kill(os.getpid(), signal.SIGCHLD)  # ignored by default, as the kernel does
        os.kill(os.getpid(), 0)  # the existence check: no signal
        dist.all_reduce(np.ones(2))
        got[rank] = seen
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert got == {r: [(signal.SIGUSR1, r)] * 2 for r in range(2)}, got
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL  # the caller's: never installed


SELF_TERM_SCRIPT = RANK_PRELUDE + '''
if rank == 1:
    os.kill(os.getpid(), signal.SIGTERM)  # no handler: the signal ends this worker
    print("not reached", flush=True)
'''


def test_a_fatal_signal_a_rank_sends_itself_ends_that_rank_not_the_process(tmp_path):
    script = tmp_path / "self_term.py"
    script.write_text(SELF_TERM_SCRIPT)
    done = launch(script, nproc=2, cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out  # the launcher ran on and reports the rank's status
    assert "exitcode  : 143" in done.stderr, out  # 128 + SIGTERM, as a shell shows it
    assert "not reached" not in out and "atexit 1" not in out, out
