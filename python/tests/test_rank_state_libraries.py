"""Training libraries' process state is a rank's own under twinccl.torchrun (_rank_objects.py), as
each torchrun worker has its own: Hugging Face Accelerate's PartialState / AcceleratorState /
GradientState and Lightning's `rank_zero_only.rank` (lightning_utilities'). Shared, the first
rank's `Accelerator()` initialised the state for all (the others never made their process group:
DDP raised "Default process group has not been initialized") and a Hugging Face Trainer trained
every rank as the last rank to set it; `rank_zero_only` functions ran on no rank."""
import importlib.util
import json

import pytest

from launcher_support import launch

# Looked for, not imported: Lightning's import changes this process's warnings formatting and
# filters, which the other tests of the session would then run under. (scripts/python-env.sh
# installs both.)
_MISSING = [name for name in ("torch", "accelerate", "lightning")
            if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason="needs %s" % ", ".join(_MISSING))

SCRIPT = '''
import json, os, sys
import torch
from accelerate import Accelerator, PartialState
# (lightning_utilities' function: this import sets its `rank` from RANK, as in a new process)
from lightning.fabric.utilities.rank_zero import rank_zero_only

accelerator = Accelerator(cpu=True)  # makes the rank's process group (init_process_group)
rank = int(os.environ["RANK"])
model = torch.nn.Linear(2, 1)
torch.nn.init.constant_(model.weight, 1.0)
model = accelerator.prepare(model)  # DDP: the default group must be the rank's
loss = model(torch.full((1, 2), float(rank + 1))).sum()
accelerator.backward(loss)  # DDP's all-reduce: mean of 1 and 2 over the 2 ranks
grad = model.module.weight.grad.tolist()
gathered = accelerator.gather(torch.tensor([rank * 10])).tolist()
state = PartialState()
first_value = getattr(rank_zero_only, "rank", None)  # as the import left it on this rank
# Lightning's strategies set it in their setup
rank_zero_only.rank = rank
accelerator.wait_for_everyone()  # the other rank sets its own in between


@rank_zero_only
def write_once(path):
    with open(path, "a") as f:
        f.write("rank %d\\n" % rank)


write_once(os.path.join(sys.argv[1], "rank_zero.txt"))
accelerator.wait_for_everyone()
with open(os.path.join(sys.argv[1], "rank%d.json" % rank), "w") as f:
    json.dump({"index": accelerator.process_index, "state_index": state.process_index,
               "processes": accelerator.num_processes, "main": accelerator.is_main_process,
               "grad": grad, "gathered": gathered, "first_value": first_value,
               "rank_zero": rank_zero_only.rank}, f)
'''


def test_accelerate_and_rank_zero_only_are_each_ranks_own(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    done = launch(script, nproc=2, cwd=tmp_path, args=[tmp_path])
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in range(2):
        seen = json.loads((tmp_path / ("rank%d.json" % rank)).read_text())
        assert seen == {"index": rank, "state_index": rank, "processes": 2, "main": rank == 0,
                        "grad": [[1.5, 1.5]], "gathered": [0, 10],
                        "first_value": rank, "rank_zero": rank}, seen
    assert (tmp_path / "rank_zero.txt").read_text() == "rank 0\n"
