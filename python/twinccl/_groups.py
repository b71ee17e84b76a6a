"""Process groups of twinccl.distributed: the world and new_group(ranks), ranks global as in torch."""
import numbers
import os
import threading
import zlib

from . import _this_rank, _twinccl, _wait_timeout
from ._twinccl import InvalidArgument
from ._tensors import call_site

_local = threading.local()  # per rank thread: how many groups it made


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


class ProcessGroup:
    """What new_group() returns to its members: the communicator and its global ranks."""

    def __init__(self, comm, ranks):
        self._comm = comm
        self.ranks = list(ranks)

    def rank(self):
        return self._comm.rank

    def size(self):
        return self._comm.size

    def __repr__(self):
        return "<twinccl ProcessGroup %s ranks=%s>" % (self._comm.name, self.ranks)


def resolve(group):
    """The communicator of `group` for this rank; None when the rank is not a member."""
    if group is None:
        return _twinccl._world()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if isinstance(group, ProcessGroup):
        return group._comm
    raise InvalidArgument("group: expected None (the world) or what new_group() returned, got %r"
                          % (group,))


def is_available():
    return True


def is_nccl_available():
    return False


def is_initialized():
    return _this_rank.world() is not None


def check_world_arguments(world_size, rank):
    """init_process_group's world_size and rank (-1: any) against the run's world; returns it."""
    world = _twinccl._world()
    if world_size not in (-1, world.size):
        raise InvalidArgument("init_process_group: world_size=%r, twinccl.run has %d ranks"
                              % (world_size, world.size))
    if rank not in (-1, world.rank):
        raise InvalidArgument("init_process_group: rank=%r on the thread of rank %d"
                              % (rank, world.rank))
    return world


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """Inside twinccl.run the world exists already: accepted when the arguments agree with it
    (backend names are accepted and mean TwinCCL's emulator); anything else raises."""
    world = check_world_arguments(world_size, rank)
    for name, value in (("init_method", init_method), ("store", store),
                        ("pg_options", pg_options)):
        if value is not None and not (name == "init_method" and value == "env://"):
            raise InvalidArgument("init_process_group: %s=%r is not supported inside twinccl.run "
                                  "(the world is made by twinccl.run)" % (name, value))
    if group_name:
        raise InvalidArgument("init_process_group: group_name is not supported")
    if timeout is not None:  # this rank's waits in the world's operations (_wait_timeout)
        _wait_timeout.bound_waits(world, timeout, "init_process_group")


def set_timeout(timeout, group=None):
    """torch's dist.set_timeout: this rank's later waits in the group's operations last at most
    `timeout` (a datetime.timedelta), instead of twinccl.run's timeout_s."""
    comm = resolve(group)
    if comm is None:
        raise ValueError("set_timeout: this rank is not a member of the group")
    _wait_timeout.bound_waits(comm, timeout, "set_timeout")


def destroy_process_group(group=None):
    """The world ends with twinccl.run; groups end with their rank function. Accepted, no effect."""
    resolve(group)


def get_backend(group=None):
    resolve(group)
    return "twinccl"


def get_rank(group=None):
    comm = resolve(group)
    return -1 if comm is None else comm.rank


def get_world_size(group=None):
    comm = resolve(group)
    return -1 if comm is None else comm.size


def get_group_rank(group, global_rank, what="rank"):
    """The rank in `group` of `global_rank` (torch's src/dst/peer arguments are global)."""
    if isinstance(global_rank, bool) or not isinstance(global_rank, int):
        raise InvalidArgument("%s must be an int rank, got %r" % (what, global_rank))
    if group is None:
        world = _twinccl._world().size
        if not 0 <= global_rank < world:
            raise InvalidArgument("%s=%d is out of range [0, %d)" % (what, global_rank, world))
        return global_rank
    if resolve(group) is None:
        raise InvalidArgument("%s: this rank is not a member of the group" % what)
    if global_rank not in group.ranks:
        raise InvalidArgument("%s=%d is not a rank of the group %s" % (what, global_rank,
                                                                      group.ranks))
    return group.ranks.index(global_rank)


def get_global_rank(group, group_rank):
    if group is None:
        return group_rank
    if resolve(group) is None:
        raise InvalidArgument("get_global_rank: this rank is not a member of the group")
    if not 0 <= group_rank < len(group.ranks):
        raise InvalidArgument("group_rank=%r is out of range [0, %d)" % (group_rank,
                                                                        len(group.ranks)))
    return group.ranks[group_rank]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None):
    """Collective over the world, as in torch: every rank calls it with the same ranks; members
    get a ProcessGroup (group rank = position in sorted(ranks)), the others
    GroupMember.NON_GROUP_MEMBER. With use_local_synchronization=True (torch's option) only the
    members call it: the group is made by them alone, a non-member's call returns at once."""
    site = call_site()
    if pg_options is not None:
        raise InvalidArgument("new_group: pg_options is not supported")
    if backend is not None and not isinstance(backend, str):
        raise InvalidArgument("new_group: backend must be a name or None, got %r" % (backend,))
    world = _twinccl._world()
    n = world.size
    members = list(range(n)) if ranks is None else _member_list(ranks, n)
    count = getattr(_local, "groups", 0) + 1
    _local.groups = count
    member = world.rank in members
    if use_local_synchronization:
        if not member:
            return GroupMember.NON_GROUP_MEMBER
        # Named by its ranks: members that made other groups before still agree on it.
        name = "group of ranks %s" % _shown(members)
        return _bounded(ProcessGroup(world.subcommunicator(members, name, *site), members),
                        timeout)
    # The members' color is their list's checksum: members that disagree on the list land in
    # different groups, whose size then differs from the list (torch leaves this undefined).
    color = zlib.crc32(repr(members).encode()) & 0x3FFFFFFF if member else -1
    comm = world.split(color, world.rank, "group%d" % count, *site)
    if comm is None:
        return GroupMember.NON_GROUP_MEMBER
    if comm.size != len(members):
        raise InvalidArgument("new_group on rank %d (%s:%d): ranks disagree on the group: this rank "
                              "passed ranks=%s, but only %d rank(s) passed the same list; every rank "
                              "must call new_group with the same ranks"
                              % (world.rank, os.path.basename(site[0]), site[1], _shown(members),
                                 comm.size))
    return _bounded(ProcessGroup(comm, members), timeout)


def _bounded(group, timeout):
    """new_group's timeout (None: twinccl.run's timeout_s) on its member's waits."""
    if timeout is not None:
        _wait_timeout.bound_waits(group._comm, timeout, "new_group")
    return group


def _member_list(ranks, n):
    """sorted(ranks) after checking they are distinct ints in [0, n)."""
    if isinstance(ranks, (str, bytes)) or not hasattr(ranks, "__iter__"):
        raise InvalidArgument("new_group: ranks must be a list of ranks, got %r" % (ranks,))
    members = list(ranks)
    if any(isinstance(r, bool) or not isinstance(r, numbers.Integral) for r in members):
        raise InvalidArgument("new_group: ranks=%s must be ints" % _shown(members))
    members = sorted(int(r) for r in members)
    if len(set(members)) != len(members) or any(not 0 <= r < n for r in members):
        raise InvalidArgument("new_group: ranks=%s must be distinct ranks in [0, %d)"
                              % (_shown(list(ranks)), n))
    return members


def _shown(values, limit=16):
    """repr of a list, cut after `limit` entries (a message stays short for a million ranks)."""
    if len(values) <= limit:
        return repr(values)
    return "[%s, ... (%d entries)]" % (", ".join(repr(v) for v in values[:limit]), len(values))
