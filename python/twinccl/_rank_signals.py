"""signal.signal and signal.getsignal on the rank threads of twinccl.run: each rank its own table
of handlers, as each torchrun worker process has. Python lets only the main thread install a
handler, so a script that installs one (a SIGTERM or SIGUSR1 handler that checkpoints before a
preemption, Megatron's DistributedSignalHandler) failed on every rank with "ValueError: signal
only works in main thread of the main interpreter". On a rank thread the handler is recorded and
returned by getsignal, never installed: no signal is sent to an emulated rank (Ctrl-C stops the
run, docs/python.md). A rank starts with the caller's handlers. Other threads, including threads
a rank started, call Python's own functions (which refuse off the main thread, as in a process).
Names bound before the run (`from signal import signal`) keep Python's functions.

A signal a rank sends itself (`os.kill(os.getpid(), sig)`, `signal.raise_signal(sig)`: a script
testing its preemption handler) goes to that rank's table, as the kernel delivers it to the one
worker process: its handler is called there and then, SIG_IGN drops it, and SIG_DFL ends the rank
as the signal ends a process (exit status 128 + the signal; SIGCHLD, SIGURG, SIGWINCH, SIGCONT are
ignored by default, as the kernel does) with the rank's exit handlers skipped. Before, the signal
went to the whole process: a SIGUSR1 whose handler the rank had recorded killed the run (status
138). Signal 0 (the existence check), another process and other threads: Python's os.kill."""
import contextlib
import os
import signal
import sys
import threading

from . import _this_rank
from ._run_patches import RunPatch

_real_signal = signal.signal
_real_getsignal = signal.getsignal
_tables = {}  # rank thread's ident -> {signal number: handler} (while a run lasts)


def _on_rank_thread():
    return _this_rank.world() is not None


def _number(signalnum):
    """Python's checks of signal.signal's first argument (Modules/signalmodule.c)."""
    number = int(signalnum)  # an int or a Signals member; else TypeError, as Python's
    if not 1 <= number < signal.NSIG:
        raise ValueError("signal number out of range")
    return number


def _signal(signalnum, handler):
    if not _on_rank_thread():
        return _real_signal(signalnum, handler)
    number = _number(signalnum)
    if handler not in (signal.SIG_IGN, signal.SIG_DFL) and not callable(handler):
        raise TypeError("signal handler must be signal.SIG_IGN, signal.SIG_DFL, or a callable "
                        "object")
    if number in (signal.SIGKILL, signal.SIGSTOP):
        raise OSError(22, "Invalid argument")
    table = _tables.setdefault(threading.get_ident(), {})
    previous = table.get(number, _real_getsignal(number))
    table[number] = handler
    return previous


def _getsignal(signalnum):
    if not _on_rank_thread():
        return _real_getsignal(signalnum)
    number = _number(signalnum)
    return _tables.get(threading.get_ident(), {}).get(number, _real_getsignal(number))


_real_kill = os.kill
_real_raise_signal = signal.raise_signal
_IGNORED_BY_DEFAULT = {signal.SIGCHLD, signal.SIGURG, signal.SIGWINCH, signal.SIGCONT}


def _deliver(number):
    """The signal `number` sent by a rank to itself, acted on as its own process would."""
    handler = _getsignal(number)
    if callable(handler):
        handler(number, sys._getframe(2))
    elif handler == signal.SIG_IGN or number in _IGNORED_BY_DEFAULT:
        return
    else:  # SIG_DFL (or a handler Python did not install): the signal ends the rank
        from ._rank_atexit import end_rank_as_os_exit
        end_rank_as_os_exit(128 + number)


def _rank_of_this_process():
    """A rank thread of the run's own process: a process forked from one (a DataLoader worker)
    signals itself as a process does."""
    from ._rank_atexit import on_rank_of_this_process
    return on_rank_of_this_process()


def _kill(pid, sig):
    if pid != os.getpid() or int(sig) == 0 or not _rank_of_this_process():
        return _real_kill(pid, sig)
    _deliver(_number(sig))


def _raise_signal(signalnum):
    if not _rank_of_this_process():
        return _real_raise_signal(signalnum)
    _deliver(_number(signalnum))


_patch = RunPatch(signal, {"signal": _signal, "getsignal": _getsignal,
                           "raise_signal": _raise_signal}, after_last=_tables.clear)
_kill_patch = RunPatch(os, {"kill": _kill})


@contextlib.contextmanager
def rank_signals():
    """signal.signal, signal.getsignal, signal.raise_signal and os.kill are the per-rank ones
    while a run lasts."""
    with _patch.during_run(), _kill_patch.during_run():
        yield
