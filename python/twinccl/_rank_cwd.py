"""The working directory and umask of a rank of twinccl.run: each rank its own, as each torchrun
worker process has its own. Before, they were the process's: a rank's `os.chdir(f"run{rank}")`
moved every rank (the others' relative paths, `open("metrics.json", "w")`, landed in the last
rank's directory) and `os.umask` changed every rank's new files.

How it works: Linux keeps a thread's working directory, root and umask in a structure its threads
share (clone's CLONE_FS); a rank thread calls unshare(CLONE_FS) when its function starts and has
its own copy, starting as the process's. `os.chdir`, `os.getcwd`, relative `open`, `os.umask`
then act on the rank alone; threads the rank starts share the rank's (as a process's threads
share its own); a subprocess it starts begins in the rank's directory; the caller's thread keeps
its own. Nothing is put back: the rank's thread ends with its function (emu/src/run_world.cc
starts one thread per rank per run), and its directory and umask with it.

Where the system refuses unshare (a seccomp filter that blocks it; not Linux), a rank's os.chdir
to another directory is refused with a ConfigError saying why, instead of moving every rank
silently; a chdir to the directory all ranks are in (Hydra's, every rank the same) still runs."""
import contextlib
import ctypes
import errno
import os
import threading

from . import _this_rank, _twinccl
from ._run_patches import RunPatch

_CLONE_FS = 0x00000200  # <sched.h>


def _unshare_fs():
    """0 once this thread has its own working directory and umask, else why not (an errno)."""
    try:
        unshare = ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError):
        return errno.ENOSYS
    return 0 if unshare(_CLONE_FS) == 0 else (ctypes.get_errno() or errno.EPERM)


def _probe():
    """Whether this system lets a thread have its own working directory: 0, else the errno (tried
    once, on a thread of its own, so no thread of the caller's changes)."""
    result = []
    probe = threading.Thread(target=lambda: result.append(_unshare_fs()), name="twinccl-cwd-probe")
    probe.start()
    probe.join()
    return result[0] if result else errno.ENOSYS


_refused = _probe()  # 0: each rank its own; else the errno unshare gave
_ranks = {}  # rank thread's ident -> rank, where it shares the process's directory (refused)
_lock = threading.Lock()
_real_chdir = os.chdir
_real_fchdir = os.fchdir


def _refuse_a_move(target, call):
    """On a rank thread that shares the process's directory: `target` must be where it is."""
    with _lock:
        rank = _ranks.get(threading.get_ident())
    if rank is not None:
        try:
            there, here = os.stat(target), os.stat(".")
        except (OSError, TypeError, ValueError):
            return  # the real call says what is wrong with target
        if (there.st_dev, there.st_ino) != (here.st_dev, here.st_ino):
            raise _twinccl.ConfigError(
                "%s(%r) on rank %d would move every rank's working directory: the ranks are "
                "threads of one process here, and this system refused each its own "
                "(unshare(CLONE_FS): %s). Open files by absolute path (os.path.join(run_dir, "
                "name)), or run one process per rank (torchrun)"
                % (call, target, rank, os.strerror(_refused)))


def _chdir(path):
    _refuse_a_move(path, "os.chdir")
    return _real_chdir(path)


def _fchdir(fd):
    _refuse_a_move(fd, "os.fchdir")
    return _real_fchdir(fd)


_patch = RunPatch(os, {"chdir": _chdir, "fchdir": _fchdir})


def rank_working_directories():
    """While a run lasts: where a rank cannot have its own directory, os.chdir and os.fchdir refuse
    to move the others (see the module's doc); else nothing to replace."""
    return _patch.during_run() if _refused else contextlib.nullcontext()


def with_own_working_directory(fn):
    """fn(rank) with the rank's own working directory and umask (see the module's doc)."""
    def rank_fn(rank):
        if _this_rank.world() is None:
            return fn(rank)  # not called as a rank
        ident = threading.get_ident()
        if not _refused:
            why = _unshare_fs()
            if why:  # the probe's thread could; this one cannot: say so, never share silently
                raise _twinccl.ConfigError(
                    "rank %d: unshare(CLONE_FS) failed (%s) where it worked at import: the rank "
                    "cannot have its own working directory" % (rank, os.strerror(why)))
        else:
            with _lock:
                _ranks[ident] = rank
            try:
                return fn(rank)
            finally:
                with _lock:
                    del _ranks[ident]
        return fn(rank)
    return rank_fn
