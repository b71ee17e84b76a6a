"""Each rank of a twinccl.run its own process state (DESIGN.md decision 11), as each process of a
torchrun has: torch's, NumPy's and Python's random generators, os.environ (RANK, LOCAL_RANK,
WORLD_SIZE... as torchrun sets them), sys.argv, torch.distributed's default group and group tables,
and the user's module globals (_rank_modules.py).

How it works: ranks take turns running Python (the rank baton, python/src/rank_baton.h); a rank
gives the baton up only while it blocks in a TwinCCL call and when it ends. The rank that takes the
baton calls swap(leaving, arriving): every part below saves the leaving rank's value (-1: the
caller of twinccl.run) and installs the arriving rank's. A rank's first arrival installs its
initial value: the caller's (its random generators as seeded before the run; a rank environment
on top of the caller's), or, for a module imported during the run, what a fresh process would
have. A rank taking the baton back from itself swaps nothing. docs/python.md measures the cost.
"""
import contextlib
import ctypes
import os
import random
import struct
import sys
import threading
import time

from . import _twinccl

from ._rank_modules import RankModules

_FRESH = object()  # a rank's value before its first arrival: the part's initial value


class _PythonRandom:
    def __init__(self, fresh):
        self._caller = random.getstate()
        self._fresh = fresh

    def save(self):
        return random.getstate()

    def initial(self, rank):
        return random.Random().getstate() if self._fresh else self._caller

    def restore(self, value):
        random.setstate(value)


class _TorchRandom:
    """torch's default CPU generator (torch.manual_seed, torch.randn, DataLoader's shuffle)."""
    def __init__(self):
        torch = sys.modules.get("torch")
        self._caller = torch.default_generator.get_state() if torch else None

    def save(self):
        torch = sys.modules.get("torch")
        return torch.default_generator.get_state() if torch else None

    def initial(self, rank):
        return self._caller

    def restore(self, value):
        torch = sys.modules.get("torch")
        if torch is None:
            return
        if value is None:  # torch imported during the run: a fresh process's state
            value = torch.Generator().get_state()
        torch.default_generator.set_state(value)


class _NumpyRandom:
    """NumPy's global RandomState (np.random.seed, np.random.rand). Its get_state/set_state cost
    ~80 us each, so a hand-over compares a fingerprint first (the MT19937 key and position, read
    through the bit generator's ctypes address, ~2 us; see _numpy_fingerprint) and copies the full
    state only when a rank drew numbers since it was installed."""
    def __init__(self, fresh):
        self._fresh = fresh
        np = sys.modules.get("numpy")
        self._caller = self._full(np) if np else None
        self._installed = None  # (fingerprint, full state) of the state in place

    @staticmethod
    def _full(np):
        return (_numpy_fingerprint(np), np.random.get_state())

    def save(self):
        np = sys.modules.get("numpy")
        if np is None:
            return None
        if self._installed is not None and self._installed[0] is not None and \
                self._installed[0] == _numpy_fingerprint(np):
            return self._installed  # not drawn from since it was installed
        return self._full(np)

    def initial(self, rank):
        return None if self._fresh else self._caller

    def restore(self, value):
        np = sys.modules.get("numpy")
        if np is None:
            return
        if value is None:  # seeded from the OS, as in a new process
            value = (None, np.random.RandomState().get_state())
        fingerprint = _numpy_fingerprint(np)
        if fingerprint is None or fingerprint != value[0]:
            np.random.set_state(value[1])
            fingerprint = _numpy_fingerprint(np)
        self._installed = (fingerprint, value[1])


def _numpy_fingerprint(np):
    """The bytes of the global RandomState's MT19937 state (key[624], pos) and of its cached
    Gaussian (has_gauss, gauss: offsets found once by setting known values), or None where this
    NumPy's layout is not the one probed (then every hand-over copies the full state)."""
    rand = np.random.mtrand._rand
    where = _NUMPY_LAYOUT.get(id(rand))
    if where is None:
        where = _NUMPY_LAYOUT[id(rand)] = _probe_numpy_layout(np, rand)
    if where is False:
        return None
    state_address, gauss_offset = where
    return (ctypes.string_at(state_address, 624 * 4 + 4) +
            ctypes.string_at(id(rand) + gauss_offset - 8, 16))


_NUMPY_LAYOUT = {}


def _probe_numpy_layout(np, rand):
    try:
        bit_generator = rand._bit_generator
        if type(bit_generator).__name__ != "MT19937":
            return False
        state_address = bit_generator.ctypes.state_address
        saved = rand.get_state()
        size = type(rand).__basicsize__
        try:
            offsets = []
            for value in (1.2345678912345e-301, -7.5e200):
                rand.set_state(saved[:3] + (1, value))
                raw = ctypes.string_at(id(rand), size)
                offsets.append(raw.find(struct.pack("d", value)))
                has_gauss = struct.unpack_from("i", raw, offsets[-1] - 8)[0]
                if has_gauss != 1:
                    return False
            key = ctypes.string_at(state_address, 624 * 4)
            if offsets[0] < 8 or offsets[0] != offsets[1] or \
                    key != saved[1].astype("<u4").tobytes():
                return False
        finally:
            rand.set_state(saved)
        return (state_address, offsets[0])
    except Exception:  # noqa: BLE001 (any surprise: the slow, exact path)
        return False


class _Environ:
    """os.environ, compared as bytes (os.environ._data) and changed only where ranks differ."""
    def __init__(self, rank_environ):
        self._data = getattr(os.environ, "_data", None)
        self._caller = self.save()
        self._rank_environ = rank_environ

    def save(self):
        return dict(self._data) if self._data is not None else dict(os.environ)

    def initial(self, rank):
        env = dict(self._caller)
        for key, value in self._rank_environ(rank).items():
            if self._data is not None:
                env[os.environ.encodekey(key)] = os.environ.encodevalue(value)
            else:
                env[key] = value
        return env

    def restore(self, value):
        now = self._data if self._data is not None else dict(os.environ)
        changed = {key for key, _ in now.items() ^ value.items()}  # the few rank variables
        for key in changed:
            if key not in value:
                if self._data is not None:
                    os.unsetenv(key)
                    del self._data[key]
                else:
                    del os.environ[key]
            elif self._data is not None:
                os.putenv(key, value[key])
                self._data[key] = value[key]
            else:
                os.environ[key] = value[key]


class _Argv:
    def __init__(self, rank_argv):
        self._rank_argv = rank_argv

    def save(self):
        return sys.argv

    def initial(self, rank):
        return self._rank_argv(rank)

    def restore(self, value):
        sys.argv = value


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


def register_rank_global(module, attribute, fresh=_fresh_like):
    """Makes `module.attribute` one per rank in every later twinccl.run (for libraries that keep
    per-process state in a module global): a rank starts with fresh(the caller's value)."""
    LIBRARY_GLOBALS.append((module, attribute, fresh))


class _LibraryGlobals:
    def __init__(self):
        self._entries = list(LIBRARY_GLOBALS)

    def save(self):
        out = []
        for module, attribute, _ in self._entries:
            m = sys.modules.get(module)
            out.append(getattr(m, attribute, _FRESH) if m is not None else _FRESH)
        world = self._world_member()
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
        for i, (module, attribute, fresh) in enumerate(self._entries):
            m = sys.modules.get(module)
            if m is None or not hasattr(m, attribute):
                continue
            v = value[i] if value is not None else _FRESH
            setattr(m, attribute, fresh(getattr(m, attribute)) if v is _FRESH else v)
        world = self._world_member()
        if world is not None:
            v = value[-1] if value is not None else _FRESH
            v = None if v is _FRESH else v
            world.WORLD = v
            group = getattr(sys.modules["torch.distributed.distributed_c10d"], "group", None)
            if group is not None and "WORLD" in group.__dict__:
                group.WORLD = v


def torchrun_environ(rank, world_size, local_world_size=None, master_addr="127.0.0.1",
                     master_port=29500, run_id="twinccl"):
    """The variables torchrun sets in each worker's environment (torch/distributed/elastic/agent/
    server/local_elastic_agent.py), for one node of `local_world_size` ranks."""
    local = local_world_size or world_size
    return {"RANK": str(rank), "LOCAL_RANK": str(rank % local), "GROUP_RANK": str(rank // local),
            "ROLE_RANK": str(rank), "ROLE_NAME": "default", "LOCAL_WORLD_SIZE": str(local),
            "WORLD_SIZE": str(world_size), "GROUP_WORLD_SIZE": str(-(-world_size // local)),
            "ROLE_WORLD_SIZE": str(world_size), "MASTER_ADDR": master_addr,
            "MASTER_PORT": str(master_port), "TORCHELASTIC_RESTART_COUNT": "0",
            "TORCHELASTIC_MAX_RESTARTS": "0", "TORCHELASTIC_RUN_ID": run_id,
            "TORCHELASTIC_USE_AGENT_STORE": "False",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING": os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING",
                                                              "1")}


class RankStates:
    """The process state of every rank of one run; swap() is the baton's callback."""
    def __init__(self, world_size, rank_environ, rank_argv=None, fresh_random=False,
                 isolate_modules=True):
        self.world_size = world_size
        self.parts = [_PythonRandom(fresh_random), _TorchRandom(), _NumpyRandom(fresh_random),
                      _Environ(rank_environ),
                      _Argv(rank_argv or (lambda rank, argv=list(sys.argv): list(argv))),
                      _LibraryGlobals()]
        self.modules = RankModules() if isolate_modules else None
        if self.modules is not None:
            self.parts.append(self.modules)
        self._saved = {}  # rank -> [value per part]
        self.swaps = 0

    def swap(self, leaving, arriving):
        """Saves `leaving`'s state (-1: the caller's) and installs `arriving`'s. A KeyboardInterrupt
        sent into the rank meanwhile (Ctrl-C) is raised once the swap is complete."""
        self.swaps += 1
        interrupted = []
        self._saved[leaving] = [_finished(part.save, interrupted) for part in self.parts]
        saved = self._saved.pop(arriving, None)
        for i, part in enumerate(self.parts):
            value = saved[i] if saved is not None else _finished(
                lambda: part.initial(arriving), interrupted)
            _finished(lambda: part.restore(value), interrupted)
        if interrupted:
            raise interrupted[0]


def _finished(step, interrupted):
    """step(), done again if an asynchronous exception (KeyboardInterrupt) cut it; the exception
    is kept for later."""
    while True:
        try:
            return step()
        except Exception:
            raise
        except BaseException as e:  # noqa: B036 (Ctrl-C, raised after the swap)
            interrupted.append(e)


_real_sleep = time.sleep
_sleep_users = [0]
_sleep_lock = threading.Lock()


def _sleep(seconds):
    """time.sleep during a run whose ranks take turns: a rank gives its turn up while it sleeps
    (as a sleeping process lets the others run); other threads sleep as usual."""
    if _twinccl._takes_turns():
        _twinccl._sleep_off_turn(seconds)
    else:
        _real_sleep(seconds)


@contextlib.contextmanager
def sleep_gives_turn():
    """time.sleep is _sleep while a run whose ranks take turns lasts (`from time import sleep`
    bound before keeps the original: that rank keeps its turn while it sleeps)."""
    with _sleep_lock:
        _sleep_users[0] += 1
        time.sleep = _sleep
    try:
        yield
    finally:
        with _sleep_lock:
            _sleep_users[0] -= 1
            if _sleep_users[0] == 0:
                time.sleep = _real_sleep
