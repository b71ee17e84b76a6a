"""logging's per-process settings, one set per rank (a part of _rank_state.RankStates), as each
torchrun worker process has its own: every logger's level, handlers, filters, disabled and
propagate (so basicConfig's handler and level, a rank's FileHandler), logging.disable's level,
setLoggerClass / setLogRecordFactory and logging's switches (raiseExceptions, lastResort...).
Shared by the rank threads, the last rank's basicConfig(level=INFO if rank == 0 else WARNING)
won for all (rank 0's INFO lines vanished) and every rank's lines went to every rank's file.

How it works: while an isolated run lasts, logging.Logger's attributes `level`, `handlers`,
`filters`, `disabled`, `propagate` and `_cache` (isEnabledFor's answers, which depend on the
levels) are data descriptors (_PerRank) that read and write the *view* in place: the module
global `_view`, one _View per rank, swapped at a hand-over like any other module global (one
dict entry, in C++: the hand-over's cost does not grow with the number of loggers; torch creates
hundreds). A view holds {logger: {attribute: value}} for the loggers its rank has touched; a
logger it has not touched is copied from the view's base on first use (the caller's view: None,
each logger's own __dict__ as it was before the run), with its own handler and filter lists and
an empty cache. The logger objects stay shared (getLogger is one registry): a logger a rank
creates exists for every rank, with a new process's settings (NOTSET, no handlers) for the ranks
that never configured it. The caller's settings are untouched by the ranks and back in effect
when the run ends (the descriptors are removed). Handler objects are shared where two ranks
hold the same one (the caller's, copied into every rank's lists).
"""
import logging

from ._run_patches import RunPatch

_view = None  # the view in place: None (the caller's: each logger's __dict__) or a _View

# Logger attributes that are one per rank; lists and the cache are copied per rank, not shared.
_NAMES = ("level", "handlers", "filters", "disabled", "propagate", "_cache")
# logging's module globals and its manager's attributes that a process sets for itself.
_MODULE_NAMES = ("_loggerClass", "_logRecordFactory", "raiseExceptions", "lastResort",
                 "_warnings_showwarning", "logThreads", "logProcesses", "logMultiprocessing",
                 "logAsyncioTasks")
# (logging.disable's level: the manager's _disable since 3.7, under a `disable` property)
_MANAGER_NAMES = ("_disable", "disable", "loggerClass", "logRecordFactory",
                  "emittedNoHandlerWarning")


def _own_copy(name, value):
    """A rank's own copy of a logger's attribute: its own lists, an empty cache."""
    if name == "_cache" and isinstance(value, dict):
        return {}
    if isinstance(value, list):
        return list(value)
    return value


class _View:
    """One rank's logger settings: {logger: {attribute: value}}, copied from `base` (a _View or
    None: the loggers' own __dict__) on a logger's first use."""
    __slots__ = ("base", "settings")

    def __init__(self, base):
        self.base = base
        self.settings = {}

    def of(self, logger):
        own = self.settings.get(logger)
        if own is None:
            if self.base is None:
                found = logger.__dict__
            else:
                found = self.base.of(logger)
            own = self.settings[logger] = {name: _own_copy(name, found[name])
                                           for name in _NAMES if name in found}
        return own

    def missing(self, logger, name):
        """The value of an attribute this view's copy lacks (a logger still in __init__ when
        copied): the base's (which may lack it too, copied at the same moment: asked in turn),
        copied; AttributeError where no view down to the logger's own __dict__ has it."""
        if self.base is None:
            found = logger.__dict__
            if name not in found:
                raise AttributeError("%r object has no attribute %r"
                                     % (type(logger).__name__, name))
            value = found[name]
        else:
            own = self.base.of(logger)
            value = own[name] if name in own else self.base.missing(logger, name)
        value = self.settings[logger][name] = _own_copy(name, value)
        return value


class _PerRank:
    """A logging.Logger attribute read and written in the view in place (_view)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __get__(self, logger, owner=None):
        if logger is None:
            return self
        view = _view
        if view is None:
            try:
                return logger.__dict__[self.name]
            except KeyError:
                raise AttributeError("%r object has no attribute %r"
                                     % (type(logger).__name__, self.name)) from None
        own = view.settings.get(logger)
        if own is None:
            own = view.of(logger)
        try:
            return own[self.name]
        except KeyError:
            return view.missing(logger, self.name)

    def __set__(self, logger, value):
        d = logger.__dict__
        if self.name not in d:  # a logger made during the run: the caller's (fresh) value
            d[self.name] = _own_copy(self.name, value)
        view = _view
        if view is None:
            d[self.name] = value
        else:
            view.of(logger)[self.name] = value

    def __delete__(self, logger):
        view = _view
        own = logger.__dict__ if view is None else view.of(logger)
        try:
            del own[self.name]
        except KeyError:
            raise AttributeError(self.name) from None


_logger_patch = RunPatch(logging.Logger, {name: _PerRank(name) for name in _NAMES})


def per_rank_loggers():
    """Logger attributes are per-rank (_PerRank) while isolated runs last (nested ones too)."""
    return _logger_patch.during_run()


class RankLogging:
    """The rank state's part: the view in place, the manager's disable level (logging.disable),
    logger class and record factory, and logging's module switches. A rank starts from the
    caller's: a view over the caller's (so its loggers as configured before the run), the
    caller's switches."""
    def __init__(self):
        self._module = logging.__dict__
        self._manager = logging.Logger.manager.__dict__
        self._module_names = tuple(n for n in _MODULE_NAMES if n in self._module)
        self._manager_names = tuple(n for n in _MANAGER_NAMES if n in self._manager)
        self._caller = self.save()

    def save(self):
        return (_view, tuple(self._module.get(n) for n in self._module_names),
                tuple(self._manager.get(n) for n in self._manager_names))

    def initial(self, rank):
        return (_View(self._caller[0]),) + self._caller[1:]

    def restore(self, value):
        global _view
        _view = value[0]
        for names, values, d in ((self._module_names, value[1], self._module),
                                 (self._manager_names, value[2], self._manager)):
            for name, v in zip(names, values):
                if d.get(name) is not v:
                    d[name] = v

    def slots(self):
        return [("keys", globals(), ("_view",)), ("keys", self._module, self._module_names),
                ("keys", self._manager, self._manager_names)]
