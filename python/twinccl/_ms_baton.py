"""One rank at a time runs Python under twinccl.run(mindspore=True).

Why: MindSpore's PyNative ops are not safe from several threads at once. Measured with MindSpore
2.9.0: 8 rank threads each doing `x * 1.0001 + 0.5` and `ops.matmul` abort the process
("terminate called without an active exception"); under msrun each rank is a process.

How it works: a rank holds the baton while it runs its own Python code and hands it on while it
waits in TwinCCL: every blocking method of the extension's Comm (each collective, send/recv,
split) and Work.wait/is_completed release it and take it back when they return, so the
collectives still meet and every wait is still the emulator's (deadlock detection and timeouts
unchanged). Ranks take turns in first-come order. The methods are wrapped only while a
mindspore=True run lasts; a thread that does not hold the baton (another run) passes straight
through.
"""
import threading

from . import _twinccl

# Comm's methods that cannot block: left as they are.
_QUICK = ("name", "rank", "size", "compute")


class Baton:
    """A first-come-first-served lock that knows its holder."""

    def __init__(self):
        self._cv = threading.Condition()
        self._tickets = 0
        self._serving = 0
        self._holder = None

    def acquire(self):
        with self._cv:
            ticket = self._tickets
            self._tickets += 1
            while self._serving != ticket:
                self._cv.wait(1.0)  # a bounded wait: an interrupt reaches this thread
            self._holder = threading.get_ident()

    def release(self):
        with self._cv:
            self._holder = None
            self._serving += 1
            self._cv.notify_all()

    def held(self):
        return self._holder == threading.get_ident()


_baton = Baton()


def _passing(method):
    """`method` handing the baton on while it runs (when this thread holds it)."""
    def call(*args, **kwargs):
        if not _baton.held():
            return method(*args, **kwargs)
        _baton.release()
        try:
            return method(*args, **kwargs)
        finally:
            _baton.acquire()
    call.__name__ = getattr(method, "__name__", "call")
    call.__doc__ = getattr(method, "__doc__", None)
    return call


def wrap_extension():
    """Wraps the blocking methods of Comm and Work; returns what restore() needs."""
    saved = []
    for cls, names in ((_twinccl.Comm, [n for n in dir(_twinccl.Comm)
                                        if not n.startswith("_") and n not in _QUICK]),
                       (_twinccl.Work, ["wait", "is_completed"])):
        for name in names:
            original = cls.__dict__.get(name)
            if original is None or not callable(original):
                continue
            saved.append((cls, name, original))
            setattr(cls, name, _passing(original))
    return saved


def restore(saved):
    for cls, name, original in saved:
        setattr(cls, name, original)


def holding(fn):
    """fn(rank) run while holding the baton."""
    def rank_main(rank):
        _baton.acquire()
        try:
            return fn(rank)
        finally:
            _baton.release()
    return rank_main
