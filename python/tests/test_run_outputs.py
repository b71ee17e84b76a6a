"""twinccl.run's output files go through the launcher run() uses (twinccl/emulated_run.h): a path
that cannot be written is refused before any rank runs; a write that fails (a full disk, /dev/full)
raises and leaves no file, never a partial one; a path with a NUL byte is refused, not cut."""
import os
import resource
import signal

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist


class Counting:
    """A rank function that counts the ranks that started."""

    def __init__(self):
        self.started = 0

    def __call__(self, rank):
        self.started += 1
        dist.all_reduce(np.ones(1 << 12, np.float32))


def test_a_timeline_in_a_missing_folder_is_refused_before_any_rank_runs(tmp_path):
    fn = Counting()
    bad = str(tmp_path / "missing" / "timeline.json")
    with pytest.raises(twinccl.ConfigError,
                       match=r"timeline_path=\.\.\.\) '.*': the folder '.*' does not exist"):
        twinccl.run(fn, world_size=2, topology="dgx-h100", timeline_path=bad)
    assert fn.started == 0


def test_a_trace_path_that_is_a_folder_is_refused_before_any_rank_runs(tmp_path):
    fn = Counting()
    with pytest.raises(twinccl.ConfigError, match=r"trace_path.*Is a directory"):
        twinccl.run(fn, world_size=2, trace_path=str(tmp_path))
    assert fn.started == 0


def test_a_timeline_without_a_topology_is_refused_before_any_rank_runs(tmp_path):
    fn = Counting()
    with pytest.raises(twinccl.ConfigError, match=r"timeline_path=.*needs a topology"):
        twinccl.run(fn, world_size=2, timeline_path=str(tmp_path / "timeline.json"))
    assert fn.started == 0
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argument", ["trace_path", "timeline_path"])
def test_a_nul_byte_in_a_path_is_refused_and_nothing_is_written(tmp_path, argument):
    fn = Counting()
    with pytest.raises(twinccl.ConfigError, match=r"NUL byte"):
        twinccl.run(fn, world_size=2, topology="dgx-h100",
                    **{argument: str(tmp_path) + "/tr\x00ace.json"})
    assert fn.started == 0
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("argument", ["trace_path", "timeline_path"])
def test_a_write_to_dev_full_raises(argument):
    with pytest.raises(twinccl.Error, match=r"%s.*/dev/full.*No space left on device" % argument):
        twinccl.run(Counting(), world_size=2, topology="dgx-h100", **{argument: "/dev/full"})


@pytest.fixture
def file_size_limit():
    """Files this process writes stop at `limit` bytes (a full disk, as the system reports it:
    EFBIG), restored afterwards."""
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    def limit(size):
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, old_limit[1]))

    yield limit
    resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
    signal.signal(signal.SIGXFSZ, old_handler)


@pytest.mark.parametrize("argument", ["trace_path", "timeline_path"])
def test_a_full_disk_leaves_no_partial_file_and_keeps_the_old_one(tmp_path, file_size_limit,
                                                                  argument):
    target = tmp_path / "out.json"
    target.write_text("old")
    file_size_limit(256)  # far less than a trace or a timeline of this run
    with pytest.raises(twinccl.Error,
                       match=r"%s=\.\.\.\) '.*': cannot write the file: File too large" % argument):
        twinccl.run(Counting(), world_size=2, topology="dgx-h100", **{argument: str(target)})
    assert sorted(os.listdir(tmp_path)) == ["out.json"]  # no temporary file left
    assert target.read_text() == "old"


def test_files_that_can_be_written_are_whole(tmp_path):
    trace, timeline = tmp_path / "t.json", tmp_path / "tl.json"
    twinccl.run(Counting(), world_size=2, topology="dgx-h100", trace_path=str(trace),
                timeline_path=str(timeline))
    import json
    assert json.loads(trace.read_text())["ranks"] and json.loads(timeline.read_text())
    assert sorted(os.listdir(tmp_path)) == ["t.json", "tl.json"]
