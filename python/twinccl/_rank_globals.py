"""The module globals of libraries that are one per process (a part of _rank_state.RankStates):
torch.distributed's default group and group tables, DeviceMesh's mesh stack, DTensor's random-state
tracker, and what register_rank_global adds. Each rank has its own values; a rank's first arrival
installs fresh ones (a fresh process has none initialised)."""
import importlib
import sys

from . import _twinccl

_FRESH = object()  # a rank's value before its first arrival: the part's initial value


def _unchanged(installed, versions):
    """Whether the state in place is still the one a part installed (installed: (dict versions
    then, value); versions now). None: this CPython has no version tags (always copy)."""
    return installed is not None and versions is not None and installed[0] == versions


# Module globals of libraries that are one per process: (module, attribute, fresh value). A rank's
# first arrival installs fresh(old value). torch.distributed keeps its default group and its group
# tables in distributed_c10d's globals (torch 1.13: also GroupMember.WORLD); DeviceMesh its mesh
# stack; DTensor its random-state tracker.
def _fresh_like(old):
    if isinstance(old, (dict, list, set)):
        return type(old)()
    if old is None:
        return None
    if isinstance(old, bool):
        return False
    if isinstance(old, int):
        return 0
    if isinstance(old, str):  # distributed_c10d._backend: torch 1.13's Backend.UNDEFINED
        return "undefined" if old == "undefined" else None
    return type(old)()  # _World(), _MeshEnv()


LIBRARY_GLOBALS = [
    ("torch.distributed.distributed_c10d", name, _fresh_like)
    for name in ("_world", "_pg_map", "_pg_names", "_pg_group_ranks", "_pg_backend_config",
                 "_group_count", "_tags_to_pg", "_pg_to_tag", "_backend",
                 "_default_pg_init_method")
] + [
    ("torch.distributed.device_mesh", "_mesh_resources", _fresh_like),
    ("torch.distributed.tensor._random", "_rng_tracker", lambda old: None),
]


# multiprocessing's fork server: one per process, started with the environment of the first
# process to need it, and every "forkserver" child (a DataLoader worker with
# multiprocessing_context="forkserver", Python 3.14's default) is forked from it. One per rank, as
# under torchrun: before, every rank's workers were forked from the first rank's server and read
# its RANK and LOCAL_RANK. A rank's first arrival makes a new ForkServer, then binds the module's
# functions (bound methods of the server, made at import) to it; restore() installs the
# attributes in this order.
def _fresh_fork_server(old):
    return type(old)()


def _bound_to_rank_fork_server(old):
    return getattr(sys.modules["multiprocessing.forkserver"]._forkserver, old.__name__)


LIBRARY_GLOBALS += [("multiprocessing.forkserver", "_forkserver", _fresh_fork_server)] + [
    ("multiprocessing.forkserver", name, _bound_to_rank_fork_server)
    for name in ("ensure_running", "get_inherited_fds", "connect_to_new_process",
                 "set_forkserver_preload")]


def register_rank_global(module, attribute, fresh=_fresh_like):
    """Makes `module.attribute` one per rank in every later twinccl.run (for libraries that keep
    per-process state in a module global): a rank starts with fresh(the caller's value)."""
    LIBRARY_GLOBALS.append((module, attribute, fresh))


# Library modules that bind process-group state when imported: imported by the caller, before any
# rank has a default group. torch.distributed.nn.functional's collectives take
# `group=group.WORLD` as a default argument; DistributedDataParallel imports it lazily, so the
# first rank to build one bound its own group into every rank's (and every later run's) calls.
PREIMPORTED = ["torch.distributed.nn.functional"]


def preimport():
    """PREIMPORTED, where torch.distributed is in use (called with the caller's state in place)."""
    if "torch.distributed" in sys.modules:
        for module in PREIMPORTED:
            try:
                importlib.import_module(module)
            except ImportError:
                pass


class _LibraryGlobals:
    """LIBRARY_GLOBALS. save() reads nothing when the modules' dicts (and torch 1.13's
    GroupMember) kept the version tags they had when the rank's values were installed."""
    def __init__(self):
        by_module = {}
        for module, attribute, fresh in LIBRARY_GLOBALS:
            by_module.setdefault(module, []).append((attribute, fresh))
        self._modules = list(by_module.items())
        self._installed = None  # (version tags, value) in place

    def _versions(self, world):
        group = None
        if world is not None:
            group = getattr(sys.modules["torch.distributed.distributed_c10d"], "group", None)
        return _twinccl._dict_versions(world, group,
                                       *[sys.modules.get(module) for module, _ in self._modules])

    def save(self):
        world = self._world_member()
        if _unchanged(self._installed, self._versions(world)):
            return self._installed[1]
        out = []
        for module, attributes in self._modules:  # per module: {attribute: value} of those set
            m = sys.modules.get(module)
            d = getattr(m, "__dict__", None)
            out.append(None if d is None else
                       {attribute: d[attribute] for attribute, _ in attributes if attribute in d})
        out.append(world.__dict__.get("WORLD", _FRESH) if world is not None else _FRESH)
        return out

    @staticmethod
    def _world_member():
        """torch 1.13's GroupMember and group keep WORLD as a class attribute (2.x: a property
        over _world, swapped above)."""
        c10d = sys.modules.get("torch.distributed.distributed_c10d")
        member = getattr(c10d, "GroupMember", None)
        if member is None or isinstance(type(member).__dict__.get("WORLD"), property):
            return None
        return member

    def initial(self, rank):
        return None

    def restore(self, value):
        world = self._world_member()
        self._installed = None
        exact = value is not None  # the values in place are `value`'s (no fresh one made)
        for i, (module, attributes) in enumerate(self._modules):
            m = sys.modules.get(module)
            if m is None:
                continue
            values = value[i] if value is not None else None
            if values is not None and len(values) == len(attributes):
                m.__dict__.update(values)  # every attribute saved: one call
                continue
            for attribute, fresh in attributes:
                v = values.get(attribute, _FRESH) if values is not None else _FRESH
                if v is _FRESH:
                    if not hasattr(m, attribute):
                        continue
                    v = fresh(getattr(m, attribute))
                    exact = False
                setattr(m, attribute, v)
        if world is not None:
            v = value[-1] if value is not None else _FRESH
            v = None if v is _FRESH else v
            world.WORLD = v
            group = getattr(sys.modules["torch.distributed.distributed_c10d"], "group", None)
            if group is not None and "WORLD" in group.__dict__:
                group.WORLD = v
        if exact:
            self._installed = (self._versions(world), value)

    def slots(self):
        """The attributes of the modules imported so far (torch 1.13: and WORLD of GroupMember
        and group, class attributes)."""
        out = [("keys", sys.modules[module].__dict__, tuple(a for a, _ in attributes))
               for module, attributes in self._modules if module in sys.modules]
        world = self._world_member()
        if world is not None:
            out.append(("attributes", world, ("WORLD",)))
            group = getattr(sys.modules["torch.distributed.distributed_c10d"], "group", None)
            if group is not None and "WORLD" in group.__dict__:
                out.append(("attributes", group, ("WORLD",)))
        return out
