"""TwinCCL for Python: run torch.distributed-style code on emulated ranks (threads), with NCCL's
exact results, typed errors naming your Python lines, and simulated time on a topology.

    import twinccl, torch
    import twinccl.distributed as dist

    def step(rank):
        x = torch.full((1024,), float(rank + 1))
        dist.all_reduce(x)
    report = twinccl.run(step, world_size=8, topology="dgx-h100")
    print(report)

See docs/python.md.
"""
import contextlib
import numbers

from ._twinccl import (  # noqa: F401  (the public names)
    AbortedError,
    BackendError,
    ConfigError,
    DeadlockError,
    Error,
    InternalError,
    InvalidArgument,
    MismatchError,
    ResourceError,
    TimeoutError,
    Trace,
    Work,
)
from . import _twinccl
from ._report import Report
from ._run_args import rank_function, run_arguments
from ._version import __version__  # noqa: F401  (CMakeLists.txt's project(VERSION))

__all__ = ["run", "compute", "Report", "Trace", "Work", "Error", "InvalidArgument",
           "MismatchError", "TimeoutError", "AbortedError", "DeadlockError", "BackendError",
           "ResourceError", "ConfigError", "InternalError"]


def _turns_only(leaving, arriving, serial=0):
    """The rank baton's swap where ranks take turns with one shared state (mindspore=True with
    rank_state="shared"): nothing to swap."""
    return None


def run(fn, world_size=8, topology=None, check=1, timeout_s=300.0, trace_path=None,
        algorithm=None, timeline_path=None, torch_distributed=False, rank_state="isolated",
        mindspore=False, cuda_on_cpu=False, _rank_states=None, _torch_init_by_script=False,
        _exit_if_stuck=False, **emulator_options):
    """Runs fn(rank) on `world_size` emulated ranks, each an OS thread of this process.

    Inside fn, twinccl.distributed (torch.distributed's functions) talks to the other ranks. The
    GIL is released in every collective and wait, so ranks run concurrently and a rank that never
    joins is reported (DeadlockError, or TimeoutError after timeout_s) instead of hanging.
    The first rank's exception is raised here (noted with its rank); the other ranks get
    AbortedError. A bad argument raises InvalidArgument (type) or ConfigError (value).

    topology: a preset ("dgx-h100", "h100-cluster-2", ... see `twinccl topo list`) or a topology
        file. The run is recorded and replayed on it: returns a Report (simulated time per rank
        and operation, overlap, busiest links; print it). Without: returns None.
    trace_path: also save the recorded trace for `twinccl replay PATH --topology X`.
    timeline_path: with a topology, write the Perfetto timeline of the simulated run.
    torch_distributed: for the duration of the run, torch.distributed's functions are
        twinccl.distributed's, so unmodified `torch.distributed.all_reduce(x)` code runs on the
        emulator (process-wide; one such run at a time; see docs/python.md).
    mindspore: for the duration of the run, MindSpore's communication functions (init,
        get_rank, create_group, comm_func, mint.distributed, ops.communication) are
        twinccl.mindspore's and twinccl.mindspore_mint's, so unmodified MindSpore code runs on
        the emulator (process-wide; one such run at a time; see docs/python.md).
        "on_import": the same from the moment the run's code imports mindspore (the launcher's
        choice, where MindSpore is installed: importing it takes seconds); the ranks take turns
        only under rank_state="isolated" then.
    world_size, check, timeout_s, algorithm, **emulator_options: the emulator's options (below,
        as docs/misuse.md's table; send/recv run per (peer, direction) here, as torch's:
        p2p_per_peer_streams=True).

    rank_state: "isolated" (default): each rank has its own process state, as each process of a
        torchrun: torch's, NumPy's and Python's random generators (starting as the caller's),
        os.environ with RANK, LOCAL_RANK, WORLD_SIZE... as torchrun sets them, torch.distributed's
        default group, and the globals of your own modules. Ranks take turns running Python
        (one at a time; a rank gives its turn up while it waits in a TwinCCL call, or on a
        multiprocessing Queue, Event, Pipe or Barrier), so ranks must not wait for each other on
        threading's objects (threading.Event): use twinccl.distributed.
        "shared": ranks are plain threads sharing all of it (the ranks' Python runs in parallel
        between calls, as far as the GIL allows).

    cuda_on_cpu: True maps the CUDA calls of a GPU training script to the CPU for the run
        (`.cuda()`, device="cuda", torch.cuda.set_device(local_rank), streams, events: see
        docs/python.md), so it runs unmodified; one current device per rank.

    Ctrl-C (KeyboardInterrupt) stops the run within a fraction of a second: ranks waiting in
    TwinCCL get AbortedError, ranks running Python get KeyboardInterrupt, every rank is joined,
    and KeyboardInterrupt is raised here.
    """
    emulator_options.update(world_size=world_size, check=check, timeout_s=timeout_s,
                            algorithm=algorithm)
    checked, world = run_arguments(fn, topology, trace_path, timeline_path, emulator_options)
    if not isinstance(cuda_on_cpu, bool):
        raise InvalidArgument("twinccl.run: cuda_on_cpu must be True or False, got %r"
                              % (cuda_on_cpu,))
    if cuda_on_cpu:
        from . import _cuda_on_cpu  # noqa: F401  (its per-rank current device, before states)
    if mindspore not in (False, True, "on_import"):
        raise InvalidArgument("twinccl.run: mindspore must be True, False or \"on_import\", "
                              "got %r" % (mindspore,))
    from ._rank_atexit import rank_exit_handlers, with_exit_handlers
    fn = with_exit_handlers(fn)  # innermost: before the rank's torch or MindSpore world ends
    from ._rank_cwd import rank_working_directories, with_own_working_directory
    fn = with_own_working_directory(fn)  # its own working directory and umask
    if mindspore:  # each rank starts with no named groups
        from ._ms_patch import fresh_groups
        fn = fresh_groups(fn)
    states = _rank_states
    if rank_state == "isolated":
        if states is None:
            from ._rank_state import RankStates, torchrun_environ
            if mindspore:
                from ._ms_patch import msrun_environ
                states = RankStates(world, lambda rank: dict(torchrun_environ(rank, world),
                                                             **msrun_environ(rank, world)))
            else:
                states = RankStates(world, lambda rank: torchrun_environ(rank, world))
    elif rank_state != "shared":
        raise InvalidArgument("twinccl.run: rank_state must be \"isolated\" or \"shared\", got %r"
                              % (rank_state,))
    elif states is not None:
        raise InvalidArgument("twinccl.run: rank_state=\"shared\" has no per-rank states")
    swap = states.swap if states is not None else None
    if mindspore is True and swap is None:  # MindSpore's ops are not thread-safe: take turns
        swap = _turns_only  # (the rank baton, swapping no state)
    args = (rank_function(fn, world),) + checked + (AbortedError, swap, _exit_if_stuck)
    with contextlib.ExitStack() as during_run:
        from ._rank_signals import rank_signals
        during_run.enter_context(rank_signals())  # each rank its own signal handlers
        during_run.enter_context(rank_exit_handlers())  # and its own atexit handlers
        during_run.enter_context(rank_working_directories())  # (where unshare is refused)
        if swap is not None:
            from ._rank_state import one_isolated_run, sleep_gives_turn
            if states is not None:
                during_run.enter_context(one_isolated_run())
                from ._rank_logging import per_rank_loggers
                during_run.enter_context(per_rank_loggers())  # loggers' settings per rank
            during_run.enter_context(sleep_gives_turn())
            from ._waits_off_turn import waits_give_turn  # Queue.get, Event.wait... too
            waits_give_turn(during_run)
        if torch_distributed:
            # TwinCCL as torch's backend; with per-rank states the baton gives each rank its
            # own torch.distributed world, else a per-thread view does (_torch_world.py).
            from ._torch_patch import patched
            wrap = during_run.enter_context(patched(own_world=states is None,
                                                    init_by_script=_torch_init_by_script))
            if swap is not None:  # a store's blocking calls give up the rank's turn
                from ._store_turns import stores_give_turn
                stores_give_turn(during_run)
            args = (rank_function(wrap(fn), world),) + args[1:]
        if mindspore:
            from ._ms_patch import patched as mindspore_patched
            during_run.enter_context(mindspore_patched(on_import=mindspore == "on_import"))
        if cuda_on_cpu:
            during_run.enter_context(_cuda_on_cpu.cuda_on_cpu(world))
        result = _twinccl._run(*args)
    if result is None:
        return None
    if "report" not in result:
        return None
    return Report(result["report"], result["trace"])


if run.__doc__:  # None under python -OO
    run.__doc__ += "\n    Emulator options (keyword=default: what (range; C++'s variable)):"
    run.__doc__ += "".join("\n    " + line for line in _twinccl._emulator_options())


def compute(seconds=0.0, flops=0.0):
    """Declares that this rank computes here for `seconds` (or `flops` floating-point operations,
    at the topology's GPU rate), for the simulated time of the run. No effect on data."""
    for name, value in (("seconds", seconds), ("flops", flops)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InvalidArgument("twinccl.compute: %s must be a number, got %r" % (name, value))
    _twinccl._world().compute(float(seconds), float(flops))
