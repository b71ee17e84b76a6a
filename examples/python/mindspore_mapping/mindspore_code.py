"""MindSpore code as MindSpore's API-mapping pages pair it with torch.distributed (reduce_scatter,
all_gather, all_reduce -> comm_func.reduce_scatter_tensor, all_gather_into_tensor, all_reduce),
with async handles. Written for msrun/mpirun; it runs unmodified on TwinCCL's emulated ranks:

    msrun --worker_num=4 --local_worker_num=4 mindspore_code.py        # MindSpore's launcher
    PYTHONPATH=build/python python3 examples/python/mindspore_mapping/run_both.py   # emulated

torch_code.py is the same computation in torch.distributed; run_both.py runs both on the same
emulated ranks and compares them.
"""
import numpy as np
from mindspore import Tensor
from mindspore.communication import comm_func, get_group_size, get_rank, init

init()
rank, world = get_rank(), get_group_size()
x = Tensor(np.arange(2 * world * 8, dtype=np.float32).reshape(2 * world, 8) + rank)

scattered, handle = comm_func.reduce_scatter_tensor(x, async_op=True)  # (2, 8): this rank's sum
handle.wait()
gathered, handle = comm_func.all_gather_into_tensor(scattered, async_op=True)  # (2 * world, 8)
handle.wait()
reduced, handle = comm_func.all_reduce(x, op="max", async_op=True)
handle.wait()

results = {"reduce_scatter": scattered.asnumpy(), "all_gather": gathered.asnumpy(),
           "all_reduce": reduced.asnumpy()}
print("rank %d: reduce_scatter %s, all_gather sum %s, all_reduce max %s"
      % (rank, scattered.asnumpy()[0, :3], gathered.asnumpy().sum(), reduced.asnumpy()[0, :3]))
