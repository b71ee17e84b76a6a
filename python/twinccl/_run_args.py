"""twinccl.run's arguments checked before anything starts (a typed error naming the argument and
its value instead of a TypeError from the binding, or a value silently rounded), and the rank
function as the ranks call it: an exception it raises says which rank raised it."""
import inspect
import numbers
import os

from ._twinccl import ConfigError, Error, InvalidArgument
from . import _twinccl

# The emulator's limits (twinccl/emu/options.h).
MAX_WORLD_SIZE = _twinccl._max_world_size
MAX_P2P_LANE_THREADS = _twinccl._max_p2p_lane_threads
MAX_TIMEOUT_S = _twinccl._max_timeout_s


def _whole(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgument("twinccl.run: %s must be an int, got %r" % (name, value))
    if not low <= value <= high:
        raise ConfigError("twinccl.run: %s=%d must be in [%d, %d]" % (name, value, low, high))
    return int(value)


def _text(name, value, path=False):
    if value is None:
        return ""
    if path and isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise InvalidArgument("twinccl.run: %s must be a str%s or None, got %r"
                              % (name, " or path" if path else "", value))
    return value


def run_arguments(fn, world_size, topology, check, timeout_s, trace_path, algorithm,
                  timeline_path, max_p2p_lane_threads):
    """The binding's arguments, in _twinccl._run's order (without the rank function)."""
    if not callable(fn):
        raise InvalidArgument("twinccl.run: fn must be callable as fn(rank), got %r" % (fn,))
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise InvalidArgument("twinccl.run: fn %r is an async function; ranks are threads: pass "
                              "a plain function (run an event loop inside it if needed)" % (fn,))
    if inspect.isgeneratorfunction(fn):
        raise InvalidArgument("twinccl.run: fn %r is a generator function: calling it runs none "
                              "of its code; pass a plain function" % (fn,))
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, numbers.Real):
        raise InvalidArgument("twinccl.run: timeout_s must be a number of seconds, got %r"
                              % (timeout_s,))
    if not 0 < timeout_s <= MAX_TIMEOUT_S:  # also refuses nan
        raise ConfigError("twinccl.run: timeout_s=%r must be > 0 and at most %g"
                          % (timeout_s, MAX_TIMEOUT_S))
    if isinstance(check, bool):
        check = int(check)  # False: off, True: on
    return (_whole("world_size", world_size, 1, MAX_WORLD_SIZE), _text("topology", topology),
            _whole("check", check, 0, 2), float(timeout_s),
            _text("trace_path", trace_path, path=True), _text("algorithm", algorithm),
            _text("timeline_path", timeline_path, path=True),
            _whole("max_p2p_lane_threads", max_p2p_lane_threads, 1, MAX_P2P_LANE_THREADS))


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
