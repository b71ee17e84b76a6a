"""Argument checks shared by twinccl.mindspore (comm_func) and twinccl.mindspore_mint
(mint.distributed / ops.communication): reduce ops as MindSpore names them, async_op, results
handed back as (output, handle)."""
from ._twinccl import InvalidArgument
from ._reduce_op import ReduceOp as _TwinOp, reduce_op as _twin_reduce_op


class ReduceOp:
    """mindspore.ops.ReduceOp: the op names are strings."""
    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    AVG = "avg"


COMM_FUNC_OPS = ("sum", "prod", "min", "max")
MINT_OPS = ("sum", "prod", "min", "max", "avg")
_KINDS = {"sum": "sum", "prod": "prod", "min": "min", "max": "max", "avg": "avg"}


def reduce_op(op, allowed, what):
    """(kind, scalar) for the extension. MindSpore's op is a name (str); twinccl's ReduceOp values
    are accepted as well (PREMUL_SUM included)."""
    if isinstance(op, _TwinOp):
        return _twin_reduce_op(op, what)
    if not isinstance(op, str):
        raise InvalidArgument("%s: op must be a str (%s), got %r" % (what, ", ".join(allowed), op))
    if op not in allowed:
        raise InvalidArgument("%s: op=%r is not one of %s" % (what, op, ", ".join(allowed)))
    return _KINDS[op], 1.0


def async_flag(async_op, what):
    if not isinstance(async_op, bool):
        raise InvalidArgument("%s: async_op must be a bool, got %r" % (what, async_op))
    return async_op


def split_sizes(sizes, n, what):
    """A list of `n` ints >= 0, or [] for None/empty (the even split)."""
    if sizes is None:
        return []
    if not isinstance(sizes, (list, tuple)):
        raise InvalidArgument("%s must be a list of ints, got %r" % (what, sizes))
    sizes = list(sizes)
    if not sizes:
        return []
    if len(sizes) != n:
        raise InvalidArgument("%s has %d entries, the group has %d ranks" % (what, len(sizes), n))
    for i, s in enumerate(sizes):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0:
            raise InvalidArgument("%s[%d]=%r must be an int >= 0" % (what, i, s))
    return sizes


def even_rows(rows, n, what):
    if rows % n:
        raise InvalidArgument("%s: %d rows (the first dimension) do not divide by the group's %d "
                              "ranks" % (what, rows, n))
    return [rows // n] * n


def check_elements(flat, expected, what, comm, site):
    """`flat` (a 1-D view) must hold exactly `expected` elements, as the split sizes say; else
    InvalidArgument naming the call, the rank and the user's line."""
    if flat.size != expected:
        raise InvalidArgument("%s on rank %d (%s:%d): holds %d elements, the split sizes need %d"
                              % (what, comm.rank, site[0].rsplit("/", 1)[-1], site[1], flat.size,
                                 expected))
