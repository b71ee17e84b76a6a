"""torch.distributed's key-value stores (TCPStore, FileStore, HashStore, PrefixStore, the default
group's store) in a run whose ranks take turns (the rank baton, rank_state="isolated").

Why: a store's blocking calls (`get` of a key not yet set, `wait`, `multi_get`, `queue_pop`,
`barrier`, a TCPStore client connecting before its server listens, the server waiting for its
workers) block in torch's C++ while the rank holds its turn to run Python, so the rank that would
set the key never runs: the run stalled until the store's own timeout (30 min for the default
store) and could not be stopped meanwhile. Under torchrun every rank is a process and these calls
simply wait for the others.

How it works: while such a run lasts, those methods of torch's `Store` classes are replaced (on
the classes, so names bound earlier and every store type see it). On a rank thread that takes
turns, a blocking call first waits for its keys with `Store.check` (never blocking) between short
sleeps that give up the rank's turn (_waits_off_turn.poll_off_turn), up to the store's timeout,
then makes the original call, which no longer blocks. A TCPStore client first waits, the same
way, until its server's port accepts a connection; a server does not wait for its workers (they
connect when they run). Other threads call torch's methods unchanged. A wait past the timeout
raises torch's `DistStoreError`, naming the keys and the rank.
"""
import datetime
import socket

import torch.distributed as tdist

from . import _twinccl
from ._run_patches import RunPatch
from ._waits_off_turn import poll_off_turn


def _seconds(timeout, store):
    if timeout is None:
        timeout = store.timeout
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    return float(timeout)


def _wait_off_turn(ready, timeout_s, what):
    """poll_off_turn(ready) up to timeout_s (<= 0: no limit but the run's own); DistStoreError
    after it."""
    if not poll_off_turn(ready, timeout_s if timeout_s > 0 else None):
        raise tdist.DistStoreError(
            "Wait timeout: %s was not there after %.3g s (the store's timeout) on rank %d"
            % (what, timeout_s, _twinccl._world().rank))


def _keys(keys):
    return "key(s) %s" % ", ".join(repr(k) for k in list(keys)[:8])


_Store = tdist.Store
_original = {name: getattr(_Store, name) for name in ("get", "wait", "multi_get", "queue_pop",
                                                      "barrier") if hasattr(_Store, name)}


def _get(self, key):
    if _twinccl._takes_turns():
        _wait_off_turn(lambda: self.check([key]), _seconds(None, self), _keys([key]))
    return _original["get"](self, key)


def _wait(self, keys, *timeout):
    if _twinccl._takes_turns():
        _wait_off_turn(lambda: self.check(list(keys)), _seconds(timeout[0] if timeout else None,
                                                                 self), _keys(keys))
    return _original["wait"](self, keys, *timeout)


def _multi_get(self, keys):
    if _twinccl._takes_turns():
        _wait_off_turn(lambda: self.check(list(keys)), _seconds(None, self), _keys(keys))
    return _original["multi_get"](self, keys)


def _queue_pop(self, key, block=True):
    if block and _twinccl._takes_turns():
        _wait_off_turn(lambda: self.queue_len(key) > 0, _seconds(None, self),
                       "an item in queue %r" % key)
    return _original["queue_pop"](self, key, block)


def _barrier(self, key, world_size, timeout=None):
    """Store.barrier: every one of world_size callers adds itself; the last sets the key all wait
    for."""
    if not _twinccl._takes_turns():
        return _original["barrier"](self, key, world_size, timeout)
    arrived = self.add(key + "/num_members", 1)
    if arrived == world_size:
        self.set(key + "/last_member", "1")
    _wait_off_turn(lambda: self.check([key + "/last_member"]), _seconds(timeout, self),
                   "store barrier %r (%d of %d callers arrived)" % (key, arrived, world_size))
    return None


_TCPStore = tdist.TCPStore
_tcp_init = _TCPStore.__init__


def _listening(host, port):
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _tcp_store_init(self, host_name, port, world_size=None, is_master=False,
                    timeout=datetime.timedelta(seconds=300), wait_for_workers=True, *args,
                    **kwargs):
    if _twinccl._takes_turns():
        if is_master:
            wait_for_workers = False  # the workers connect when they run
        elif kwargs.get("master_listen_fd") is None:
            _wait_off_turn(lambda: _listening(host_name, port), _seconds(timeout, self),
                           "a TCPStore server at %s:%d" % (host_name, port))
    return _tcp_init(self, host_name, port, world_size, is_master, timeout, wait_for_workers,
                     *args, **kwargs)


_store_patch = RunPatch(_Store, {name: f for name, f in (  # the methods this torch has
    ("get", _get), ("wait", _wait), ("multi_get", _multi_get), ("queue_pop", _queue_pop),
    ("barrier", _barrier)) if name in _original})
_tcp_patch = RunPatch(_TCPStore, {"__init__": _tcp_store_init})


def stores_give_turn(stack):
    """Enters the store patches into a run's ExitStack."""
    stack.enter_context(_store_patch.during_run())
    stack.enter_context(_tcp_patch.during_run())
