"""Each emulated rank its own torch.distributed world (default group, group maps, group count).

How it works: torch 2.x keeps the state of its process groups in one object,
`torch.distributed.distributed_c10d._world` (a `_World`), looked up by name at every use. Under
torchrun every process has its own; with ranks as threads of one process they would share it
(rank 1's `init_process_group` would find rank 0's default group). While a
`twinccl.run(torch_distributed=True)` lasts, `_world` is replaced by a view that forwards every
attribute to the calling thread's own `_RankWorld` (the rank threads) or to the original `_World`
(every other thread, so the caller's own process groups stay as they were). torch's C++ registry
of group names (functional collectives look groups up there) is made per thread too
(`_set_thread_isolation_mode`), as torch's threaded test groups do.

When the per-rank process state (the rank baton) swaps `_world` at each hand-over, this view is
one more layer that it can keep or drop.
"""
import sys
import threading

_local = threading.local()


class _GroupDict(dict):
    """A map keyed by process group that finds a group bound on another rank as this rank's group
    of the same name (TwinProcessGroup.here)."""

    @staticmethod
    def _mine(key):
        here = getattr(key, "here", None)
        if here is None:
            return key
        try:
            return here()
        except Exception:  # noqa: BLE001  (not a group of this rank: the key as it is)
            return key

    def __getitem__(self, key):
        if not dict.__contains__(self, key):
            key = self._mine(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key):
        return dict.__contains__(self, key) or dict.__contains__(self, self._mine(key))

    def get(self, key, default=None):
        return self[key] if key in self else default


class _RankWorld:
    """The fields of torch's _World, held by one rank (torch's _World keeps most of them in module
    globals, which is why it cannot simply be instantiated per rank)."""

    def __init__(self):
        self.default_pg = None
        self.pg_map = _GroupDict()
        self.pg_names = _GroupDict()
        self.pg_group_ranks = _GroupDict()
        self.pg_backend_config = _GroupDict()
        self.group_count = 0
        self.tags_to_pg = {}
        self.pg_to_tag = _GroupDict()
        self.pg_coalesce_state = _GroupDict()
        self.pg_flight_recorder_hooks = {}
        self.comms = []


class _WorldView:
    """Stands in for distributed_c10d._world: the rank thread's _RankWorld, or the original."""

    def __init__(self, original, world_class):
        object.__setattr__(self, "_original", original)
        object.__setattr__(self, "_world_class", world_class)

    def _target(self):
        own = getattr(_local, "world", None)
        return own if own is not None else object.__getattribute__(self, "_original")

    def __getattr__(self, name):
        target = self._target()
        if isinstance(target, _RankWorld) and not hasattr(target, name):
            # Derived properties of _World (pg_config_info) computed from this rank's fields.
            prop = getattr(object.__getattribute__(self, "_world_class"), name, None)
            if isinstance(prop, property):
                return prop.fget(target)
        return getattr(target, name)

    def __setattr__(self, name, value):
        setattr(self._target(), name, value)


_install_lock = threading.Lock()
_installed = [0, None, None]  # runs using the view, the original _world, the old isolation mode
_GROUP_GLOBALS = ("_pg_map", "_pg_names", "_pg_group_ranks", "_pg_backend_config", "_pg_to_tag")
_saved_globals = {}


def install(view=True):
    """Makes torch's group-name registry per thread and, with `view`, puts the per-rank view of
    _world in place (nested runs share it; without it, the rank baton swaps _world itself).
    Returns False where a view is asked of a torch that keeps its groups in plain module
    globals (torch 1.x: only the baton can give each rank its own)."""
    import torch
    import torch.distributed.distributed_c10d as c10d
    torch2 = hasattr(c10d, "_World") and hasattr(c10d, "_world")
    if view and not torch2:
        return False
    with _install_lock:
        if _installed[0] == 0:
            isolate = getattr(torch._C._distributed_c10d, "_set_thread_isolation_mode", None)
            if isolate is not None:
                isolate(True)
            _installed[2] = isolate
            if view:
                _installed[1] = c10d._world
                c10d._world = _WorldView(c10d._world, c10d._World)
            else:  # the baton makes fresh ones per rank of the same type: _GroupDicts too
                for name in _GROUP_GLOBALS:
                    if isinstance(getattr(c10d, name, None), dict):
                        _saved_globals[name] = getattr(c10d, name)
                        setattr(c10d, name, _GroupDict(_saved_globals[name]))
        if view or _installed[0]:
            _installed[0] += 1
    return True


def uninstall():
    import torch.distributed.distributed_c10d as c10d
    with _install_lock:
        if _installed[0] == 0:  # installed without the view
            if _installed[2] is not None:
                _installed[2](False)
            _installed[2] = None
            for name, value in _saved_globals.items():
                setattr(c10d, name, value)
            _saved_globals.clear()
            return
        _installed[0] -= 1
        if _installed[0] == 0:
            c10d._world = _installed[1]
            if _installed[2] is not None:
                _installed[2](False)
            _installed[1] = _installed[2] = None


def current():
    """The calling rank's world: its _RankWorld under the view; without the view (a run whose
    rank baton swaps distributed_c10d._world itself at each hand-over) the _world in place."""
    own = getattr(_local, "world", None)
    if own is not None or _installed[0]:
        return own
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    return getattr(c10d, "_world", None)


def enter_rank():
    """The calling thread (a rank) gets an empty world of its own (under the view)."""
    if _installed[0]:
        _local.world = _RankWorld()


def leave_rank():
    """Drops the rank's world (its groups, their stores and hooks) while the thread still runs:
    Python objects left in thread-local storage at thread exit are not safe to free there."""
    world = getattr(_local, "world", None)
    _local.world = None
    if world is not None:
        for field in list(vars(world)):
            value = getattr(world, field)
            if hasattr(value, "clear"):
                value.clear()
        world.default_pg = None
