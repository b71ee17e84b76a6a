"""How one call of TwinCCL's torch ProcessGroup (_torch_backend) is issued: asynchronously or
not (torch's asyncOp), its reduce op, its tensors as a list, and the Work torch gets back."""
import torch
import torch.distributed as dist

from ._reduce_op import reduce_op
from ._torch_work import _TwinWork, work_of

# torch 1.x's C++ (DDP) waits on a Python Work through C++ Work::wait, which a Python subclass
# does not override there: its collectives complete before they return. Point-to-point stays
# asynchronous (only torch's Python waits on it).
ASYNC = hasattr(__import__("torch.distributed.distributed_c10d").distributed.distributed_c10d,
                "_World")


def _async(opts):
    """torch 2.x's Python passes asyncOp=False for a blocking call (and waits at once): it runs
    inline on the rank's thread, as the emulator runs a blocking operation (an asynchronous one
    goes through the stream thread: two more thread wakes, 3x the cost of a small all_reduce).
    torch's C++ (DDP's reducer, functional collectives) leaves asyncOp at its default, True."""
    return ASYNC and getattr(opts, "asyncOp", True)


def _done(works, outputs, async_op):
    """A blocking call's Work is one shared completed Work (torch's Python waits on it, drops
    it)."""
    if async_op or not ASYNC:
        return work_of(works, outputs)
    return _COMPLETED


_COMPLETED = _TwinWork([], [])


def _list(tensors):
    return [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)


def _op(opts, what):
    op = getattr(opts, "reduceOp", opts)
    if op is None:
        op = dist.ReduceOp.SUM
    return reduce_op(op, what)
