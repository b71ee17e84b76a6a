"""mint.distributed's / ops.communication's point-to-point calls for twinccl.mindspore_mint:
in place, torch's shapes with MindSpore's returns (recv returns 0; batch_isend_irecv returns a
list holding one handle for the whole batch)."""
from . import _ms_autograd
from ._ms_groups import comm_of, group_rank
from ._ms_tensors import is_tensor, view
from ._tensors import call_site
from ._twinccl import InvalidArgument


def _check_tag(tag, what):
    if tag != 0:
        raise InvalidArgument("%s: tag=%r is not supported (MindSpore raises too)" % (what, tag))


def _p2p(is_send, tensor, peer, group, tag, async_op, what, site):
    _check_tag(tag, what)
    _ms_autograd.check(what, site)
    comm = comm_of(group, what)
    v, t = view(tensor, what + "'s tensor", written=not is_send)
    p = group_rank(group, peer, what + "'s " + ("dst" if is_send else "src"))
    if is_send and p == comm.rank:
        raise InvalidArgument("%s: dst=%d is this rank (MindSpore refuses a send to itself)"
                              % (what, peer))
    call = comm.send if is_send else comm.recv
    return call(v.reshape(-1), t, p, async_op, *site)


def send(tensor, dst=0, group=None, tag=0):
    _p2p(True, tensor, dst, group, tag, False, "send", call_site())


def recv(tensor, src=0, group=None, tag=0):
    """Receives into `tensor`; returns 0 as MindSpore does."""
    _p2p(False, tensor, src, group, tag, False, "recv", call_site())
    return 0


def isend(tensor, dst=0, group=None, tag=0):
    return _p2p(True, tensor, dst, group, tag, True, "isend", call_site())


def irecv(tensor, src=0, group=None, tag=0):
    return _p2p(False, tensor, src, group, tag, True, "irecv", call_site())


class P2POp:
    """P2POp(op, tensor, peer, group=None, tag=0): op is isend/irecv or their names."""

    def __init__(self, op, tensor, peer, group=None, tag=0):
        # isend/irecv: these, or MindSpore's own (bound before the run patched them)
        name = op if isinstance(op, str) else getattr(op, "__name__", None) if callable(op) \
            else None
        if name not in ("isend", "irecv"):
            raise InvalidArgument("P2POp: op must be isend or irecv (or 'isend'/'irecv'), got %r"
                                  % (op,))
        if not is_tensor(tensor):
            raise InvalidArgument("P2POp: tensor must be a tensor, got %s" % type(tensor).__name__)
        if isinstance(peer, bool) or not isinstance(peer, int):
            raise InvalidArgument("P2POp: peer must be an int, got %r" % (peer,))
        _check_tag(tag, "P2POp")
        self.op, self.op_name, self.tensor, self.peer, self.group, self.tag = \
            op, name, tensor, peer, group, tag


def batch_isend_irecv(p2p_op_list):
    """Issues every P2POp together; the irecv tensors receive in place. Returns [handle]."""
    site = call_site()
    if not isinstance(p2p_op_list, (list, tuple)) or not p2p_op_list:
        raise InvalidArgument("batch_isend_irecv: p2p_op_list must be a non-empty list of P2POp")
    for k, p in enumerate(p2p_op_list):
        if not isinstance(p, P2POp):
            raise InvalidArgument("batch_isend_irecv: p2p_op_list[%d] is a %s, not a P2POp"
                                  % (k, type(p).__name__))
    group = p2p_op_list[0].group
    _ms_autograd.check("batch_isend_irecv", site)
    comm = comm_of(group, "batch_isend_irecv")
    ops, name = [], None
    for k, p in enumerate(p2p_op_list):
        what = "batch_isend_irecv's p2p_op_list[%d]" % k
        if p.group != group:
            raise InvalidArgument("%s: group %r, p2p_op_list[0] has %r (one group per call)"
                                  % (what, p.group, group))
        v, t = view(p.tensor, what, written=p.op_name == "irecv")
        if name is not None and t != name:
            raise InvalidArgument("%s is %s, the others %s (one type per call)" % (what, t, name))
        name = t
        ops.append((p.op_name == "isend", v.reshape(-1), group_rank(group, p.peer, what + "'s peer")))
    return [comm.batch_isend_irecv(ops, name, *site)]


def set_comm_ops_inplace(is_enable, func_list=None):
    """ops.communication's switch between in-place and out-of-place forms: these functions are
    always in place (torch's shapes); accepted when it asks for that."""
    if is_enable is not True:
        raise InvalidArgument("set_comm_ops_inplace(%r): twinccl.mindspore_mint's functions are "
                              "always in place; use twinccl.mindspore for comm_func's new outputs"
                              % (is_enable,))
