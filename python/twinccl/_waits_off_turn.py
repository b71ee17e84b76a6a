"""Waits on multiprocessing's objects in a run whose ranks take turns (the rank baton,
rank_state="isolated"), and the parent's reads of what its started processes send back under
twinccl.spawn.

Why: `mp.spawn(fn, args=(queue, event))` hands its ranks multiprocessing objects, and a rank that
waited on one (a Queue's get, an Event's wait, a Pipe end's recv or poll,
multiprocessing.connection.wait, a Barrier's wait) blocked in C while it held its turn to run
Python, so the rank that would put or set never ran: the run stalled ("rank 0 waited 5.0 s for
its turn") until its timeout_s. Under torchrun every rank is a process and these calls simply
wait for the others. threading's objects are left alone: libraries wait on them while holding a
lock (Thread.start's Event.wait inside an mp Queue's put), and a rank giving up its turn there
would leave the next rank blocked on that lock with the turn.

How it works: while a run whose ranks take turns lasts, or while twinccl.spawn runs a script
(`on_parent_read`), these methods are replaced on their classes (RunPatch: one owner however
many runs overlap). On a rank thread that takes turns, a blocking call checks its non-blocking
form between waits that give up the rank's turn (`poll_off_turn`), up to the call's own timeout:
where the object has a file descriptor (a Queue's or SimpleQueue's reader, a Pipe end, what
connection.wait is given) the wait is poll(2) on it, ended by the first input (a DataLoader's
batches come through such a Queue); else a sleep of 0.5 ms doubling to 20 ms. A Condition's
wait_for checks its predicate, the lock held, and lets the lock go while away. On the main
thread under twinccl.spawn, the call first runs the processes the script started and has not
joined yet (_spawn_processes.py). Elsewhere: the original call.
"""
import contextlib
import multiprocessing.connection as connection
import multiprocessing.queues as queues
import multiprocessing.synchronize as synchronize
import queue as queue_module
import threading
import time

from . import _twinccl
from ._run_patches import RunPatch

_FIRST_PAUSE_S, _LONGEST_PAUSE_S = 0.0005, 0.02
_LONGEST_FD_WAIT_S = 1.0  # a wait for input, in slices the run's stop cuts short (50 ms)


def poll_off_turn(ready, timeout_s=None, while_away=contextlib.nullcontext, fds=None):
    """Calls ready() between waits that give up the rank's turn (each inside `while_away()`) until
    it is true (True) or timeout_s seconds passed (False; None: no limit but the run's own
    stop). With `fds` (a callable giving the file descriptors whose input makes ready() true, or
    None where they are not known) a wait ends as soon as one is readable; else it is a sleep."""
    deadline = None if timeout_s is None else time.monotonic() + max(0.0, float(timeout_s))
    pause = _FIRST_PAUSE_S
    watched = _descriptors(fds)
    while not ready():
        left_s = _LONGEST_FD_WAIT_S
        if deadline is not None:
            left_s = min(left_s, deadline - time.monotonic())
            if left_s <= 0:
                return False
        with while_away():
            if watched:
                if _twinccl._wait_readable_off_turn(watched, left_s):
                    watched = None  # input, yet ready() may stay false: then a sleep, not a spin
                continue
            _twinccl._sleep_off_turn(min(pause, left_s))
        pause = min(2 * pause, _LONGEST_PAUSE_S)
        watched = _descriptors(fds)
    return True


def _descriptors(fds):
    """fds() as a list, or None when there are none or one cannot be had (a closed Connection:
    the read itself raises then)."""
    if fds is None:
        return None
    try:
        return list(fds()) or None
    except (OSError, ValueError, TypeError):
        return None


_parent_reads = []  # callbacks: run on the main thread before a read (twinccl.spawn's)


def _before_read():
    if _parent_reads and threading.current_thread() is threading.main_thread():
        for callback in list(_parent_reads):
            callback()


def _queue_get(self, block=True, timeout=None):
    if block and _twinccl._takes_turns() and (timeout is None or timeout >= 0):
        got = []

        def ready():
            try:
                got.append(_original(queues.Queue, "get")(self, False))
            except queue_module.Empty:
                return False
            return True
        if not poll_off_turn(ready, timeout, fds=lambda: [self._reader.fileno()]):
            raise queue_module.Empty
        return got[0]
    _before_read()
    return _original(queues.Queue, "get")(self, block, timeout)


def _simple_queue_get(self):
    if _twinccl._takes_turns():
        poll_off_turn(lambda: not self.empty(), fds=lambda: [self._reader.fileno()])
    _before_read()
    return _original(queues.SimpleQueue, "get")(self)


def _connection_poll(self, timeout=0.0):
    original = _original(connection._ConnectionBase, "poll")
    if timeout != 0 and _twinccl._takes_turns():
        return poll_off_turn(lambda: original(self, 0), timeout, fds=lambda: [self.fileno()])
    _before_read()
    return original(self, timeout)


def _receiving(name):
    def receive(self, *args, **kwargs):
        if _twinccl._takes_turns():
            poll_off_turn(lambda: _original(connection._ConnectionBase, "poll")(self, 0),
                          fds=lambda: [self.fileno()])
        _before_read()
        return _original(connection._ConnectionBase, name)(self, *args, **kwargs)
    receive.__name__ = name
    return receive


def _connection_wait(object_list, timeout=None):
    original = _original(connection, "wait")
    if timeout != 0 and _twinccl._takes_turns():
        ready = []
        poll_off_turn(lambda: ready.extend(original(object_list, 0)) or ready, timeout,
                      fds=lambda: [o if isinstance(o, int) else o.fileno() for o in object_list])
        return ready
    _before_read()
    return original(object_list, timeout)


def _event_wait(self, timeout=None):
    if _twinccl._takes_turns():
        return poll_off_turn(self.is_set, timeout)
    _before_read()
    return _original(synchronize.Event, "wait")(self, timeout)


@contextlib.contextmanager
def _released(lock):
    """A multiprocessing lock the caller holds (at every level of an RLock), let go meanwhile."""
    levels = lock._semlock._count()
    for _ in range(levels):
        lock.release()
    try:
        yield
    finally:
        for _ in range(levels):
            lock.acquire()


def _condition_wait_for(self, predicate, timeout=None):
    """A multiprocessing Condition's wait_for (a multiprocessing Barrier waits with it): the
    predicate checked, the condition's lock held, between sleeps off the turn with it let go."""
    if not _twinccl._takes_turns():
        return _original(synchronize.Condition, "wait_for")(self, predicate, timeout)
    last = []
    poll_off_turn(lambda: last.append(predicate()) or last[-1], timeout,
                  lambda: _released(self._lock))
    return last[-1]


def _reading(owner, name):
    def read(self, *args, **kwargs):
        _before_read()
        return _original(owner, name)(self, *args, **kwargs)
    read.__name__ = name
    return read


_REPLACEMENTS = {
    queues.Queue: {"get": _queue_get, "empty": _reading(queues.Queue, "empty")},
    queues.SimpleQueue: {"get": _simple_queue_get,
                         "empty": _reading(queues.SimpleQueue, "empty")},
    connection._ConnectionBase: dict(
        {name: _receiving(name) for name in ("recv", "recv_bytes", "recv_bytes_into")},
        poll=_connection_poll),
    connection: {"wait": _connection_wait},
    synchronize.Event: {"wait": _event_wait,
                        "is_set": _reading(synchronize.Event, "is_set")},
    synchronize.Condition: {"wait_for": _condition_wait_for},
}
_PATCHES = {owner: RunPatch(owner, replacements) for owner, replacements in _REPLACEMENTS.items()}


def _original(owner, name):
    return _PATCHES[owner].originals[name]


def waits_give_turn(stack):
    """Enters the patches into a run's ExitStack (a run whose ranks take turns)."""
    for patch in _PATCHES.values():
        stack.enter_context(patch.during_run())


@contextlib.contextmanager
def on_parent_read(callback):
    """While the block lasts, callback() runs on the main thread before each of these reads."""
    with contextlib.ExitStack() as stack:
        waits_give_turn(stack)
        _parent_reads.append(callback)
        stack.callback(_parent_reads.remove, callback)
        yield
