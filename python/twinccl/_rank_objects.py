"""Attributes of library objects that are one per process (a part of _rank_state.RankStates), as
_rank_globals.LIBRARY_GLOBALS are for module globals: DTensor's table of custom operator handlers
(`DTensor._op_dispatcher._custom_op_handlers`), which `loss_parallel()` fills on entry and empties
on exit (and context parallel replaces). Shared, ranks that were inside loss_parallel at once saw
each other's entries: the second rank to leave raised `KeyError: aten._log_softmax.default`, and
a rank's cross_entropy ran inside or outside loss parallelism as the other ranks had left it.
Hugging Face Accelerate's process state (`PartialState`, `AcceleratorState`, `GradientState`:
one dict per class that every instance uses as its `__dict__`, filled by the first `Accelerator()`
of a process): shared, the first rank's `Accelerator()` initialised it for all, the others never
called `init_process_group` (DDP: "Default process group has not been initialized"), and a
Hugging Face `Trainer` ran every rank as the last rank to set it (`process_index` 1 on both of 2
ranks: each trained on rank 1's shard of the data). Lightning's `rank_zero_only.rank`
(lightning_utilities' function; lightning_fabric's import sets it from RANK, each strategy's
setup from its rank; torchmetrics keeps its own): shared, the last rank to set it was "rank zero"
for all, so `rank_zero_only` functions (loggers' `log_metrics`, `rank_zero_info`) ran on no rank
or on every rank.
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
import os
import sys

_FRESH = object()
_ABSENT = object()  # an object's attribute not set (a function's `rank` before anyone set it)


def _copy(value):
    """A container's shallow copy (a defaultdict keeps its factory), else the value."""
    return copy.copy(value) if isinstance(value, (dict, set, list)) else value


def _new_process_dict(caller):
    """Accelerate's state in a new process: empty. (Its XLA variant is a thread-local descriptor,
    per rank thread already: kept.)"""
    return {} if isinstance(caller, dict) else caller


def _rank_from_environment(names, set_by):
    """A rank's first `rank_zero_only.rank` as its own process has it: where a module that sets it
    at import is imported (`set_by`; `rank = getattr(rank_zero_only, "rank", _get_rank() or 0)`
    in lightning_fabric.utilities.rank_zero, torchmetrics.utilities.prints), the first of the
    environment variables `names` set, else 0; else none (lightning_utilities alone sets none).
    The arriving rank's environment is in place (RankStates restores it first)."""
    def fresh(caller):
        if not any(m in sys.modules for m in set_by):
            return _ABSENT
        for name in names:
            value = os.environ.get(name)
            if value is not None:
                try:
                    return int(value)
                except ValueError:
                    return caller
        return 0
    return fresh


_LIGHTNING_RANK = _rank_from_environment(
    ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK"),
    ("lightning_fabric.utilities.rank_zero", "lightning.fabric.utilities.rank_zero",
     "pytorch_lightning.utilities.rank_zero"))


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
] + [
    ("accelerate.state", cls, "_shared_state", _new_process_dict)
    for cls in ("PartialState", "AcceleratorState", "GradientState")
] + [
    ("lightning_utilities.core.rank_zero", "rank_zero_only", "rank", _LIGHTNING_RANK),
    ("torchmetrics.utilities.prints", "rank_zero_only", "rank",
     _rank_from_environment(("LOCAL_RANK",), ("torchmetrics.utilities.prints",))),
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
            d = getattr(obj, "__dict__", None)
            # (a class's attribute comes with the class; an object's may come later, and is in
            # its slot while absent: Lightning's strategy sets `rank_zero_only.rank` on a rank
            # with no hand-over since the last import, which is when slots are looked for)
            if d is None or isinstance(obj, type) and attribute not in d:
                continue
            if i not in self._callers or self._callers[i][0] is not obj:
                self._callers[i] = (obj, d.get(attribute, _ABSENT))
            yield i, obj

    def save(self):
        return {i: obj.__dict__.get(LIBRARY_OBJECT_ATTRIBUTES[i][2], _ABSENT)
                for i, obj in self._objects()}

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
            elif v is _ABSENT:
                obj.__dict__.pop(attribute, None)
            else:
                obj.__dict__[attribute] = v

    def slots(self):
        return [("attributes", obj, (LIBRARY_OBJECT_ATTRIBUTES[i][2],)) if isinstance(obj, type)
                else ("keys", obj.__dict__, (LIBRARY_OBJECT_ATTRIBUTES[i][2],))
                for i, obj in self._objects()]
