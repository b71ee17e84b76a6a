"""pytest setup: the package from the build tree (CTest sets PYTHONPATH=<build>/python)."""
import os
import sys
import time

import pytest

import twinccl

WORLD_SIZES = [1, 3, 8]


def source_dir():
    """The repository root (CTest passes it; else found from this file)."""
    return os.environ.get("TWINCCL_SOURCE_DIR",
                          os.path.dirname(os.path.dirname(os.path.dirname(
                              os.path.abspath(__file__)))))


def run_ranks(fn, world_size, **kwargs):
    """twinccl.run(fn) collecting what each rank returns, by rank."""
    results = [None] * world_size

    def rank_main(rank):
        results[rank] = fn(rank)

    twinccl.run(rank_main, world_size=world_size, timeout_s=kwargs.pop("timeout_s", 20.0),
                **kwargs)
    return results


def raised_before_deadline(errors, fn, world_size, timeout_s=30.0):
    """What twinccl.run(fn) raised, one of `errors`, within a third of its deadline (found by
    the checks, not by the timeout)."""
    start = time.monotonic()
    with pytest.raises(errors) as e:
        twinccl.run(fn, world_size=world_size, timeout_s=timeout_s)
    seconds = time.monotonic() - start
    assert seconds < timeout_s / 3, "ended after %.1f s: by the deadline, not the checks" % seconds
    return e.value


def site_of(path, marker):
    """"file.py:N" of the line of `path` holding `marker` (a comment), as errors name call sites."""
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if marker in text and "site_of(" not in text:
                return "%s:%d" % (os.path.basename(path), number)
    raise AssertionError(marker)


@pytest.fixture(params=WORLD_SIZES)
def world_size(request):
    return request.param


def pytest_report_header(config):
    return "twinccl from %s (python %s)" % (os.path.dirname(twinccl.__file__),
                                            sys.version.split()[0])
