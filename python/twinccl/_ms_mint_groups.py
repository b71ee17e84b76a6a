"""mindspore.mint.distributed's (and mindspore.ops.communication's) process-group functions and
object collectives for twinccl.mindspore_mint: torch's names, MindSpore's conventions (a group is
a name; new_group returns "hccl_<size>_<sha1 of the ranks>"; the world is "hccl_world_group")."""
import hashlib
import pickle
import warnings

import numpy as np

from . import _groups
from . import _objects
from ._ms_groups import (GlobalComm, WORLD_NAMES, comm_of, forget_group,
                         get_world_rank_from_group_rank, group_rank, lookup, make_group,
                         mark_initialized, _named)
from ._ms_groups import get_process_group_ranks as _group_ranks
from ._tensors import call_site
from ._twinccl import InvalidArgument


class TCPStore:
    """mint.distributed.TCPStore: refused inside a run. The emulated ranks meet without a store
    (init_process_group() with no store/init_method), and a store's blocking get() would wait
    in Python while holding the rank's turn."""

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=None,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None,
                 use_libuv=True):
        raise InvalidArgument("TCPStore(%r, %r): not provided under TwinCCL: the emulated ranks "
                              "meet without a store; call init_process_group() without "
                              "store/init_method (docs/python.md)" % (host_name, port))


def is_available():
    return True


def is_initialized():
    """Whether this rank called init_process_group() or init() (MindSpore: its collective
    manager's state; False before, as in a new process)."""
    return bool(GlobalComm.INITED) and _groups.is_initialized()


def init_process_group(backend="hccl", init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Inside twinccl.run the world exists: accepted when the arguments agree with it."""
    if backend not in ("hccl", "mccl"):
        raise InvalidArgument("init_process_group: backend=%r (MindSpore takes 'hccl')" % (backend,))
    _groups.check_world_arguments(world_size, rank)
    if init_method is not None or store is not None:
        raise InvalidArgument("init_process_group: init_method/store are not supported inside "
                              "twinccl.run (the world is made by twinccl.run)")
    mark_initialized()


def destroy_process_group(group=None):
    """The world ends with twinccl.run; a named group is forgotten ("", new_group's answer to a
    non-member, is accepted)."""
    if group is None or group in WORLD_NAMES or group == "":
        return
    forget_group(group, "destroy_process_group")


def _member_comm(group, what):
    """The group's communicator, or None (with a warning, as MindSpore logs one) off the group."""
    try:
        return comm_of(group, what)
    except InvalidArgument as e:
        if not isinstance(group, str):
            raise
        warnings.warn(str(e))
        return None


def get_rank(group=None):
    comm = _member_comm(group, "get_rank")
    return -1 if comm is None else comm.rank


def get_world_size(group=None):
    comm = _member_comm(group, "get_world_size")
    return -1 if comm is None else comm.size


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None):
    """Members get the group's name, a non-member that calls it ''; made by the members only
    (timeout, pg_options, use_local_synchronization and group_desc are reserved in MindSpore)."""
    site = call_site()
    if ranks is None:
        return GlobalComm.WORLD_COMM_GROUP
    if not isinstance(ranks, list):
        raise InvalidArgument("new_group: ranks must be a list, got %r" % (ranks,))
    backend = "hccl" if backend is None else backend
    if backend not in ("hccl", "mccl"):
        raise InvalidArgument("new_group: backend must be 'hccl' or 'mccl', got %r" % (backend,))
    members = sorted(ranks)
    name = "%s_%d_%s" % (backend, len(members),
                         hashlib.sha1("_".join(map(str, members)).encode()).hexdigest())
    make_group(name, members, site)  # a repeated call: no-op (MindSpore reuses the group)
    return name if name in _named() else ""


def get_process_group_ranks(group=None):
    return _group_ranks(group)


def get_backend(group=None):
    if group is not None and "mccl" in str(group):
        return "mccl"
    return "hccl"


def get_global_rank(group, group_rank):
    return get_world_rank_from_group_rank(group or GlobalComm.WORLD_COMM_GROUP, group_rank)


def get_group_rank(group, global_rank):
    return group_rank(group, global_rank, "get_group_rank's global_rank")


def _pg(group):
    return lookup(group, "object collective")


def all_gather_object(object_list, obj, group=None):
    return _objects.all_gather_object(object_list, obj, _pg(group))


def broadcast_object_list(object_list, src=0, group=None, device=None):
    if not isinstance(object_list, list) or not object_list:
        raise InvalidArgument("broadcast_object_list: object_list must be a non-empty list (as "
                              "MindSpore), got %r" % (object_list,))
    return _objects.broadcast_object_list(object_list, src, _pg(group), device)


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    return _objects.gather_object(obj, object_gather_list, dst, _pg(group))


def scatter_object_list(scatter_object_output_list, scatter_object_input_list, src=0, group=None):
    return _objects.scatter_object_list(scatter_object_output_list, scatter_object_input_list,
                                        src, _pg(group))


def send_object_list(object_list, dst, group=None, device=None):
    """Pickled objects to world rank `dst` (sizes, then bytes), as MindSpore does; returns None."""
    site = call_site()
    if not isinstance(object_list, list):
        raise InvalidArgument("send_object_list: object_list must be a list")
    comm = comm_of(group, "send_object_list")
    peer = group_rank(group, dst, "send_object_list's dst")
    blobs = [np.frombuffer(pickle.dumps(o), dtype=np.uint8) for o in object_list]
    sizes = np.array([b.size for b in blobs], dtype=np.int64)
    comm.send(sizes, "int64", peer, False, *site)
    comm.send(np.concatenate(blobs) if blobs else np.zeros(0, np.uint8), "uint8", peer, False,
              *site)


def recv_object_list(object_list, src=0, group=None, device=None):
    """Fills object_list with what world rank `src` sent by send_object_list; returns 0."""
    site = call_site()
    if not isinstance(object_list, list):
        raise InvalidArgument("recv_object_list: object_list must be a list")
    comm = comm_of(group, "recv_object_list")
    peer = group_rank(group, src, "recv_object_list's src")
    sizes = np.zeros(len(object_list), dtype=np.int64)
    comm.recv(sizes, "int64", peer, False, *site)
    data = np.zeros(int(sizes.sum()), dtype=np.uint8)
    comm.recv(data, "uint8", peer, False, *site)
    first = 0
    for i, n in enumerate(sizes):
        object_list[i] = pickle.loads(data[first:first + int(n)].tobytes())
        first += int(n)
    return 0
