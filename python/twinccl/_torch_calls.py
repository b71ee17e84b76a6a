"""How one call of TwinCCL's torch ProcessGroup (_torch_backend) is issued: asynchronously or
not (torch's asyncOp), its reduce op, its tensors as a list, and the Work torch gets back."""
import torch
import torch.distributed as dist

from ._reduce_op import reduce_op
from ._tensors import refuse_float8_reduction
from ._twinccl import InvalidArgument
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


def _op(opts, what, tensors=()):
    """(kind, scalar) of a call's reduce op; on bool tensors (bytes 0 or 1) SUM is MAX and PRODUCT
    is MIN, as torch's NCCL backend reduces them (a logical or / and)."""
    op = getattr(opts, "reduceOp", opts)
    if op is None:
        op = dist.ReduceOp.SUM
    kind, scalar = reduce_op(op, what)
    refuse_float8_reduction(tensors, what)
    if any(getattr(t, "dtype", None) == torch.bool for t in tensors):
        if kind not in _BOOL_KINDS:
            raise InvalidArgument("%s: ReduceOp.%s on bool tensors is not supported (SUM, "
                                  "PRODUCT, MIN, MAX are: torch's NCCL backend refuses it too)"
                                  % (what, kind.upper()))
        kind = _BOOL_KINDS[kind]
    return kind, scalar


_BOOL_KINDS = {"sum": "max", "prod": "min", "min": "min", "max": "max"}


def _root(opts):
    """A rooted call's root rank: from torch's options, or given as the number itself by
    ProcessGroup's short forms (`pg.broadcast(tensor, root)`, `pg.reduce(tensor, root, op)`,
    `pg.gather(outputs, input, root)`, `pg.scatter(output, inputs, root)`), which reach a Python
    subclass's method as they are, torch's C++ making no options object."""
    if isinstance(opts, int):
        return opts
    return getattr(opts, "rootRank", 0) if opts is not None else 0
