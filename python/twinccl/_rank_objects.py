"""Attributes of library objects that are one per process (a part of _rank_state.RankStates), as
_rank_globals.LIBRARY_GLOBALS are for module globals: DTensor's table of custom operator handlers
(`DTensor._op_dispatcher._custom_op_handlers`), which `loss_parallel()` fills on entry and empties
on exit (and context parallel replaces). Shared, ranks that were inside loss_parallel at once saw
each other's entries: the second rank to leave raised `KeyError: aten._log_softmax.default`, and
a rank's cross_entropy ran inside or outside loss parallelism as the other ranks had left it.
FSDP1's `SimpleProfiler` (class attributes `profiling`, the set of sections a process is inside,
and `results`): `FSDP.optim_state_dict` profiles sections with collectives inside, and a second
rank leaving one raised `KeyError: 'preprocessing_with_comm'`. multiprocessing's start method
(`_default_context._actual_context`): a script's `mp.set_start_method("spawn")` ran on every rank
and the second raised "context has already been set".

How it works: the first time a hand-over finds the object (its module imported), the value in
place is kept as the caller's (the module was imported by then, before any rank's loss_parallel:
DTensor code makes its mesh first, a collective, so the turn has passed); a rank arriving without a
value of its own gets a copy of it. The attribute is an entry of the object's `__dict__` (or a
class attribute), so the baton's slots (rank_slots.h, "keys" or "attributes") swap it without
Python at later hand-overs."""
import copy
import sys

_FRESH = object()


def _copy(value):
    """A container's shallow copy (a defaultdict keeps its factory), else the value."""
    return copy.copy(value) if isinstance(value, (dict, set, list)) else value


# (module, dotted path of the object in the module, attribute, a rank's first value from the
# caller's)
LIBRARY_OBJECT_ATTRIBUTES = [
    ("torch.distributed.tensor._api", "DTensor._op_dispatcher", "_custom_op_handlers", _copy),
    ("torch.distributed.fsdp._debug_utils", "SimpleProfiler", "profiling", _copy),
    ("torch.distributed.fsdp._debug_utils", "SimpleProfiler", "results", _copy),
    # multiprocessing's start method (set_start_method, get_start_method, get_context()):
    # `mp.set_start_method("spawn")` under `if __name__ == "__main__":` ran once per torchrun
    # worker and raised "context has already been set" on every rank after the first
    ("multiprocessing.context", "_default_context", "_actual_context", lambda caller: caller),
]


class LibraryObjectAttributes:
    def __init__(self):
        self._callers = {}  # index of the entry -> (object, the caller's value)

    def _objects(self):
        """(index, object) of the entries whose module is imported."""
        for i, (module, path, attribute, _) in enumerate(LIBRARY_OBJECT_ATTRIBUTES):
            m = sys.modules.get(module)
            if m is None:
                continue
            obj = m
            for name in path.split("."):
                obj = getattr(obj, name, None)
            if obj is None or attribute not in getattr(obj, "__dict__", {}):
                continue
            if i not in self._callers or self._callers[i][0] is not obj:
                self._callers[i] = (obj, obj.__dict__[attribute])
            yield i, obj

    def save(self):
        return {i: obj.__dict__[LIBRARY_OBJECT_ATTRIBUTES[i][2]] for i, obj in self._objects()}

    def initial(self, rank):
        return None

    def restore(self, value):
        for i, obj in self._objects():
            _, _, attribute, fresh = LIBRARY_OBJECT_ATTRIBUTES[i]
            v = value.get(i, _FRESH) if value is not None else _FRESH
            if v is _FRESH:
                v = fresh(self._callers[i][1])
            if isinstance(obj, type):
                setattr(obj, attribute, v)  # (a class's __dict__ is read-only)
            else:
                obj.__dict__[attribute] = v

    def slots(self):
        return [("attributes", obj, (LIBRARY_OBJECT_ATTRIBUTES[i][2],)) if isinstance(obj, type)
                else ("keys", obj.__dict__, (LIBRARY_OBJECT_ATTRIBUTES[i][2],))
                for i, obj in self._objects()]
