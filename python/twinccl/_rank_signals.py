"""signal.signal and signal.getsignal on the rank threads of twinccl.run: each rank its own table
of handlers, as each torchrun worker process has. Python lets only the main thread install a
handler, so a script that installs one (a SIGTERM or SIGUSR1 handler that checkpoints before a
preemption, Megatron's DistributedSignalHandler) failed on every rank with "ValueError: signal
only works in main thread of the main interpreter". On a rank thread the handler is recorded and
returned by getsignal, never installed: no signal is sent to an emulated rank (Ctrl-C stops the
run, docs/python.md). A rank starts with the caller's handlers. Other threads, including threads
a rank started, call Python's own functions (which refuse off the main thread, as in a process).
Names bound before the run (`from signal import signal`) keep Python's functions."""
import signal
import threading

from . import _twinccl
from ._run_patches import RunPatch

_real_signal = signal.signal
_real_getsignal = signal.getsignal
_tables = {}  # rank thread's ident -> {signal number: handler} (while a run lasts)


def _on_rank_thread():
    try:
        _twinccl._world()
    except _twinccl.InvalidArgument:
        return False
    return True


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


_patch = RunPatch(signal, {"signal": _signal, "getsignal": _getsignal}, after_last=_tables.clear)


def rank_signals():
    """signal.signal and signal.getsignal are the per-rank ones while a run lasts."""
    return _patch.during_run()
