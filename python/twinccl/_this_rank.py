"""Whether the calling thread is a rank of a running twinccl.run, and of which world: the one
owner of that question for TwinCCL's Python parts (the emulator answers it: `_twinccl._world()`
raises InvalidArgument off a rank thread)."""
from . import _twinccl


def world():
    """The run's world (`.rank`, `.size`) when the calling thread is one of its ranks, else None."""
    try:
        return _twinccl._world()
    except _twinccl.InvalidArgument:
        return None
