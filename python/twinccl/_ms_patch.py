"""twinccl.run(..., mindspore=True): unmodified MindSpore code (mindspore.communication's init,
get_rank, create_group, comm_func, mint.distributed, ops.communication) runs on the emulator.

How it works: for the duration of the run, the functions of MindSpore's communication modules are
module attributes replaced by twinccl.mindspore's (comm_func and management) and
twinccl.mindspore_mint's (mint.distributed, ops.communication): same names, signatures and
results; they find the calling thread's rank. They are restored when the run ends. Code that looks
them up at call time (`comm.init()`, `from mindspore.communication import init` executed inside the
run, as a script run per rank does) reaches the emulator; names bound before the run are not
redirected. The communication primitives (ops.AllReduce, ...) answer in PyNative mode, wherever
they were made (_ms_primitives); graph mode (jit) does not call them and is not redirected. Process-wide:
one such run at a time. Each rank starts with no named groups, as a fresh process would. Ranks
run their Python one at a time (MindSpore's ops are not thread-safe): rank_state="isolated" (the
default) takes turns with each rank's own state; with rank_state="shared" the same rank baton
(python/src/rank_baton.h) takes turns without swapping any state. MindSpore's own
GlobalComm.INITED, which init() sets, is put back too.

mindspore="on_import" (the launcher, where the script may not use MindSpore at all: importing
it costs ~4 s) patches nothing until the run's code imports mindspore (_import_hook: the modules
are patched once the package has run).
"""
import contextlib
import importlib
import importlib.util
import sys

from . import _import_hook, _ms_autograd, _ms_primitives
from ._attribute_patch import OneRunAtATime, put_back, replace
from ._twinccl import InvalidArgument

_one_run = OneRunAtATime("mindspore", "MindSpore's modules are patched")

MANAGEMENT = ["GlobalComm", "init", "release", "get_rank", "get_group_size", "get_local_rank",
              "get_local_rank_size", "get_world_rank_from_group_rank",
              "get_group_rank_from_world_rank", "create_group", "destroy_group", "get_comm_name",
              "get_process_group_ranks"]
COMM_FUNC = ["all_reduce", "all_gather_into_tensor", "all_to_all_with_output_shape",
             "all_to_all_single_with_output_shape", "barrier", "broadcast", "gather_into_tensor",
             "isend", "irecv", "reduce_scatter_tensor", "reduce", "scatter_tensor", "send", "recv",
             "P2POp", "batch_isend_irecv", "all_to_all_v_c"]
MINT = ["init_process_group", "destroy_process_group", "get_rank", "get_world_size", "new_group",
        "get_backend", "get_global_rank", "get_process_group_ranks", "get_group_rank",
        "all_reduce", "all_gather_into_tensor", "all_gather_into_tensor_uneven", "all_to_all",
        "all_to_all_single", "reduce_scatter_tensor", "reduce_scatter_tensor_uneven", "isend",
        "irecv", "send", "recv", "send_object_list", "recv_object_list", "gather", "scatter",
        "all_gather", "reduce_scatter", "barrier", "broadcast", "reduce", "P2POp",
        "batch_isend_irecv", "all_gather_object", "broadcast_object_list", "gather_object",
        "scatter_object_list", "is_available", "is_initialized", "TCPStore"]
OPS_EXTRA = ["all_to_all_v_c", "gather_into_tensor", "scatter_tensor", "set_comm_ops_inplace"]

# MindSpore module -> (our module, the names it takes from it)
TARGETS = [
    ("mindspore.communication", "mindspore", MANAGEMENT),
    ("mindspore.communication.management", "mindspore", MANAGEMENT),
    ("mindspore.communication.comm_func", "mindspore", COMM_FUNC),
    ("mindspore.mint.distributed", "mindspore_mint", MINT),
    ("mindspore.mint.distributed.distributed", "mindspore_mint", MINT),
    ("mindspore.ops.communication", "_ms_ops_comm", MINT + OPS_EXTRA),
    ("mindspore.ops.function.comm_func", "_ms_ops_comm", MINT + OPS_EXTRA),
]


def fresh_groups(fn):
    """fn as each rank runs it: starting with no named groups (a new process has none)."""
    from ._ms_groups import reset
    from ._ms_ops_comm import reset as reset_switches

    def rank_main(rank):
        reset()
        reset_switches()
        _ms_autograd.reset()
        return fn(rank)
    rank_main.__name__ = getattr(fn, "__name__", "rank_main")
    return rank_main


def msrun_environ(rank, ranks_per_node):
    """What msrun exports to each worker beside MindSpore's own cluster variables (MS_ROLE...,
    which would make MindSpore start its cluster): RANK_ID (the rank) and DEVICE_ID (the local
    rank; mindspore/parallel/cluster/process_entity/_api.py)."""
    return {"RANK_ID": str(rank), "DEVICE_ID": str(rank % ranks_per_node)}


def _check_installed():
    if importlib.util.find_spec("mindspore") is None:
        raise InvalidArgument("twinccl.run(mindspore=True) needs MindSpore (pip install "
                              "mindspore)")


def _modules():
    """[(MindSpore module, our module, names)] of the modules this MindSpore version has."""
    try:
        importlib.import_module("mindspore")
    except ImportError as e:
        raise InvalidArgument("twinccl.run(mindspore=True) needs MindSpore (pip install "
                              "mindspore): %s" % e) from None
    found = []
    for name, ours, names in TARGETS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue  # older MindSpore: no mint.distributed / ops.communication
        found.append((module, importlib.import_module("twinccl." + ours), names))
    return found


def _patch_now(saved):
    targets = _modules()
    theirs = getattr(sys.modules.get("mindspore.communication._comm_helper"), "GlobalComm", None)
    if theirs is not None:  # init() sets INITED = True in it; put back after the run
        saved.append((theirs, "INITED", theirs.__dict__.get("INITED")))
    bound = _bound_at_import()  # (before management's own names are replaced)
    replace([(module, name, getattr(ours, name)) for module, ours, names in targets
             for name in names if hasattr(ours, name)] + _ms_primitives.patches() +
            _ms_autograd.patches(), saved)
    replace(bound, saved)


def _bound_at_import():
    """[(module, name, ours)] for every name a loaded mindspore.* module bound at import to one of
    MindSpore's management functions (`from mindspore.communication.management import
    get_group_size` in mindspore.parallel._utils, which TrainOneStepCell's gradient mean divides
    by; train callbacks, dataset sharding, normalization layers...): found by identity, each
    answered by twinccl.mindspore's function of the same name. Before, these answered with
    MindSpore's own (get_group_size() == 1 in a data-parallel TrainOneStepCell: gradients summed,
    not averaged)."""
    from . import mindspore as ours
    management = sys.modules.get("mindspore.communication.management")
    if management is None:
        return []
    originals = {id(getattr(management, name)): name for name in MANAGEMENT
                 if name != "GlobalComm" and hasattr(management, name) and hasattr(ours, name)}
    found = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("mindspore"):
            continue
        for attribute, value in list(vars(module).items()):
            name = originals.get(id(value))
            if name is not None and value is getattr(management, name):
                found.append((module, attribute, getattr(ours, name)))
    return found


@contextlib.contextmanager
def patched(on_import=False):
    """MindSpore's modules answer with TwinCCL's for the length of the `with`; on_import: only
    once the code inside imports mindspore (at once if it is imported already)."""
    _check_installed()
    saved = []
    with _one_run.held():
        try:
            if on_import:
                with _import_hook.during("mindspore", lambda: _patch_now(saved)):
                    yield
            else:
                _patch_now(saved)
                yield
        finally:
            put_back(saved)
