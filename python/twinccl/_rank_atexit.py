"""atexit.register and atexit.unregister on the rank threads of twinccl.run: each rank its own exit
handlers, run when its function (its script, under twinccl.torchrun) ends, as a torchrun worker
process runs its own at exit. Before, a rank's handlers ran once the whole process ended, on the
caller's thread with the caller's state: `atexit.register(save)` saw no RANK in os.environ,
torch.distributed no longer initialized, and every rank's handler ran in the caller's globals.

Only the user's code registers per rank: a handler a library registers (MindSpore's runtime
cleanup at its import, wandb's) goes to Python's atexit, since the library is one per process
here (_rank_modules: which modules are the user's); run at a rank's end, MindSpore's released the
communication manager the other ranks were using ("No CommManager instance found").

How it works: while a run lasts atexit's two functions are replaced (one owner: _run_patches);
called from the user's code on a rank thread, a handler is kept in that rank's list; from a
library, on any other thread (the caller's, threads a rank started), it goes to Python's atexit. When the rank function ends, returned or
raised, its handlers run last-registered first, still on the rank's thread with its state in
place (its process group, environment, globals), before the run's own end of rank; one that
raises is reported on stderr as Python reports it ("Exception ignored in atexit callback") and
the others still run. Signals skip them in a process; nothing skips them here.

os._exit(code) on a rank thread ends that rank as it ends a torchrun worker process, its exit
handlers skipped: it raises RankOsExit (a SystemExit with the code, which the launchers turn into
the rank's exit status). Before, the first rank to call it (a script ending in `os._exit(0)` to
skip a slow teardown) ended the whole process: the ranks still running lost their work, and the
launcher exited 0. Elsewhere (the caller's thread, threads a rank started, a process forked from
a rank: a DataLoader worker ends itself with os._exit) it is os._exit."""
import atexit
import contextlib
import os
import sys
import threading
import traceback

from . import _this_rank
from ._rank_modules import _Classifier
from ._run_patches import RunPatch

_real_register = atexit.register
_real_unregister = atexit.unregister
_real_os_exit = os._exit
_run_pid = []  # the process whose rank threads the handlers belong to (not a forked child)
_handlers = {}  # rank thread's ident -> [(func, args, kwargs)] (while its function runs)
_os_exited = set()  # rank threads that called os._exit (while their function unwinds)
_lock = threading.Lock()


def on_rank_of_this_process():
    """True on a rank thread running its function in the run's own process (not in a process
    forked from a rank thread, which holds that thread alone)."""
    return _rank_thread() is not None


def _rank_thread():
    """This thread's key when it is a rank thread running its function, else None."""
    if _run_pid and os.getpid() != _run_pid[0]:
        return None  # a process forked from a rank thread: that thread alone, no longer a rank
    # a live rank: a thread's ident is reused once it ends, and an entry an interruption kept past
    # its rank's end must not make a new thread a rank
    if _this_rank.world() is None:
        return None
    ident = threading.get_ident()
    with _lock:
        if ident not in _handlers:
            return None
    return ident


_classifier = []  # one _Classifier, made at the first registration on a rank


def _from_user_code():
    """True when the code calling atexit.register (two frames up) is the user's, not a library's."""
    caller = sys._getframe(2).f_globals.get("__name__", "")
    if not _classifier:
        _classifier.append(_Classifier())
    return _classifier[0].is_user(caller, sys.modules.get(caller))


def _register(func, *args, **kwargs):
    ident = _rank_thread()
    if ident is None or not _from_user_code():
        return _real_register(func, *args, **kwargs)
    if not callable(func):
        raise TypeError("the first argument must be callable")
    with _lock:
        _handlers[ident].append((func, args, kwargs))
    return func


def _unregister(func):
    ident = _rank_thread()
    if ident is None:
        return _real_unregister(func)
    with _lock:
        _handlers[ident][:] = [h for h in _handlers[ident] if h[0] != func]
    return _real_unregister(func)  # (registered by a library on this thread: Python's)


class RankOsExit(SystemExit):
    """os._exit(code) called on a rank thread: that rank ends with `code`, its exit handlers
    skipped."""


def _os_exit(code):
    if _rank_thread() is None:
        _real_os_exit(code)
    end_rank_as_os_exit(code)


def end_rank_as_os_exit(code):
    """On a rank thread: the rank ends with exit status `code`, its exit handlers skipped, as
    os._exit or a fatal signal ends a process (raises RankOsExit)."""
    ident = _rank_thread()
    if ident is not None:
        with _lock:
            _os_exited.add(ident)  # its handlers are skipped, however the launcher reports it
    raise RankOsExit(code)


_patch = RunPatch(atexit, {"register": _register, "unregister": _unregister})
_os_patch = RunPatch(os, {"_exit": _os_exit})


@contextlib.contextmanager
def rank_exit_handlers():
    """atexit.register, atexit.unregister and os._exit are the per-rank ones while a run lasts."""
    with _patch.during_run(), _os_patch.during_run():
        _run_pid[:] = [os.getpid()]
        yield


def _run_handlers(handlers):
    while handlers:
        func, args, kwargs = handlers.pop()
        try:
            func(*args, **kwargs)
        except SystemExit:
            pass  # as Python: silent
        except BaseException as e:  # noqa: B036 (Python reports it and goes on)
            print("Exception ignored in atexit callback: %r" % (func,), file=sys.stderr)
            traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)


def with_exit_handlers(fn):
    """fn(rank), then the exit handlers the rank registered meanwhile (see the module's doc)."""
    def rank_fn(rank):
        ident = threading.get_ident()
        if _this_rank.world() is None:
            return fn(rank)  # not called as a rank (nothing to keep per rank)
        with _lock:
            _handlers[ident] = []
        try:
            return fn(rank)
        finally:
            try:
                with _lock:
                    handlers = _handlers[ident]
                    os_exit = ident in _os_exited
                if not os_exit:
                    _run_handlers(handlers)  # (a handler may register more: they run too)
            finally:
                with _lock:
                    _handlers.pop(ident, None)
                    _os_exited.discard(ident)
    return rank_fn
