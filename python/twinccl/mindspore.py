"""MindSpore's mindspore.communication.comm_func (2.4-2.8 shapes) on TwinCCL's emulator, with
mindspore.communication's management functions (init, get_rank, create_group, ...).

    import twinccl.mindspore as comm_func
    comm_func.init()
    out, handle = comm_func.all_gather_into_tensor(x, async_op=True)   # (world*n, ...) stacked
    handle.wait()
    part, _ = comm_func.reduce_scatter_tensor(grad)                    # (n/world, ...) reduced
    total = comm_func.reduce(x, dst=0)                # rank 0: the sum; others: shape [1] zeros

Each collective returns a new tensor of the input's kind (MindSpore Tensor, CPU torch tensor or
NumPy array) and type, as comm_func does; inputs are read in place. Handles are twinccl.Work
(wait()) with async_op, else None. `group` is a group name: "hccl_world_group" (the default;
"nccl_world_group", "mccl_world_group" too) or one made by create_group. src/dst/peer are world
ranks. `op` is "sum", "prod", "max" or "min". Misuse raises twinccl.InvalidArgument where
MindSpore raises TypeError/ValueError. The torch-shaped mint.distributed / ops.communication
functions are in twinccl.mindspore_mint. See docs/python.md.
"""
import numpy as np

from ._ms_common import (COMM_FUNC_OPS, ReduceOp, async_flag, check_elements, even_rows,
                         reduce_op, split_sizes)
from ._ms_groups import (GlobalComm, HCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP,  # noqa: F401
                         NCCL_WORLD_COMM_GROUP, comm_and_site, create_group, destroy_group,
                         get_comm_name, get_group_rank_from_world_rank, get_group_size,
                         get_local_rank, get_local_rank_size, get_process_group_ranks, get_rank,
                         get_world_rank_from_group_rank, group_rank, init, release)
from ._ms_p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send  # noqa: F401
from ._ms_tensors import (empty_for, is_tensor, new_like, output_and_input, placeholder,
                          shape_of, size, view)
from ._twinccl import InvalidArgument

_WORLD = GlobalComm.WORLD_COMM_GROUP
_like = new_like  # twinccl.cuda_comm's outputs

__all__ = ["all_reduce", "all_gather_into_tensor", "all_to_all_with_output_shape",
           "all_to_all_single_with_output_shape", "barrier", "broadcast", "gather_into_tensor",
           "isend", "irecv", "reduce_scatter_tensor", "reduce", "scatter_tensor", "send", "recv",
           "P2POp", "batch_isend_irecv", "all_to_all_v_c", "ReduceOp", "GlobalComm", "init",
           "release", "get_rank", "get_group_size", "get_local_rank", "get_local_rank_size",
           "get_world_rank_from_group_rank", "get_group_rank_from_world_rank", "create_group",
           "destroy_group", "get_comm_name", "get_process_group_ranks"]


def _first(shape):
    return shape or (1,)


def all_reduce(tensor, op=ReduceOp.SUM, group=_WORLD, async_op=False):
    comm, site = comm_and_site(group, "all_reduce")
    v, t = view(tensor, "all_reduce's tensor")
    kind, scalar = reduce_op(op, COMM_FUNC_OPS, "all_reduce")
    flat, handle = comm.ms_all_reduce(v, t, kind, scalar, async_flag(async_op, "all_reduce"), *site)
    return new_like(tensor, flat, shape_of(v), t), handle


def all_gather_into_tensor(tensor, group=_WORLD, async_op=False):
    comm, site = comm_and_site(group, "all_gather_into_tensor")
    v, t = view(tensor, "all_gather_into_tensor's tensor")
    flat, handle = comm.ms_all_gather_into_tensor(v, t, async_flag(async_op,
                                                                   "all_gather_into_tensor"), *site)
    shape = _first(shape_of(v))
    return new_like(tensor, flat, (comm.size * shape[0],) + shape[1:], t), handle


def reduce_scatter_tensor(tensor, op=ReduceOp.SUM, group=_WORLD, async_op=False):
    comm, site = comm_and_site(group, "reduce_scatter_tensor")
    v, t = view(tensor, "reduce_scatter_tensor's tensor")
    shape = _first(shape_of(v))
    even_rows(shape[0], comm.size, "reduce_scatter_tensor's tensor")
    kind, scalar = reduce_op(op, COMM_FUNC_OPS, "reduce_scatter_tensor")
    flat, handle = comm.ms_reduce_scatter_tensor(v, t, kind, scalar,
                                                 async_flag(async_op, "reduce_scatter_tensor"),
                                                 *site)
    return new_like(tensor, flat, (shape[0] // comm.size,) + shape[1:], t), handle


def reduce(tensor, dst, op=ReduceOp.SUM, group=_WORLD):
    """The reduced tensor on world rank `dst`; a shape-[1] placeholder on the other ranks."""
    comm, site = comm_and_site(group, "reduce")
    v, t = view(tensor, "reduce's tensor")
    root = group_rank(group, dst, "reduce's dst")
    kind, scalar = reduce_op(op, COMM_FUNC_OPS, "reduce")
    work = v.reshape(-1).copy()
    comm.reduce(work, t, root, kind, scalar, False, *site)
    if comm.rank != root:
        return placeholder(tensor, v, t)
    return new_like(tensor, work, shape_of(v), t)


def broadcast(tensor, src=0, group=_WORLD):
    """A new tensor holding world rank `src`'s `tensor` (every rank passes its shape and type)."""
    comm, site = comm_and_site(group, "broadcast")
    v, t = view(tensor, "broadcast's tensor")
    root = group_rank(group, src, "broadcast's src")
    out = v.reshape(-1).copy()
    comm.broadcast(out, t, root, False, *site)
    return new_like(tensor, out, shape_of(v), t)


def gather_into_tensor(tensor, dst=0, group=_WORLD):
    """On world rank `dst` every rank's tensor stacked on the first dimension; elsewhere a
    shape-[1] placeholder."""
    comm, site = comm_and_site(group, "gather_into_tensor")
    v, t = view(tensor, "gather_into_tensor's tensor")
    root = group_rank(group, dst, "gather_into_tensor's dst")
    shape = _first(shape_of(v))
    count = size(shape)
    out = empty_for(v, comm.size * count) if comm.rank == root else None
    parts = [out[r * count:(r + 1) * count] for r in range(comm.size)] if out is not None else []
    comm.gather(v.reshape(-1), parts, t, root, False, *site)
    if out is None:
        return placeholder(tensor, v, t)
    return new_like(tensor, out, (comm.size * shape[0],) + shape[1:], t)


def scatter_tensor(tensor, src=0, group=_WORLD):
    """Rank r's share (dimension 0 split evenly) of world rank `src`'s tensor; every rank passes
    a tensor of the same shape."""
    comm, site = comm_and_site(group, "scatter_tensor")
    v, t = view(tensor, "scatter_tensor's tensor")
    root = group_rank(group, src, "scatter_tensor's src")
    shape = _first(shape_of(v))
    rows = even_rows(shape[0], comm.size, "scatter_tensor's tensor")[0]
    count = rows * size(shape[1:])
    flat = v.reshape(-1)
    parts = [flat[r * count:(r + 1) * count] for r in range(comm.size)] if comm.rank == root \
        else []
    out = empty_for(v, count)
    comm.scatter(out, parts, t, root, False, *site)
    return new_like(tensor, out, (rows,) + shape[1:], t)


def barrier(group=_WORLD):
    comm, site = comm_and_site(group, "barrier")
    comm.barrier(False, *site)


def _all_to_all_v(comm, tensor, v, t, send, recv, async_op, what, site):
    """(1-D output of sum(recv) elements, handle) of the emulator's all_to_all_v."""
    out = empty_for(v, sum(recv))
    handle = comm.all_to_all_v(out, v.reshape(-1), send, recv, t, async_flag(async_op, what),
                               *site)
    return out, handle


def all_to_all_with_output_shape(output_shape_list, input_tensor_list, group=None,
                                 async_op=False):
    """input_tensor_list[p] goes to rank p; returns (tuple of the tensors received from each rank,
    shaped as output_shape_list says (a shape, or a tensor whose shape is used), handle)."""
    comm, site = comm_and_site(group, "all_to_all_with_output_shape")
    n = comm.size
    for name, lst in (("input_tensor_list", input_tensor_list),
                      ("output_shape_list", output_shape_list)):
        if not isinstance(lst, (list, tuple)) or len(lst) != n:
            raise InvalidArgument("all_to_all_with_output_shape: %s must be a list of %d entries "
                                  "(the group's size), got %r" % (name, n, lst))
    views = [view(x, "all_to_all_with_output_shape's input_tensor_list[%d]" % i)
             for i, x in enumerate(input_tensor_list)]
    types = {t for _, t in views}
    if len(types) > 1:
        raise InvalidArgument("all_to_all_with_output_shape: input tensors of %s in one call"
                              % ", ".join(sorted(types)))
    shapes = [shape_of(s) if is_tensor(s) else tuple(s) for s in output_shape_list]
    flat = np.concatenate([x.reshape(-1) for x, _ in views])
    t = views[0][1]
    send = [x.size for x, _ in views]
    recv = [size(s) for s in shapes]
    out, handle = _all_to_all_v(comm, input_tensor_list[0], flat, t, send, recv, async_op,
                                "all_to_all_with_output_shape", site)
    result, first = [], 0
    for s, c in zip(shapes, recv):
        result.append(new_like(input_tensor_list[0], out[first:first + c], s, t))
        first += c
    return tuple(result), handle


def all_to_all_single_with_output_shape(output_shape, tensor, output_split_sizes=None,
                                        input_split_sizes=None, group=None, async_op=False):
    """Rows input_split_sizes[p] of `tensor` go to rank p; returns (the rows received, in rank
    order, shaped (-1,) + output_shape[1:], handle). Empty split sizes: even splits."""
    comm, site = comm_and_site(group, "all_to_all_single_with_output_shape")
    n = comm.size
    what = "all_to_all_single_with_output_shape"
    v, t = view(tensor, what + "'s tensor")
    out_shape = shape_of(output_shape) if is_tensor(output_shape) else tuple(output_shape)
    in_shape = _first(shape_of(v))
    ins = split_sizes(input_split_sizes, n, what + "'s input_split_sizes") or \
        even_rows(in_shape[0], n, what + "'s tensor")
    outs = split_sizes(output_split_sizes, n, what + "'s output_split_sizes") or \
        even_rows(_first(out_shape)[0], n, what + "'s output_shape")
    send = [r * size(in_shape[1:]) for r in ins]
    recv = [r * size(out_shape[1:]) for r in outs]
    check_elements(v.reshape(-1), sum(send), what + "'s tensor", comm, site)
    out, handle = _all_to_all_v(comm, tensor, v, t, send, recv, async_op, what, site)
    if not any(recv):  # MindSpore: "a Tensor with shape (), and value has no actual meaning"
        return new_like(tensor, np.zeros(1, dtype=v.dtype), (), t), handle
    return new_like(tensor, out, (-1,) + tuple(out_shape[1:]), t), handle


def all_to_all_v_c(output, input, send_count_matrix, group=None, async_op=False):
    """send_count_matrix[i * n + j]: the rows (of the first dimension) group rank i sends to rank
    j; `output` receives in place, in rank order. Returns the handle (None if sync)."""
    comm, site = comm_and_site(group, "all_to_all_v_c")
    n, me = comm.size, comm.rank
    what = "all_to_all_v_c"
    if not isinstance(send_count_matrix, list) or len(send_count_matrix) != n * n:
        raise InvalidArgument("%s: send_count_matrix must be a list of %d ints (%d x %d), got %r"
                              % (what, n * n, n, n, send_count_matrix))
    counts = split_sizes(send_count_matrix, n * n, what + "'s send_count_matrix")
    o, i, t = output_and_input(output, input, what)
    row_in, row_out = size(shape_of(input)[1:]), size(shape_of(output)[1:])
    if row_in != row_out:
        raise InvalidArgument("%s: input rows hold %d elements, output rows %d; they must match"
                              % (what, row_in, row_out))
    send = [counts[me * n + p] * row_in for p in range(n)]
    recv = [counts[p * n + me] * row_in for p in range(n)]
    check_elements(o, sum(recv), what + "'s output", comm, site)
    check_elements(i, sum(send), what + "'s input", comm, site)
    return comm.all_to_all_v(o, i, send, recv, t,
                             async_flag(async_op, what), *site)
