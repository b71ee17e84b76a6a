"""What TwinCCL's torch ProcessGroup (_torch_backend) hands back to torch: the Work of a call,
the per-device backend torch asks about, and the user's line a call is reported at.

`get_future()` during a backward pass (DDP's reducer asking for a bucket's all_reduce, a Python
comm hook) returns the future pending and completes it at the end of that backward pass (an
autograd final callback, queued before DDP's own, run on the rank's thread, which waits for the
operation there and gives up the rank's turn while it waits), so backward compute overlaps the
communication. Anywhere else it waits and returns a completed future. Why not always pending:
torch's C++ waits on a future (DDP's finalize_backward, torch.futures.wait_all) without running
Python, so the waiting rank would keep its turn (the rank baton) while the ranks it waits for need
theirs to issue the same operation (docs/python.md). A pending future's Python wait(), value() and
then() complete it first. The value is the output tensors, as torch's backends give.
"""
import datetime
import os
import sys
import sysconfig

import torch
import torch.distributed as dist

BACKEND = "twinccl"


def _skipped_dirs():
    dirs = [os.path.dirname(torch.__file__), os.path.dirname(os.path.abspath(__file__)),
            sysconfig.get_paths()["stdlib"]]
    return tuple(d.rstrip(os.sep) + os.sep for d in dirs) + ("<frozen",)


_SKIPPED = _skipped_dirs()


def user_site():
    """(file, line) of the innermost frame of the user's code (not torch, twinccl or stdlib): the
    line that called torch.distributed, DDP's backward() or a DTensor operation."""
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith(_SKIPPED):
            return name, f.f_lineno
        f = f.f_back
    return "<torch>", 0


class _TwinWork(dist.Work):
    """torch's Work over the emulator's Works of one call: wait(), is_completed(), get_future(),
    result(). An emulator error (mismatch, deadlock, abort) is raised by wait()."""

    def __init__(self, works, outputs):
        super().__init__()
        self._works = [w for w in works if w is not None]
        self._outputs = outputs

    def wait(self, timeout=None):
        if isinstance(timeout, datetime.timedelta) and timeout.total_seconds() <= 0:
            timeout = None  # torch's kNoTimeout
        while self._works:
            self._works[0].wait(timeout)
            self._works.pop(0)
        return True

    def is_completed(self):
        return all(w.is_completed() for w in self._works)

    def is_success(self):
        return self.is_completed()

    def result(self):
        self.wait()
        return self._outputs

    def get_future(self):
        fut = _TwinFuture(self)
        if not self._works or not _at_end_of_backward(fut._complete):
            fut._complete()
        return fut

    def synchronize(self):
        self.wait()


def _at_end_of_backward(callback):
    """Queues callback to run when the backward pass running on this thread ends; False when no
    backward pass runs here (torch allows final callbacks only during one), or when its graph is
    done and its final callbacks run: no autograd node is being evaluated. There a callback
    queued now would run after the one asking: DDP's static_graph=True launches its first
    iteration's all_reduces from a final callback (Reducer::delay_all_reduce) and then waits for
    them in C++ (finalize_backward) at once, keeping the rank's turn: the run hung."""
    current_node = getattr(torch._C, "_current_autograd_node", None)
    if current_node is not None and current_node() is None:
        return False
    try:
        torch.autograd.Variable._execution_engine.queue_callback(callback)
    except RuntimeError:
        return False
    return True


class _TwinFuture(torch.futures.Future):
    """A Work's future, completed by _complete() (the end of the backward pass, or a Python
    wait/value/then on it, which wait for the Work first: a C++ wait would keep the rank's turn)."""

    def __init__(self, work):
        super().__init__()
        self._work = work

    def _complete(self):
        if self.done():
            return
        try:
            self._work.wait()
        except BaseException as e:
            self.set_exception(e)
            raise
        self.set_result(self._work._outputs)

    def wait(self):
        self._complete()
        return super().wait()

    def value(self):
        self._complete()
        return super().value()

    def then(self, callback):
        chained = _TwinFuture(self._work)
        chained._complete = lambda: self._complete()  # the callback completes `chained`

        def run(fut):
            try:
                result = callback(fut)
            except BaseException as e:  # noqa: BLE001  (torch's then: the future's error)
                chained.set_exception(e)
            else:
                chained.set_result(result)
        super().add_done_callback(run)
        return chained


def work_of(works, outputs):
    """The Work torch gets for one call: a _TwinWork while any emulator Work is in flight; for a
    call that completed already (torch 1.x's collectives), torch's own Work over a completed
    future, which torch 1.x's C++ (DDP) can wait on (it cannot reach a Python subclass's wait)."""
    if any(w is not None for w in works) or not hasattr(torch._C._distributed_c10d,
                                                         "_create_work_from_future"):
        return _TwinWork(works, outputs)
    fut = torch.futures.Future()
    fut.set_result(outputs)
    return torch._C._distributed_c10d._create_work_from_future(fut)


class _BackendInfo:
    """torch's ProcessGroup._get_backend(device) answer for this group (it has no C++ backend):
    no NCCL-style coalescing (batch_isend_irecv issues each operation), no splitting."""

    supports_coalescing = False
    supports_splitting = False

    def __init__(self, group):
        self._group = group

    def rank(self):
        return self._group.rank()

    def size(self):
        return self._group.size()

    def name(self):
        return BACKEND
