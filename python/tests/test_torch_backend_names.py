"""The backend a TwinCCL group says it has is the one the script asked for, as torch answers for
a group of that backend (python/twinccl/_torch_backend_names.py). Scripts branch on
`dist.get_backend() == "nccl"` (the device for their tensors; detectron2 and fairseq before
their object gathers), and so does torch (torch.distributed.nn's all_gather backward
reduce-scatters on NCCL; ZeroRedundancyOptimizer's overlap hook refuses Gloo). Before, every
group answered 'twinccl'. The Gloo answers are pinned against torchrun + Gloo by
torchrun_scripts/api_calls.py; here the forms a CPU Gloo run cannot show."""
import pytest
from torch_backend_support import needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402
import torch.distributed.nn.functional as dnn  # noqa: E402

pytestmark = needs_torch2


def answers(group=None):
    return str(dist.get_backend(group)), dist.get_backend_config(group)


def test_no_backend_is_torchs_undefined_and_a_run_without_init_says_twinccl():
    def script(rank):
        before = answers()  # the run's own group, before the script names a backend
        dist.init_process_group()  # torch on a CPU machine: 'undefined', "cpu:gloo"
        return before, answers(), answers(dist.new_group())
    for before, default, new in run_script(script, world_size=2):
        assert before == ("twinccl", "cpu:twinccl")
        assert default == new == ("undefined", "cpu:gloo")


def test_a_script_asking_for_nccl_is_told_nccl_and_torch_takes_its_nccl_paths():
    def script(rank):
        dist.init_process_group("nccl")
        gloo = dist.new_group(backend="gloo")
        # torch.distributed.nn.all_gather's backward: reduce_scatter on NCCL (all_to_all else)
        x = torch.full((2,), float(rank + 1), requires_grad=True)
        gathered = dnn.all_gather(x)
        (torch.stack(gathered) * torch.tensor([[1.0], [10.0]])).sum().backward()
        return (answers(), answers(dist.new_group([0, 1])), answers(gloo),
                dist.get_backend() == dist.Backend.NCCL, x.grad.tolist())
    results = run_script(script, world_size=2)
    for rank, (default, new, gloo, is_nccl, grad) in enumerate(results):
        assert default == new == ("nccl", "cuda:nccl")
        assert gloo == ("gloo", "cpu:gloo,cuda:gloo")
        assert is_nccl
        assert grad == [2.0 * (1 + 9 * rank)] * 2  # both ranks' 1 or 10, summed


@pytest.mark.parametrize("backend", ["gloo", "nccl"])
def test_zero_overlap_refuses_gloo_as_torch_does(backend):
    """hook_with_zero_step refuses a Gloo group ("may meet hangs"): an unmodified script gets
    torch's error under TwinCCL as under torchrun + Gloo, and passes where it asked for nccl."""
    from torch.distributed.algorithms.ddp_comm_hooks.ddp_zero_hook import hook_with_zero_step
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel as DDP

    def script(rank):
        dist.init_process_group(backend)
        model = DDP(torch.nn.Linear(4, 4))
        zero = ZeroRedundancyOptimizer(model.parameters(), torch.optim.SGD, lr=0.1,
                                       overlap_with_ddp=True)
        try:
            hook_with_zero_step(allreduce_hook, model, zero)
        except RuntimeError as e:
            return str(e)
        return None
    for message in run_script(script, world_size=2):
        if backend == "gloo":
            assert message == "Gloo backend using Overlapping DDP with ZeRO may meet hangs"
        else:
            assert message is None
