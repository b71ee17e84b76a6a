"""GPU training code on emulated ranks with twinccl.run(cuda_on_cpu=True): .cuda(),
device="cuda", torch.cuda.set_device(local_rank), streams and events mapped to the CPU, one
current device per rank."""
import os

import pytest

import twinccl
import twinccl.distributed as dist

torch = pytest.importorskip("torch")


def test_a_gpu_step_runs_on_the_cpu_with_a_current_device_per_rank():
    seen = {}
    was_available = torch.cuda.is_available()

    def fn(rank):
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        torch.manual_seed(0)
        model = torch.nn.Linear(8, 2).cuda()
        x = torch.randn(4, 8, device="cuda") + rank
        y = torch.zeros(4, 2).to(device)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        with torch.cuda.stream(torch.cuda.Stream()):
            ((model(x) - y) ** 2).mean().backward()
        end.record()
        torch.cuda.synchronize()
        dist.barrier()  # another rank's set_device ran meanwhile
        grad = model.weight.grad.contiguous()
        dist.all_reduce(grad)
        seen[rank] = (torch.cuda.current_device(), torch.cuda.device_count(), grad.device.type,
                      grad, start.elapsed_time(end) >= 0, torch.cuda.get_device_name())
    twinccl.run(fn, world_size=3, cuda_on_cpu=True, timeout_s=30)
    for rank in range(3):
        assert seen[rank][:3] == (rank, 3, "cpu") and seen[rank][4]
        assert torch.equal(seen[rank][3], seen[0][3])
        assert "H100" in seen[rank][5]
    assert torch.cuda.is_available() == was_available  # the mapping ends with the run
    with pytest.raises(twinccl.InvalidArgument, match="cuda_on_cpu must be True or False"):
        twinccl.run(lambda r: None, world_size=1, cuda_on_cpu="yes")


def test_ddp_with_device_ids_as_a_gpu_script_writes_it():
    import torch.distributed as tdist
    from torch.nn.parallel import DistributedDataParallel as DDP
    weights = {}

    def fn(rank):
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        tdist.init_process_group("nccl")
        torch.manual_seed(0)
        model = DDP(torch.nn.Linear(8, 2).cuda(), device_ids=[local_rank],
                    output_device=local_rank)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        torch.manual_seed(rank)  # each rank its own batch
        for _ in range(2):
            opt.zero_grad()
            model(torch.randn(4, 8, device="cuda")).pow(2).mean().backward()
            opt.step()
        weights[rank] = model.module.weight.detach().clone()
        tdist.destroy_process_group()
    twinccl.run(fn, world_size=3, cuda_on_cpu=True, torch_distributed=True, timeout_s=60)
    assert all(torch.equal(weights[0], weights[r]) for r in range(3))  # gradients averaged


def test_a_cuda_device_mesh_is_a_mesh_of_the_cpu():
    """init_device_mesh("cuda", ...) in a GPU script: DTensor moved each tensor to its mesh's
    device type and failed ("Expects DTensor to be moved to cuda but got cpu") on every
    distribute_tensor; now the mesh is the CPU's (_cuda_on_cpu._mesh_init)."""
    import torch.distributed as tdist
    if not hasattr(tdist.distributed_c10d, "_World"):
        pytest.skip("torch %s has no DeviceMesh" % torch.__version__)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    seen = {}

    def fn(rank):
        tdist.init_process_group("nccl")
        mesh = init_device_mesh("cuda", (2,))
        full = torch.arange(8.0, device="cuda").reshape(4, 2)
        sharded = distribute_tensor(full, mesh, [Shard(0)])
        seen[rank] = (mesh.device_type, sharded.to_local(), sharded.full_tensor())
    twinccl.run(fn, world_size=2, cuda_on_cpu=True, torch_distributed=True, timeout_s=30)
    for rank in range(2):
        device_type, local, full = seen[rank]
        assert device_type == "cpu"
        assert torch.equal(local, torch.arange(8.0).reshape(4, 2)[2 * rank:2 * rank + 2])
        assert torch.equal(full, torch.arange(8.0).reshape(4, 2))


def test_adam_steps_fork_rng_and_torch_accelerator_answer_as_torch_cuda():
    """Every Adam/AdamW step asks torch.accelerator.current_stream().is_capturing() once CUDA is
    available: it raised AcceleratorError ("CUDA driver version is insufficient") on a machine
    without a GPU. torch.accelerator's device and stream functions now answer as torch.cuda's.
    torch.random.fork_rng(device_type="cuda") (pipelining's pipeline() tracer) raised IndexError
    in torch.cuda.get_rng_state: it saves the CPU generator's state, which draws here."""
    if not hasattr(torch, "accelerator"):
        pytest.skip("torch %s has no torch.accelerator" % torch.__version__)
    seen = {}

    def fn(rank):
        torch.accelerator.set_device_index(rank)
        torch.manual_seed(0)
        model = torch.nn.Linear(4, 2).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=0.1)
        model(torch.ones(3, 4, device="cuda")).sum().backward()
        opt.step()
        torch.accelerator.synchronize()
        before = torch.rand(2)
        with torch.random.fork_rng(devices=[rank], device_type="cuda"):
            torch.rand(5, device="cuda")
        assert not torch.equal(torch.rand(2), before)  # went on from where it was
        saved = torch.cuda.get_rng_state_all()
        torch.cuda.set_rng_state_all(saved)
        assert len(saved) == 2
        seen[rank] = (torch.accelerator.current_device_index(), torch.accelerator.device_count(),
                      torch.cuda.current_device(), model.weight.detach().clone())
    twinccl.run(fn, world_size=2, cuda_on_cpu=True, timeout_s=30)
    for rank in range(2):
        assert seen[rank][:3] == (rank, 2, rank)
        assert torch.equal(seen[rank][3], seen[0][3])
