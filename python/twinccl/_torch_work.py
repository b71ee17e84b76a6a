"""What TwinCCL's torch ProcessGroup (_torch_backend) hands back to torch: the Work of a call,
the per-device backend torch asks about, and the user's line a call is reported at.

`get_future()` waits for the operation and returns a completed future (the emulator has no
completion callback): the value is the output tensors, as torch's backends give.
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
        self.wait()
        fut = torch.futures.Future()
        fut.set_result(self._outputs)
        return fut

    def synchronize(self):
        self.wait()


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
