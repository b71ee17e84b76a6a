"""torch.distributed code that computes what mindspore_code.py computes (MindSpore's API-mapping
pages: torch's reduce_scatter, all_gather and all_reduce), with async handles. Written for
torchrun; it runs unmodified on TwinCCL's emulated ranks (run_both.py).
"""
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
x = torch.arange(2 * world * 8, dtype=torch.float32).reshape(2 * world, 8) + rank

scattered = torch.empty(2, 8)
handle = dist.reduce_scatter(scattered, list(x.chunk(world)), async_op=True)
handle.wait()
pieces = [torch.empty(2, 8) for _ in range(world)]
handle = dist.all_gather(pieces, scattered, async_op=True)
handle.wait()
gathered = torch.cat(pieces)
reduced = x.clone()
handle = dist.all_reduce(reduced, op=dist.ReduceOp.MAX, async_op=True)
handle.wait()

results = {"reduce_scatter": scattered.numpy(), "all_gather": gathered.numpy(),
           "all_reduce": reduced.numpy()}
print("rank %d: reduce_scatter %s, all_gather sum %s, all_reduce max %s"
      % (rank, scattered.numpy()[0, :3], gathered.numpy().sum(), reduced.numpy()[0, :3]))
