"""Each rank its own copy of the user's modules (one part of _rank_state.RankStates), as each
process of a torchrun imports them: Megatron-style `parallel_state` globals, a module-level group
or manager, a function attribute used as a cache (fairseq's all_gather_list._buffer), an
`lru_cache`.

Which modules: the user's own, i.e. Python files outside the interpreter's standard library and
site-packages (a script, its directory, a checkout on PYTHONPATH or installed editable), but not
twinccl, torch, numpy or pytest; TWINCCL_SHARED_MODULES=pkg1,pkg2 shares more, and
TWINCCL_RANK_MODULES=pkg1,pkg2 makes packages in site-packages per rank too (megatron and deepspeed
are, unless shared so). Libraries stay one per process, as their C extensions must.

How:
* a user module imported during the run (the launcher runs the script per rank, so everything
  the script imports) is imported by each rank for itself: at a hand-over the leaving rank's
  modules leave sys.modules and the arriving rank's come back, so `import x` finds the rank's own
  `x` (and pickle the rank's own classes). `__main__` is one per rank too.
* a user module imported before the run (the module defining fn, the script's `__main__`) keeps
  its module object, but
  each rank sees its own globals: at a hand-over the module's dict is saved and the arriving
  rank's contents put in its place. A rank starts from a copy of the caller's globals in which the
  module's functions are copies (their attributes per rank) and `lru_cache`s new caches. So a
  global the rank rebinds (`global _GROUP; _GROUP = g`, `setattr(module, ...)`) is its own;
  objects the globals name (a dict, a list, a class) stay shared: a module-level `results = {}`
  that ranks fill is seen by the caller after the run (threads' semantics; the launcher, which
  runs the script per rank, makes them per rank too).
"""
import functools
import importlib.util
import os
import site
import sys
import sysconfig
import types

from . import _twinccl

_ALWAYS_SHARED = ("twinccl", "torch", "numpy", "pytest", "_pytest", "pluggy", "typing_extensions")
# Libraries per rank unless TWINCCL_SHARED_MODULES names them: megatron.core from a wheel (pip
# install megatron-core) keeps the process's parallel groups in parallel_state's globals; shared,
# the second rank's initialize_model_parallel raised "... group is already initialized".
# DeepSpeed numbers a process's modules and parameters for ZeRO-3 in a mutable default argument
# and class attributes; shared, the ranks' numbers differed ("Detected a disagreement on list
# contents between rank0 and rank1" in the first forward)
_RANK_BY_DEFAULT = ("megatron", "deepspeed")


def _names(variable):
    return tuple(n.strip() for n in os.environ.get(variable, "").split(",") if n.strip())


def _library_roots():
    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(path)
    for path in list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()]:
        roots.add(path)
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        roots.add(os.path.join(prefix, "lib"))
    for path in sys.path:  # site directories a .pth file or PYTHONPATH added (another venv's)
        if isinstance(path, str) and \
                os.path.basename(os.path.normpath(path)) in ("site-packages", "dist-packages"):
            roots.add(path)
    return tuple(os.path.realpath(r) + os.sep for r in roots)


def _in_package(name, packages):
    return any(name == p or name.startswith(p + ".") for p in packages)


class _Classifier:
    def __init__(self):
        self._roots = _library_roots()
        self._shared = _ALWAYS_SHARED + _names("TWINCCL_SHARED_MODULES")
        self._per_rank = _RANK_BY_DEFAULT + _names("TWINCCL_RANK_MODULES")
        self._verdicts = {}

    def is_user(self, name, module):
        verdict = self._verdicts.get(name)
        if verdict is None:
            verdict = self._judge(name, module)
            self._verdicts[name] = verdict
        return verdict

    def is_library(self, name):
        """Whether the module `name` is a library (shared by the ranks), imported or not (then
        judged from where an import would find it; False where none would)."""
        module = sys.modules.get(name)
        if module is None:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                return False
            if spec is None:
                return False
            module = types.SimpleNamespace(__spec__=spec, __file__=spec.origin)
        return not self.is_user(name, module)

    def _judge(self, name, module):
        spec = getattr(module, "__spec__", None)
        real_name = getattr(spec, "name", None) or name  # `python -m twinccl.torchrun`: __main__
        if _in_package(name, self._shared) or _in_package(real_name, self._shared):
            return False
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return False  # built in, a C extension, a namespace package
        if _in_package(name, self._per_rank):
            return True
        return not os.path.realpath(path).startswith(self._roots)


def _copy_for_rank(value, module_dicts, memo):
    """A rank's own copy of one global of the user's modules (see the module's docstring)."""
    key = id(value)
    if key in memo:
        return memo[key]
    out = value
    if isinstance(value, types.FunctionType) and any(
            value.__globals__ is d for d in module_dicts):
        out = types.FunctionType(value.__code__, value.__globals__, value.__name__,
                                 value.__defaults__, value.__closure__)
        out.__kwdefaults__ = value.__kwdefaults__
        out.__qualname__ = value.__qualname__
        out.__module__ = value.__module__
        out.__doc__ = value.__doc__
        out.__dict__.update(value.__dict__)
    elif type(value).__name__ == "_lru_cache_wrapper" and hasattr(value, "cache_parameters"):
        wrapped = _copy_for_rank(value.__wrapped__, module_dicts, memo)
        parameters = value.cache_parameters()
        out = functools.lru_cache(maxsize=parameters["maxsize"],
                                  typed=parameters["typed"])(wrapped)
    memo[key] = out
    return out


class RankModules:
    """A part of RankStates: save() the leaving rank's modules, restore() the arriving rank's."""
    def __init__(self):
        self._classifier = _Classifier()
        self._before = {}
        for name, m in list(sys.modules.items()):  # one entry per module object
            if self._classifier.is_user(name, m) and \
                    all(m is not other for other in self._before.values()):
                self._before[name] = m  # (multiprocessing names __main__ __mp_main__ too)
        self._before_ids = {id(m) for m in self._before.values()}
        self._caller_view = None  # the caller's globals of self._before, at the first hand-over
        self._private = {}  # the modules a rank imported itself, removed while it is away
        self._installed = {}  # the arriving rank's private modules, now in sys.modules
        self._known_count = len(sys.modules)
        self._caller_main = sys.modules.get("__main__")
        self._in_place = None  # (version tags, value) installed by restore()

    def _versions(self):
        return _twinccl._dict_versions(*self._before.values())

    def _imported_since(self):
        """User modules imported while the leaving rank ran (sys.modules grew)."""
        if len(sys.modules) == self._known_count:
            return {}
        found = {}
        for name, m in list(sys.modules.items()):
            if name in self._before or self._installed.get(name) is m or \
                    id(m) in self._before_ids:  # __mp_main__: multiprocessing's name of __main__
                continue
            if self._classifier.is_user(name, m):
                found[name] = m
        return found

    def save(self):
        in_place = self._in_place
        if in_place is not None and not self._installed and \
                len(sys.modules) == self._known_count and \
                sys.modules.get("__main__") is in_place[1][2] and \
                in_place[0] is not None and in_place[0] == self._versions():
            return in_place[1]  # the rank changed no global and imported nothing of yours
        mine = dict(self._installed)
        mine.update(self._imported_since())
        for name in mine:
            sys.modules.pop(name, None)
        self._installed = {}
        view = {name: dict(m.__dict__) for name, m in self._before.items()}
        if self._caller_view is None:
            self._caller_view = view
        return (view, mine, sys.modules.get("__main__"))

    def initial(self, rank):
        dicts = [m.__dict__ for m in self._before.values()]
        memo = {}
        view = {name: {k: _copy_for_rank(v, dicts, memo) for k, v in d.items()}
                for name, d in self._caller_view.items()}
        return (view, {}, self._caller_main)

    def restore(self, value):
        view, mine, main = value
        for name, m in self._before.items():
            d = m.__dict__
            d.clear()
            d.update(view[name])
        sys.modules.update(mine)
        self._installed = dict(mine)
        if main is not None:
            sys.modules["__main__"] = main
        self._known_count = len(sys.modules)
        self._in_place = (self._versions(), value) if not mine else None

    def slots(self, saved):
        """For the baton's slots (rank_slots.h): the globals of the modules imported before the
        run, as dicts, and the sys.modules entries that differ between ranks (`__main__`, the
        modules each rank imported itself: the names known so far, from `saved`, every rank's
        saved parts, this one last). The slots keep each rank's newest entries; this part's own
        record of the private modules in place may be older after fast hand-overs, which the
        slots' values, installed after each Python swap, make right."""
        names = {"__main__"} | set(self._installed)
        for parts in saved:
            names.update(parts[-1][1])
        return [("dict", m.__dict__) for m in self._before.values()] + \
            [("keys", sys.modules, tuple(sorted(names)))]
