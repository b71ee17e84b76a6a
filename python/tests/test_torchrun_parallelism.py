"""Parallelism styles of real training code, in unmodified torchrun scripts under `python3 -m
twinccl.torchrun` (python/tests/torchrun_scripts/, one launch of 2 ranks for all four):
pipelining.py (torch.distributed.pipelining: PipelineStage with ScheduleGPipe, Schedule1F1B,
ScheduleInterleaved1F1B, ScheduleLoopedBFS, and the pipeline() tracer; it checks itself against
the whole model on one rank), tensor_parallel.py (torchtitan's tensor parallelism with
loss_parallel, FSDP2 with mixed precision and reshard_after_forward=False, clip_grad_norm_ over
DTensors, DTensor redistribute, get_state_dict), moe.py (expert parallelism over uneven
all_to_all_single with split sizes counted at run time, three autograd forms) and ddp_extras.py
(no_sync, find_unused_parameters, static_graph, compression and PowerSGD hooks, Join with uneven
inputs). Against torchrun + Gloo (by hand, 2 and 4 ranks): pipelining, tensor_parallel and moe
bitwise; ddp_extras within 1.5e-8 (fp16 and bf16 compression hooks: within one half-precision
step of the gradient, 6.1e-5 at most).

Before: tensor_parallel.py raised `KeyError: aten._log_softmax.default` (loss_parallel's handlers
in one table shared by the ranks: test_rank_state_dtensor.py) and ddp_extras.py hung in
static_graph's first backward (DDP waited in C++ for futures whose completion TwinCCL had queued
after that wait, holding the rank's turn; --timeout-s did not end it)."""
import os

import pytest

from launcher_support import launch

torch = pytest.importorskip("torch")
if not hasattr(torch.distributed.distributed_c10d, "_World"):
    pytest.skip("torch %s has no pipelining, FSDP2 or DTensor" % torch.__version__,
                allow_module_level=True)

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchrun_scripts")


def test_pipelining_tensor_parallel_moe_and_ddp_options_run_unmodified(tmp_path):
    done = launch(os.path.join(SCRIPTS, "run_scripts.py"), cwd=str(tmp_path), timeout_s=60,
                  limit_s=200, args=[tmp_path, "pipelining.py", "moe.py", "ddp_extras.py",
                                     "tensor_parallel.py"], PYTHONWARNINGS="ignore")
    assert done.returncode == 0, done.stderr[-6000:]

    def load(name, rank):
        return torch.load(str(tmp_path / ("%s.rank%d.pt" % (name, rank))), weights_only=False)
    for rank in range(2):
        pipelining = load("pipelining", rank)  # the script compared it with the whole model
        assert sorted(pipelining) == ["1f1b", "gpipe", "interleaved_1f1b", "looped_bfs", "traced"]
        moe = load("moe", rank)
        for how in ("dist_nn", "functional"):  # three autograd forms of one layer
            for key in ("y", "x_grad", "gate_grad"):
                torch.testing.assert_close(moe[how][key], moe["autograd_function"][key])
        ddp = load("ddp_extras", rank)
        for variant in ("static", "unused", "join"):
            assert len(ddp[variant]["losses"]) == 4 + (rank if variant == "join" else 0)
        for got, expected in zip(ddp["static"]["weights"], ddp["plain"]["weights"]):
            torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-7)
        tp = load("tensor_parallel", rank)
        assert torch.isfinite(tp["losses"]).all() and tp["losses"][-1] < tp["losses"][0]
    # every rank reports the same (full) losses and norms
    assert torch.equal(load("tensor_parallel", 0)["losses"], load("tensor_parallel", 1)["losses"])
    assert torch.equal(load("tensor_parallel", 0)["norms"], load("tensor_parallel", 1)["norms"])
