"""Module attributes replaced while at least one twinccl.run lasts (runs may overlap, from several
threads): the first run to start installs the replacements, the last to end puts the originals
back. One owner for time.sleep (_rank_state.sleep_gives_turn) and signal.signal / getsignal
(_rank_signals.rank_signals)."""
import contextlib
import threading


class RunPatch:
    """`module`'s attributes named in `replacements` are those while a run lasts;
    `after_last()` (optional) runs when the last run ends, the originals back in place."""
    def __init__(self, module, replacements, after_last=None):
        self._module, self._replacements, self._after_last = module, replacements, after_last
        self.originals = {name: getattr(module, name) for name in replacements}
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
                        setattr(self._module, name, value)
                    if self._after_last is not None:
                        self._after_last()
