"""Megatron-LM style tensor-parallel layers: a column-parallel and a row-parallel linear layer
over autograd functions that copy to / reduce from the tensor-parallel region (the group comes
from megatron_state's module globals)."""
import torch
import torch.distributed as dist
import torch.nn as nn

import megatron_state


class _CopyToTensorParallelRegion(torch.autograd.Function):
    """Identity forward; all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=megatron_state.get_tensor_model_parallel_group())
        return grad


class _ReduceFromTensorParallelRegion(torch.autograd.Function):
    """All-reduce forward; identity backward."""

    @staticmethod
    def forward(ctx, x):
        x = x.clone()
        dist.all_reduce(x, group=megatron_state.get_tensor_model_parallel_group())
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class ColumnParallelLinear(nn.Module):
    """Y = X A, A split by columns: each rank computes its slice of the output features."""

    def __init__(self, full_weight, full_bias):
        super().__init__()
        tp, r = (megatron_state.get_tensor_model_parallel_world_size(),
                 megatron_state.get_tensor_model_parallel_rank())
        rows = full_weight.shape[0] // tp
        self.weight = nn.Parameter(full_weight[r * rows:(r + 1) * rows].clone())
        self.bias = nn.Parameter(full_bias[r * rows:(r + 1) * rows].clone())

    def forward(self, x):
        return nn.functional.linear(_CopyToTensorParallelRegion.apply(x), self.weight, self.bias)


class RowParallelLinear(nn.Module):
    """Y = X A, A split by rows: each rank's partial product, summed over the group."""

    def __init__(self, full_weight, full_bias):
        super().__init__()
        tp, r = (megatron_state.get_tensor_model_parallel_world_size(),
                 megatron_state.get_tensor_model_parallel_rank())
        cols = full_weight.shape[1] // tp
        self.weight = nn.Parameter(full_weight[:, r * cols:(r + 1) * cols].clone())
        self.bias = nn.Parameter(full_bias.clone())

    def forward(self, x):
        partial = nn.functional.linear(x, self.weight)
        return _ReduceFromTensorParallelRegion.apply(partial) + self.bias
