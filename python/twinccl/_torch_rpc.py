"""torch.distributed.rpc inside a twinccl.run(torch_distributed=True): refused at init_rpc with an
error that says why and what to run instead.

Why: RPC's TensorPipe agent meets its peers through a store inside its C++ constructor, and RPC
runs the functions it is sent on its own threads. TwinCCL's ranks are threads of one process that
take turns running Python: rank 0 blocked in that constructor holding its turn while rank 1 never
reached init_rpc, so the run stalled until timeout_s and ended with a stuck-rank message that did
not name RPC (`python -m twinccl.torchrun` on torch's own rpc_sync example). TwinCCL emulates
torch.distributed's collectives, point-to-point calls, groups and objects, not the RPC framework.

How it works: for the run, torch.distributed.rpc.init_rpc (looked up at each call) is replaced by
a function that raises InvalidArgument; the original is put back when the run ends. Names bound
before the run (`from torch.distributed.rpc import init_rpc`) are not redirected."""
import contextlib
import sys


def _refused(name, *args, **kwargs):
    rank = kwargs.get("rank", args[1] if len(args) > 1 else None)
    raise _invalid("torch.distributed.rpc.init_rpc(%r%s): RPC is not emulated by TwinCCL (its "
                   "ranks are threads of one process that take turns running Python, and RPC's "
                   "agent meets its peers in C++ and runs what it is sent on threads of its own); "
                   "run this script with torchrun's processes, or use torch.distributed's "
                   "collectives and send/recv, which TwinCCL emulates (docs/python.md)"
                   % (name, "" if rank is None else ", rank=%r" % (rank,)))


def _invalid(message):
    from ._twinccl import InvalidArgument
    return InvalidArgument(message)


@contextlib.contextmanager
def refused():
    """While the block lasts, torch.distributed.rpc.init_rpc raises InvalidArgument (when torch
    has RPC: a build without it has no init_rpc to call)."""
    rpc = sys.modules.get("torch.distributed.rpc")
    original = getattr(rpc, "init_rpc", None)
    if original is None:
        yield
        return
    rpc.init_rpc = _refused
    try:
        yield
    finally:
        rpc.init_rpc = original
