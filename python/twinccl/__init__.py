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


def run(fn, world_size=8, topology=None, check=1, timeout_s=300.0, trace_path=None,
        algorithm=None, timeline_path=None, torch_distributed=False, max_p2p_lane_threads=8192):
    """Runs fn(rank) on `world_size` emulated ranks, each an OS thread of this process.

    Inside fn, twinccl.distributed (torch.distributed's functions) talks to the other ranks. The
    GIL is released in every collective and wait, so ranks run concurrently and a rank that never
    joins is reported (DeadlockError, or TimeoutError after timeout_s) instead of hanging.
    The first rank's exception is raised here (noted with its rank); the other ranks get
    AbortedError. A bad argument raises InvalidArgument (type) or ConfigError (value).

    topology: a preset ("dgx-h100", "h100-cluster-2", ... see `twinccl topo list`) or a topology
        file. The run is recorded and replayed on it: returns a Report (simulated time per rank
        and operation, overlap, busiest links; print it). Without: returns None.
    check: 0 off, 1 deadlock detection and never-waited Works (default), 2 also poisons the
        output of asynchronous operations until they complete.
    trace_path: also save the recorded trace for `twinccl replay PATH --topology X`.
    algorithm: force an algorithm for every collective ("ring", "direct", ...).
    timeline_path: with a topology, write the Perfetto timeline of the simulated run.
    torch_distributed: for the duration of the run, torch.distributed's functions are
        twinccl.distributed's, so unmodified `torch.distributed.all_reduce(x)` code runs on the
        emulator (process-wide; one such run at a time; see docs/python.md).
    max_p2p_lane_threads: the most threads of per-peer send/recv streams alive at once (one
        per (peer, direction) with send/recv in flight); beyond it the call that needs one more
        raises ConfigError.

    Ctrl-C (KeyboardInterrupt) stops the run within a fraction of a second: ranks waiting in
    TwinCCL get AbortedError, ranks running Python get KeyboardInterrupt, every rank is joined,
    and KeyboardInterrupt is raised here.
    """
    checked = run_arguments(fn, world_size, topology, check, timeout_s, trace_path, algorithm,
                            timeline_path, max_p2p_lane_threads)
    args = (rank_function(fn, checked[0]),) + checked + (AbortedError,)
    if torch_distributed:
        from ._torch_patch import patched
        with patched():
            result = _twinccl._run(*args)
    else:
        result = _twinccl._run(*args)
    if result is None:
        return None
    if "report" not in result:
        return None
    return Report(result["report"], result["trace"])


def compute(seconds=0.0, flops=0.0):
    """Declares that this rank computes here for `seconds` (or `flops` floating-point operations,
    at the topology's GPU rate), for the simulated time of the run. No effect on data."""
    for name, value in (("seconds", seconds), ("flops", flops)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InvalidArgument("twinccl.compute: %s must be a number, got %r" % (name, value))
    _twinccl._world().compute(float(seconds), float(flops))
