"""One rank of twinccl.torchrun: the script as this rank's own `__main__`, and the failures of
the ranks reported as torchrun reports its workers' (each failing rank's traceback on stderr as
the worker printed it, then torchrun's summary naming the first failure)."""
import builtins
import datetime
import os
import socket
import sys
import threading
import traceback
import types

from ._twinccl import AbortedError

_SUMMARY_WIDTH = 60


def _error_text(kind, error):
    """The last line of the traceback Python prints for the error ("ValueError: boom")."""
    return "".join(traceback.format_exception_only(kind, error)).strip()


class Failures:
    """The ranks that failed, in the order they failed (torchrun's ProcessFailure records), each
    with its error as its summary entry says it."""
    def __init__(self, name, local_world_size):
        self._name = os.path.basename(name)
        self._local = local_world_size
        self._lock = threading.Lock()
        self._failures = []  # (rank, exitcode, time, error text)
        self._ended = set()  # ranks whose script ended, well or not

    def __bool__(self):
        return bool(self._failures)

    def add(self, rank, exitcode, error):
        with self._lock:
            self._failures.append((rank, exitcode, datetime.datetime.now(), error))
            self._ended.add(rank)

    def ended(self, rank):
        with self._lock:
            self._ended.add(rank)

    def first(self):
        return self._failures[0] if self._failures else None

    def note_run_error(self, error, world_size):
        """An error twinccl.run raised that no rank's script saw (the run stopped around it: a
        rank that waited for its turn past timeout_s while another held it, before its script
        began). It is the error of the first rank whose script did not end (rank 0 if all did)."""
        if not self._failures:
            text = _error_text(type(error), error)
            print("twinccl.torchrun: %s" % text, file=sys.stderr)
            with self._lock:
                ended = set(self._ended)
            self.add(next((r for r in range(world_size) if r not in ended), 0), 1, text)

    def _failure_text(self, index, rank, exitcode, when, error):
        # torchrun's "traceback" field holds the worker's error when its entrypoint is decorated
        # with @record (an error file); here every rank's error is known.
        return ("[%d]:\n  time      : %s\n  host      : %s\n  rank      : %d (local_rank: %d)\n"
                "  exitcode  : %d (pid: %d)\n  error_file: <N/A>\n  traceback : %s"
                % (index, when.strftime("%Y-%m-%d_%H:%M:%S"), socket.getfqdn(), rank,
                   rank % self._local, exitcode, os.getpid(), error.replace("\n", "\n  ")))

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


class _RankExited(Exception):
    """sys.exit(N != 0) in a rank: the run stops as torchrun stops the other workers."""


def main_module(path, spec):
    """A fresh `__main__` module for the script at `path` (spec: a module's, with -m; else None),
    as `python train.py` / `python -m` makes it."""
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins
    main.__spec__ = spec
    if spec is not None:
        main.__loader__ = spec.loader
        main.__package__ = spec.parent
    return main


def exit_code(code):
    """The process exit status sys.exit(code) gives (printing a non-int code as Python does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


class RankProgram:
    """The rank function: runs the compiled script in a fresh `__main__` module of this rank."""
    def __init__(self, code, path, spec, failures):
        self._code = code
        self._path = path
        self._spec = spec
        self._failures = failures

    def __call__(self, rank):
        main = main_module(self._path, self._spec)
        sys.modules["__main__"] = main  # this rank's own (rank_state swaps it per rank)
        try:
            exec(self._code, main.__dict__)
        except SystemExit as e:
            exitcode = exit_code(e.code)
            if exitcode != 0:
                self._failures.add(rank, exitcode, _error_text(SystemExit, e))
                raise _RankExited("rank %d exited with sys.exit(%r)" % (rank, e.code)) from None
        except AbortedError:
            if not self._failures:  # woken by a failure elsewhere: torchrun stops such workers
                self._failed(rank)
            raise
        except BaseException:  # noqa: B036 (printed as the worker would, then the run stops)
            self._failed(rank)
            raise
        finally:
            self._failures.ended(rank)

    def _failed(self, rank):
        kind, error, where = sys.exc_info()
        self._failures.add(rank, 1, _error_text(kind, error))
        # This rank's hook (torch's init_process_group adds "[rankN]: "), from the script's frame.
        if where is not None and where.tb_next is not None:
            error = error.with_traceback(where.tb_next)  # Python prints error.__traceback__
        sys.excepthook(kind, error, error.__traceback__)
