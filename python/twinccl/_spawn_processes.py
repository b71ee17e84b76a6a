"""Ranks started one by one as processes under twinccl.spawn: PyTorch's "Writing Distributed
Applications" tutorial shape,

    for rank in range(size):
        p = mp.Process(target=init_process, args=(rank, size, run)); p.start(); processes.append(p)
    for p in processes:
        p.join()

runs its processes as emulated ranks instead of new processes.

How it works: while the script runs, a multiprocessing Process (any start method) that the
script's main thread starts with a target of the user's own code (not a library's: a DataLoader's
workers stay processes) is not started; it joins the pending batch, the i-th started being rank i
(its `init_process_group(rank=...)` must say so: a different rank is an InvalidArgument naming
both). The batch runs, all its processes as the ranks of one twinccl.run, at the first `join()`
of any of them (they have all been started by then in the tutorial's shape; before it they are
running: `is_alive()` True, `exitcode` None), or earlier at the main thread's first read of what
they send back: a multiprocessing Queue's or SimpleQueue's get() or empty() (the docs' advice:
drain the queue before joining), a Pipe end's recv() or poll(), multiprocessing.connection.wait,
an Event's wait() or is_set() (before, such a script waited forever: its processes never ran),
or when the parent asks one of them `is_alive()` a second time with no process started in between
(`while any(p.is_alive() for p in ps): time.sleep(1)`, which waited forever too; asked once,
between starts or after them, it is True).
Each then has the exit code its process would have: 0, N for sys.exit(N), 1 for an exception,
whose traceback is printed as a process prints it ("Process Process-2:" then the traceback; the
ranks woken by it get AbortedError, which a process would not have: it would wait in its next
collective). `sentinel` is readable once the batch has run; `pid` is this process's; terminate()
and kill() do nothing (the ranks have ended when anything can see them).
"""
import contextlib
import multiprocessing.context as context
import multiprocessing.process as process_module
import os
import sys
import threading
import traceback

from ._attribute_patch import put_back, replace
from ._launch_rank import exit_code
from ._rank_modules import _Classifier
from ._waits_off_turn import on_parent_read

_CLASSES = ("Process", "SpawnProcess", "ForkProcess", "ForkServerProcess")


class _Batch:
    """Processes started since the last batch ran: each (process name, target, args, kwargs,
    popen), run together as the ranks of one twinccl.run."""
    def __init__(self, run):
        self._run = run
        self.members = []
        self.ran = False

    def run_once(self):
        if self.ran:
            return
        self.ran = True
        members = self.members

        def rank_main(rank):
            name, target, args, kwargs, popen = members[rank]
            try:
                target(*args, **kwargs)
                popen.returncode = 0
            except SystemExit as e:  # a process's exit code
                popen.returncode = exit_code(e.code)
                if popen.returncode:
                    raise
            except BaseException:  # noqa: B036 (printed as multiprocessing's bootstrap does)
                popen.returncode = 1
                sys.stderr.write("Process %s:\n" % name)
                traceback.print_exc()
                raise
        try:
            self._run(rank_main, len(members))
        except KeyboardInterrupt:
            raise  # Ctrl-C: the parent's, as in its join()
        except BaseException:  # noqa: B036 (each process's exit code says how it ended)
            pass
        finally:
            for *_, popen in members:
                if popen.returncode is None:
                    popen.returncode = 1
                popen.ended()


class _EmulatedPopen:
    """What Process.start() keeps as its _popen (multiprocessing's Popen interface)."""
    def __init__(self, batch):
        self.batch = batch
        self.returncode = None
        self.pid = os.getpid()
        self.sentinel, self._end = os.pipe()  # readable (end of file) once the batch ran

    def ended(self):
        if self._end is not None:
            os.close(self._end)
            self._end = None

    def poll(self, flag=None):
        return self.returncode  # None (running) until the batch ran: Process.start's cleanup
        # polls the processes started before, which must not run a batch of one

    def wait(self, timeout=None):
        self.batch.run_once()
        return self.returncode

    def terminate(self):
        pass

    kill = terminate

    def close(self):
        self.ended()
        if self.sentinel is not None:
            os.close(self.sentinel)
            self.sentinel = None


class _Interceptor:
    def __init__(self, run):
        self._run = run
        self._batch = None
        self._main = threading.main_thread()
        self._classifier = _Classifier()
        self._asked = set()  # processes asked is_alive() since the last start

    def _mine(self, process):
        target = getattr(process, "_target", None)
        if target is None or threading.current_thread() is not self._main:
            return False
        module = getattr(target, "__module__", None) or ""
        return self._classifier.is_user(module, sys.modules.get(module))

    def run_started(self):
        """The parent reads what its processes send back (_waits_off_turn.on_parent_read): the
        processes started and not run yet run first, as at join()."""
        if self._batch is not None:
            self._batch.run_once()  # nothing once it ran

    def is_alive(self, original):
        """is_alive() asked twice of a process waiting to run, nothing started in between: the
        parent polls it (a loop), so its batch runs."""
        def is_alive(process):
            popen = getattr(process, "_popen", None)
            if (isinstance(popen, _EmulatedPopen) and not popen.batch.ran
                    and threading.current_thread() is self._main):
                if process in self._asked:
                    popen.batch.run_once()
                self._asked.add(process)
            return original(process)
        return is_alive

    def popen(self, original):
        def _popen(process):
            if not self._mine(process):
                return original(process)
            self._asked.clear()
            if self._batch is None or self._batch.ran:
                self._batch = _Batch(self._run)
            popen = _EmulatedPopen(self._batch)
            self._batch.members.append((process.name, process._target, tuple(process._args),
                                        dict(process._kwargs), popen))
            return popen
        return staticmethod(_popen)


@contextlib.contextmanager
def processes_on_emulator(run):
    """While the block lasts, Processes the script starts are ranks of `run(rank_main, n)` (see
    the module's doc)."""
    interceptor = _Interceptor(run)
    classes = [getattr(context, name) for name in _CLASSES
               if "_Popen" in vars(getattr(context, name, object))]
    saved = []
    try:
        replace([(cls, "_Popen", interceptor.popen(vars(cls)["_Popen"].__func__))
                 for cls in classes], saved)
        replace([(process_module.BaseProcess, "is_alive",
                  interceptor.is_alive(process_module.BaseProcess.is_alive))], saved)
        with on_parent_read(interceptor.run_started):
            yield
    finally:
        put_back(saved)
