"""MindSpore's communication primitives (ops.AllReduce, ops.AllGather, ...) called in PyNative
mode (directly, or in an nn.Cell's construct, as nn.DistributedGradReducer does) under
twinccl.run(mindspore=True) and the launcher.

How it works: during the run each primitive class of mindspore.ops.operations.comm_ops gets a
__call__ that answers with twinccl.mindspore's comm_func calls on the primitive's own attributes
(op, group, root/dest/src rank, split dims), so instances made before the run are redirected
too; comm_ops' get_rank / get_group_size (which constructors call) answer with the run's.
nn.DistributedGradReducer's construct is jit-compiled (its AllReduce never __call__ed): during
the run it is replaced by the same math in PyNative. Without
this MindSpore's kernel for a primitive, on a CPU with no HCCL, ends the process (segmentation
fault). Primitives with no TwinCCL counterpart here raise InvalidArgument naming the call to use
instead. Graph mode (jit) compiles primitives without calling them: not redirected.

    allreduce = ops.AllReduce(ops.ReduceOp.SUM)           # in a Cell's __init__
    y = allreduce(x)                                       # a new tensor, every rank's sum
"""

import numpy as np

from . import mindspore as _cf
from ._ms_tensors import _ms
from ._twinccl import InvalidArgument


def _attr(prim, name, default=None):
    value = getattr(prim, name, None)
    if value is None:
        value = prim.attrs.get(name, default)
    return value


def _group(prim):
    return _attr(prim, "group", _cf.GlobalComm.WORLD_COMM_GROUP)


def _from_numpy(a):
    return _ms().Tensor.from_numpy(np.ascontiguousarray(a))


def all_reduce(prim, x):
    return _cf.all_reduce(x, _attr(prim, "op", "sum"), _group(prim))[0]


def all_gather(prim, x):
    return _cf.all_gather_into_tensor(x, _group(prim))[0]


def reduce_scatter(prim, x):
    return _cf.reduce_scatter_tensor(x, _attr(prim, "op", "sum"), _group(prim))[0]


def reduce(prim, x):
    return _cf.reduce(x, _attr(prim, "dest_rank"), _attr(prim, "op", "sum"), _group(prim))


def broadcast(prim, x):
    """input_x is a tuple of tensors; so is the output (root_rank's tensors)."""
    if not isinstance(x, (tuple, list)):
        raise InvalidArgument("ops.Broadcast: input_x must be a tuple of tensors (MindSpore's "
                              "Broadcast takes and returns a tuple), got %s" % type(x).__name__)
    root = _attr(prim, "root_rank")
    return tuple(_cf.broadcast(t, root, _group(prim)) for t in x)


def all_to_all(prim, x):
    """x split into split_count pieces along split_dim, piece p to group rank p, the pieces
    received concatenated along concat_dim."""
    n = _cf.get_group_size(_group(prim))
    count, split_dim, concat_dim = (_attr(prim, k) for k in ("split_count", "split_dim",
                                                             "concat_dim"))
    if count != n:
        raise InvalidArgument("ops.AlltoAll: split_count=%d, the group %r has %d ranks"
                              % (count, _group(prim), n))
    a = x.asnumpy()
    if a.shape[split_dim] % n:
        raise InvalidArgument("ops.AlltoAll: dimension %d (%d) does not divide by split_count=%d"
                              % (split_dim, a.shape[split_dim], n))
    pieces = [_from_numpy(p) for p in np.split(a, n, axis=split_dim)]
    got, _ = _cf.all_to_all_with_output_shape([p.shape for p in pieces], pieces, _group(prim))
    return _from_numpy(np.concatenate([g.asnumpy() for g in got], axis=concat_dim))


def collective_scatter(prim, x):
    return _cf.scatter_tensor(x, _attr(prim, "src_rank", 0), _group(prim))


def collective_gather(prim, x):
    return _cf.gather_into_tensor(x, _attr(prim, "dest_rank"), _group(prim))


def barrier(prim):
    _cf.barrier(_group(prim))
    return _from_numpy(np.zeros(1, np.float32))


def send(prim, x):
    """sr_tag is not used for matching: a pair's messages are received in the order sent."""
    _cf.send(x, _attr(prim, "rank"), _group(prim))
    return x


def receive(prim, *unused):
    """A new tensor of the primitive's shape and dtype, from src_rank."""
    ms = _ms()
    template = ms.Tensor(np.zeros(tuple(_attr(prim, "shape")), np.float32),
                         dtype=_attr(prim, "dtype"))
    return _cf.recv(template, _attr(prim, "rank"), _group(prim))


CALLS = {"AllReduce": all_reduce, "AllGather": all_gather, "ReduceScatter": reduce_scatter,
         "Reduce": reduce, "Broadcast": broadcast, "AlltoAll": all_to_all,
         "CollectiveScatter": collective_scatter, "CollectiveGather": collective_gather,
         "Barrier": barrier, "Send": send, "Receive": receive}
INSTEAD = {"AllGatherV": "mint.distributed.all_gather_into_tensor_uneven",
           "ReduceScatterV": "mint.distributed.reduce_scatter_tensor_uneven",
           "AlltoAllV": "mint.distributed.all_to_all_single with split sizes",
           "AlltoAllVC": "comm_func.all_to_all_v_c",
           "BatchISendIRecv": "comm_func.batch_isend_irecv",
           "NeighborExchange": "comm_func.batch_isend_irecv",
           "NeighborExchangeV2": "comm_func.batch_isend_irecv",
           "_AllSwap": "mint.distributed.all_to_all_single"}


def grad_reducer_construct(self, grads):
    """nn.DistributedGradReducer's construct in PyNative (MindSpore's is jit-compiled, so its
    AllReduce kernels would run): each gradient its allreduce_filter selects summed over the
    group in float32, times 1/degree when mean, cast back to its type, as _tensors_allreduce."""
    seq = grads if isinstance(grads, (tuple, list)) else (grads,)
    scale = np.float32(self.degree.asnumpy())
    out = []
    for k, g in enumerate(seq):
        if not isinstance(g, _ms().Tensor):
            raise InvalidArgument("nn.DistributedGradReducer: gradient %d is a %s; TwinCCL "
                                  "reduces dense Tensors only" % (k, type(g).__name__))
        if self.allreduce_filter[k]:
            op = self.op_list[k] if self.split_fusion else self.allreduce
            a = g.asnumpy()
            total, _ = _cf.all_reduce(a.astype(np.float32), "sum", _group(op))
            if self.mean:
                total = total * scale
            g = _from_numpy(total.astype(a.dtype))
        out.append(g)
    return tuple(out) if isinstance(grads, (tuple, list)) else out[0]


def _call_of(name, fn):
    def __call__(self, *args, **kwargs):
        if kwargs:
            raise InvalidArgument("ops.%s: called with keyword arguments %s; MindSpore's "
                                  "primitives take their inputs by position"
                                  % (name, ", ".join(sorted(kwargs))))
        return fn(self, *args)
    __call__.__qualname__ = name + ".__call__"
    return __call__


def _refused(name):
    def __call__(self, *args, **kwargs):
        raise InvalidArgument("ops.%s is not supported on TwinCCL's emulator (its PyNative "
                              "kernel needs HCCL); use %s" % (name, INSTEAD[name]))
    return __call__


def patches():
    """[(owner, name, value)] for _attribute_patch.replace: each primitive class's __call__, and
    the management functions comm_ops bound at import."""
    try:
        from mindspore.ops.operations import comm_ops
    except ImportError:
        return []
    out = [(comm_ops, "get_rank", _cf.get_rank), (comm_ops, "get_group_size", _cf.get_group_size)]
    for name, fn in CALLS.items():
        if hasattr(comm_ops, name):
            out.append((getattr(comm_ops, name), "__call__", _call_of(name, fn)))
    for name in INSTEAD:
        if hasattr(comm_ops, name):
            out.append((getattr(comm_ops, name), "__call__", _refused(name)))
    try:
        from mindspore.nn.wrap.grad_reducer import DistributedGradReducer
        out.append((DistributedGradReducer, "construct", grad_reducer_construct))
    except ImportError:
        pass
    return out
