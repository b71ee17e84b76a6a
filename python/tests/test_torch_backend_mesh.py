"""DeviceMesh, DTensor tensor and sequence parallelism, functional collectives and torch's group
helpers on 4 emulated ranks with TwinCCL as torch's backend; references computed in one process."""
import copy

import pytest
from torch_backend_support import TORCH2, close, needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.distributed import all_reduce as bound_all_reduce  # noqa: E402  (bound at import)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.up = nn.Linear(8, 16)
        self.down = nn.Linear(16, 8)

    def forward(self, x):
        return self.down(torch.relu(self.up(self.norm(x))))


def mlp():
    model = MLP()
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return model


X = torch.randn(4, 6, 8, generator=torch.Generator().manual_seed(12))  # (batch, sequence, hidden)


@needs_torch2
def test_2d_mesh_data_and_tensor_parallel_mlp_with_sequence_parallelism():
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)

    def script(rank):
        mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        dp, tp = mesh["dp"].get_local_rank(), mesh["tp"].get_local_rank()
        model = parallelize_module(mlp(), mesh["tp"], {
            "norm": SequenceParallel(),
            "up": ColwiseParallel(input_layouts=Shard(1)),
            "down": RowwiseParallel(output_layouts=Shard(1)),
        })
        # Each data-parallel rank its half of the batch; each tensor-parallel rank its half of
        # the sequence (sequence parallelism shards the activations along dim 1).
        x = X[dp * 2:dp * 2 + 2, tp * 3:tp * 3 + 3]
        out = model(x)
        out.pow(2).sum().backward()  # the local shard (use_local_output)
        grads = []
        for p in model.parameters():
            g = p.grad.full_tensor()
            dist.all_reduce(g, group=mesh["dp"].get_group())  # data parallel: sum the halves
            grads.append(g)
        return grads, (out + 0).detach()

    results = run_script(script)
    ref = mlp()
    out = ref(X)
    out.pow(2).sum().backward()
    expected = [p.grad for p in ref.parameters()]
    for r in range(4):
        grads, local = results[r]
        dp, tp = r // 2, r % 2
        assert close([local], [out[dp * 2:dp * 2 + 2, tp * 3:tp * 3 + 3].detach()])
        assert close(grads, expected), "rank %d's gradients differ" % r


@needs_torch2
def test_functional_collectives_object_collectives_and_group_helpers():
    import torch.distributed._functional_collectives as funcol

    def script(rank):
        x = torch.full((2,), float(rank + 1))
        summed = funcol.all_reduce(x, "sum", dist.group.WORLD)
        gathered = funcol.all_gather_tensor(x, 0, dist.group.WORLD)
        objects = [None] * 4
        dist.all_gather_object(objects, {"rank": rank})
        halves, _ = dist.new_subgroups(2)
        pairs, _ = dist.new_subgroups_by_enumeration([[0, 3], [1, 2]])
        odd_even = dist.split_group(split_ranks=[[2, 0], [1, 3]])  # order kept
        a, b, c = torch.ones(1) * rank, torch.ones(1) * rank, torch.ones(1) * rank
        base = torch.empty(8)
        dist._all_gather_base(base, x)
        bound_all_reduce(a, group=halves)
        dist.all_reduce(b, group=pairs)
        work = dist.all_reduce(c, group=odd_even, async_op=True)
        value = work.get_future().wait()
        return (summed.tolist(), gathered.tolist(), objects, a.item(), b.item(), c.item(),
                [float(t.item()) for t in value], base.tolist(), dist.get_rank(odd_even))

    results = run_script(script)
    for r in range(4):
        summed, gathered, objects, a, b, c, value, base, split_rank = results[r]
        assert summed == [10.0, 10.0]
        assert gathered == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0] == base
        assert objects == [{"rank": k} for k in range(4)]
        assert a == (1.0 if r < 2 else 5.0)
        assert b == 3.0
        assert c == (2.0 if r % 2 == 0 else 4.0) and value == [c]
        assert split_rank == {0: 1, 1: 0, 2: 0, 3: 1}[r]


@pytest.mark.parametrize("rank_state", ["isolated", "shared"])
def test_ddp_gradients_with_a_copied_model_of_rank_zero(rank_state):
    """DDP's constructor broadcasts rank 0's parameters: ranks that start from different weights
    train rank 0's model. rank_state='shared' (no rank baton): torch 2.x's per-thread world."""
    if rank_state == "shared" and not TORCH2:
        pytest.skip("torch 1.x without the rank baton: the function patch, no DDP")
    from torch.nn.parallel import DistributedDataParallel as DDP

    def script(rank):
        model = mlp()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(rank)  # differs per rank until DDP's broadcast
        ddp = DDP(model)
        ddp(X[rank]).pow(2).sum().backward()
        return [p.grad.clone() for p in model.parameters()]

    results = run_script(script, rank_state=rank_state)
    ref = mlp()
    copies = [copy.deepcopy(ref) for _ in range(4)]
    for r in range(4):
        copies[r](X[r]).pow(2).sum().backward()
    expected = [sum(c_p.grad for c_p in ps) / 4 for ps in zip(*[c.parameters() for c in copies])]
    for r in range(4):
        assert close(results[r], expected), "rank %d's gradients differ" % r


@pytest.mark.parametrize("rank_state", ["isolated", "shared"])
def test_every_torch_distributed_collective_reaches_the_backend(rank_state):
    def script(rank):
        x = torch.full((4,), float(rank + 1))
        out = {}
        t = x.clone()
        dist.broadcast(t, src=2)
        out["broadcast"] = t.tolist()
        t = x.clone()
        dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
        out["reduce"] = t.tolist() if rank == 1 else None
        gathered = [torch.empty(4) for _ in range(4)] if rank == 0 else None
        dist.gather(x, gathered, dst=0)
        out["gather"] = [g[0].item() for g in gathered] if rank == 0 else None
        t = torch.empty(4)
        dist.scatter(t, [torch.full((4,), 10.0 + k) for k in range(4)] if rank == 3 else None,
                     src=3)
        out["scatter"] = t[0].item()
        lists = [torch.empty(4) for _ in range(4)]
        dist.all_gather(lists, x)
        out["all_gather"] = [v[0].item() for v in lists]
        t = torch.empty(1)
        dist.reduce_scatter(t, [torch.full((1,), float(k)) for k in range(4)])
        out["reduce_scatter"] = t.item()
        t = torch.empty(4)
        dist.reduce_scatter_tensor(t[:1], torch.arange(4.0))
        out["reduce_scatter_tensor"] = t[0].item()
        t = torch.empty(4)
        dist.all_to_all_single(t, torch.arange(4.0) + 10 * rank)
        out["all_to_all_single"] = t.tolist()
        outs = [torch.empty(1) for _ in range(4)]
        dist.all_to_all(outs, [torch.full((1,), 10.0 * rank + k) for k in range(4)])
        out["all_to_all"] = [o.item() for o in outs]
        objs = [{"from": rank}] if rank == 1 else [None]
        dist.broadcast_object_list(objs, src=1)
        out["broadcast_object_list"] = objs[0]
        recv, send = torch.empty(2), torch.full((2,), float(rank))
        reqs = [dist.irecv(recv, (rank - 1) % 4), dist.isend(send, (rank + 1) % 4)]
        for r in reqs:
            r.wait()
        out["ring"] = recv[0].item()
        dist.barrier()
        return out

    results = run_script(script, rank_state=rank_state)
    for r in range(4):
        out = results[r]
        assert out["broadcast"] == [3.0] * 4
        assert out["reduce"] == ([4.0] * 4 if r == 1 else None)
        assert out["gather"] == ([1.0, 2.0, 3.0, 4.0] if r == 0 else None)
        assert out["scatter"] == 10.0 + r
        assert out["all_gather"] == [1.0, 2.0, 3.0, 4.0]
        assert out["reduce_scatter"] == 4.0 * r
        assert out["reduce_scatter_tensor"] == 4.0 * r
        assert out["all_to_all_single"] == [10.0 * k + r for k in range(4)]
        assert out["all_to_all"] == [10.0 * k + r for k in range(4)]
        assert out["broadcast_object_list"] == {"from": 1}
        assert out["ring"] == float((r - 1) % 4)
