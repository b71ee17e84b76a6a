"""Shared by the torch-backend tests: run a script on 4 ranks and keep what each rank returns
(torch_distributed=True: torch.distributed with TwinCCL as its backend; on torch 1.x through the
rank baton, which gives each rank its own torch.distributed globals)."""
import pytest

import twinccl

torch = pytest.importorskip("torch")
TORCH2 = hasattr(torch.distributed.distributed_c10d, "_World")
needs_torch2 = pytest.mark.skipif(not TORCH2, reason="torch %s has no FSDP2, DeviceMesh or "
                                  "functional collectives" % torch.__version__)


def run_script(fn, world_size=4, **kwargs):
    """What each rank's fn returned, by rank (and the run's Report, with a topology)."""
    results = [None] * world_size

    def rank_main(rank):
        results[rank] = fn(rank)

    report = twinccl.run(rank_main, world_size=world_size, torch_distributed=True,
                         timeout_s=kwargs.pop("timeout_s", 30.0), **kwargs)
    return (results, report) if report is not None else results


def close(a, b, tol=1e-5):
    """True when every tensor of a matches b within tol (relative to the largest value)."""
    for x, y in zip(a, b):
        scale = max(1.0, float(y.abs().max()))
        if float((x - y).abs().max()) > tol * scale:
            return False
    return len(a) == len(b)
