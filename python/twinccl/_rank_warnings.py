"""The `warnings` module's per-process settings, one set per rank (a part of
_rank_state.RankStates), as each torchrun worker process has its own: the filter list
(warnings.filterwarnings / simplefilter / resetwarnings), the default action, the "once"
registry, showwarning / formatwarning and catch_warnings(record=True)'s recorder. Shared by the
rank threads, a rank's `warnings.filterwarnings("ignore")` (common off rank 0) silenced every
rank.

How it works: each rank has its own `warnings.filters` list (a copy of the caller's at its first
turn: filterwarnings inserts in place) and its own "once" registry; a hand-over swaps the module
attributes (C's warnings.warn reads them from the module at every call). Python's C warnings code
remembers, in each module's __warningregistry__, the warnings it has shown or ignored, valid
while the filters version it was written under holds; so a hand-over that changes the filters'
contents (not their list object only) bumps that version (warnings._filters_mutated(), as
filterwarnings does), else rank 1's remembered "ignore" would hide rank 0's first warning.
Not per rank: the __warningregistry__ dicts themselves (in each module's globals): a warning
shown once per location is shown once by the first rank that hits it while all ranks' filters
are equal, and again after a hand-over between ranks whose filters differ.
"""
import warnings

_NAMES = ("filters", "_defaultaction")  # what C's registry entries depend on
_OTHER_NAMES = ("_onceregistry", "showwarning", "formatwarning", "_showwarnmsg_impl")


def _filters_mutated():
    """warnings' own version bump (CPython 3.11-3.13: _filters_mutated; 3.14:
    _filters_mutated_lock_held, under its lock), or None."""
    bump = getattr(warnings, "_filters_mutated", None)
    if bump is None:
        locked = getattr(warnings, "_filters_mutated_lock_held", None)
        lock = getattr(warnings, "_lock", None)
        if locked is not None and lock is not None:
            def bump():
                with lock:
                    locked()
    return bump


def _own(name, value):
    return type(value)(value) if isinstance(value, (list, dict)) else value


class RankWarnings:
    """The rank state's part. A rank starts from the caller's filters and registry (copies)."""
    def __init__(self):
        self._module = warnings.__dict__
        self._names = tuple(n for n in _NAMES if n in self._module)
        self._other_names = tuple(n for n in _OTHER_NAMES if n in self._module)
        self._bump = _filters_mutated()
        self._caller = self.save()

    def save(self):
        d = self._module
        return tuple(d.get(n) for n in self._names), tuple(d.get(n) for n in self._other_names)

    def initial(self, rank):
        return tuple(tuple(_own(n, v) for n, v in zip(names, values))
                     for names, values in zip((self._names, self._other_names), self._caller))

    def restore(self, value):
        d = self._module
        changed = False
        for name, v in zip(self._names, value[0]):
            now = d.get(name)
            if now is not v:
                changed = changed or now != v
                d[name] = v
        for name, v in zip(self._other_names, value[1]):
            if d.get(name) is not v:
                d[name] = v
        if changed and self._bump is not None:
            self._bump()

    def slots(self):
        """The filters with the version bump when their contents change (rank_slots.h)."""
        return [("keys", self._module, self._names, self._bump),
                ("keys", self._module, self._other_names)]
