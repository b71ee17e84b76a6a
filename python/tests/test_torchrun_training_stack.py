"""What training stacks do around the collectives, in unmodified torchrun scripts under
`python3 -m twinccl.torchrun` (python/tests/torchrun_scripts/, one launch for both):
checkpoint.py, torchtitan's checkpointing of a 2-D FSDP2 + tensor-parallel model
(torch.distributed.checkpoint save/load/resume, async_save, a full state dict broadcast from rank
0); workers.py, DataLoader worker processes (forked, and from a fork server) over a
DistributedSampler, activation checkpointing with dropout and torch.compile of a DDP model. The
scripts check themselves (a resumed run's losses, each rank's shard and RANK in its workers);
against torchrun + Gloo they agree exactly (checkpoint.py in test_torchrun_vs_gloo.py; workers.py
by hand: 0.0 off at 2 ranks, Inductor included).

Before: async_save raised "A CPU backend must be enabled for async save" and the broadcast
IndexError (a TwinCCL group listed no device); a worker's time.sleep waited forever for a turn
that no rank in the forked process would hand back (here: the DataLoader's 60 s timeout); a
fork server's workers read the first rank's RANK; torch.compile raised
InternalTorchDynamoError tracing TwinCCL's group. Here the compile uses aot_eager (Inductor's g++
would add ~30 s on a cold cache; by hand it gives Gloo's numbers)."""
import os
import time

import pytest

import twinccl
from launcher_support import launch

torch = pytest.importorskip("torch")
if not hasattr(torch.distributed.distributed_c10d, "_World"):
    pytest.skip("torch %s has no FSDP2, DCP or DeviceMesh" % torch.__version__,
                allow_module_level=True)

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchrun_scripts")


def test_checkpoint_dataloader_workers_and_compile_scripts_run_unmodified(tmp_path):
    done = launch(os.path.join(SCRIPTS, "run_scripts.py"), cwd=str(tmp_path), timeout_s=60,
                  limit_s=240, args=[tmp_path, "checkpoint.py", "workers.py"],
                  WORKERS_COMPILE_BACKEND="aot_eager", PYTHONWARNINGS="ignore")
    assert done.returncode == 0, done.stderr[-6000:]
    for rank in range(2):
        saved = torch.load(str(tmp_path / ("checkpoint.rank%d.pt" % rank)), weights_only=False)
        assert len(saved["losses"]) == 5
        # the model loaded from rank 0's full state dict (broadcast) is the trained one
        for exported, trained in zip(saved["exported"], saved["weights"]):
            assert torch.equal(exported, trained), rank
        assert bool(saved["full"]) == (rank == 0)  # cpu_offload: rank 0's only
        workers = torch.load(str(tmp_path / ("workers.rank%d.pt" % rank)), weights_only=False)
        assert len(workers["losses"]) == 2 * 2 * 16 // 4 and torch.isfinite(workers["losses"]).all()


def test_a_rank_waiting_for_torch_compiles_lock_lets_its_holder_run():
    """TorchDynamo compiles under one process-wide lock. A compiling rank that sleeps (Inductor
    waiting for its g++ probe) gives up its turn; the rank that then waited for the lock kept the
    turn, and the run hung: the stop after timeout_s reaches no rank blocked in a lock
    (workers.py under Inductor with a cold cache hung so). Here rank 1 gives up after 5 s."""
    import torch._dynamo.convert_frame as convert_frame
    order = []

    def rank_main(rank):
        if rank == 0:
            with convert_frame.compile_lock:
                time.sleep(0.3)  # gives up the turn
                order.append(rank)
        else:
            time.sleep(0.05)  # rank 0 takes the lock first
            if convert_frame.compile_lock.acquire(timeout=5):
                order.append(rank)
                convert_frame.compile_lock.release()

    start = time.monotonic()
    twinccl.run(rank_main, world_size=2, torch_distributed=True, timeout_s=20)
    assert order == [0, 1] and time.monotonic() - start < 4
    assert convert_frame.compile_lock.acquire(False)  # outside a run: torch's lock as it was
    convert_frame.compile_lock.release()


class _AllReducingDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        t = torch.ones(1)
        torch.distributed.all_reduce(t)
        return t


def test_a_collective_in_a_dataloader_worker_is_refused_naming_the_rank():
    """A worker forked from a rank holds that rank's thread alone: the other ranks are threads of
    the parent. Before, its all_reduce waited for them (here: the DataLoader's 20 s timeout)."""
    def rank_main(rank):
        loader = torch.utils.data.DataLoader(_AllReducingDataset(), batch_size=2, num_workers=1,
                                             multiprocessing_context="fork", timeout=20)
        with pytest.raises(twinccl.InvalidArgument,
                           match="used in a process forked from rank %d's thread" % rank):
            next(iter(loader))

    twinccl.run(rank_main, world_size=2, torch_distributed=True, timeout_s=30)
