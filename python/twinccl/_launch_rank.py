"""One rank of twinccl.torchrun: the script as this rank's own `__main__`, and the failures of
the ranks reported as torchrun reports its workers' (each failing rank's traceback on stderr as
the worker printed it, then torchrun's summary naming the first failure)."""
import builtins
import datetime
import os
import socket
import sys
import threading
import types

from ._twinccl import AbortedError

_SUMMARY_WIDTH = 60


class Failures:
    """The ranks that failed, in the order they failed (torchrun's ProcessFailure records)."""
    def __init__(self, name, local_world_size):
        self._name = os.path.basename(name)
        self._local = local_world_size
        self._lock = threading.Lock()
        self._failures = []  # (rank, exitcode, time)

    def __bool__(self):
        return bool(self._failures)

    def add(self, rank, exitcode):
        with self._lock:
            self._failures.append((rank, exitcode, datetime.datetime.now()))

    def first(self):
        return self._failures[0] if self._failures else None

    def note_run_error(self, error):
        """An error twinccl.run raised that no rank's script saw (the run stopped around it)."""
        if not self._failures:
            print("twinccl.torchrun: %s: %s" % (type(error).__name__, error), file=sys.stderr)
            self.add(0, 1)

    def _failure_text(self, index, rank, exitcode, when):
        return ("[%d]:\n  time      : %s\n  host      : %s\n  rank      : %d (local_rank: %d)\n"
                "  exitcode  : %d (pid: %d)\n  error_file: <N/A>\n  traceback : To enable "
                "traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
                % (index, when.strftime("%Y-%m-%d_%H:%M:%S"), socket.getfqdn(), rank,
                   rank % self._local, exitcode, os.getpid()))

    def print_summary(self):
        """torchrun's ChildFailedError message (torch/distributed/elastic/multiprocessing/
        errors/__init__.py's format), the first failure as the root cause."""
        title = "%s FAILED" % self._name
        texts = [self._failure_text(i, *f) for i, f in enumerate(self._failures)]
        width = min(max([len(title)] + [len(line) for t in texts for line in t.split("\n")]),
                    _SUMMARY_WIDTH)
        others = "\n".join(texts[1:]) or "  <NO_OTHER_FAILURES>"
        print("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n%s\n%s\n%s\n"
              "Failures:\n%s\n%s\nRoot Cause (first observed failure):\n%s\n%s"
              % ("=" * width, title, "-" * width, others, "-" * width, texts[0], "=" * width),
              file=sys.stderr)


def _exit_code(code):
    """The process exit status sys.exit(code) gives (printing a non-int code as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


class _RankExited(Exception):
    """sys.exit(N != 0) in a rank: the run stops as torchrun stops the other workers."""


class RankProgram:
    """The rank function: runs the compiled script in a fresh `__main__` module of this rank."""
    def __init__(self, code, path, spec, failures):
        self._code = code
        self._path = path
        self._spec = spec
        self._failures = failures

    def _main_module(self):
        main = types.ModuleType("__main__")
        main.__file__ = self._path
        main.__builtins__ = builtins
        main.__spec__ = self._spec
        if self._spec is not None:
            main.__loader__ = self._spec.loader
            main.__package__ = self._spec.parent
        return main

    def __call__(self, rank):
        main = self._main_module()
        sys.modules["__main__"] = main  # this rank's own (rank_state swaps it per rank)
        try:
            exec(self._code, main.__dict__)
        except SystemExit as e:
            exitcode = _exit_code(e.code)
            if exitcode != 0:
                self._failures.add(rank, exitcode)
                raise _RankExited("rank %d exited with sys.exit(%r)" % (rank, e.code)) from None
        except AbortedError:
            if not self._failures:  # woken by a failure elsewhere: torchrun stops such workers
                self._failed(rank)
            raise
        except BaseException:  # noqa: B036 (printed as the worker would, then the run stops)
            self._failed(rank)
            raise

    def _failed(self, rank):
        self._failures.add(rank, 1)
        kind, error, where = sys.exc_info()
        # This rank's hook (torch's init_process_group adds "[rankN]: "), from the script's frame.
        if where is not None and where.tb_next is not None:
            error = error.with_traceback(where.tb_next)  # Python prints error.__traceback__
        sys.excepthook(kind, error, error.__traceback__)
