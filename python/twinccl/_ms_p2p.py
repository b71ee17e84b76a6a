"""comm_func's point-to-point calls (2.4-2.8 shapes) for twinccl.mindspore: received data comes
back as new tensors (the tensor passed to recv/irecv only gives the shape and type).

    send(x, dst=1)                        # None
    y = recv(x, src=0)                    # a new tensor shaped like x
    out, handle = irecv(x, src=0)         # (tensor, handle); handle = isend(x, dst=1)
    outs = batch_isend_irecv([P2POp("isend", x, 1), P2POp("irecv", y, 1)])
    # outs[0]: a placeholder (zeros shaped like x) at the isend; outs[1]: what rank 1 sent
"""
import sys

import numpy as np

from . import _ms_autograd
from ._ms_groups import GlobalComm, comm_of, group_rank
from ._ms_tensors import new_like, shape_of, view
from ._tensors import call_site
from ._twinccl import InvalidArgument

_WORLD = GlobalComm.WORLD_COMM_GROUP


def _tag(tag, what):
    if tag != 0:
        raise InvalidArgument("%s: tag=%r is not supported (MindSpore raises too; messages of a "
                              "pair keep their order)" % (what, tag))


def _p2p(is_send, tensor, peer, group, tag, async_op, what, site):
    """(new received array or None, handle, view, type name)."""
    _tag(tag, what)
    _ms_autograd.check(what, site)
    comm = comm_of(group, what)
    v, t = view(tensor, what + "'s tensor")
    p = group_rank(group, peer, what + "'s " + ("dst" if is_send else "src"))
    if is_send:
        return None, comm.send(v.reshape(-1), t, p, async_op, *site), v, t
    out = np.empty(v.size, dtype=v.dtype)
    return out, comm.recv(out, t, p, async_op, *site), v, t


def send(tensor, dst=0, group=_WORLD, tag=0):
    _p2p(True, tensor, dst, group, tag, False, "send", call_site())


def recv(tensor, src=0, group=_WORLD, tag=0):
    """A new tensor of `tensor`'s shape and type holding what world rank `src` sent."""
    out, _, v, t = _p2p(False, tensor, src, group, tag, False, "recv", call_site())
    return new_like(tensor, out, shape_of(v), t)


def isend(tensor, dst=0, group=_WORLD, tag=0):
    return _p2p(True, tensor, dst, group, tag, True, "isend", call_site())[1]


def irecv(tensor, src=0, group=_WORLD, tag=0):
    """(new tensor, handle): the tensor holds the data once handle.wait() returned."""
    out, handle, v, t = _p2p(False, tensor, src, group, tag, True, "irecv", call_site())
    return new_like(tensor, out, shape_of(v), t), handle


def _op_name(op):
    name = op if isinstance(op, str) else getattr(op, "__name__", None)
    if name not in ("isend", "irecv"):
        raise InvalidArgument("P2POp: op must be 'isend' or 'irecv' (or those functions), got %r"
                              % (op,))
    return name


class P2POp:
    """comm_func.P2POp(op, tensor, peer, group=None, tag=0, *, recv_dtype=None): op is "isend" or
    "irecv" (or the functions); for irecv, tensor may be a shape tuple with recv_dtype."""

    def __init__(self, op, tensor, peer, group=None, tag=0, *, recv_dtype=None):
        self.op_name = _op_name(op)
        if isinstance(peer, bool) or not isinstance(peer, int):
            raise InvalidArgument("P2POp: peer must be an int, got %r" % (peer,))
        if isinstance(tensor, tuple):
            if self.op_name != "irecv" or recv_dtype is None:
                raise InvalidArgument("P2POp: a shape tuple as tensor needs op 'irecv' and "
                                      "recv_dtype")
        _tag(tag, "P2POp")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.recv_dtype = recv_dtype


def _shaped(p, what):
    """(template tensor or None, view, type name) of an irecv given as (shape, recv_dtype)."""
    ms = sys.modules.get("mindspore")
    if ms is not None and type(p.recv_dtype).__module__.startswith("mindspore"):
        # a MindSpore type: MindSpore tensors, made from NumPy (no MindSpore op on rank threads)
        template = ms.Tensor(np.zeros(p.tensor, dtype=ms.dtype_to_nptype(p.recv_dtype)))
        v, t = view(template, what)
        return template, v, t
    v, t = view(np.zeros(p.tensor, dtype=np.dtype(p.recv_dtype)), what)
    return v, v, t


def batch_isend_irecv(p2p_op_list):
    """Issues the sends and receives together; returns a tuple with, at each isend, a placeholder
    (zeros of the sent tensor's shape) and at each irecv the received tensor."""
    site = call_site()
    if not isinstance(p2p_op_list, list) or not p2p_op_list:
        raise InvalidArgument("batch_isend_irecv: p2p_op_list must be a non-empty list of P2POp")
    group = getattr(p2p_op_list[0], "group", None)
    _ms_autograd.check("batch_isend_irecv", site)
    comm = comm_of(group, "batch_isend_irecv")
    ops, results, name = [], [], None
    for k, p in enumerate(p2p_op_list):
        what = "batch_isend_irecv's p2p_op_list[%d]" % k
        if not isinstance(p, P2POp):
            raise InvalidArgument("%s: expected a P2POp, got %s" % (what, type(p).__name__))
        if p.group != group:
            raise InvalidArgument("%s: group %r, p2p_op_list[0] has %r (one group per call)"
                                  % (what, p.group, group))
        if isinstance(p.tensor, tuple):
            template, v, t = _shaped(p, what)
        else:
            template = p.tensor
            v, t = view(p.tensor, what)
        if name is not None and t != name:
            raise InvalidArgument("%s is %s, the others %s (one type per call)" % (what, t, name))
        name = t
        peer = group_rank(group, p.peer, what + "'s peer")
        if p.op_name == "isend":
            ops.append((True, v.reshape(-1), peer))
            results.append(new_like(template, np.zeros(v.size, v.dtype), shape_of(v), t))
        else:
            out = np.empty(v.size, dtype=v.dtype)
            ops.append((False, out, peer))
            results.append(new_like(template, out, shape_of(v), t))
    comm.batch_isend_irecv(ops, name, *site).wait()
    return tuple(results)

