"""A process group's timeout, honoured: init_process_group(timeout=), new_group(timeout=) and
dist.set_timeout (torch's, and twinccl.distributed's) bound how long a rank waits for its peers in
the group's operations, as NCCL's watchdog bounds every operation of a group (Gloo's "Timed out
waiting 2000ms"), instead of twinccl.run's timeout_s.

How it works: the emulator keeps a wait timeout per rank and communicator (Comm.set_wait_timeout);
a wait in the group's operations issued afterwards that outlasts it raises TimeoutError naming
what set it and where every rank stands. torch hands every group it makes without a timeout its
default (30 minutes): that one leaves the run's timeout_s, which stays the bound of the waits a
script did not bound itself (minutes, not half an hour, for a rank that never comes). A timeout
longer than the run's is honoured too: a rank that loads a checkpoint for ten minutes under
timeout=timedelta(hours=1) is waited for.
"""
import datetime


def bound_waits(comm, timeout, call):
    """This rank's waits in `comm`'s operations from now on last at most `timeout` (a
    datetime.timedelta, as torch takes it); the TimeoutError names "<call>(timeout=<timeout>)"."""
    said = "%s(timeout=%s)" % (call, timeout)
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError("%s: the timeout must be a datetime.timedelta, got %r" % (said, timeout))
    comm.set_wait_timeout(timeout.total_seconds(), said)


def bound_new_group(comm, timeout, call):
    """A torch group being made by `call` with `timeout` (torch's default when the script gave
    none: then the run's timeout_s stays)."""
    import torch.distributed.distributed_c10d as c10d  # (this module is torch-free otherwise)
    default = getattr(c10d, "default_pg_timeout", datetime.timedelta(minutes=30))
    if timeout is not None and timeout != default:
        bound_waits(comm, timeout, call)
