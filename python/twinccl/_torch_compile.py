"""torch.compile on emulated ranks (TorchDynamo, prepared when the run's code imports it).

Two things differ from ranks that are processes:
* TorchDynamo must never trace TwinCCL's Python. After a compiled module's graph break (DDP's
  _pre_forward), torch's C++ called a TwinCCL group's methods with TorchDynamo's frame hook on,
  and TorchDynamo, tracing them, failed on the group's attributes (InternalTorchDynamoError:
  "Member '_owner' is not registered for this opaque object type"). So TwinCCL's package is on
  its skip list (process-wide and for good: its frames hold no tensor computation).
* TorchDynamo compiles under one process-wide lock (convert_frame.compile_lock); in a process per
  rank each rank has its own. A rank compiling gives up its turn to run Python where it sleeps
  (Inductor waits for its g++ probe in subprocess's time.sleep loop); the next rank then blocked
  on that lock while holding the turn, and the compiling rank never got the turn back: the run
  stopped only at timeout_s, after "rank 0 waited for its turn". The lock is replaced by one
  whose waiting rank gives up its turn between tries (a rank's time.sleep of 1 ms: a hand-over
  each, against a compile's seconds); elsewhere it is torch's RLock as it was.
"""
import sys

from . import _twinccl

_prepared = [False]


class TurnGivingRLock:
    """threading.RLock whose blocked acquire on a rank that takes turns lets the others run."""
    _POLL_S = 0.001

    def __init__(self, lock):
        self._lock = lock

    def acquire(self, blocking=True, timeout=-1):
        if not blocking or not _twinccl._takes_turns():
            return self._lock.acquire(blocking, timeout)
        waited_s = 0.0
        while not self._lock.acquire(False):
            if 0 <= timeout <= waited_s:
                return False
            _twinccl._sleep_off_turn(self._POLL_S)  # AbortedError once the run stops
            waited_s += self._POLL_S
        return True

    def release(self):
        self._lock.release()

    __enter__ = acquire

    def __exit__(self, *exc):
        self._lock.release()

    def __getattr__(self, name):  # _is_owned, _release_save... (threading.Condition)
        return getattr(self._lock, name)


def prepare_dynamo():
    """Once torch._dynamo is imported: TwinCCL off its tracing, its compile lock turn-giving."""
    if _prepared[0]:
        return
    try:  # torch >= 2.2; before, skipfiles.add
        from torch._dynamo.trace_rules import add as skip
    except ImportError:
        from torch._dynamo.skipfiles import add as skip
    skip("twinccl")
    convert_frame = sys.modules.get("torch._dynamo.convert_frame")
    lock = getattr(convert_frame, "compile_lock", None)
    if lock is not None and not isinstance(lock, TurnGivingRLock):
        convert_frame.compile_lock = TurnGivingRLock(lock)
    _prepared[0] = True

