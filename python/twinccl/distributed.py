"""torch.distributed's functions, with torch's signatures and semantics, on TwinCCL's emulator.

Use them inside twinccl.run(fn, world_size=...): each rank is a thread; tensors are CPU torch
tensors or NumPy arrays, used in place (zero-copy). `group` is None (the world) or what
new_group() returned; src/dst/peer are global ranks, as in torch. Arguments TwinCCL cannot honour
raise twinccl.InvalidArgument; nothing is silently ignored. Point-to-point ops progress per pair
of ranks, as torch's ProcessGroupNCCL (an irecv posted before an isend does not hold it back);
messages of one (src, dst) pair keep their order. See docs/python.md.
"""
import warnings

from ._twinccl import InvalidArgument, Work  # noqa: F401  (torch's Work)
from ._tensors import array, arrays, call_site, refuse_float8_reduction, rows, same_type, two
from ._groups import (GroupMember, ProcessGroup, destroy_process_group,  # noqa: F401
                      get_backend, get_global_rank, get_group_rank, get_rank, get_world_size,
                      init_process_group, is_available, is_initialized, is_nccl_available,
                      new_group, resolve, set_timeout)
from ._reduce_op import ReduceOp, _make_nccl_premul_sum, reduce_op  # noqa: F401
from ._objects import (all_gather_object, broadcast_object_list, gather_object,  # noqa: F401
                       scatter_object_list)


def _comm(group, op):
    """(the group's communicator, the (file, line) of the user's call of the public function that
    calls this); the communicator is None (with torch's warning) when this rank is not a member."""
    site = call_site(3)
    comm = resolve(group)
    if comm is None:
        warnings.warn("Running %s on global rank %d which does not belong to the given group."
                      % (op, get_rank()))
    return comm, site


def _async(async_op, what):
    if not isinstance(async_op, bool):
        raise InvalidArgument("%s: async_op must be a bool, got %r" % (what, async_op))
    return async_op


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = _comm(group, "all_reduce")
    if comm is None:
        return None
    v, t = array(tensor, "all_reduce's tensor")
    refuse_float8_reduction([tensor], "all_reduce")
    kind, scalar = reduce_op(op, "all_reduce")
    return comm.all_reduce(v, t, kind, scalar, _async(async_op, "all_reduce"), *site)


def broadcast(tensor, src, group=None, async_op=False):
    comm, site = _comm(group, "broadcast")
    if comm is None:
        return None
    v, t = array(tensor, "broadcast's tensor")
    return comm.broadcast(v, t, get_group_rank(group, src, "broadcast's src"),
                          _async(async_op, "broadcast"), *site)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = _comm(group, "reduce")
    if comm is None:
        return None
    v, t = array(tensor, "reduce's tensor")
    refuse_float8_reduction([tensor], "reduce")
    kind, scalar = reduce_op(op, "reduce")
    return comm.reduce(v, t, get_group_rank(group, dst, "reduce's dst"), kind, scalar,
                       _async(async_op, "reduce"), *site)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    comm, site = _comm(group, "all_gather")
    if comm is None:
        return None
    outs, v, t = two("all_gather", (arrays, tensor_list, "tensor_list"), (array, tensor, "tensor"))
    return comm.all_gather(outs, v, t, _async(async_op, "all_gather"), *site)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    comm, site = _comm(group, "all_gather_into_tensor")
    if comm is None:
        return None
    o, i, t = two("all_gather_into_tensor", (array, output_tensor, "output_tensor"),
                  (array, input_tensor, "input_tensor"))
    return comm.all_gather_into_tensor(o, i, t, _async(async_op, "all_gather_into_tensor"), *site)


_all_gather_base = all_gather_into_tensor


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = _comm(group, "reduce_scatter")
    if comm is None:
        return None
    o, ins, t = two("reduce_scatter", (array, output, "output"), (arrays, input_list, "input_list"))
    refuse_float8_reduction([output], "reduce_scatter")
    kind, scalar = reduce_op(op, "reduce_scatter")
    return comm.reduce_scatter(o, ins, t, kind, scalar, _async(async_op, "reduce_scatter"), *site)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    comm, site = _comm(group, "reduce_scatter_tensor")
    if comm is None:
        return None
    o, i, t = two("reduce_scatter_tensor", (array, output, "output"), (array, input, "input"))
    refuse_float8_reduction([output], "reduce_scatter_tensor")
    kind, scalar = reduce_op(op, "reduce_scatter_tensor")
    return comm.reduce_scatter_tensor(o, i, t, kind, scalar,
                                      _async(async_op, "reduce_scatter_tensor"), *site)


_reduce_scatter_base = reduce_scatter_tensor


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    comm, site = _comm(group, "all_to_all")
    if comm is None:
        return None
    outs, ins, t = two("all_to_all", (arrays, output_tensor_list, "output_tensor_list"),
                       (arrays, input_tensor_list, "input_tensor_list"))
    return comm.all_to_all(outs, ins, t, _async(async_op, "all_to_all"), *site)


def _splits(sizes, t, n, what):
    if sizes is None or (isinstance(sizes, (list, tuple)) and len(sizes) == 0):
        return []
    sizes = list(sizes)
    if len(sizes) != n:
        raise InvalidArgument("%s has %d entries, the group has %d ranks" % (what, len(sizes), n))
    per = rows(t)
    out = []
    for i, s in enumerate(sizes):
        if isinstance(s, bool) or int(s) != s or s < 0:
            raise InvalidArgument("%s[%d]=%r must be an int >= 0" % (what, i, s))
        out.append(int(s) * per)
    return out


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    comm, site = _comm(group, "all_to_all_single")
    if comm is None:
        return None
    o, i, t, os_, is_ = _single(output, input, output_split_sizes, input_split_sizes, comm.size)
    return comm.all_to_all_single(o, i, os_, is_, t, _async(async_op, "all_to_all_single"), *site)


def _single(output, input, output_split_sizes, input_split_sizes, n):
    """all_to_all_single's tensors and split sizes checked for a group of n ranks: (output view,
    input view, type name, output splits, input splits), splits in elements ([] when even)."""
    o, i, t = two("all_to_all_single", (array, output, "output"), (array, input, "input"))
    os_ = _splits(output_split_sizes, output, n, "all_to_all_single's output_split_sizes")
    is_ = _splits(input_split_sizes, input, n, "all_to_all_single's input_split_sizes")
    if bool(os_) != bool(is_):  # one given: the other is the even split, as torch does
        if not os_:
            os_ = _even(o, n, "all_to_all_single's output")
        else:
            is_ = _even(i, n, "all_to_all_single's input")
    return o, i, t, os_, is_


def _even(v, n, what):
    first = v.shape[0] if v.shape else 1
    if first % n:
        raise InvalidArgument("%s: %d rows do not split evenly over %d ranks" % (what, first, n))
    return [first // n * rows(v)] * n


def _root_list(comm, root, tensors, op, arg, role, global_root, dtype):
    """gather's gather_list / scatter's scatter_list: required on the root rank (and of the
    tensor's type), refused elsewhere, as torch.distributed does."""
    if comm.rank != root:
        if tensors:
            raise InvalidArgument("%s: %s must NOT be given on non-%s rank %d "
                                  "(as torch.distributed)" % (op, arg, role, get_rank()))
        return []
    if tensors is None:
        raise InvalidArgument("%s: %s must be given on the %s rank %d"
                              % (op, arg, role, global_root))
    lst, t2 = arrays(tensors, "%s's %s" % (op, arg))
    same_type(dtype, t2 or dtype, op)
    return lst


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    comm, site = _comm(group, "gather")
    if comm is None:
        return None
    v, t = array(tensor, "gather's tensor")
    root = get_group_rank(group, dst, "gather's dst")
    lst = _root_list(comm, root, gather_list, "gather", "gather_list", "destination", dst, t)
    return comm.gather(v, lst, t, root, _async(async_op, "gather"), *site)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    comm, site = _comm(group, "scatter")
    if comm is None:
        return None
    v, t = array(tensor, "scatter's tensor")
    root = get_group_rank(group, src, "scatter's src")
    lst = _root_list(comm, root, scatter_list, "scatter", "scatter_list", "source", src, t)
    return comm.scatter(v, lst, t, root, _async(async_op, "scatter"), *site)


def _peer(group, peer, tag, what):
    if tag != 0:
        raise InvalidArgument("%s: tag=%r is not supported (NCCL matches messages by order; pass "
                              "tag=0)" % (what, tag))
    if peer is None:
        raise InvalidArgument("%s: a source rank is required (receiving from any source is not "
                              "supported)" % what)
    return get_group_rank(group, peer, what + "'s peer")


def _p2p(is_send, tensor, peer, group, tag, async_op, what, site):
    comm, _ = _comm(group, what)  # site: the caller's, passed in
    if comm is None:
        return None
    v, t = array(tensor, what + "'s tensor")
    p = _peer(group, peer, tag, what)
    call = comm.send if is_send else comm.recv
    return call(v, t, p, async_op, *site)


def send(tensor, dst, group=None, tag=0):
    _p2p(True, tensor, dst, group, tag, False, "send", call_site())


def recv(tensor, src=None, group=None, tag=0):
    _p2p(False, tensor, src, group, tag, False, "recv", call_site())
    return src


def isend(tensor, dst, group=None, tag=0):
    return _p2p(True, tensor, dst, group, tag, True, "isend", call_site())


def irecv(tensor, src=None, group=None, tag=0):
    return _p2p(False, tensor, src, group, tag, True, "irecv", call_site())


class P2POp:
    """dist.P2POp(op, tensor, peer, group=None, tag=0): op is isend or irecv."""

    def __init__(self, op, tensor, peer, group=None, tag=0):
        if op not in (isend, irecv):
            raise InvalidArgument("P2POp: op must be twinccl.distributed.isend or irecv, got %r"
                                  % (op,))
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag


def batch_isend_irecv(p2p_op_list):
    if not isinstance(p2p_op_list, (list, tuple)) or not p2p_op_list:
        raise InvalidArgument("batch_isend_irecv: expected a non-empty list of P2POp")
    group = getattr(p2p_op_list[0], "group", None)
    comm, site = _comm(group, "batch_isend_irecv")
    if comm is None:
        return []
    ops, name = [], None
    for k, p in enumerate(p2p_op_list):
        what = "batch_isend_irecv's p2p_op_list[%d]" % k
        if not isinstance(p, P2POp):
            raise InvalidArgument("%s: expected a P2POp, got %s" % (what, type(p).__name__))
        if p.group is not group:
            raise InvalidArgument("%s: every P2POp must use the same group" % what)
        v, t = array(p.tensor, what)
        same_type(name or t, t, "batch_isend_irecv")
        name = t
        ops.append((p.op is isend, v, _peer(group, p.peer, p.tag, what)))
    work = comm.batch_isend_irecv(ops, name, *site)
    return [work] * len(ops)


def barrier(group=None, async_op=False, device_ids=None):
    if device_ids is not None:
        raise InvalidArgument("barrier: device_ids is not supported by the emulator (CPU ranks)")
    comm, site = _comm(group, "barrier")
    if comm is None:
        return None
    return comm.barrier(_async(async_op, "barrier"), *site)
