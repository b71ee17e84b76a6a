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
