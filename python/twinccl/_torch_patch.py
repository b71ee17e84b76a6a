"""twinccl.run(..., torch_distributed=True): unmodified torch.distributed code on the emulator.

TwinCCL is torch's backend (_torch_session: every caller, torch's C++ included, reaches the
emulator) on torch 2.x, and on torch 1.x when the rank baton gives each rank its own module
globals (rank_state="isolated", the default). On torch 1.x with rank_state="shared", whose
process groups would live in module globals shared by the rank threads, the public functions are
replaced instead.

How the function patch works: torch.distributed's public functions are module attributes looked
up at each call (`dist.all_reduce(x)`), so they are replaced by twinccl.distributed's (same names,
signatures and semantics; they find the calling thread's rank) and restored when the run ends.
Names bound before the run (`from torch.distributed import all_reduce`) and torch's C++ users of
process groups (DDP) are not redirected (docs/python.md). Process-wide: one run at a time.
"""
import contextlib

from ._attribute_patch import OneRunAtATime, put_back, replace
from ._twinccl import InvalidArgument

_one_run = OneRunAtATime("torch_distributed", "torch.distributed is patched")

NAMES = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
         "_all_gather_base", "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base",
         "all_to_all", "all_to_all_single", "gather", "scatter", "send", "recv", "isend", "irecv",
         "P2POp", "batch_isend_irecv", "barrier", "new_group", "get_rank", "get_world_size",
         "is_initialized", "init_process_group", "destroy_process_group", "get_backend",
         "get_global_rank", "all_gather_object", "broadcast_object_list", "gather_object",
         "scatter_object_list"]


def backend_mode(own_world):
    """True where TwinCCL can be torch's backend with a world per rank: torch 2.x (a per-thread
    view of its _World, or the rank baton's swap), or torch 1.x under the rank baton (which
    swaps its group globals). TWINCCL_TORCH_PATCH=1 forces the function patch."""
    import os
    import torch.distributed.distributed_c10d as c10d
    if os.environ.get("TWINCCL_TORCH_PATCH") == "1":
        return False
    return not own_world or (hasattr(c10d, "_World") and hasattr(c10d, "_world"))


@contextlib.contextmanager
def patched(own_world=True, init_by_script=False):
    """For one run: yields the wrapper of the rank function. own_world=False where the run's
    rank baton swaps torch.distributed's globals per rank itself; init_by_script: the rank's
    default group is made by its own init_process_group (the launcher's scripts), not before."""
    try:
        import torch.distributed as tdist
    except ImportError as e:
        raise InvalidArgument("twinccl.run(torch_distributed=True) needs torch (python3-torch): "
                              "%s" % e) from None
    from . import _torch_rpc
    with _one_run.held(), _torch_rpc.refused():
        if backend_mode(own_world):
            from ._torch_session import session
            with session(own_world, init_by_script) as wrap:
                yield wrap
        else:
            with _functions_patched(tdist):
                yield lambda fn: fn


@contextlib.contextmanager
def _functions_patched(tdist):
    from . import distributed as ours
    saved = []
    try:
        replace([(tdist, name, getattr(ours, name)) for name in NAMES if hasattr(ours, name)],
                saved)
        yield
    finally:
        put_back(saved)


