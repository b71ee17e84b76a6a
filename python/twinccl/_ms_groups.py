"""mindspore.communication's management functions on TwinCCL's emulator: groups are names (str),
"hccl_world_group" (also "nccl_world_group", "mccl_world_group") is the world.

    init()                                  # inside twinccl.run: the world exists already
    create_group("dp", [0, 2, 4, 6])        # every rank calls it (see below)
    out, _ = twinccl.mindspore.all_reduce(x, group="dp")

create_group is made by the members only, as on Ascend (HCCL) and in MindSpore's own example
(`if get_rank() in rank_ids: create_group(...)`): the emulator's Communicator::subcommunicator.
A non-member may call it too (a loop over every group): it only notes that the group exists
without it. A member that never calls it is waited for, with the deadline and a message naming
it. A rank's group names live on its own thread, as a process's would.
"""
import numbers
import os
import sys
import threading

from . import _ms_autograd, _ms_hccl_types, _twinccl
from ._twinccl import InvalidArgument
from ._groups import ProcessGroup
from ._tensors import call_site

WORLD_NAMES = ("hccl_world_group", "nccl_world_group", "mccl_world_group")
BACKENDS = ("hccl", "nccl", "mccl")
_local = threading.local()


class _InitedPerRank(type):
    """GlobalComm.INITED per rank (each rank a process: False until its own init())."""
    @property
    def INITED(cls):
        return getattr(_local, "inited", False)

    @INITED.setter
    def INITED(cls, value):
        _local.inited = bool(value)


class GlobalComm(metaclass=_InitedPerRank):
    """mindspore.communication.GlobalComm: the world group's name and the backend's; INITED
    (per rank) says whether this rank called init() / init_process_group()."""
    BACKEND = "hccl"
    WORLD_COMM_GROUP = "hccl_world_group"
    CHECK_ENVS = True


HCCL_WORLD_COMM_GROUP, NCCL_WORLD_COMM_GROUP, MCCL_WORLD_COMM_GROUP = WORLD_NAMES


def _named():
    named = getattr(_local, "named", None)
    if named is None:
        named = _local.named = {}
    return named


def _known():
    """{name: sorted world ranks} of every group this rank's create_group/new_group made, member
    or not: a repeated call with the same ranks is then a no-op on every rank, as in MindSpore."""
    known = getattr(_local, "known", None)
    if known is None:
        known = _local.known = {}
    return known


def reset():
    """Forgets this thread's group names (a new rank function starts)."""
    _local.named = {}
    _local.known = {}
    _local.inited = False


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
    if pg is None and group in _known():
        raise InvalidArgument("%s: rank %d is not a member of group %r (world ranks %s)"
                              % (what, _twinccl._world().rank, group, _known()[group]))
    if pg is None:
        raise InvalidArgument("%s: rank %d has no group named %r: create_group(%r, rank_ids) (or "
                              "new_group) must come first, and this rank must be a member"
                              % (what, _twinccl._world().rank, group, group))
    return pg


def comm_of(group, what):
    """The group's communicator, taking MindSpore's int16/uint16/complex64 too (_ms_hccl_types)."""
    pg = lookup(group, what)
    return _ms_hccl_types.wrap(_twinccl._world() if pg is None else pg._comm)


def comm_and_site(group, what):
    """(comm_of(group, what), the (file, line) of the user's call of the public function that
    calls this)."""
    site = call_site(3)
    _ms_autograd.check(what, site)
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
    mark_initialized()


def mark_initialized():
    """GlobalComm.INITED = True for this rank, and in MindSpore's own GlobalComm, which MindSpore's
    code bound at import reads (twinccl.run(mindspore=...) puts its value back at the end)."""
    GlobalComm.INITED = True
    patched = getattr(sys.modules.get("mindspore.communication"), "GlobalComm", None) is GlobalComm
    theirs = getattr(sys.modules.get("mindspore.communication._comm_helper"), "GlobalComm", None)
    if patched and theirs is not None and theirs is not GlobalComm:  # only while a run patches
        theirs.INITED = True


def release():
    """The world ends with twinccl.run: accepted, no effect."""


def get_rank(group=GlobalComm.WORLD_COMM_GROUP):
    return comm_of(group, "get_rank").rank


def get_group_size(group=GlobalComm.WORLD_COMM_GROUP):
    return comm_of(group, "get_group_size").size


def _ranks_per_node(world):
    """The launcher's --nproc-per-node (this rank's LOCAL_WORLD_SIZE, when the rank has its own
    environment: RANK is its rank); else every rank is on one host."""
    env = os.environ
    per = env.get("LOCAL_WORLD_SIZE", "")
    if env.get("RANK") == str(world.rank) and per.isdigit() and int(per) > 0 and \
            world.size % int(per) == 0:
        return int(per)
    return world.size


def _on_my_node(group, what):
    """(world ranks of `group` on this rank's node, this rank's world rank)."""
    world = _twinccl._world()
    ranks = get_process_group_ranks(group) if lookup(group, what) is not None else \
        list(range(world.size))
    per = _ranks_per_node(world)
    return [r for r in ranks if r // per == world.rank // per], world.rank


def get_local_rank(group=GlobalComm.WORLD_COMM_GROUP):
    """This rank's place among the group's ranks on its node (nodes: the launcher's --nnodes x
    --nproc-per-node; twinccl.run: one node)."""
    local, me = _on_my_node(group, "get_local_rank")
    return local.index(me)


def get_local_rank_size(group=GlobalComm.WORLD_COMM_GROUP):
    """How many of the group's ranks are on this rank's node."""
    return len(_on_my_node(group, "get_local_rank_size")[0])


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
    """Makes the group `group` of the world ranks `rank_ids` (its members call it)."""
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
    world = _twinccl._world()
    members = sorted(set(int(r) for r in rank_ids if isinstance(r, numbers.Integral)))
    if len(members) != len(rank_ids) or any(isinstance(r, bool) for r in rank_ids) or \
            not all(0 <= r < world.size for r in members):
        raise InvalidArgument("create_group(%r): rank_ids=%r must be distinct ints in [0, %d)"
                              % (group, rank_ids, world.size))
    made = _known().get(group)
    if made is not None:  # MindSpore: "group has existed" with the same ranks, else ValueError
        if made != members:
            raise InvalidArgument("create_group(%r) on rank %d: this rank made the group with "
                                  "rank_ids=%s already; now rank_ids=%s (destroy_group first)"
                                  % (group, world.rank, made, members))
        return
    if world.rank in members:
        _named()[group] = ProcessGroup(world.subcommunicator(members, group, *site), members)
    _known()[group] = members


def destroy_group(group):
    forget_group(group, "destroy_group")


def forget_group(group, what):
    """Forgets the group on this rank (a non-member forgets that it was made without it)."""
    if group in WORLD_NAMES:
        raise InvalidArgument("%s: the world group %r cannot be destroyed" % (what, group))
    if group in _known() and group not in _named():
        del _known()[group]
        return
    lookup(group, what)
    del _named()[group]
    _known().pop(group, None)


def add(name, pg):
    """Registers `pg` under `name` (mint.distributed.new_group's generated names)."""
    _named()[name] = pg
