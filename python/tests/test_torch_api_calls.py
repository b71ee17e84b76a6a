"""torch.distributed calls beyond the collectives' usual forms, under `python -m twinccl.torchrun`:
one launch of python/tests/torchrun_scripts/api_calls.py (4 ranks), which checks every value
against what torchrun + Gloo gives (the script passes under `torchrun --nproc-per-node 4` too).

Each part failed before its fix: a rank waiting in a store for a key another rank sets blocked
with the turn to run Python (the run stalled until the store's timeout); `pg.broadcast(tensor,
root)` broadcast rank 0's tensor; bool tensors and send/recv with a tag were refused; a
non-contiguous input (torch.distributed.nn's gather backward) was refused; ReduceOp.BAND's
message showed an object address; a short gather_list, bad all_to_all_single splits and an
any-source recv named no rank or line."""
import os

import pytest

from launcher_support import launch

torch = pytest.importorskip("torch")
if not hasattr(torch.distributed.distributed_c10d, "_World"):
    pytest.skip("torch %s: the launcher's torch backend needs torch 2.x" % torch.__version__,
                allow_module_level=True)

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchrun_scripts",
                      "api_calls.py")


def test_stores_short_forms_bool_tags_and_refusals_as_gloo(tmp_path):
    done = launch(SCRIPT, nproc=4, cwd=tmp_path, limit_s=150, PYTHONWARNINGS="ignore")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    for r in range(4):
        assert "rank %d: api calls as Gloo" % r in done.stdout


def test_gather_single_and_gather_into_tensor():
    """dist.gather_single / gather_into_tensor (torch 2.10+; Gloo has no such call, NCCL's
    backend does): each rank's tensor into its part of the root's one output, flat or stacked;
    an output of the wrong size is an InvalidArgument naming both sizes (was torch's "No backend
    type associated with device type cpu")."""
    import twinccl
    from torch_backend_support import run_script
    dist = torch.distributed
    if not hasattr(dist, "gather_single"):
        pytest.skip("torch %s has no gather_single" % torch.__version__)

    def script(rank):
        flat = torch.zeros(8) if rank == 0 else None
        dist.gather_single(torch.arange(2.0) + 10 * rank, flat, dst=0)
        pair = dist.new_group([2, 3])
        stacked = torch.zeros(2, 3, dtype=torch.int64) if rank == 3 else None
        if rank in (2, 3):
            dist.gather_into_tensor(torch.full((3,), rank), stacked, group=pair, group_dst=1)
        alone = dist.new_group([0])
        if rank == 0:
            with pytest.raises(twinccl.InvalidArgument, match="5 elements.*1 x 2"):
                dist.gather_single(torch.ones(2), torch.zeros(5), group=alone)
        return flat, stacked
    results = run_script(script)
    assert results[0][0].tolist() == [0, 1, 10, 11, 20, 21, 30, 31]
    assert results[3][1].tolist() == [[2, 2, 2], [3, 3, 3]]
    assert results[1] == (None, None)
