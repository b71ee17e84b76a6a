"""A rank still running Python code after the run stopped (another rank failed, or timeout_s
passed) is stopped with AbortedError, as torchrun stops the other workers when one fails: before,
twinccl.run joined it forever (a rank in `while True:` without a TwinCCL call hung the run and the
launcher, whatever timeout_s said). Each case runs in a child process, so that the old behaviour
fails the test at the child's timeout instead of hanging the suite."""
import subprocess
import sys
import textwrap

import pytest

from launcher_support import ENV, launch


CHILD = textwrap.dedent('''
    import sys, threading, time
    import numpy as np
    import twinccl
    import twinccl.distributed as dist

    stopped = {}

    def spin(rank):
        try:
            while True:  # a bug: Python code that never calls TwinCCL again
                pass
        except twinccl.AbortedError as e:
            stopped[rank] = str(e)
            raise

    def fails_while_another_spins(rank):
        dist.barrier()
        if rank == 0:
            raise ValueError("bad batch on rank 0")
        spin(rank)

    def waits_while_another_spins(rank):
        if rank == 1:
            spin(rank)
        dist.all_reduce(np.ones(4))  # waits for rank 1 (for its turn too, when ranks take turns)

    def every_rank_spins(rank):
        spin(rank)

    def blocks_outside_python(rank):
        if rank == 0:
            lock = threading.Lock()
            lock.acquire()
            lock.acquire()  # a bug: blocked in C, holding the turn; no stop reaches it
        dist.barrier()

    def fails_while_another_sleeps(rank):
        if rank == 0:
            raise ValueError("bad batch on rank 0")
        if rank == 1:
            try:
                time.sleep(60)  # a rank's sleep gives its turn up; the stop ends it
            except twinccl.AbortedError as e:
                stopped[rank] = str(e)
                raise
        dist.barrier()

    case, rank_state = sys.argv[1], sys.argv[2]
    start = time.monotonic()
    try:
        twinccl.run(globals()[case], world_size=3, timeout_s=2, rank_state=rank_state)
    except Exception as e:
        print("RAISED %s after %.1f s: %s" % (type(e).__name__, time.monotonic() - start, e))
    print("STOPPED", sorted(stopped))
    for rank, message in sorted(stopped.items()):
        print("MESSAGE%d" % rank, message)
''')


def run_child(case, rank_state):
    done = subprocess.run([sys.executable, "-c", CHILD, case, rank_state], capture_output=True,
                          text=True, env=ENV, timeout=90)
    assert done.returncode == 0, done.stderr
    lines = {line.split(" ", 1)[0]: line for line in done.stdout.splitlines()}
    return lines, done.stderr


def test_ranks_spinning_in_python_are_stopped_when_another_rank_fails():
    lines, _ = run_child("fails_while_another_spins", "shared")
    assert lines["RAISED"].startswith("RAISED ValueError after "), lines
    assert "bad batch on rank 0" in lines["RAISED"]
    assert float(lines["RAISED"].split()[3]) < 20, lines["RAISED"]
    assert lines["STOPPED"] == "STOPPED [1, 2]"
    for rank in (1, 2):
        message = lines["MESSAGE%d" % rank]
        assert "stopped rank %d: it was still running Python code" % rank in message, message
        assert "(rank 0 failed: ValueError: bad batch on rank 0)" in message, message


def test_ranks_taking_turns_spinning_in_python_are_stopped():
    """Ranks taking turns: the rank that spins keeps the turn, so rank 0 raises its ValueError only
    if it had its turn first; else the baton's timeout stops the run. Either way the spinning ranks
    are stopped, each when it runs Python again, and the run ends."""
    lines, _ = run_child("fails_while_another_spins", "isolated")
    raised = lines["RAISED"]
    assert raised.startswith(("RAISED ValueError", "RAISED AbortedError")), lines
    assert float(raised.split()[3]) < 20, raised
    stopped = lines["STOPPED"]
    assert stopped in ("STOPPED [1]", "STOPPED [2]", "STOPPED [1, 2]"), stopped
    for rank in (1, 2):
        if "MESSAGE%d" % rank in lines:
            assert "stopped rank %d: it was still running Python code" % rank in \
                lines["MESSAGE%d" % rank]


@pytest.mark.parametrize("rank_state", ["isolated", "shared"])
def test_a_rank_spinning_in_python_past_timeout_s_is_stopped(rank_state):
    lines, _ = run_child("waits_while_another_spins", rank_state)
    raised = lines["RAISED"]
    # isolated: the baton's timeout (rank 1 kept the turn); shared: the all_reduce's TimeoutError
    assert raised.startswith(("RAISED AbortedError", "RAISED TimeoutError")), raised
    assert float(raised.split()[3]) < 20, raised
    assert lines["STOPPED"] == "STOPPED [1]"
    assert "stopped rank 1: it was still running Python code" in lines["MESSAGE1"], lines


def test_ranks_that_start_after_the_stop_are_stopped_too():
    """Ranks taking turns, each spinning from its start: rank 0 keeps the turn past timeout_s and
    is stopped; the others start their function only then, and are stopped each in turn."""
    lines, _ = run_child("every_rank_spins", "isolated")
    assert lines["RAISED"].startswith("RAISED AbortedError"), lines
    assert float(lines["RAISED"].split()[3]) < 20, lines["RAISED"]
    assert lines["STOPPED"] == "STOPPED [0, 1, 2]", lines


def test_a_rank_sleeping_when_another_fails_is_stopped_at_once():
    """Ranks taking turns: time.sleep gives the turn up (the others run meanwhile), and the run's
    stop ends it with AbortedError, as torchrun's stop ends a sleeping worker; before, a failed run
    waited out the 60 s sleep."""
    lines, _ = run_child("fails_while_another_sleeps", "isolated")
    assert lines["RAISED"].startswith("RAISED ValueError after "), lines
    assert float(lines["RAISED"].split()[3]) < 20, lines["RAISED"]
    assert lines["STOPPED"] == "STOPPED [1]", lines
    assert "time.sleep on rank 1 was cut short: the run stopped (rank 0 failed: ValueError: bad " \
        "batch on rank 0)" in lines["MESSAGE1"], lines


STUCK_SCRIPT = textwrap.dedent('''
    import threading
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    if dist.get_rank() == 0:
        lock = threading.Lock()
        lock.acquire()
        lock.acquire()  # blocked in C for ever (as DDP's C++ wait once was), holding its turn
    dist.barrier()
''')


def test_a_rank_blocked_outside_python_is_named_and_the_launcher_exits(tmp_path):
    """A rank blocked in C code (a lock, a C++ wait of torch's) is reached neither by the world's
    abort nor by the AbortedError sent to ranks in Python: before, the run's join waited for it
    for ever, silently, whatever --timeout-s said. Now it is named on stderr 5 s after the stop,
    and the launcher ends the process with status 1 (torchrun ends the workers left)."""
    script = tmp_path / "stuck.py"
    script.write_text(STUCK_SCRIPT)
    done = launch(str(script), nproc=2, timeout_s=2, limit_s=60)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "twinccl.run: ranks 0, 1 have not returned 5 s after the run was stopped" in \
        done.stderr, done.stderr
    assert "rank 0 holds the turn to run Python and is blocked outside Python and TwinCCL" in \
        done.stderr
    assert "the others wait for the turn" in done.stderr
    assert "the launcher ends the process (exit status 1)" in done.stderr


def test_twinccl_run_says_which_rank_is_blocked_outside_python():
    """twinccl.run inside a program cannot abandon the blocked thread: it says so, once."""
    with pytest.raises(subprocess.TimeoutExpired) as waited:
        subprocess.run([sys.executable, "-c", CHILD, "blocks_outside_python", "isolated"],
                       capture_output=True, text=True, env=ENV, timeout=12)
    stderr = waited.value.stderr or ""
    stderr = stderr.decode() if isinstance(stderr, bytes) else stderr
    assert "twinccl.run: ranks 0, 1, 2 have not returned 5 s after the run was stopped" in stderr, \
        stderr
    assert "rank 0 holds the turn to run Python and is blocked outside Python" in stderr
    assert "this process cannot end those threads: interrupt or kill it" in stderr
