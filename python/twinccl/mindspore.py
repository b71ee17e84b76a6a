"""MindSpore comm_func's shapes: each call returns (output, handle), the output a new tensor.

    import twinccl.mindspore as comm_func
    out, handle = comm_func.all_gather_into_tensor(x, async_op=True)   # (world*n, ...) stacked
    handle.wait()
    part, _ = comm_func.reduce_scatter_tensor(grad)                    # (n/world, ...) reduced

The output has the input's kind (torch tensor or NumPy array) and type; handle is a twinccl.Work
with async_op, else None. `group` is None (the world), "hccl_world_group"/"nccl_world_group", or
a group from twinccl.distributed.new_group. `op` is "sum", "prod", "max", "min" or a
twinccl.distributed.ReduceOp.
"""
import sys

from ._twinccl import InvalidArgument
from ._groups import GroupMember, resolve
from ._reduce_op import ReduceOp, reduce_op
from ._tensors import array, call_site

_WORLD_NAMES = ("hccl_world_group", "nccl_world_group")
_OPS = {"sum": ReduceOp.SUM, "prod": ReduceOp.PRODUCT, "max": ReduceOp.MAX, "min": ReduceOp.MIN}


def _group(group, what):
    if isinstance(group, str):
        if group not in _WORLD_NAMES:
            raise InvalidArgument("%s: group %r: use a group from twinccl.distributed.new_group"
                                  % (what, group))
        group = None
    comm = resolve(group)
    if comm is None:
        raise InvalidArgument("%s: this rank is not a member of the group" % what)
    return comm


def _op(op, what):
    if isinstance(op, str):
        if op not in _OPS:
            raise InvalidArgument("%s: op=%r is not supported (sum, prod, max, min)" % (what, op))
        op = _OPS[op]
    return reduce_op(op, what)


def _like(tensor, flat, shape, name):
    """The output in the input's kind, with `shape`, over the library's memory."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(tensor, torch.Tensor):
        out = torch.from_numpy(flat)
        if name == "bfloat16":
            out = out.view(torch.bfloat16)
        return out.reshape(shape)
    return flat.reshape(shape)


def _async(async_op, what):
    if not isinstance(async_op, bool):
        raise InvalidArgument("%s: async_op must be a bool, got %r" % (what, async_op))
    return async_op


def all_gather_into_tensor(tensor, group=GroupMember.WORLD, async_op=False):
    site = call_site()
    comm = _group(group, "all_gather_into_tensor")
    v, t = array(tensor, "all_gather_into_tensor's tensor")
    flat, handle = comm.ms_all_gather_into_tensor(v, t, _async(async_op, "all_gather_into_tensor"),
                                                  *site)
    shape = tuple(v.shape) or (1,)
    return _like(tensor, flat, (comm.size * shape[0],) + shape[1:], t), handle


def reduce_scatter_tensor(tensor, op="sum", group=GroupMember.WORLD, async_op=False):
    site = call_site()
    comm = _group(group, "reduce_scatter_tensor")
    v, t = array(tensor, "reduce_scatter_tensor's tensor")
    shape = tuple(v.shape) or (1,)
    if shape[0] % comm.size:
        raise InvalidArgument("reduce_scatter_tensor: the first dimension (%d) must divide by the "
                              "group's %d ranks" % (shape[0], comm.size))
    kind, scalar = _op(op, "reduce_scatter_tensor")
    flat, handle = comm.ms_reduce_scatter_tensor(v, t, kind, scalar,
                                                 _async(async_op, "reduce_scatter_tensor"), *site)
    return _like(tensor, flat, (shape[0] // comm.size,) + shape[1:], t), handle


def all_reduce(tensor, op="sum", group=GroupMember.WORLD, async_op=False):
    site = call_site()
    comm = _group(group, "all_reduce")
    v, t = array(tensor, "all_reduce's tensor")
    kind, scalar = _op(op, "all_reduce")
    flat, handle = comm.ms_all_reduce(v, t, kind, scalar, _async(async_op, "all_reduce"), *site)
    return _like(tensor, flat, tuple(v.shape), t), handle
