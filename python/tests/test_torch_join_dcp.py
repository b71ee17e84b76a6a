"""torch.distributed.algorithms.join.Join (DDP with uneven inputs) and torch.distributed.checkpoint
(dcp.save / dcp.load) on the emulator, as a torchrun script uses them."""
import os

from torch_backend_support import needs_torch2, run_script

pytestmark = needs_torch2


def test_ddp_under_join_with_uneven_inputs_ends_with_the_same_weights_on_every_rank():
    import torch
    import torch.nn as nn
    from torch.distributed.algorithms.join import Join
    from torch.nn.parallel import DistributedDataParallel as DDP

    def script(rank):
        torch.manual_seed(0)
        model = DDP(nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = torch.Generator().manual_seed(rank)
        with Join([model]):  # rank 0 runs out after 2 batches, the others shadow its all_reduce
            for _ in range(2 + 3 * rank):
                loss = model(torch.randn(3, 4, generator=data)).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        return model.module.weight.detach().clone()
    weights = run_script(script, world_size=3, timeout_s=60)
    assert all(torch.equal(w, weights[0]) for w in weights), weights
    assert not torch.equal(weights[0], torch.zeros_like(weights[0]))


def test_dcp_save_then_load_on_every_rank(tmp_path):
    import torch
    import torch.distributed.checkpoint as dcp
    import torch.nn as nn

    def script(rank):
        torch.manual_seed(rank)
        model = nn.Linear(4, 3)
        dcp.save({"model": model.state_dict()}, checkpoint_id=str(tmp_path))
        fresh = nn.Linear(4, 3)
        state = {"model": fresh.state_dict()}
        dcp.load(state, checkpoint_id=str(tmp_path))
        fresh.load_state_dict(state["model"])
        return torch.equal(fresh.weight, model.weight), float(fresh.weight.sum())
    got = run_script(script, world_size=2, timeout_s=60)
    assert sorted(os.listdir(tmp_path)) == [".metadata", "__0_0.distcp", "__1_0.distcp"]
    # replicated tensors are saved once (by rank 0, the coordinator): every rank loads its values
    assert got[0][0] and got[1][1] == got[0][1], got
