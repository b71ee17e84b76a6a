"""Attributes of other libraries replaced for the length of a run (torch.cuda under cuda_on_cpu,
MindSpore's communication functions), and put back as they were, absent ones removed again; one
such run at a time, since what it replaces is process-wide."""
import contextlib
import threading

_MISSING = object()


class OneRunAtATime:
    """held() for the length of a run that patches process-wide; a second run while one holds it
    raises InvalidArgument naming the run's option (e.g. "mindspore") and what is patched."""
    def __init__(self, option, patched):
        self._option, self._patched = option, patched
        self._lock = threading.Lock()
        self._active = False

    @contextlib.contextmanager
    def held(self):
        from ._twinccl import InvalidArgument
        with self._lock:
            if self._active:
                raise InvalidArgument("twinccl.run(%s=True): another such run is in progress (%s "
                                      "process-wide)" % (self._option, self._patched))
            self._active = True
        try:
            yield
        finally:
            with self._lock:
                self._active = False


def replace(patches, saved):
    """Sets owner.name = value for each (owner, name, value) of `patches`; appends to `saved`
    what put_back() needs (before each change: a failure midway leaves `saved` complete)."""
    for owner, name, value in patches:
        saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
        setattr(owner, name, value)


def put_back(saved):
    """Undoes replace(), last change first."""
    for owner, name, value in reversed(saved):
        if value is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, value)
