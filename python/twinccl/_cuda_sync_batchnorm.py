"""torch.nn.SyncBatchNorm under cuda_on_cpu (`--cuda-on-cpu`): a GPU training script's
`SyncBatchNorm.convert_sync_batchnorm(model)` (torchvision's `--sync-bn`, detectron2, mmdetection)
trains on the CPU with the batch statistics of every rank of its group, as on GPUs. Without it
the script stopped at its first forward: torch's SyncBatchNorm refuses a CPU input ("SyncBatchNorm
expected input tensor to be on GPU") and its kernels (batch_norm_stats, ...) have no CPU version.

How it works (the math of batch normalization over the group's whole batch, written here; torch's
CUDA kernels are not read or copied): in training, with more than one rank in its group, each
rank takes per channel its element count n_r, mean m_r and biased variance v_r of its input and
all_gathers them (one collective, as torch's forward); the group's mean is sum n_r m_r / N and
its variance sum n_r (v_r + (m_r - mean)^2) / N (N = sum n_r); the output is
(x - mean) / sqrt(var + eps) x weight + bias; the running mean and variance move by the momentum
towards the mean and the unbiased variance var N / (N - 1). Backward: each rank's per-channel
sums of dy and dy (x - mean) are all_reduced (one collective, as torch's backward); the input's
gradient is (dy - sum dy / N - (x - mean) invstd^2 sum dy(x - mean) / N) invstd weight; the
weight's and bias's gradients stay this rank's own (DDP averages them, as on GPUs). A rank with
an empty batch takes part with n_r = 0. Eval mode and a group of one rank are torch's own
batch_norm, as in torch.

torch's module does the rest as it does on GPUs (momentum, num_batches_tracked, which group):
its device check reads torch._C._get_privateuse1_backend_name(), which, for the code of
torch/nn/modules/batchnorm.py alone and while cuda_on_cpu lasts, answers "cpu", and its
`sync_batch_norm` is the function below; DistributedDataParallel's check that a module with
SyncBatchNorm layers is on a GPU is skipped (the module is the GPU's here).
"""
import torch
import torch.distributed as dist


class _CpuSyncBatchNorm(torch.autograd.Function):
    """torch.nn.modules._functions.SyncBatchNorm's interface, on CPU tensors."""

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        channels = input.size(1)
        dims = [d for d in range(input.dim()) if d != 1]
        x = input.float() if input.dtype in (torch.float16, torch.bfloat16) else input
        count = x.numel() // channels if channels else 0
        if count > 0:
            mean = x.mean(dims)
            var = x.var(dims, unbiased=False)
        else:
            mean = var = x.new_zeros(channels)
        local = torch.cat([mean, var, mean.new_full((1,), float(count))])
        gathered = [torch.empty_like(local) for _ in range(world_size)]
        dist.all_gather(gathered, local.contiguous(), group=process_group)
        table = torch.stack(gathered)  # (ranks, 2C + 1)
        counts = table[:, -1:]
        total = counts.sum()
        if total <= 0:
            raise ValueError("SyncBatchNorm: the group's batch is empty on every rank (expected "
                             "more than 1 value per channel when training)")
        group_mean = (table[:, :channels] * counts).sum(0) / total
        group_var = ((table[:, channels:2 * channels] +
                      (table[:, :channels] - group_mean) ** 2) * counts).sum(0) / total
        invstd = torch.rsqrt(group_var + eps)
        if running_mean is not None:
            with torch.no_grad():
                running_mean.mul_(1 - momentum).add_(group_mean.to(running_mean.dtype),
                                                     alpha=momentum)
        if running_var is not None:
            unbiased = group_var * total / (total - 1) if total > 1 else group_var
            with torch.no_grad():
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype),
                                                    alpha=momentum)
        shape = [1, channels] + [1] * (input.dim() - 2)
        out = (x - group_mean.view(shape)) * invstd.view(shape)
        if weight is not None:
            out = out * weight.view(shape)
        if bias is not None:
            out = out + bias.view(shape)
        ctx.save_for_backward(x, weight, group_mean, invstd, total)
        ctx.process_group = process_group
        ctx.input_dtype = input.dtype
        return out.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, invstd, total = ctx.saved_tensors
        channels = x.size(1)
        dims = [d for d in range(x.dim()) if d != 1]
        shape = [1, channels] + [1] * (x.dim() - 2)
        dy = grad_output.to(x.dtype)
        xmu = x - mean.view(shape)
        sums = torch.cat([dy.sum(dims), (dy * xmu).sum(dims)])
        local_sum_dy, local_sum_dy_xmu = sums[:channels].clone(), sums[channels:].clone()
        dist.all_reduce(sums, group=ctx.process_group)
        sum_dy, sum_dy_xmu = sums[:channels], sums[channels:]
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            scale = invstd if weight is None else invstd * weight
            grad_input = ((dy - (sum_dy / total).view(shape) -
                           xmu * (invstd ** 2 * sum_dy_xmu / total).view(shape)) *
                          scale.view(shape)).to(ctx.input_dtype)
        if weight is not None and ctx.needs_input_grad[1]:
            grad_weight = (local_sum_dy_xmu * invstd).to(weight.dtype)
        if ctx.needs_input_grad[2]:
            grad_bias = local_sum_dy.to(grad_output.dtype)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None


class _C:
    """torch._C as torch/nn/modules/batchnorm.py sees it under cuda_on_cpu."""
    def __init__(self, real):
        self._real = real

    def _get_privateuse1_backend_name(self):
        return "cpu"  # SyncBatchNorm's device check lists it: the CPU passes

    def __getattr__(self, name):
        return getattr(self._real, name)


class _Torch:
    """torch as torch/nn/modules/batchnorm.py sees it under cuda_on_cpu: torch itself but _C."""
    def __init__(self, real):
        self._real = real
        self._C = _C(real._C)

    def __getattr__(self, name):
        return getattr(self._real, name)


def patches():
    """(owner, name, value) for cuda_on_cpu's replacements (_cuda_on_cpu._patches)."""
    import sys
    module = sys.modules[torch.nn.SyncBatchNorm.__module__]
    if not hasattr(module, "sync_batch_norm") or getattr(module, "torch", None) is not torch:
        return []  # another torch's layout: SyncBatchNorm stays torch's (refused on the CPU)
    found = [(module, "torch", _Torch(torch)), (module, "sync_batch_norm", _CpuSyncBatchNorm)]
    # DistributedDataParallel refuses a CPU module holding SyncBatchNorm layers ("SyncBatchNorm
    # layers only work with GPU modules"): under cuda_on_cpu the module is the GPU's.
    ddp = torch.nn.parallel.DistributedDataParallel
    if hasattr(ddp, "_passing_sync_batchnorm_handle"):
        found.append((ddp, "_passing_sync_batchnorm_handle", lambda self, module: None))
    return found
