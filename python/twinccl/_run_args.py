"""twinccl.run's arguments checked before anything starts (a typed error naming the argument and
its value instead of a TypeError from the binding, or a value silently rounded), and the rank
function as the ranks call it: an exception it raises says which rank raised it."""
import inspect
import os

from ._twinccl import Error, InvalidArgument
from . import _twinccl


def _text(name, value, path=False):
    if value is None:
        return ""
    if path and isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise InvalidArgument("twinccl.run: %s must be a str%s or None, got %r"
                              % (name, " or path" if path else "", value))
    return value


def run_arguments(fn, topology, trace_path, timeline_path, emulator_options):
    """The binding's arguments, in _twinccl._run's order (without the rank function), and the
    world size. The emulator's options (world_size, check, timeout_s, algorithm and the keywords
    run() does not own) are checked by name against the emulator's options table."""
    if not callable(fn):
        raise InvalidArgument("twinccl.run: fn must be callable as fn(rank), got %r" % (fn,))
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise InvalidArgument("twinccl.run: fn %r is an async function; ranks are threads: pass "
                              "a plain function (run an event loop inside it if needed)" % (fn,))
    if inspect.isgeneratorfunction(fn):
        raise InvalidArgument("twinccl.run: fn %r is a generator function: calling it runs none "
                              "of its code; pass a plain function" % (fn,))
    _twinccl._check_emulator_options(emulator_options)
    return (emulator_options, _text("topology", topology),
            _text("trace_path", trace_path, path=True),
            _text("timeline_path", timeline_path, path=True)), int(emulator_options["world_size"])


def rank_function(fn, world_size):
    """fn as each rank calls it: an exception that escapes it is noted with the rank (Python
    3.11+: shown under the traceback); a result that is a coroutine or generator (nothing of fn
    ran) is an error."""
    def rank_main(rank):
        try:
            result = fn(rank)
        except BaseException as e:  # noqa: B036 (noted, then raised as it is)
            if not isinstance(e, Error) and hasattr(e, "add_note"):
                e.add_note("(raised on rank %d of twinccl.run(world_size=%d))"
                           % (rank, world_size))
            raise
        if inspect.isawaitable(result) or inspect.isgenerator(result):
            if hasattr(result, "close"):
                result.close()  # no "never awaited" warning
            raise InvalidArgument("twinccl.run: fn(%d) returned %r, so none of its code ran: the "
                                  "rank function must do its work when called" % (rank, result))
    return rank_main
