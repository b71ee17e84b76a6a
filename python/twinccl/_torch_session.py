"""twinccl.run(..., torch_distributed=True): torch.distributed with TwinCCL as its backend, each
rank its own default group (torch 2.x; torch 1.x under the rank baton).

How it works: for the duration of the run, torch's group state is per rank (the rank baton's
swap, or _torch_world's per-thread view), and every rank starts with
`init_process_group("twinccl")` done, over an in-process HashStore and the rank's emulator
communicator. A script's own
`init_process_group("nccl" | "gloo", ...)` then finds its group made (accepted when its rank and
world size agree: the run, not the script, chooses them, as torchrun does). New groups
(`new_group`, `new_subgroups*`, DeviceMesh's dimensions) are made by their members from the
emulator's world (Communicator::subcommunicator, as torch's NCCL backend makes them with
ncclCommInitRank), so a group is the emulator's own communicator with its misuse checks and its
trace, and `new_group(..., use_local_synchronization=True)` called by the members only works as
in torch. `split_group` is answered the same way. Every backend name a script asks for means TwinCCL inside the run.
"""
import contextlib
import datetime
import functools
import inspect
import sys
import threading

import torch.distributed as tdist
import torch.distributed.distributed_c10d as c10d

from . import (_deepspeed_zero_init, _import_hook, _torch_backend, _torch_backend_names,
               _torch_checkpoint, _torch_compile, _torch_world, _twinccl, _wait_timeout)
from ._twinccl import InvalidArgument

_naming = threading.local()  # .local_sync: a member's new_group(use_local_synchronization=True)


def _group_comm(ranks, group_name):
    """The emulator communicator of the group of these global ranks (in group-rank order) for
    the calling rank, made by the members only (Communicator::subcommunicator), or None when it
    is no member."""
    world = _twinccl._world()
    ranks = [int(r) for r in ranks]
    if world.rank not in ranks:
        return None
    file, line = _torch_backend.user_site()
    name = ("group %s" % group_name)[:120]
    try:
        return world.subcommunicator(ranks, name, file, line)
    except _twinccl.MismatchError as e:
        hint = _LOCAL_SYNC_HINT if getattr(_naming, "local_sync", False) else _ORDER_HINT
        raise type(e)(str(e) + hint) from None


_ORDER_HINT = (" [torch names a group after how many groups this rank made before it "
               "(_world.group_count): every rank calls new_group for every group, in the same "
               "order, members or not (torch's rule; its own backends wait for ever here) "
               "(docs/python.md)]")
_LOCAL_SYNC_HINT = (" [with use_local_synchronization=True torch names a group after its ranks "
                    "and how many groups this rank made before it (_world.group_count in torch "
                    "2.15), which a non-member does not count: ranks that made different groups "
                    "first ask for different names, and torch's own backends wait for ever "
                    "here. Make the groups in the same order on their members, or without "
                    "use_local_synchronization on every rank (docs/python.md)]")


def _wrap_new_group_with_tag(original):
    """torch's _new_group_with_tag (behind new_group), noting use_local_synchronization=True for
    the message of members that ask for different names (a non-member gets NON_GROUP_MEMBER from
    torch at once, as in torch: only the members make the group)."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def new_group_with_tag(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        _naming.local_sync = bool(bound.arguments.get("use_local_synchronization"))
        try:
            return original(*args, **kwargs)
        finally:
            _naming.local_sync = False
    return new_group_with_tag


def _wrap_group_helper(original):
    """torch's _new_process_group_helper, with the emulator's communicator made first (by the
    members)."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def helper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        asked = bound.arguments.get("backend")
        if "backend" in bound.arguments:
            bound.arguments["backend"] = _torch_backend.BACKEND
        ranks = bound.arguments.get("global_ranks_in_group") or []
        if ranks:
            _torch_backend.set_pending(_group_comm(ranks, bound.arguments.get("group_name")))
        try:
            made = original(*bound.args, **bound.kwargs)
        finally:
            _torch_backend.set_pending(None)
        _torch_backend_names.note(made[0] if isinstance(made, tuple) else made, asked)
        return made
    return helper


def _wrap_init(original):
    """init_process_group inside the run: the rank's group exists already; a script's call is
    accepted when what it says agrees with the run."""

    @functools.wraps(original)
    def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                           store=None, group_name="", pg_options=None, device_id=None, **kwargs):
        world = _twinccl._world()
        if world_size not in (-1, None, world.size):
            raise InvalidArgument("init_process_group: world_size=%r, twinccl.run has %d ranks"
                                  % (world_size, world.size))
        if rank not in (-1, None, world.rank):
            raise InvalidArgument("init_process_group: rank=%r on the thread of rank %d"
                                  % (rank, world.rank))
        by_run = kwargs.pop("_by_twinccl_run", False)
        if c10d.is_initialized():
            # the run made the rank's group; the script's first call finds it, a second is
            # torch's error
            default = c10d._get_default_group()
            if getattr(default, "_initialised_by_script", False):
                raise ValueError("trying to initialize the default process group twice!")
            default._initialised_by_script = True
            _torch_backend_names.note(default, backend)  # get_backend() answers it
            if timeout is not None:  # the script's own (torch would check its type here)
                _wait_timeout.bound_waits(world, timeout, "init_process_group")
            return None
        extra = {} if timeout is None else {"timeout": timeout}  # torch 1.x: no None
        made = original(_torch_backend.BACKEND, store=_store[0], rank=world.rank,
                        world_size=world.size, **extra)
        c10d._get_default_group()._initialised_by_script = not by_run
        if not by_run:
            _torch_backend_names.note(c10d._get_default_group(), backend)
        return made
    return init_process_group


def _split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None,
                 group_desc=None, backend=None):
    """torch's split_group on TwinCCL: one new_group per split, in order, on every rank of the
    parent (split_ranks are ranks of the parent, their order the new group's ranks, as torch);
    this rank gets the group of its split, the others NON_GROUP_MEMBER."""
    if not split_ranks:
        raise ValueError("split_ranks cannot be None or empty")
    parent = parent_pg or c10d._get_default_group()
    parent_ranks = c10d.get_process_group_ranks(parent)
    me = tdist.get_rank()
    result = c10d.GroupMember.NON_GROUP_MEMBER
    for split in split_ranks:
        ranks = [parent_ranks[r] for r in split]
        group = tdist.new_group(ranks, timeout=timeout, group_desc=group_desc, **_unsorted())
        if me in ranks:
            result = group
    return result


def _unsorted():
    """new_group's keyword keeping the ranks' order, where this torch has it."""
    return {"sort_ranks": False} if "sort_ranks" in inspect.signature(
        c10d.new_group).parameters else {}


_store = [None]
def _no_store_barrier(original):
    """torch's store-based barrier after making a group (always in torch 1.x) would block a rank
    in the store while it holds the rank baton; the members met already when the emulator made
    the group."""
    def _store_based_barrier(*args, **kwargs):
        return None
    return _store_based_barrier


def _wrap_monitored_barrier(original):
    """torch's monitored_barrier asks for a group with a CPU backend registered in it (Gloo), which
    a TwinCCL group (a ProcessGroup subclass, CPU tensors) has not: it raised "monitored_barrier
    requires a group with a CPU-capable backend (e.g. GLOO)" in a script that had asked for gloo.
    On a TwinCCL group: torch's argument handling, then the group's monitored_barrier."""
    @functools.wraps(original)
    def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
        if c10d._rank_not_in_group(group):
            return original(group, timeout, wait_all_ranks)  # torch's warning
        group_to_use = group or c10d._get_default_group()
        if not isinstance(group_to_use, _torch_backend.TwinProcessGroup):
            return original(group, timeout, wait_all_ranks)
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
            timeout = datetime.timedelta(seconds=timeout)  # torch converts a float (warning)
        if timeout is not None:
            c10d._check_valid_timeout(timeout)
        return group_to_use.monitored_barrier(timeout, wait_all_ranks=wait_all_ranks)
    return monitored_barrier


def _wrap_flight_recorder(original):
    """torch attaches its flight recorder's hook to a group whose `_device_types` is not empty;
    its C++ asks the group's C++ name, which a TwinCCL group (a Python ProcessGroup, now saying
    it serves the CPU) has not. TwinCCL records every operation in its own trace and flight
    recorder (flight_recorder_path=), so its groups get no hook."""
    @functools.wraps(original)
    def maybe_attach_flight_recorder(pg, *args, **kwargs):
        if isinstance(pg, _torch_backend.TwinProcessGroup):
            return None
        return original(pg, *args, **kwargs)
    return maybe_attach_flight_recorder


_PATCHED = {"init_process_group": _wrap_init, "_new_process_group_helper": _wrap_group_helper,
            "_store_based_barrier": _no_store_barrier,
            "_new_group_with_tag": _wrap_new_group_with_tag,
            "monitored_barrier": _wrap_monitored_barrier,
            "_maybe_attach_flight_recorder": _wrap_flight_recorder}


@contextlib.contextmanager
def session(own_world=True, init_by_script=False):
    """Backend mode for one run; yields the wrapper of the rank function. own_world=False: the
    run's rank baton gives each rank its own distributed_c10d._world (no view needed).
    init_by_script: a rank has no default group until its script's init_process_group makes it,
    as a torchrun worker (`dist.is_initialized()` False, `get_rank()` torch's ValueError);
    else every rank starts with it made (twinccl.run(fn, torch_distributed=True))."""
    _torch_backend.register()
    if not _torch_world.install(view=own_world):
        raise InvalidArgument("this torch keeps its process groups in module globals (torch < 2)")
    _store[0] = tdist.HashStore()
    saved = {(sys, "excepthook"): sys.excepthook}  # each init_process_group chains one
    for name in ("_backend", "_default_pg_init_method"):
        if hasattr(c10d, name):
            saved[(c10d, name)] = getattr(c10d, name)
    try:
        for name, wrap in _PATCHED.items():
            if not hasattr(c10d, name):
                continue
            saved[(c10d, name)] = getattr(c10d, name)
            setattr(c10d, name, wrap(saved[(c10d, name)]))
            if hasattr(tdist, name):
                saved[(tdist, name)] = getattr(tdist, name)
                setattr(tdist, name, getattr(c10d, name))
        for module in (c10d, tdist):
            if hasattr(module, "split_group"):
                saved[(module, "split_group")] = module.split_group
                module.split_group = _split_group
        with _import_hook.during("torch._dynamo", _torch_compile.prepare_dynamo), \
                _torch_checkpoint.saves_on_rank_threads(), \
                _deepspeed_zero_init.refusing_zero_init():
            yield functools.partial(_rank_wrapper, init=not init_by_script)
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)
        _store[0] = None
        _torch_world.uninstall()


def _rank_wrapper(fn, init=True):
    def rank_main(rank):
        _torch_world.enter_rank()
        try:
            if init:
                c10d.init_process_group(_torch_backend.BACKEND, _by_twinccl_run=True)
            return fn(rank)
        except RuntimeError as e:
            typed = _typed(e)
            if typed is None:
                raise
            raise typed from e
        finally:
            _torch_world.leave_rank()
    return rank_main


_TYPES = ("AbortedError", "BackendError", "ConfigError", "DeadlockError", "InternalError",
          "InvalidArgument", "MismatchError", "ResourceError", "TimeoutError")


def _typed(error):
    """A TwinCCL error that crossed torch 1.x's autograd engine comes back as a RuntimeError
    "MismatchError: <message>\n\nAt: <frames>": the TwinCCL error again, or None."""
    if isinstance(error, _twinccl.Error):
        return None
    text = str(error)
    for name in _TYPES:
        if text.startswith(name + ": "):
            return getattr(_twinccl, name)(text[len(name) + 2:].split("\n\nAt:\n")[0])
    return None
