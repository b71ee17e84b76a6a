"""A mixture-of-experts layer with expert parallelism, as MoE training code writes it: one expert
per rank, each token routed to its top expert, the tokens per expert counted at run time and
exchanged first (all_to_all_single of the counts), then the tokens themselves with uneven
all_to_all_single (input/output split sizes from those counts; some splits 0), and back. Three
ways: dist.all_to_all_single in a custom autograd Function (the counts reversed in backward),
torch.distributed.nn.functional.all_to_all_single, and the functional collectives'
all_to_all_single_autograd (torchtitan's). Also torch.distributed.nn.functional.all_gather and
reduce_scatter with backward. CPU. Saves outputs, losses and gradients.
Usage: torchrun --nproc-per-node N moe.py OUT_DIR"""
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.distributed.nn.functional as dnn
import torch.nn as nn

DIM = 8


class AllToAll(torch.autograd.Function):
    """Uneven all_to_all_single whose backward sends the gradients back the way they came."""

    @staticmethod
    def forward(ctx, x, output_splits, input_splits):
        ctx.splits = (output_splits, input_splits)
        out = x.new_empty(sum(output_splits), x.shape[1])
        dist.all_to_all_single(out, x.contiguous(), output_splits, input_splits)
        return out

    @staticmethod
    def backward(ctx, grad):
        output_splits, input_splits = ctx.splits
        back = grad.new_empty(sum(input_splits), grad.shape[1])
        dist.all_to_all_single(back, grad.contiguous(), input_splits, output_splits)
        return back, None, None


def moe_forward(tokens, gate, expert, how):
    world = dist.get_world_size()
    scores = torch.softmax(gate(tokens), dim=-1)
    weight, choice = scores.max(dim=-1)
    order = torch.argsort(choice, stable=True)
    input_splits = torch.bincount(choice, minlength=world)
    output_splits = torch.empty_like(input_splits)
    dist.all_to_all_single(output_splits, input_splits)  # how many tokens each rank sends me
    send_counts, recv_counts = input_splits.tolist(), output_splits.tolist()
    routed = tokens[order]
    if how == "autograd_function":
        received = AllToAll.apply(routed, recv_counts, send_counts)
        processed = expert(received)
        returned = AllToAll.apply(processed, send_counts, recv_counts)
    elif how == "dist_nn":
        received = routed.new_empty(sum(recv_counts), DIM)
        received = dnn.all_to_all_single(received, routed, recv_counts, send_counts)
        processed = expert(received)
        returned = routed.new_empty(sum(send_counts), DIM)
        returned = dnn.all_to_all_single(returned, processed, send_counts, recv_counts)
    else:
        group = dist.group.WORLD
        received = funcol.all_to_all_single_autograd(routed, recv_counts, send_counts, group)
        processed = expert(received)
        returned = funcol.all_to_all_single_autograd(processed, send_counts, recv_counts, group)
        returned = funcol.wait_tensor(returned)
    out = torch.empty_like(returned)
    out[order] = returned
    return out * weight.unsqueeze(-1), send_counts, recv_counts


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    gate = nn.Linear(DIM, world, bias=False)
    torch.manual_seed(10 + rank)  # this rank's expert and tokens
    expert = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))
    tokens = torch.randn(2 + 3 * rank, DIM)  # rank 0 sends nothing to some experts
    out = {}
    for how in ("autograd_function", "dist_nn", "functional"):
        gate.zero_grad()
        expert.zero_grad()
        x = tokens.clone().requires_grad_()
        y, send_counts, recv_counts = moe_forward(x, gate, expert, how)
        loss = y.square().mean()
        loss.backward()
        out[how] = {"y": y.detach(), "loss": loss.detach(), "x_grad": x.grad,
                    "gate_grad": gate.weight.grad.clone(),
                    "expert_grads": [p.grad.clone() for p in expert.parameters()],
                    "send": torch.tensor(send_counts), "recv": torch.tensor(recv_counts)}
    # torch.distributed.nn's all_gather and reduce_scatter, values and gradients
    v = torch.arange(3.0).add(rank).requires_grad_()
    gathered = dnn.all_gather(v)
    (torch.stack(gathered) * torch.arange(1.0, world + 1).unsqueeze(1)).sum().backward()
    chunks = [torch.full((2,), float(rank * world + k), requires_grad=True) for k in range(world)]
    reduced = dnn.reduce_scatter(torch.empty(2), chunks)
    (reduced * (rank + 1)).sum().backward()
    out["dist_nn_collectives"] = {"gathered": torch.stack(gathered).detach(), "v_grad": v.grad,
                                  "reduced": reduced.detach(),
                                  "chunk_grads": [c.grad for c in chunks]}
    torch.save(out, os.path.join(sys.argv[1], "moe.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
