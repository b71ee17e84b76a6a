"""torch.multiprocessing.spawn's scripts on emulated ranks: a script that starts its own ranks with
`mp.spawn(fn, args=(world_size,), nprocs=world_size)` (PyTorch's DDP tutorial, fairseq) or
`mp.start_processes(fn, ...)` (detectron2's launch) runs unmodified as

    python3 -m twinccl.spawn train.py ARGS
    python3 -m twinccl.spawn --topology dgx-h100 train.py ARGS
    python3 -m twinccl.spawn --cuda-on-cpu --gpus 4 train_gpu.py     # device_count() is 4

How it works: the script runs once, as `python train.py` would run it (its `__main__`, its
sys.argv, on this thread). While it runs, `torch.multiprocessing.spawn` and `start_processes`
run `fn(i, *args)` for i in range(nprocs) on the emulator instead of in new processes: each an
emulated rank (twinccl.run, torch.distributed on TwinCCL, the script's own
`init_process_group(backend, rank=i, world_size=nprocs)` accepted when it agrees), each with its
own process state as a spawned process has (random generators as a new process's, os.environ the
parent's at the call, the globals of the script and of your modules from the parent's, its own
working directory). A rank that raises ends the call as torch's does:
`ProcessRaisedException` ("-- Process 1 terminated with the following error:" and the rank's
traceback), `sys.exit(N)` with N != 0 `ProcessExitedException` ("process 1 terminated with exit
code N"); `join=False` returns a context whose `join()` is True (the ranks have ended).
Differences from processes: a rank starts from the parent's module globals as they are at the
call (a spawned process imports the script again as `__mp_main__`; a forked one has them);
`daemon` and `start_method` have no effect. Ranks the script starts one by one as
`mp.Process(target=...)` are emulated too (_spawn_processes.py).
"""
import argparse
import contextlib
import os
import sys
import threading
import traceback

from ._attribute_patch import put_back, replace
from ._launch_rank import exit_code, main_module
from .torchrun import _program, add_twinccl_options


def parser():
    p = argparse.ArgumentParser(
        prog="python3 -m twinccl.spawn",
        description="Runs a script that starts its ranks with torch.multiprocessing.spawn (or "
                    "start_processes): each spawned rank is one of TwinCCL's emulated ranks "
                    "(threads of this process, each with its own process state). See "
                    "docs/python.md.")
    p.add_argument("-m", "--module", action="store_true",
                   help="the target is a module, run as `python -m`")
    add_twinccl_options(p)
    p.add_argument("--gpus", type=int, default=8,
                   help="with --cuda-on-cpu: torch.cuda.device_count(), the parent's too "
                   "(default %(default)s)")
    p.add_argument("training_script", help="the script (or, with -m, the module)")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


class _Ended:
    """What start_processes(join=False) returns: the ranks ran already; join() says they ended."""
    def __init__(self, nprocs):
        self.processes = []
        self.nprocs = nprocs

    def join(self, timeout=None, grace_period=None):
        return True

    def pids(self):
        return [os.getpid()] * self.nprocs


class _FirstFailure:
    """The first rank whose fn raised or exited with a non-zero code, as torch's error says it."""
    def __init__(self):
        self._lock = threading.Lock()
        self.error = None

    def note(self, error):
        with self._lock:
            if self.error is None:
                self.error = error


def _rank_function(fn, args, failure):
    from ._twinccl import AbortedError
    from torch.multiprocessing.spawn import ProcessExitedException, ProcessRaisedException

    def rank_main(rank):
        try:
            fn(rank, *args)
        except SystemExit as e:  # torch's child: its exit code; 0 (or None) is success
            code = exit_code(e.code)
            if code:
                failure.note(ProcessExitedException(
                    "process %d terminated with exit code %d" % (rank, code),
                    error_index=rank, error_pid=os.getpid(), exit_code=code))
                raise
        except AbortedError:  # woken by another rank's failure: that one is the error
            raise
        except Exception:  # torch's child sends its traceback to the parent
            failure.note(ProcessRaisedException(
                "\n\n-- Process %d terminated with the following error:\n%s"
                % (rank, traceback.format_exc()), rank, os.getpid()))
            raise
    return rank_main


class _Spawner:
    """start_processes on the emulator, with the launcher's options."""
    def __init__(self, args):
        self._args = args

    def start_processes(self, fn, args=(), nprocs=1, join=True, daemon=False,
                        start_method="spawn"):
        import twinccl
        if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
            raise twinccl.InvalidArgument(
                "torch.multiprocessing.spawn: nprocs must be an int >= 1 (the ranks to start), "
                "got %r" % (nprocs,))
        failure = _FirstFailure()
        try:
            self.run(_rank_function(fn, tuple(args), failure), nprocs)
        except BaseException:  # noqa: B036 (a rank's failure, as torch's spawn raises it)
            if failure.error is not None:
                raise failure.error from None
            raise
        return None if join else _Ended(nprocs)

    def run(self, rank_function, nprocs):
        """rank_function(rank) on nprocs emulated ranks (one twinccl.run), each with a spawned
        process's state; with --topology, the report printed."""
        import twinccl
        from ._rank_state import RankStates
        o = self._args
        states = (RankStates(nprocs, lambda rank: {}, fresh_random=True)  # the parent's environ
                  if o.rank_state == "isolated" else None)
        report = twinccl.run(rank_function, world_size=nprocs, topology=o.topology,
                             check=o.check, timeout_s=o.timeout_s, trace_path=o.trace,
                             algorithm=o.algorithm,
                             timeline_path=o.timeline if o.topology else None,
                             torch_distributed=True, rank_state=o.rank_state,
                             _rank_states=states, _torch_init_by_script=True,
                             _exit_if_stuck=True)  # as torchrun's: see stuck_ranks.h
        if report is not None:
            print(report)
            print("twinccl.spawn: %d ranks on %s: %.1f us simulated; timeline: %s"
                  % (nprocs, o.topology, report.total_us, os.path.abspath(o.timeline)))

    def spawn(self, fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
        return self.start_processes(fn, args, nprocs, join, daemon, start_method)


@contextlib.contextmanager
def _spawn_on_emulator(spawner):
    """torch.multiprocessing's spawn and start_processes are the spawner's while the block lasts
    (both names: `mp.spawn` and `from torch.multiprocessing.spawn import spawn`)."""
    import torch.multiprocessing as mp
    saved = []
    try:
        replace([(owner, name, getattr(spawner, name))
                 for owner in (mp, sys.modules["torch.multiprocessing.spawn"])
                 for name in ("spawn", "start_processes")], saved)
        yield
    finally:
        put_back(saved)


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    if args.gpus < 1:
        p.error("--gpus must be at least 1")
    code, path, spec = _program(p, args)
    sys.argv = [path if args.module else args.training_script] + list(args.training_script_args)
    if not args.module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as `python train.py`
    with contextlib.ExitStack() as stack:
        if args.cuda_on_cpu:
            from ._cuda_on_cpu import cuda_on_cpu
            stack.enter_context(cuda_on_cpu(args.gpus))
        spawner = _Spawner(args)
        stack.enter_context(_spawn_on_emulator(spawner))
        from ._spawn_processes import processes_on_emulator
        stack.enter_context(processes_on_emulator(spawner.run))
        main = main_module(path, spec)
        sys.modules["__main__"] = main  # the script's, as `python train.py` has it
        exec(code, main.__dict__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
