"""Code run right after a module is imported, for modules too costly to import in advance
(MindSpore ~4 s, torch._dynamo ~2 s), where TwinCCL must adjust them before the user's code
uses them.

How it works: a finder first on sys.meta_path finds the module as the other finders would and
gives its loader a subclass whose exec_module runs the callback once the module's own code has
run (a loader of a class that cannot be subclassed in place gets a forwarding wrapper). The
finder answers for that one name, for as long as the `with` of during() lasts."""
import contextlib
import importlib.abc
import sys


class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, name, callback):
        self._name, self._callback = name, callback

    def find_spec(self, name, path, target=None):
        if name != self._name:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader, callback = spec.loader, self._callback
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        base = type(loader)

        class CallingBackLoader(base):
            def exec_module(self, module):
                base.exec_module(self, module)
                callback()
        try:
            loader.__class__ = CallingBackLoader
        except TypeError:  # a loader of a built-in class: a wrapper that forwards the rest
            spec.loader = _ForwardingLoader(loader, callback)
        return spec


class _ForwardingLoader(importlib.abc.Loader):
    def __init__(self, inner, callback):
        self._inner, self._callback = inner, callback

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        self._callback()

    def __getattr__(self, name):
        return getattr(self._inner, name)


@contextlib.contextmanager
def during(name, callback):
    """callback() once `name` is imported: at once if it is, else right after the import, if one
    happens inside the `with`."""
    if name in sys.modules:
        callback()
        yield
        return
    hook = _AfterImport(name, callback)
    sys.meta_path.insert(0, hook)
    try:
        yield
    finally:
        if hook in sys.meta_path:
            sys.meta_path.remove(hook)
