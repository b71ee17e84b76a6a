"""Attributes of a module or class replaced while at least one twinccl.run lasts (runs may overlap,
from several threads): the first run to start installs the replacements, the last to end puts the
originals back (an attribute the owner did not have itself is removed again). One owner for
time.sleep (_rank_state.sleep_gives_turn), signal.signal / getsignal (_rank_signals), the stores'
blocking methods (_store_turns) and logging.Logger's per-rank attributes (_rank_logging)."""
import contextlib
import threading


_ABSENT = object()  # an attribute the owner does not hold itself (a class's inherited one too)


class RunPatch:
    """`owner`'s attributes named in `replacements` are those while a run lasts;
    `after_last()` (optional) runs when the last run ends, the originals back in place."""
    def __init__(self, owner, replacements, after_last=None):
        self._module, self._replacements, self._after_last = owner, replacements, after_last
        self.originals = {name: vars(owner).get(name, _ABSENT) for name in replacements}
        self._lock = threading.Lock()
        self._runs = 0

    @contextlib.contextmanager
    def during_run(self):
        with self._lock:
            self._runs += 1
            for name, value in self._replacements.items():
                setattr(self._module, name, value)
        try:
            yield
        finally:
            with self._lock:
                self._runs -= 1
                if self._runs == 0:
                    for name, value in self.originals.items():
                        if value is _ABSENT:
                            delattr(self._module, name)
                        else:
                            setattr(self._module, name, value)
                    if self._after_last is not None:
                        self._after_last()
