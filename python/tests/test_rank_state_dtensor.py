"""DTensor's table of custom operator handlers is per rank (python/twinccl/_rank_objects.py):
`loss_parallel()` adds its cross-entropy handlers on entry and removes them on exit. Shared by
the rank threads, a rank outside loss_parallel ran with another rank's handlers, and the second
rank to leave raised `KeyError: aten._log_softmax.default` (torchtitan's training step:
torchrun_scripts/tensor_parallel.py failed so on every rank)."""
from torch_backend_support import needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402

pytestmark = needs_torch2


def test_loss_parallel_is_each_ranks_own():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Shard, distribute_tensor
    from torch.distributed.tensor.parallel import loss_parallel

    log_softmax = torch.ops.aten._log_softmax.default
    caller = DTensor._op_dispatcher._custom_op_handlers
    caller_keys = set(caller)

    def handlers():
        return log_softmax in DTensor._op_dispatcher._custom_op_handlers

    def script(rank):
        mesh = init_device_mesh("cpu", (2,))
        torch.manual_seed(0)
        logits = torch.randn(4, 6, requires_grad=True)
        target = torch.tensor([0, 5, 2, 3])
        expected = torch.nn.functional.cross_entropy(logits, target)
        sharded = distribute_tensor(logits.detach(), mesh, [Shard(1)]).requires_grad_()
        seen = []
        if rank == 0:
            with loss_parallel():
                seen.append(handlers())
                dist.barrier()  # rank 1 runs now, outside loss_parallel
                dist.barrier()
                loss = torch.nn.functional.cross_entropy(sharded, target)
                loss.backward()
        else:
            dist.barrier()
            seen.append(handlers())
            with loss_parallel():
                dist.barrier()
                loss = torch.nn.functional.cross_entropy(sharded, target)
                loss.backward()
        seen.append(handlers())
        return seen, float(loss.full_tensor()), float(expected)

    results = run_script(script, world_size=2)
    assert [seen for seen, _, _ in results] == [[True, False], [False, False]]
    for _, loss, expected in results:
        assert abs(loss - expected) < 1e-6
    # the caller's table as it was
    assert DTensor._op_dispatcher._custom_op_handlers is caller and set(caller) == caller_keys


def test_fsdp1_profiler_sections_are_each_ranks_own():
    """FSDP1's SimpleProfiler keeps the sections a process is inside in class attributes;
    FSDP.optim_state_dict profiles sections with collectives inside. Shared, the second rank to
    leave one raised `KeyError: 'preprocessing_with_comm'`."""
    from torch.distributed.fsdp._debug_utils import SimpleProfiler
    caller = (SimpleProfiler.profiling, SimpleProfiler.results)

    def script(rank):
        with SimpleProfiler.profile("preprocessing_with_comm"):
            t = torch.ones(1)
            dist.all_reduce(t)  # the other rank enters the section here
        return sorted(SimpleProfiler.profiling), sorted(SimpleProfiler.results), t.item()
    for profiling, results, total in run_script(script, world_size=2):
        assert profiling == [] and results == ["preprocessing_with_comm"] and total == 2.0
    assert (SimpleProfiler.profiling, SimpleProfiler.results) == caller  # the caller's, as before
