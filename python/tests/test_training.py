"""Training-shaped programs on 8 ranks against the single-process computation: the CLIP loss
(all_gather forward, reduce_scatter backward, as a torch.autograd.Function) and a sharded
(ZeRO/FSDP-like) optimizer step."""
import pytest

import twinccl
import twinccl.distributed as dist

torch = pytest.importorskip("torch")
F = torch.nn.functional
WORLD, BATCH, DIM = 8, 4, 16


class AllGather(torch.autograd.Function):
    """Forward: every rank's rows stacked in rank order. Backward: the gradient of the rows this
    rank contributed, summed over every rank's loss (reduce_scatter)."""

    @staticmethod
    def forward(ctx, x):
        out = torch.empty((dist.get_world_size() * x.shape[0],) + tuple(x.shape[1:]),
                          dtype=x.dtype)
        dist.all_gather_into_tensor(out, x.contiguous())
        return out

    @staticmethod
    def backward(ctx, grad):
        mine = torch.empty((grad.shape[0] // dist.get_world_size(),) + tuple(grad.shape[1:]),
                           dtype=grad.dtype)
        dist.reduce_scatter_tensor(mine, grad.contiguous())
        return mine


def clip_loss(img_local, txt_local, img_all, txt_all, rank, scale=10.0):
    """Rank `rank`'s share of the CLIP loss: its rows against every column."""
    labels = torch.arange(img_local.shape[0]) + rank * img_local.shape[0]
    per_image = scale * img_local @ txt_all.t()
    per_text = scale * txt_local @ img_all.t()
    return (F.cross_entropy(per_image, labels, reduction="sum") +
            F.cross_entropy(per_text, labels, reduction="sum")) / 2


def test_clip_loss_gradient_equals_single_process():
    gen = torch.Generator().manual_seed(7)
    images = F.normalize(torch.randn(WORLD * BATCH, DIM, generator=gen, dtype=torch.float64))
    texts = F.normalize(torch.randn(WORLD * BATCH, DIM, generator=gen, dtype=torch.float64))
    grads = {}

    def rank(r):
        img = images[r * BATCH:(r + 1) * BATCH].clone().requires_grad_()
        txt = texts[r * BATCH:(r + 1) * BATCH].clone().requires_grad_()
        loss = clip_loss(img, txt, AllGather.apply(img), AllGather.apply(txt), r)
        loss.backward()
        grads[r] = (img.grad, txt.grad)
    twinccl.run(rank, world_size=WORLD, timeout_s=30)

    img, txt = images.clone().requires_grad_(), texts.clone().requires_grad_()
    total = sum(clip_loss(img[r * BATCH:(r + 1) * BATCH], txt[r * BATCH:(r + 1) * BATCH], img, txt,
                          r) for r in range(WORLD))
    total.backward()
    for r in range(WORLD):
        torch.testing.assert_close(grads[r][0], img.grad[r * BATCH:(r + 1) * BATCH])
        torch.testing.assert_close(grads[r][1], txt.grad[r * BATCH:(r + 1) * BATCH])
    assert img.grad.abs().sum() > 0


def test_sharded_optimizer_step_equals_single_process():
    n = 8 * 5
    gen = torch.Generator().manual_seed(3)
    start = torch.randn(n, generator=gen)
    data = torch.randn(WORLD, 2, n, generator=gen)  # per rank, per step: the local gradient

    finals = {}

    def rank(r):
        params = start.clone()
        shard_len = n // WORLD
        shard = torch.nn.Parameter(params[r * shard_len:(r + 1) * shard_len].clone())
        opt = torch.optim.SGD([shard], lr=0.1, momentum=0.9)  # momentum: sharded state
        for step in range(2):
            local_grad = data[r, step] * params  # depends on the gathered parameters
            grad_shard = torch.empty(shard_len)
            dist.reduce_scatter_tensor(grad_shard, local_grad, op=dist.ReduceOp.AVG)
            shard.grad = grad_shard
            opt.step()
            dist.all_gather_into_tensor(params, shard.data)
        finals[r] = params
    twinccl.run(rank, world_size=WORLD, timeout_s=30)

    full = torch.nn.Parameter(start.clone())
    opt = torch.optim.SGD([full], lr=0.1, momentum=0.9)
    for step in range(2):
        full.grad = (data[:, step] * full.data).mean(dim=0)
        opt.step()
    for r in range(WORLD):
        torch.testing.assert_close(finals[r], full.data, rtol=1e-6, atol=1e-6)
    assert not torch.equal(full.data, start)
