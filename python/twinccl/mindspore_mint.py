"""MindSpore's torch-shaped collectives, mindspore.mint.distributed and mindspore.ops.communication
(2.7-2.10), on TwinCCL's emulator: outputs written in place, a handle returned with async_op.

    import twinccl.mindspore_mint as dist
    dist.init_process_group()
    handle = dist.all_reduce(x, async_op=True)              # x reduced in place
    handle.wait()
    dist.all_gather_into_tensor_uneven(out, x, output_split_sizes=[1, 3])   # all_gather_v
    g = dist.new_group([0, 1])                              # a name: "hccl_2_<sha1>"

Tensors are MindSpore Tensors, CPU torch tensors or NumPy arrays, used zero-copy. `group` is None
(the world), "hccl_world_group" or a name from new_group / create_group; src/dst/peer are world
ranks. `op` is "sum", "prod", "min", "max" or "avg". The uneven calls (_uneven, all_to_all_single
with split sizes, all_to_all_v_c) are the emulator's all_gather_v, reduce_scatter_v and
all_to_all_v. Misuse raises twinccl.InvalidArgument where MindSpore raises TypeError/ValueError.
"""
from ._ms_common import (MINT_OPS, ReduceOp, async_flag, check_elements, even_rows, reduce_op,
                         split_sizes)
from ._ms_groups import comm_and_site, group_rank
from ._ms_mint_groups import (all_gather_object, broadcast_object_list,  # noqa: F401
                              destroy_process_group, gather_object, get_backend, get_global_rank,
                              get_group_rank, get_process_group_ranks, get_rank, get_world_size,
                              init_process_group, is_available, is_initialized, new_group,
                              recv_object_list, scatter_object_list, send_object_list,
                              TCPStore)
from ._ms_mint_p2p import (P2POp, batch_isend_irecv, irecv, isend, recv,  # noqa: F401
                           send, set_comm_ops_inplace)
from ._ms_tensors import output_and_input, shape_of, size, view
from .mindspore import all_to_all_v_c  # noqa: F401  (the same call in ops.communication)
from ._twinccl import InvalidArgument

_RS_UNEVEN_OPS = ("sum", "min", "max", "avg")  # MindSpore's reduce_scatter_tensor_uneven


def _views(tensors, what, written=False):
    if not isinstance(tensors, (list, tuple)):
        raise InvalidArgument("%s must be a list of tensors, got %r" % (what, type(tensors)))
    out = [view(x, "%s[%d]" % (what, k), written) for k, x in enumerate(tensors)]
    if len({t for _, t in out}) > 1:
        raise InvalidArgument("%s: tensors of several types in one call" % what)
    return [v.reshape(-1) for v, _ in out], (out[0][1] if out else None)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = comm_and_site(group, "all_reduce")
    v, t = view(tensor, "all_reduce's tensor", written=True)
    kind, scalar = reduce_op(op, MINT_OPS, "all_reduce")
    return comm.all_reduce(v.reshape(-1), t, kind, scalar, async_flag(async_op, "all_reduce"),
                           *site)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    comm, site = comm_and_site(group, "all_gather_into_tensor")
    o, i, t = output_and_input(output_tensor, input_tensor, "all_gather_into_tensor")
    return comm.all_gather_into_tensor(o, i, t, async_flag(async_op, "all_gather_into_tensor"),
                                       *site)


def all_gather_into_tensor_uneven(output, input, output_split_sizes=None, group=None,
                                  async_op=False):
    """Rank r contributes output_split_sizes[r] rows (its whole input); all_gather_v."""
    what = "all_gather_into_tensor_uneven"
    comm, site = comm_and_site(group, what)
    o, i, t = output_and_input(output, input, what)
    out_shape = shape_of(output) or (1,)
    rows = split_sizes(output_split_sizes, comm.size, what + "'s output_split_sizes") or \
        even_rows(out_shape[0], comm.size, what + "'s output")
    per_row = size(out_shape[1:])
    counts = [r * per_row for r in rows]
    check_elements(o, sum(counts), what + "'s output", comm, site)
    check_elements(i, counts[comm.rank], what + "'s input", comm, site)
    return comm.all_gather_v(o, i, counts, t, async_flag(async_op, what), *site)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = comm_and_site(group, "reduce_scatter_tensor")
    o, i, t = output_and_input(output, input, "reduce_scatter_tensor")
    kind, scalar = reduce_op(op, MINT_OPS, "reduce_scatter_tensor")
    return comm.reduce_scatter_tensor(o, i, t, kind, scalar,
                                      async_flag(async_op, "reduce_scatter_tensor"), *site)


def reduce_scatter_tensor_uneven(output, input, input_split_sizes=None, op=ReduceOp.SUM,
                                 group=None, async_op=False):
    """Rank r receives the reduction of input rows input_split_sizes[r]; reduce_scatter_v."""
    what = "reduce_scatter_tensor_uneven"
    comm, site = comm_and_site(group, what)
    o, i, t = output_and_input(output, input, what)
    in_shape = shape_of(input) or (1,)
    rows = split_sizes(input_split_sizes, comm.size, what + "'s input_split_sizes") or \
        even_rows(in_shape[0], comm.size, what + "'s input")
    kind, scalar = reduce_op(op, _RS_UNEVEN_OPS, what)
    per_row = size(in_shape[1:])
    counts = [r * per_row for r in rows]
    check_elements(o, counts[comm.rank], what + "'s output", comm, site)
    check_elements(i, sum(counts), what + "'s input", comm, site)
    return comm.reduce_scatter_v(o, i, counts, t, kind, scalar, async_flag(async_op, what),
                                 *site)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = comm_and_site(group, "reduce")
    v, t = view(tensor, "reduce's tensor", written=True)
    kind, scalar = reduce_op(op, MINT_OPS, "reduce")
    return comm.reduce(v.reshape(-1), t, group_rank(group, dst, "reduce's dst"), kind, scalar,
                       async_flag(async_op, "reduce"), *site)


def broadcast(tensor, src, group=None, async_op=False):
    comm, site = comm_and_site(group, "broadcast")
    v, t = view(tensor, "broadcast's tensor", written=True)
    return comm.broadcast(v.reshape(-1), t, group_rank(group, src, "broadcast's src"),
                          async_flag(async_op, "broadcast"), *site)


def barrier(group=None, async_op=False, device_ids=None):
    comm, site = comm_and_site(group, "barrier")
    return comm.barrier(async_flag(async_op, "barrier"), *site)


def _stacked(comm, flat, what):
    count = flat.size // comm.size if comm.size else 0
    if count * comm.size != flat.size:
        raise InvalidArgument("%s: %d elements do not divide by the group's %d ranks"
                              % (what, flat.size, comm.size))
    return [flat[r * count:(r + 1) * count] for r in range(comm.size)]


def gather_into_tensor(output_tensor, input_tensor, dst=0, group=None, async_op=False):
    """ops.communication: world rank `dst`'s output_tensor receives every input, stacked."""
    comm, site = comm_and_site(group, "gather_into_tensor")
    o, i, t = output_and_input(output_tensor, input_tensor, "gather_into_tensor")
    root = group_rank(group, dst, "gather_into_tensor's dst")
    parts = _stacked(comm, o, "gather_into_tensor's output_tensor") if comm.rank == root else []
    return comm.gather(i, parts, t, root, async_flag(async_op, "gather_into_tensor"), *site)


def scatter_tensor(output_tensor, input_tensor, src=0, group=None, async_op=False):
    """ops.communication: rank r's output_tensor receives share r of world rank `src`'s input."""
    comm, site = comm_and_site(group, "scatter_tensor")
    o, i, t = output_and_input(output_tensor, input_tensor, "scatter_tensor")
    root = group_rank(group, src, "scatter_tensor's src")
    parts = _stacked(comm, i, "scatter_tensor's input_tensor") if comm.rank == root else []
    return comm.scatter(o, parts, t, root, async_flag(async_op, "scatter_tensor"), *site)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    comm, site = comm_and_site(group, "all_gather")
    outs, t = _views(tensor_list, "all_gather's tensor_list", written=True)
    v, t2 = view(tensor, "all_gather's tensor")
    return comm.all_gather(outs, v.reshape(-1), t2, async_flag(async_op, "all_gather"), *site)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = comm_and_site(group, "reduce_scatter")
    o, t = view(output, "reduce_scatter's output", written=True)
    ins, _ = _views(input_list, "reduce_scatter's input_list")
    kind, scalar = reduce_op(op, MINT_OPS, "reduce_scatter")
    return comm.reduce_scatter(o.reshape(-1), ins, t, kind, scalar,
                               async_flag(async_op, "reduce_scatter"), *site)


def gather(tensor, gather_list, dst=0, group=None, async_op=False):
    comm, site = comm_and_site(group, "gather")
    v, t = view(tensor, "gather's tensor")
    root = group_rank(group, dst, "gather's dst")
    lst = _views(gather_list, "gather's gather_list", written=True)[0] if comm.rank == root else []
    return comm.gather(v.reshape(-1), lst, t, root, async_flag(async_op, "gather"), *site)


def scatter(tensor, scatter_list, src=0, group=None, async_op=False):
    comm, site = comm_and_site(group, "scatter")
    v, t = view(tensor, "scatter's tensor", written=True)
    root = group_rank(group, src, "scatter's src")
    lst = _views(scatter_list, "scatter's scatter_list")[0] if comm.rank == root else []
    return comm.scatter(v.reshape(-1), lst, t, root, async_flag(async_op, "scatter"), *site)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    comm, site = comm_and_site(group, "all_to_all")
    outs, t = _views(output_tensor_list, "all_to_all's output_tensor_list", written=True)
    ins, _ = _views(input_tensor_list, "all_to_all's input_tensor_list")
    return comm.all_to_all(outs, ins, t, async_flag(async_op, "all_to_all"), *site)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Rows input_split_sizes[p] to rank p, output_split_sizes[p] from it (even when empty)."""
    what = "all_to_all_single"
    comm, site = comm_and_site(group, what)
    o, i, t = output_and_input(output, input, what)
    in_shape, out_shape = shape_of(input) or (1,), shape_of(output) or (1,)
    n = comm.size
    ins = split_sizes(input_split_sizes, n, what + "'s input_split_sizes") or \
        even_rows(in_shape[0], n, what + "'s input")
    outs = split_sizes(output_split_sizes, n, what + "'s output_split_sizes") or \
        even_rows(out_shape[0], n, what + "'s output")
    send_counts = [r * size(in_shape[1:]) for r in ins]
    recv_counts = [r * size(out_shape[1:]) for r in outs]
    check_elements(o, sum(recv_counts), what + "'s output", comm, site)
    check_elements(i, sum(send_counts), what + "'s input", comm, site)
    return comm.all_to_all_v(o, i, send_counts, recv_counts, t, async_flag(async_op, what), *site)
