"""Async work of TwinCCL's torch backend: a Work's get_future() inside a backward pass (DDP's
reducer, a comm hook) is returned pending and completed at the end of that backward pass, so the
bucket's all_reduce overlaps the rest of backward; elsewhere it completes before it returns.
Before: every future was completed before get_future returned (the hook saw done() == True)."""

from torch_backend_support import close, needs_torch2, run_script, torch

import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))

@needs_torch2
def test_ddp_comm_hook_future_is_pending_until_the_end_of_backward():
    from torch.nn.parallel import DistributedDataParallel as DDP

    def script(rank):
        pending = []

        def hook(state, bucket):
            fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
            pending.append(not fut.done())
            return fut.then(lambda f: f.value()[0].div_(dist.get_world_size()))
        net = model()
        ddp = DDP(net)
        ddp.register_comm_hook(None, hook)
        torch.manual_seed(rank)
        ddp(torch.randn(4, 8)).sum().backward()
        work = dist.all_reduce(torch.ones(1), async_op=True)
        chained = work.get_future().then(lambda f: f.value()[0] * 2)  # outside backward
        return [p.grad.clone() for p in net.parameters()], pending, chained.wait().item()

    results = run_script(script)
    copies = [model() for _ in range(4)]
    for r, c in enumerate(copies):
        torch.manual_seed(r)
        c(torch.randn(4, 8)).sum().backward()
    expected = [sum(ps) / 4 for ps in zip(*[[p.grad for p in c.parameters()] for c in copies])]
    for r in range(4):
        grads, pending, doubled = results[r]
        assert pending and all(pending), "rank %d: the hook's future was complete already" % r
        assert close(grads, expected), "rank %d's gradients differ" % r
        assert doubled == 8.0

@needs_torch2
def test_a_python_wait_on_a_pending_future_inside_backward_completes_it():
    """A custom autograd function that waits on an all_reduce's future in its backward."""

    class SumGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            fut = dist.all_reduce(grad.clone(), async_op=True).get_future()
            return fut.wait()[0]

    def script(rank):
        x = torch.full((3,), float(rank + 1), requires_grad=True)
        (SumGrad.apply(x) * (rank + 1)).sum().backward()
        return x.grad.tolist()

    for grads in run_script(script):
        assert grads == [10.0] * 3
