"""What MindSpore 2.9's own CPU distributed run can do (mint.distributed's all_reduce, broadcast
and all_gather), written for msrun; TwinCCL runs it unmodified and must print the same lines.

    msrun --worker_num=2 --local_worker_num=2 --master_addr=127.0.0.1 --master_port=18123 \\
        --join=True --log_dir=msrun_log cpu_check.py   # then: grep -h RESULT msrun_log/worker_*.log
    PYTHONPATH=build/python python3 -c 'import runpy, twinccl; twinccl.run(lambda r: \\
        runpy.run_path("examples/python/mindspore_mapping/cpu_check.py"), 2, mindspore=True)'
    python3 -m twinccl.torchrun --nproc-per-node 2 cpu_check.py     # msrun's line, emulated
"""
import numpy as np
from mindspore import Tensor
from mindspore.communication import init
import mindspore.mint.distributed as dist

init()  # on CPU MindSpore picks "mccl"; mint's init_process_group() insists on "hccl"
rank, world = dist.get_rank(), dist.get_world_size()


def x():
    return Tensor(np.arange(4, dtype=np.float32) + rank)


summed, biggest, copied = x(), x(), x()
dist.all_reduce(summed)
dist.all_reduce(biggest, op="max")
dist.broadcast(copied, src=world - 1)
pieces = [Tensor(np.zeros(4, np.float32)) for _ in range(world)]
dist.all_gather(pieces, x())
print("RESULT rank %d sum %s max %s broadcast %s all_gather %s"
      % (rank, summed.asnumpy().tolist(), biggest.asnumpy().tolist(), copied.asnumpy().tolist(),
         [p.asnumpy().tolist() for p in pieces]), flush=True)
