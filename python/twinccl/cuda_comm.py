"""torch.cuda.comm.scatter's chunk semantics, one chunk per emulated rank.

    import twinccl.cuda_comm as comm
    mine = comm.scatter(x, chunk_sizes=[3, 7], dim=0, src=0)   # rank r gets chunk r of x

torch.cuda.comm.scatter(tensor, devices, chunk_sizes, dim) cuts one tensor into chunks along
`dim` (chunk_sizes summing to tensor.shape[dim]; None = torch.chunk's even sizes) and sends
chunk i to device i. Here chunk r goes to rank r of `group`: every rank calls scatter with a tensor
of the full shape and type (its contents are read at `src` only) and gets its own chunk, written
to `out` when given (it must hold exactly the chunk) or to a new tensor. devices and streams have
no meaning on the emulator and are refused.
"""
from ._twinccl import InvalidArgument
from ._groups import get_group_rank, resolve
from ._tensors import array, call_site
from .mindspore import _like


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, src=0, group=None,
            out=None):
    site = call_site()
    if devices is not None or streams is not None:
        raise InvalidArgument("scatter: devices and streams are not supported (chunk r goes to "
                              "rank r)")
    comm = resolve(group)
    if comm is None:
        raise InvalidArgument("scatter: this rank is not a member of the group")
    v, t = array(tensor, "scatter's tensor")
    shape = [int(s) for s in v.shape]
    if isinstance(dim, bool) or not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
        raise InvalidArgument("scatter: dim=%r for a tensor of %d dimensions" % (dim, len(shape)))
    dim %= len(shape)
    sizes = [] if chunk_sizes is None else [int(s) for s in chunk_sizes]
    if any(s < 0 for s in sizes):
        raise InvalidArgument("scatter: chunk_sizes=%r must be >= 0" % (chunk_sizes,))
    o = None
    if out is not None:
        o, t2 = array(out, "scatter's out")
        if t2 != t:
            raise InvalidArgument("scatter: out is %s, the tensor is %s" % (t2, t))
    root = get_group_rank(group, src, "scatter's src")
    flat = comm.scatter_chunks(v, t, shape, sizes, dim, root, o, *site)
    if out is not None:
        return out
    if not sizes:
        each = -(-shape[dim] // comm.size)
        sizes = [max(0, min(each, shape[dim] - each * r)) for r in range(comm.size)]
    mine = list(shape)
    mine[dim] = sizes[comm.rank]
    return _like(tensor, flat, tuple(mine), t)
