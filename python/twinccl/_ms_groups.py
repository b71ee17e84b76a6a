"""mindspore.communication's management functions on TwinCCL's emulator: groups are names (str),
"hccl_world_group" (also "nccl_world_group", "mccl_world_group") is the world.

    init()                                  # inside twinccl.run: the world exists already
    create_group("dp", [0, 2, 4, 6])        # every rank calls it (see below)
    out, _ = twinccl.mindspore.all_reduce(x, group="dp")

create_group is collective over the world here: every rank calls it with the same rank_ids (ranks
outside rank_ids join without becoming members), because an emulated group is split from the
world. MindSpore on Ascend lets only the members call it; a script that does stops with an error
naming its create_group line (a rank that never calls it is waited for). A rank's group names
live on its own thread, as a process's would.
"""
import numbers
import threading
import zlib

from . import _twinccl
from ._twinccl import InvalidArgument
from ._groups import ProcessGroup
from ._tensors import call_site

WORLD_NAMES = ("hccl_world_group", "nccl_world_group", "mccl_world_group")
BACKENDS = ("hccl", "nccl", "mccl")
_local = threading.local()


class GlobalComm:
    """mindspore.communication.GlobalComm: the world group's name and the backend's."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = "hccl_world_group"
    INITED = False
    CHECK_ENVS = True


HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP = WORLD_NAMES


def _named():
    named = getattr(_local, "named", None)
    if named is None:
        named = _local.named = {}
    return named


def reset():
    """Forgets this thread's group names (a new rank function starts)."""
    _local.named = {}


def lookup(group, what):
    """The ProcessGroup named `group` (None for the world); a twinccl.distributed group is taken
    as it is. InvalidArgument for anything else."""
    if group is None or group in WORLD_NAMES:
        return None
    if isinstance(group, ProcessGroup):
        return group
    if not isinstance(group, str):
        raise InvalidArgument("%s: group must be a group name (str), got %r" % (what, group))
    pg = _named().get(group)
    if pg is None:
        raise InvalidArgument("%s: rank %d has no group named %r: create_group(%r, rank_ids) (or "
                              "new_group) must come first, and this rank must be a member"
                              % (what, _twinccl._world().rank, group, group))
    return pg


def comm_of(group, what):
    pg = lookup(group, what)
    return _twinccl._world() if pg is None else pg._comm


def comm_and_site(group, what):
    """(comm_of(group, what), the (file, line) of the user's call of the public function that
    calls this)."""
    site = call_site(3)
    return comm_of(group, what), site


def group_rank(group, world_rank, what):
    """The rank in `group` of world rank `world_rank` (MindSpore's src/dst/peer are world ranks)."""
    if isinstance(world_rank, bool) or not isinstance(world_rank, numbers.Integral):
        raise InvalidArgument("%s must be an int (a world rank), got %r" % (what, world_rank))
    pg = lookup(group, what)
    if pg is None:
        n = _twinccl._world().size
        if not 0 <= world_rank < n:
            raise InvalidArgument("%s=%d is out of range [0, %d)" % (what, world_rank, n))
        return int(world_rank)
    if world_rank not in pg.ranks:
        raise InvalidArgument("%s=%d is not a rank of group %r %s" % (what, world_rank, group,
                                                                      pg.ranks))
    return pg.ranks.index(world_rank)


def init(backend_name=None):
    """Inside twinccl.run the world exists: checks the name and that this is a rank thread."""
    if backend_name is not None and backend_name not in BACKENDS:
        raise InvalidArgument("init: backend_name=%r: MindSpore knows %s"
                              % (backend_name, ", ".join(BACKENDS)))
    _twinccl._world()  # InvalidArgument outside twinccl.run's ranks
    GlobalComm.INITED = True


def release():
    """The world ends with twinccl.run: accepted, no effect."""


def get_rank(group=GlobalComm.WORLD_COMM_GROUP):
    return comm_of(group, "get_rank").rank


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP):
    return comm_of(group, "get_group_size").size


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """The emulator's ranks share one host: the local rank is the rank."""
    return get_rank(group)


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP):
    return get_group_size(group)


def get_world_rank_from_group_rank(group, group_rank_id):
    if isinstance(group_rank_id, bool) or not isinstance(group_rank_id, numbers.Integral):
        raise InvalidArgument("get_world_rank_from_group_rank: group_rank_id must be an int, got "
                              "%r" % (group_rank_id,))
    pg = lookup(group, "get_world_rank_from_group_rank")
    ranks = list(range(_twinccl._world().size)) if pg is None else pg.ranks
    if not 0 <= group_rank_id < len(ranks):
        raise InvalidArgument("get_world_rank_from_group_rank: group_rank_id=%d is out of range "
                              "[0, %d) of group %r" % (group_rank_id, len(ranks), group))
    return ranks[group_rank_id]


def get_group_rank_from_world_rank(world_rank_id, group):
    return group_rank(group, world_rank_id, "get_group_rank_from_world_rank's world_rank_id")


def get_process_group_ranks(group=GlobalComm.WORLD_COMM_GROUP):
    pg = lookup(group, "get_process_group_ranks")
    return list(range(_twinccl._world().size)) if pg is None else list(pg.ranks)


def get_comm_name(group=GlobalComm.WORLD_COMM_GROUP):
    lookup(group, "get_comm_name")
    return group


def create_group(group, rank_ids, options=None):
    """Makes the group `group` of the world ranks `rank_ids`; collective over the world here."""
    make_group(group, rank_ids, call_site())


def make_group(group, rank_ids, site):
    if not isinstance(group, str) or not group:
        raise InvalidArgument("create_group: group must be a non-empty name (str), got %r"
                              % (group,))
    if group in WORLD_NAMES:
        raise InvalidArgument("create_group: %r is the world group's name" % group)
    if not isinstance(rank_ids, list):
        raise InvalidArgument("create_group(%r): rank_ids must be a list, got %r"
                              % (group, rank_ids))
    if not rank_ids:
        raise InvalidArgument("create_group(%r): rank_ids is empty" % group)
    if group in _named():
        raise InvalidArgument("create_group: rank %d already has a group named %r"
                              % (_twinccl._world().rank, group))
    world = _twinccl._world()
    members = sorted(set(int(r) for r in rank_ids if isinstance(r, numbers.Integral)))
    if len(members) != len(rank_ids) or any(isinstance(r, bool) for r in rank_ids) or \
            not all(0 <= r < world.size for r in members):
        raise InvalidArgument("create_group(%r): rank_ids=%r must be distinct ints in [0, %d)"
                              % (group, rank_ids, world.size))
    member = world.rank in members
    # Members that disagree on (name, ranks) land in different groups, caught by the size check.
    color = zlib.crc32(repr((group, members)).encode()) & 0x3FFFFFFF if member else -1
    comm = world.split(color, world.rank, group, *site)
    if comm is None:
        return
    if comm.size != len(members):
        raise InvalidArgument("create_group(%r) on rank %d: ranks disagree on the group: this rank "
                              "passed rank_ids=%s, but only %d rank(s) passed the same"
                              % (group, world.rank, members, comm.size))
    _named()[group] = ProcessGroup(comm, members)


def destroy_group(group):
    if group in WORLD_NAMES:
        raise InvalidArgument("destroy_group: the world group %r cannot be destroyed" % group)
    lookup(group, "destroy_group")
    del _named()[group]


def add(name, pg):
    """Registers `pg` under `name` (mint.distributed.new_group's generated names)."""
    _named()[name] = pg
