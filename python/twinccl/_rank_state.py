"""Each rank of a twinccl.run its own process state (DESIGN.md decision 11), as each process of a
torchrun has: torch's, NumPy's and Python's random generators, os.environ (RANK, LOCAL_RANK,
WORLD_SIZE... as torchrun sets them), sys.argv, torch.distributed's default group and group tables,
logging's and warnings' settings (_rank_logging.py, _rank_warnings.py) and the user's module
globals (_rank_modules.py).

How it works: ranks take turns running Python (the rank baton, python/src/rank_baton.h); a rank
gives the baton up only while it blocks in a TwinCCL call and when it ends. The rank that takes the
baton calls swap(leaving, arriving): every part below saves the leaving rank's value (-1: the
caller of twinccl.run) and installs the arriving rank's. A rank's first arrival installs its
initial value: the caller's (its random generators as seeded before the run; a rank environment
on top of the caller's), or, for a module imported during the run, what a fresh process would
have. A rank taking the baton back from itself swaps nothing. docs/python.md measures the cost.
"""
import builtins
import contextlib
import os
import sys
import threading
import time

from . import _twinccl
from ._rank_globals import (LIBRARY_GLOBALS, PREIMPORTED, _LibraryGlobals,  # noqa: F401
                            _unchanged, preimport, register_rank_global)
from ._rank_objects import LibraryObjectAttributes
from ._rank_logging import RankLogging
from ._rank_modules import RankModules
from ._run_patches import RunPatch
from ._rank_random import MindSporeSeeds, NumpyRandom, PythonRandom, TorchRandom
from ._rank_warnings import RankWarnings

class _Environ:
    """os.environ, compared as bytes (os.environ._data) and changed only where ranks differ. Its
    dict's version tag says whether a rank changed it since it was installed (else save() copies
    nothing); the variables that differ between two ranks' environments are computed once per
    pair of environments. rank_environ(rank), the variables a rank's environment sets, is called
    for every rank here, on the caller's thread with the caller's environment in place: called as
    a rank starts, it read the environment of the rank before (torchrun's `OMP_NUM_THREADS=1`
    "unless set" was set for rank 0 alone: rank 1 found rank 0's)."""
    def __init__(self, rank_environ, world_size):
        self._data = getattr(os.environ, "_data", None)
        self._installed = None  # (version tags, environment) in place
        self._differences = {}  # (id(a), id(b)) -> (a, b, keys that differ)
        self._caller = self.save()
        self._rank_environs = [rank_environ(rank) for rank in range(world_size)]

    def _versions(self):
        return _twinccl._dict_versions(self._data) if self._data is not None else None

    def save(self):
        if _unchanged(self._installed, self._versions()):
            return self._installed[1]
        return dict(self._data) if self._data is not None else dict(os.environ)

    def initial(self, rank):
        env = dict(self._caller)
        for key, value in self._rank_environs[rank].items():
            if self._data is not None:
                env[os.environ.encodekey(key)] = os.environ.encodevalue(value)
            else:
                env[key] = value
        return env

    def _changed_keys(self, value):
        installed = self._installed
        if not _unchanged(installed, self._versions()):
            now = self._data if self._data is not None else dict(os.environ)
            return {key for key, _ in now.items() ^ value.items()}
        key = (id(installed[1]), id(value))
        known = self._differences.get(key)
        if known is None:
            if len(self._differences) > 1024:  # a rank that changes its environment at every step
                self._differences.clear()
            known = self._differences[key] = (
                installed[1], value, {k for k, _ in installed[1].items() ^ value.items()})
        return known[2]

    def restore(self, value):
        for key in self._changed_keys(value):  # the few rank variables
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
        self._installed = (self._versions(), value)

    def slots(self):
        return [("environ", self._data)] if self._data is not None else None


class _SysAttribute:
    """One attribute of sys, its own per rank: argv (the rank's command line), excepthook
    (torch 2.x's init_process_group wraps it to prefix "[rankN]: "), stdout and stderr (a rank
    that sends its output to os.devnull does so for itself)."""
    def __init__(self, name, initial):
        self._name, self._initial = name, initial  # initial(rank): the rank's first value

    def save(self):
        return getattr(sys, self._name)

    def initial(self, rank):
        return self._initial(rank)

    def restore(self, value):
        setattr(sys, self._name, value)

    def slots(self):
        return [("keys", sys.__dict__, (self._name,))]


class _Builtins:
    """The builtins namespace: a rank that replaces builtins.print (torchvision's reference
    scripts, DETR, DeiT, MAE silence print on ranks other than 0 that way) or adds a name replaces
    it for itself, as in its own process (shared, the last rank's print won: rank 0's output
    vanished). A rank starts with the caller's names; save() copies only when the dict's version
    tag moved since the names were installed (a rank changed one)."""
    def __init__(self):
        self._dict = builtins.__dict__
        self._installed = None  # (version tags, names) in place
        self._caller = self.save()

    def save(self):
        if _unchanged(self._installed, _twinccl._dict_versions(self._dict)):
            return self._installed[1]
        return dict(self._dict)

    def initial(self, rank):
        return self._caller

    def restore(self, value):
        d = self._dict
        for key in [k for k in d if k not in value]:
            del d[key]
        for key, v in value.items():
            if d.get(key, value) is not v:
                d[key] = v
        self._installed = (_twinccl._dict_versions(d), value)

    def slots(self):
        return [("dict", self._dict)]


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
                 isolate_modules=True, rank_streams=None):
        self.world_size = world_size
        self.parts = [PythonRandom(fresh_random), TorchRandom(), NumpyRandom(fresh_random),
                      MindSporeSeeds(fresh_random), _Environ(rank_environ, world_size),
                      _SysAttribute("argv", rank_argv or
                                    (lambda rank, argv=list(sys.argv): list(argv))),
                      _SysAttribute("excepthook", lambda rank, hook=sys.excepthook: hook),
                      # a rank's own print, and its own stdout/stderr (`sys.stdout =
                      # open(os.devnull, "w")` off rank 0), from the caller's
                      _Builtins(),
                      # (rank_streams(rank): the launcher's (stdout, stderr), _rank_output.py)
                      _SysAttribute("stdout", (lambda rank: rank_streams(rank)[0]) if rank_streams
                                    else (lambda rank, out=sys.stdout: out)),
                      _SysAttribute("stderr", (lambda rank: rank_streams(rank)[1]) if rank_streams
                                    else (lambda rank, err=sys.stderr: err)),
                      # logging's levels, handlers... (basicConfig, a rank's FileHandler) and
                      # warnings' filters (filterwarnings("ignore") off rank 0)
                      RankLogging(), RankWarnings(),
                      _LibraryGlobals(), LibraryObjectAttributes()]
        self.modules = RankModules() if isolate_modules else None
        if self.modules is not None:
            self.parts.append(self.modules)
        self._saved = {}  # rank -> [value per part]
        self.swaps = 0
        self._described = set()  # the slots described to the baton (rank_slots.h)
        self._described_at = -1  # len(sys.modules) when they were last looked for
        self._covered = True  # every part in slots (then hand-overs can skip Python)
        self._job = None  # the hand-over in progress or the last one (_HandOver)

    def swap(self, leaving, arriving, serial=None):
        """Saves `leaving`'s state (-1: the caller's) and installs `arriving`'s; returns the slots
        for the baton (_slots). An asynchronous exception (Ctrl-C, an interruption relayed into a
        rank) can cut it anywhere, between any two bytecodes: the baton then calls it again with
        the same `serial` (rank_baton.cc) and it goes on from the step it had reached (a step
        cut is done again: saving a part's value, or installing one, twice is harmless), until
        it completes; the baton raises the first such exception after. A different serial (or
        None: a direct call) starts a new hand-over."""
        job = self._job
        if serial is None or job is None or job.serial != serial:
            job = _HandOver(serial, self._saved.get(arriving))
            self._commit_slots()  # the baton has the previous hand-over's slots
            self._job = job
        if not job.counted:
            self.swaps += 1
            if leaving == -1:
                preimport()  # the caller's state is in place: no rank's group gets bound
            job.counted = True
        parts = self.parts
        while len(job.saved) < len(parts):
            job.saved.append(parts[len(job.saved)].save())
        self._saved[leaving] = job.saved
        while job.installed < len(parts):
            i = job.installed
            if len(job.targets) == i:
                job.targets.append(job.arriving[i] if job.arriving is not None
                                   else parts[i].initial(arriving))
            parts[i].restore(job.targets[i])
            job.installed = i + 1
        self._saved.pop(arriving, None)
        if job.slots is None:
            job.slots = self._slots()
        return job.slots[0]

    def _commit_slots(self):
        """What the last hand-over's _slots() described is known to the baton now."""
        job = self._job
        if job is not None and job.slots is not None:
            _, described, described_at, covered = job.slots
            self._described |= described
            self._described_at, self._covered = described_at, covered
            job.slots = None

    def _slots(self):
        """For the baton (rank_slots.h): ((whether the whole state is in slots, the slots not
        described before), then what _commit_slots records once the baton has them). Looked for
        again when a module was imported (a generator, a library module of LIBRARY_GLOBALS may
        have come)."""
        new, described = [], set()
        described_at, covered = self._described_at, self._covered
        if len(sys.modules) != described_at:
            described_at = len(sys.modules)
            covered = True
            for part in self.parts:
                if part is self.modules:
                    continue
                slots = part.slots()
                if slots is None:
                    covered = False
                    continue
                for slot in slots:
                    key = (slot[0], id(slot[1]) if slot[0] != "memory" else slot[1]) + slot[2:3]
                    if key not in self._described and key not in described:
                        described.add(key)
                        new.append(slot)
        spec_covered = covered
        if self.modules is not None:
            slots = self.modules.slots(self._saved.values())
            if slots is None:
                spec_covered = False
            else:
                for slot in slots:
                    key = (slot[0], id(slot[1])) + slot[2:3]
                    if key not in self._described and key not in described:
                        described.add(key)
                        new.append(slot)
        return ((spec_covered, new), described, described_at, covered)


class _HandOver:
    """One hand-over in progress (RankStates.swap): how far it got."""
    __slots__ = ("serial", "arriving", "counted", "saved", "targets", "installed", "slots")

    def __init__(self, serial, arriving):
        self.serial = serial
        self.arriving = arriving  # the arriving rank's saved values (None: its initial ones)
        self.counted = False
        self.saved, self.targets, self.installed = [], [], 0
        self.slots = None


_isolated_runs = [0]


@contextlib.contextmanager
def one_isolated_run():
    """Runs whose ranks take turns swap the same process state: one at a time, except a run nested
    in a rank of the active one (that rank keeps its turn while the nested run lasts)."""
    with _isolated_runs_lock:
        if _isolated_runs[0] and not _twinccl._takes_turns():
            raise _twinccl.InvalidArgument(
                "twinccl.run(rank_state=\"isolated\"): another such run is in progress on another "
                "thread, and both would swap the same process state (random generators, "
                "os.environ, module globals); run them one after the other, or pass "
                "rank_state=\"shared\"")
        _isolated_runs[0] += 1
    try:
        yield
    finally:
        with _isolated_runs_lock:
            _isolated_runs[0] -= 1


_real_sleep = time.sleep
_isolated_runs_lock = threading.Lock()


def _sleep(seconds):
    """time.sleep during a run whose ranks take turns: a rank gives its turn up while it sleeps
    (as a sleeping process lets the others run); other threads sleep as usual."""
    if _twinccl._takes_turns():
        _twinccl._sleep_off_turn(seconds)
    else:
        _real_sleep(seconds)


_sleep_patch = RunPatch(time, {"sleep": _sleep})


def sleep_gives_turn():
    """time.sleep is _sleep while a run whose ranks take turns lasts (`from time import sleep`
    bound before keeps the original: that rank keeps its turn while it sleeps)."""
    return _sleep_patch.during_run()
