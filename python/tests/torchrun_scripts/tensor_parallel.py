"""Tensor parallelism as torchtitan writes it, on a (world/2 x 2) DeviceMesh ("dp", "tp"): a
small transformer (embedding, attention, MLP, RMSNorm, output) parallelized with ColwiseParallel,
RowwiseParallel, SequenceParallel and PrepareModuleInput, the loss under loss_parallel, FSDP2 over
"dp" with a MixedPrecisionPolicy (bfloat16 parameters, float32 reduction) and
reshard_after_forward=False, gradients clipped with clip_grad_norm_ over DTensor parameters, the
optimizer state through get_state_dict. Also DTensor redistribute: Shard(0) -> Replicate,
Shard(0) -> Partial -> Replicate, Shard(0) -> Shard(1), Partial -> Replicate and -> Shard(0).
CPU. Saves losses, norms, gradients, weights, the redistributed tensors and the optimizer state.
Usage: torchrun --nproc-per-node N tensor_parallel.py OUT_DIR   (N even)"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.checkpoint.state_dict import get_state_dict
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                               RowwiseParallel, SequenceParallel, loss_parallel,
                                               parallelize_module)

VOCAB, DIM, HEADS, SEQ, BATCH = 32, 16, 4, 8, 2


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq, self.wk, self.wv = (nn.Linear(DIM, DIM, bias=False) for _ in range(3))
        self.wo = nn.Linear(DIM, DIM, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = (w(x).view(b, s, -1, DIM // HEADS).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, s, -1))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm, self.ffn_norm = nn.RMSNorm(DIM), nn.RMSNorm(DIM)
        self.attention = Attention()
        self.w1, self.w2 = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.w2(F.silu(self.w1(self.ffn_norm(x))))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(2))
        self.norm = nn.RMSNorm(DIM)
        self.output = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.output(self.norm(x))


def parallelize(model, mesh):
    tp = mesh["tp"]
    parallelize_module(model, tp, {
        "tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "norm": SequenceParallel(),
        "output": ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1),
                                  use_local_output=False),
    })
    for block in model.layers:
        parallelize_module(block, tp, {
            "attention_norm": SequenceParallel(),
            "attention": PrepareModuleInput(input_layouts=(Shard(1),),
                                            desired_input_layouts=(Replicate(),)),
            "attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(),
            "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "ffn_norm": SequenceParallel(),
            "w1": ColwiseParallel(input_layouts=Shard(1)),
            "w2": RowwiseParallel(output_layouts=Shard(1)),
        })
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in model.layers:
        fully_shard(block, mesh=mesh["dp"], mp_policy=policy, reshard_after_forward=False)
    fully_shard(model, mesh=mesh["dp"], mp_policy=policy, reshard_after_forward=False)
    return model


def redistributions(mesh):
    tp = mesh["tp"]
    torch.manual_seed(7)
    full = torch.randn(4, 6)
    sharded = distribute_tensor(full, tp, [Shard(0)])
    replicated = sharded.redistribute(tp, [Replicate()])
    partial = sharded.redistribute(tp, [Partial()])  # each rank holds a share of the sum
    back = partial.redistribute(tp, [Replicate()])
    cols = sharded.redistribute(tp, [Shard(1)])
    summed = DTensor.from_local(torch.full((2,), float(tp.get_local_rank() + 1)), tp, [Partial()])
    return {"replicated": replicated.to_local(), "partial_local": partial.to_local(),
            "back": back.to_local(), "cols": cols.to_local(),
            "summed": summed.redistribute(tp, [Replicate()]).to_local(),
            "scattered": summed.redistribute(tp, [Shard(0)]).to_local()}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world // 2, 2), mesh_dim_names=("dp", "tp"))
    out = {"redistribute": redistributions(mesh)}
    torch.manual_seed(0)
    model = parallelize(Transformer(), mesh)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    torch.manual_seed(100 + mesh["dp"].get_local_rank())  # each replica its own batch
    losses, norms = [], []
    for step in range(3):
        tokens = torch.randint(0, VOCAB, (BATCH, SEQ))
        opt.zero_grad()
        logits = model(tokens)
        with loss_parallel():
            loss = F.cross_entropy(logits.flatten(0, 1), tokens.roll(-1, 1).flatten())
            loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5).full_tensor())
        opt.step()
        losses.append(loss.full_tensor().detach())
    _, optim_state = get_state_dict(model, opt)
    out.update(losses=torch.stack(losses), norms=torch.stack(norms),
               weights={n: p.full_tensor().detach() for n, p in model.named_parameters()},
               grads={n: p.grad.full_tensor() for n, p in model.named_parameters()},
               optim={n: {k: v.full_tensor() if isinstance(v, DTensor) else v
                          for k, v in s.items()} for n, s in optim_state["state"].items()})
    torch.save(out, os.path.join(sys.argv[1], "tensor_parallel.rank%d.pt" % rank))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
