"""torch.nn.SyncBatchNorm under cuda_on_cpu: a GPU script's SyncBatchNorm trains on the CPU with the
statistics of its group's whole batch. Judged against the definition: one BatchNorm over the
ranks' batches put together (outputs, input gradients, the weight's gradient summed over the ranks
as DDP does, running statistics). Before, the forward raised torch's "SyncBatchNorm expected input
tensor to be on GPU" (and its kernels have no CPU version)."""
import sys

import pytest

import twinccl

torch = pytest.importorskip("torch")
nn = torch.nn
tdist = pytest.importorskip("torch.distributed")


def reference(batches, state, grad):
    """BatchNorm2d over the batches put together: (output, input grad, weight grad, module)."""
    bn = nn.BatchNorm2d(batches[0].size(1))
    bn.load_state_dict(state)
    full = torch.cat(batches).requires_grad_()
    out = bn(full)
    out.backward(grad)
    return out.detach(), full.grad, bn.weight.grad, bn


def test_sync_batchnorm_is_batchnorm_over_the_groups_whole_batch():
    torch.manual_seed(0)
    world = 4
    batches = [torch.randn(3 + r, 5, 4, 4) for r in range(world)]  # uneven, as a last batch
    init = nn.BatchNorm2d(5)
    init.weight.data.uniform_()
    init.bias.data.uniform_()
    state = {k: v.clone() for k, v in init.state_dict().items()}
    grad = torch.randn(sum(b.size(0) for b in batches), 5, 4, 4)
    # ranks {0, 1} and {2, 3}: each pair's statistics, as convert_sync_batchnorm(process_group=)
    pairs = [reference(batches[:2], state, grad[:7]), reference(batches[2:], state, grad[7:])]
    whole = reference(batches, state, grad)
    got = {}

    def fn(rank):
        tdist.init_process_group("nccl")
        pair = [tdist.new_group([0, 1]), tdist.new_group([2, 3])][rank // 2]
        for name, group, ref in (("world", None, whole), ("pair", pair, pairs[rank // 2])):
            bn = nn.SyncBatchNorm(5, process_group=group)
            bn.load_state_dict(state)
            bn = bn.cuda()
            x = batches[rank].clone().cuda().requires_grad_()
            out = bn(x)
            first = sum(b.size(0) for b in batches[:rank]) - (0 if group is None else
                                                               7 * (rank // 2))
            out.backward(grad[sum(b.size(0) for b in batches[:rank]):][:x.size(0)])
            weight_grad = bn.weight.grad.clone()
            tdist.all_reduce(weight_grad, group=group)  # DDP's sum (before its division)
            got[rank, name] = (out.detach(), x.grad, weight_grad, bn.running_mean.clone(),
                               bn.running_var.clone(), first, ref)
            bn.eval()  # eval: the running statistics, no collective
            got[rank, name + " eval"] = bn(x.detach())
    twinccl.run(fn, world_size=world, torch_distributed=True, cuda_on_cpu=True, timeout_s=60)
    for (rank, name), value in got.items():
        if name.endswith("eval"):
            continue
        out, x_grad, weight_grad, running_mean, running_var, first, ref = value
        ref_out, ref_x_grad, ref_weight_grad, ref_bn = ref
        rows = slice(first, first + out.size(0))
        assert torch.allclose(out, ref_out[rows], atol=1e-5), (rank, name)
        assert torch.allclose(x_grad, ref_x_grad[rows], atol=1e-5), (rank, name)
        assert torch.allclose(weight_grad, ref_weight_grad, atol=1e-4), (rank, name)
        assert torch.allclose(running_mean, ref_bn.running_mean, atol=1e-6), (rank, name)
        assert torch.allclose(running_var, ref_bn.running_var, atol=1e-6), (rank, name)
        ref_bn.eval()
        assert torch.allclose(got[rank, name + " eval"], ref_bn(batches[rank]), atol=1e-5)
    batchnorm = sys.modules[nn.SyncBatchNorm.__module__]
    assert batchnorm.torch is torch  # torch's own again after the run


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2))


def test_ddp_with_converted_sync_batchnorm_trains_as_one_process_on_the_whole_batch():
    """DDP refuses a CPU module with SyncBatchNorm layers ("only work with GPU modules"): under
    cuda_on_cpu the module is the GPU's. 4 ranks x 4 samples, 3 SGD steps = one process on the 16
    samples with BatchNorm (DDP's mean of the ranks' gradients of equal batches)."""
    world, steps = 4, 3
    draws = []
    for rank in range(world):
        torch.manual_seed(rank)
        draws.append([(torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4,))) for _ in range(steps)])
    ref = _model()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(steps):
        x = torch.cat([draws[r][step][0] for r in range(world)])
        y = torch.cat([draws[r][step][1] for r in range(world)])
        opt.zero_grad()
        nn.functional.cross_entropy(ref(x), y).backward()
        opt.step()
    got = {}

    def fn(rank):
        tdist.init_process_group("nccl")
        torch.cuda.set_device(rank)
        model = nn.SyncBatchNorm.convert_sync_batchnorm(_model()).cuda()
        ddp = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        for x, y in draws[rank]:
            opt.zero_grad()
            nn.functional.cross_entropy(ddp(x.cuda()), y.cuda()).backward()
            opt.step()
        got[rank] = [t.detach().clone() for t in model.state_dict().values()]
    twinccl.run(fn, world_size=world, torch_distributed=True, cuda_on_cpu=True, timeout_s=60)
    for rank in range(world):
        for mine, want in zip(got[rank], ref.state_dict().values()):
            assert torch.allclose(mine.float(), want.float(), atol=1e-5), rank
