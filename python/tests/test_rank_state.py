"""Each rank of twinccl.run its own process state (DESIGN.md decision 11): random generators,
environment, torch.distributed's default group, the user's module globals, as under torchrun;
and a rank thread that ends with objects in thread-local storage does not crash the process."""
import os
import random
import subprocess
import sys
import time

import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist

HERE = os.path.dirname(os.path.abspath(__file__))


def test_random_generators_are_per_rank_and_seeded_per_rank():
    torch = pytest.importorskip("torch")
    out = {}

    def fn(rank):
        torch.manual_seed(rank)
        np.random.seed(rank)
        random.seed(rank)
        x = np.ones(2)
        for _ in range(3):  # hand-overs between the draws
            dist.all_reduce(x)
            out.setdefault(rank, []).append((torch.rand(2).tolist(), np.random.rand(),
                                             np.random.randn(), random.random()))
    twinccl.run(fn, world_size=4, timeout_s=30)
    for rank in range(4):
        torch.manual_seed(rank)
        np.random.seed(rank)
        random.seed(rank)
        expected = [(torch.rand(2).tolist(), np.random.rand(), np.random.randn(), random.random())
                    for _ in range(3)]
        assert out[rank] == expected, rank


def test_ranks_start_from_the_callers_generators_and_the_caller_gets_its_own_back():
    torch = pytest.importorskip("torch")
    torch.manual_seed(7)
    random.seed(7)
    caller_next = (torch.rand(1).item(), random.random())
    torch.manual_seed(7)
    random.seed(7)
    drawn = {}

    def fn(rank):
        drawn[rank] = (torch.rand(1).item(), random.random())
        dist.barrier()
        torch.rand(100)  # drawn by the rank only
    twinccl.run(fn, world_size=3, timeout_s=30)
    assert all(d == caller_next for d in drawn.values())  # as if seeded above in each process
    assert (torch.rand(1).item(), random.random()) == caller_next  # the caller's own, untouched


def test_torchrun_environment_per_rank_and_the_callers_restored():
    seen = {}
    os.environ.pop("LOCAL_RANK", None)

    def fn(rank):
        os.environ["MINE"] = str(rank)  # a rank's own change stays its own
        dist.barrier()
        seen[rank] = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE",
                                                      "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                                                      "MASTER_PORT", "MINE")}
    twinccl.run(fn, world_size=3, timeout_s=30)
    for rank in range(3):
        assert seen[rank] == {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "3",
                              "LOCAL_WORLD_SIZE": "3", "MASTER_ADDR": "127.0.0.1",
                              "MASTER_PORT": "29500", "MINE": str(rank)}
    assert "LOCAL_RANK" not in os.environ and "MINE" not in os.environ


def test_torch_distributed_default_group_state_is_per_rank():
    pytest.importorskip("torch")
    import torch.distributed.distributed_c10d as c10d

    def world():  # torch 2.x: the _World object; 1.13: its table of groups
        return getattr(c10d, "_world", c10d._pg_map)
    caller_world = world()
    seen = {}

    def fn(rank):
        worlds = [id(world())]
        c10d._group_count = 10 + rank
        c10d._pg_names["pg%d" % rank] = rank
        c10d.GroupMember.WORLD = "default group of rank %d" % rank  # 1.13: a class attribute
        dist.barrier()
        worlds.append(id(world()))
        seen[rank] = (worlds, c10d._group_count, dict(c10d._pg_names), c10d.GroupMember.WORLD)
    twinccl.run(fn, world_size=3, timeout_s=30)
    assert len({seen[r][0][0] for r in range(3)}) == 3  # each rank its own _World
    for rank in range(3):
        assert seen[rank][0][0] == seen[rank][0][1]
        assert seen[rank][1:] == (10 + rank, {"pg%d" % rank: rank},
                                  "default group of rank %d" % rank)
    assert world() is caller_world and c10d._group_count == 0 and not c10d._pg_names
    assert c10d.GroupMember.WORLD is None


MEGATRON_STYLE = '''
import functools
import twinccl.distributed as dist

_DATA_PARALLEL_GROUP = None
_TENSOR_PARALLEL_GROUP = None


def initialize_model_parallel(tensor_parallel_size):
    global _DATA_PARALLEL_GROUP, _TENSOR_PARALLEL_GROUP
    world, rank = dist.get_world_size(), dist.get_rank()
    for start in range(0, world, tensor_parallel_size):
        ranks = list(range(start, start + tensor_parallel_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            _TENSOR_PARALLEL_GROUP = group
    for offset in range(tensor_parallel_size):
        ranks = list(range(offset, world, tensor_parallel_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            _DATA_PARALLEL_GROUP = group


def get_tensor_parallel_group():
    return _TENSOR_PARALLEL_GROUP


def get_data_parallel_group():
    return _DATA_PARALLEL_GROUP


def gather_buffer(numel):
    """fairseq's all_gather_list keeps its buffer in a function attribute."""
    if not hasattr(gather_buffer, "_buffer") or gather_buffer._buffer.size < numel:
        import numpy as np
        gather_buffer._buffer = np.zeros(numel)
    return gather_buffer._buffer


@functools.lru_cache(maxsize=None)
def cached_rank():
    return dist.get_rank()
'''


@pytest.fixture()
def megatron_style(tmp_path, monkeypatch):
    (tmp_path / "mpu_style.py").write_text(MEGATRON_STYLE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("mpu_style", None)
    yield
    sys.modules.pop("mpu_style", None)


def megatron_rank(rank, mpu):
    mpu.initialize_model_parallel(2)
    x = np.full(4, float(rank))
    dist.all_reduce(x, group=mpu.get_tensor_parallel_group())
    y = np.full(4, float(rank))
    dist.all_reduce(y, group=mpu.get_data_parallel_group())
    buf = mpu.gather_buffer(4)
    buf[:] = rank
    dist.barrier()
    return x[0], y[0], float(mpu.gather_buffer(4)[0]), mpu.cached_rank()


def expected_megatron(world):
    return [(float(sum(range(r - r % 2, r - r % 2 + 2))),
             float(sum(range(r % 2, world, 2))), float(r), r) for r in range(world)]


@pytest.mark.usefixtures("megatron_style")
def test_megatron_style_module_imported_by_each_rank():
    out = {}

    def fn(rank):
        import mpu_style  # imported during the run: each rank its own module, as torchrun
        out[rank] = megatron_rank(rank, mpu_style)
    twinccl.run(fn, world_size=4, timeout_s=30)
    assert [out[r] for r in range(4)] == expected_megatron(4)
    assert "mpu_style" not in sys.modules  # the ranks' copies left with them


@pytest.mark.usefixtures("megatron_style")
def test_megatron_style_module_imported_before_the_run():
    import mpu_style  # imported before: one module object, each rank its own globals
    out = {}

    def fn(rank):
        out[rank] = megatron_rank(rank, mpu_style)
    twinccl.run(fn, world_size=4, timeout_s=30)
    assert [out[r] for r in range(4)] == expected_megatron(4)
    assert mpu_style.get_data_parallel_group() is None  # the caller's globals, untouched
    assert not hasattr(mpu_style.gather_buffer, "_buffer")
    # Shared (rank_state="shared"): one module's globals for all ranks; a rank uses another
    # rank's group and is refused (the script cannot run: the Megatron failure).
    with pytest.raises(twinccl.InvalidArgument, match="belongs to rank"):
        twinccl.run(lambda rank: megatron_rank(rank, mpu_style), world_size=4, timeout_s=30,
                    rank_state="shared")


THREAD_EXIT = '''
import sys, threading
import twinccl
tls = threading.local()

def generator():
    yield torch.ones(2, requires_grad=True) * 2

def fn(rank):
    tls.x = torch.ones(2, requires_grad=True) * 2    # a tensor with grad history
    tls.view = torch.ones(4)[1:]                      # a view
    tls.gen = generator(); next(tls.gen)              # a suspended generator holding one
    try:
        raise ValueError(torch.ones(2, requires_grad=True) * 3)
    except ValueError as e:
        tls.error = e                                 # an exception with its traceback
for rank_state in ("isolated", "shared"):
    twinccl.run(fn, world_size=2, rank_state=rank_state)
print("returned")
'''


@pytest.mark.parametrize("torch_import", ["import torch"])
def test_rank_ending_with_torch_objects_in_thread_local_storage(torch_import):
    """Before: exit 139 (the thread state was deleted twice while torch freed the tensor)."""
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", torch_import + "\n" + THREAD_EXIT],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "returned\n", (done.returncode, done.stderr)


def test_a_sleeping_rank_gives_up_its_turn():
    """time.sleep during a run lets the other ranks run, as a sleeping process would."""
    order = []

    def fn(rank):
        if rank == 0:
            time.sleep(0.3)
        order.append(rank)
        dist.barrier()
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert order == [1, 0]


def test_a_rank_holding_its_turn_past_the_timeout_stops_the_run():
    def fn(rank):
        if rank == 0:
            end = time.monotonic() + 1.0
            while time.monotonic() < end:  # Python work, no TwinCCL call, no sleep
                pass
        dist.barrier()
    start = time.monotonic()
    with pytest.raises((twinccl.AbortedError, twinccl.TimeoutError),
                       match="for its turn to run Python|timeout"):
        twinccl.run(fn, world_size=2, timeout_s=0.3)
    assert time.monotonic() - start < 10


def test_rank_state_argument_is_checked():
    with pytest.raises(twinccl.InvalidArgument, match="rank_state must be"):
        twinccl.run(lambda r: None, world_size=1, rank_state="threads")


def test_ctrl_c_stops_an_isolated_run_whatever_holds_the_turn():
    """A rank busy in Python holds the turn; others wait in a barrier or for their turn."""
    import _thread
    import threading

    def fn(rank):
        if rank == 1:
            end = time.monotonic() + 30
            while time.monotonic() < end:
                sum(range(100))
        dist.barrier()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            twinccl.run(fn, world_size=4, timeout_s=60)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 10
    twinccl.run(lambda rank: dist.barrier(), world_size=4, timeout_s=30)  # the next run works


def test_isolated_runs_on_two_threads_at_once_are_refused_and_nested_ones_work():
    import threading
    other = {}

    def inner(rank):
        dist.barrier()

    def fn(rank):
        if rank == 0:  # nested in a rank: it keeps its turn while the nested run lasts
            twinccl.run(inner, world_size=2, timeout_s=30)
            t = threading.Thread(target=lambda: other.setdefault("error", _run_error(inner)))
            t.start()
            t.join()
        dist.barrier()
    twinccl.run(fn, world_size=2, timeout_s=30)
    assert isinstance(other["error"], twinccl.InvalidArgument)
    assert "another such run is in progress on another thread" in str(other["error"])


def _run_error(fn):
    try:
        twinccl.run(fn, world_size=2, timeout_s=30)
    except twinccl.Error as e:
        return e
    return None


def test_a_library_module_imported_by_a_rank_does_not_bind_that_ranks_group():
    """torch.distributed.nn.functional takes group=group.WORLD as a default argument and DDP
    imports it lazily: imported inside a rank after its init_process_group, every rank (and every
    later run) used that rank's group. It is imported before the ranks start now."""
    pytest.importorskip("torch")
    import torch.distributed as tdist
    for name in ("torch.distributed.nn.functional", "torch.distributed.nn"):
        sys.modules.pop(name, None)
    defaults = {}

    def fn(rank):
        tdist.init_process_group("gloo")
        import torch.distributed.nn.functional as dist_nn
        defaults[rank] = dist_nn.all_gather.__defaults__
        tdist.destroy_process_group()
    twinccl.run(fn, world_size=2, torch_distributed=True, timeout_s=30)
    assert defaults == {0: (None,), 1: (None,)}
