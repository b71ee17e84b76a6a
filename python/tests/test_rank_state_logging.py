"""Each rank of twinccl.run(rank_state="isolated") its own logging settings, as each torchrun
worker process has: `logging.basicConfig(level=INFO if rank == 0 else WARNING)` (Megatron, HF
accelerate, torchtitan's init_logger), a rank's own FileHandler, logger.setLevel, logging.disable.
Shared by the rank threads, the last rank's level and handlers won for every rank: rank 0's INFO
lines vanished, or every rank's lines went to every rank's file."""
import contextlib
import io
import logging

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from launcher_support import launch
from twinccl import _twinccl


@contextlib.contextmanager
def bare_root_logger():
    """The root logger as in a fresh process, put back after (pytest adds its handlers to it
    around the test's body)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers = []
    root.setLevel(logging.WARNING)
    try:
        yield root
    finally:
        root.handlers = handlers
        root.setLevel(level)


def test_each_rank_its_own_basic_config_levels_and_handlers(tmp_path):
    streams = [io.StringIO() for _ in range(3)]
    name = "twinccl_test_rank_logging.train"

    def fn(rank):
        logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING,
                            format="%(levelname)s %(message)s", stream=streams[rank])
        logger = logging.getLogger(name)  # made by the first rank, one object for all
        logger.addHandler(logging.FileHandler(tmp_path / ("log_rank%d.txt" % rank)))
        if rank == 2:
            logger.setLevel(logging.ERROR)
        x = np.ones(2)
        for step in range(3):  # hand-overs between the ranks' lines
            dist.all_reduce(x)
            logger.info("info %d rank %d", step, rank)
            logger.warning("warning %d rank %d", step, rank)
        for handler in logger.handlers:
            handler.close()
    with bare_root_logger() as root:
        twinccl.run(fn, world_size=3, timeout_s=30)
        # The caller's settings are back; the logger a rank made has a new process's.
        assert root.handlers == [] and root.level == logging.WARNING

    def lines(rank, kinds):
        return "".join("%s%s %d rank %d\n" % (prefix, kind, step, rank)
                       for step in range(3) for prefix, kind in kinds)
    info, warning = ("INFO ", "info"), ("WARNING ", "warning")
    assert streams[0].getvalue() == lines(0, [info, warning])
    assert streams[1].getvalue() == lines(1, [warning])
    assert streams[2].getvalue() == ""
    files = [(tmp_path / ("log_rank%d.txt" % r)).read_text() for r in range(3)]
    assert files == ["".join("info %d rank 0\nwarning %d rank 0\n" % (s, s) for s in range(3)),
                     "".join("warning %d rank 1\n" % s for s in range(3)), ""]
    made = logging.getLogger(name)
    assert (made.level, made.handlers, made.propagate, made.disabled) == (logging.NOTSET, [],
                                                                         True, False)
    assert "level" not in type(made).__dict__  # plain attributes again after the run


def test_each_rank_its_own_disable_propagate_and_the_callers_loggers():
    caller = logging.getLogger("twinccl_test_rank_logging.caller")
    caller.setLevel(logging.DEBUG)
    seen = []

    class Collect(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())
    collect = Collect()
    caller.addHandler(collect)
    try:
        def fn(rank):
            assert caller.level == logging.DEBUG and caller.handlers == [collect]
            if rank == 1:
                logging.disable(logging.CRITICAL)
            if rank == 2:
                caller.propagate = False
                caller.removeHandler(collect)  # its own list: the others keep the handler
            for step in range(2):
                dist.all_reduce(np.ones(2))
                caller.debug("debug %d rank %d", step, rank)
        with bare_root_logger():
            twinccl.run(fn, world_size=3, timeout_s=30)
        assert sorted(seen) == ["debug %d rank 0" % s for s in range(2)]
        assert caller.handlers == [collect] and caller.propagate
        assert logging.getLogger().manager.disable == 0
    finally:
        caller.removeHandler(collect)
        caller.setLevel(logging.NOTSET)


def test_a_logger_made_in_a_run_nested_in_a_rank_has_its_settings_for_every_rank():
    """A run inside a rank: its ranks' views stand on that rank's view. A logger one inner rank
    makes was copied into the outer view half made (inside Logger.__init__); the other inner
    rank then found no level or cache for it: AttributeError, raised inside setLevel's
    cache clearing, which holds logging's lock without a try (CPython 3.11), so the lock stayed
    taken and the next rank to log waited forever."""
    name = "twinccl_test_rank_logging.nested.%d"
    seen = {}

    def inner(rank):
        if rank == 0:
            logging.getLogger(name % 0)  # made here, first seen through the outer view
        dist.all_reduce(np.ones(2))
        made = logging.getLogger(name % 0)
        seen[rank] = (made.level, made.getEffectiveLevel() == logging.getLogger().level)
        logging.getLogger(name % 1).setLevel(logging.INFO)  # clears every logger's cache

    def outer(rank):
        if rank == 0:
            twinccl.run(inner, world_size=2, timeout_s=30)
        dist.barrier()
    with bare_root_logger():
        twinccl.run(outer, world_size=2, timeout_s=30)
    assert seen == {0: (logging.NOTSET, True), 1: (logging.NOTSET, True)}


def test_a_rank_the_baton_hands_over_often_without_python():
    """Most hand-overs stay in C++ (rank_slots.h): logging's part is a few dict entries, not one
    per logger, and the settings still follow the rank."""
    loggers = [logging.getLogger("twinccl_test_rank_logging.many.%d" % i) for i in range(200)]
    levels = {}

    def fn(rank):
        for logger in loggers:
            logger.setLevel(10 * (rank + 1))
        for _ in range(20):
            dist.all_reduce(np.ones(2))
            levels.setdefault(rank, set()).update(logger.level for logger in loggers)
    before = _twinccl._hand_overs()
    twinccl.run(fn, world_size=3, timeout_s=30)
    fast, python = (after - was for after, was in zip(_twinccl._hand_overs(), before))
    assert levels == {rank: {10 * (rank + 1)} for rank in range(3)}
    assert {logger.level for logger in loggers} == {logging.NOTSET}
    # Every rank's first arrival (and the last hand-over, back to the caller) is Python's.
    assert python <= 3 + 2 and fast >= 20, (fast, python)


def test_torchrun_script_logging_only_rank_0_at_info(tmp_path):
    """The launcher, as torchrun with Gloo: rank 0's INFO lines on stderr, every rank's WARNING;
    each rank's file its own lines."""
    pytest.importorskip("torch")
    script = tmp_path / "log_per_rank.py"
    script.write_text(
        "import logging\n"
        "import torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "rank = dist.get_rank()\n"
        "logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING,\n"
        "                    format='%(levelname)s %(message)s')\n"
        "logger = logging.getLogger('train')\n"
        "logger.addHandler(logging.FileHandler('log_rank%d.txt' % rank))\n"
        "for step in range(2):\n"
        "    dist.barrier()\n"
        "    logger.info('info %d rank %d', step, rank)\n"
        "    logger.warning('warning %d rank %d', step, rank)\n"
        "dist.destroy_process_group()\n")
    out = launch(script, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    logged = sorted(line for line in out.stderr.splitlines()
                    if line.startswith(("INFO ", "WARNING ")))  # (not the launcher's own lines)
    assert logged == sorted(["INFO info 0 rank 0", "INFO info 1 rank 0", "WARNING warning 0 rank 0",
                             "WARNING warning 1 rank 0", "WARNING warning 0 rank 1",
                             "WARNING warning 1 rank 1"]), out.stderr
    assert (tmp_path / "log_rank0.txt").read_text() == ("info 0 rank 0\nwarning 0 rank 0\n"
                                                        "info 1 rank 0\nwarning 1 rank 0\n")
    assert (tmp_path / "log_rank1.txt").read_text() == "warning 0 rank 1\nwarning 1 rank 1\n"
