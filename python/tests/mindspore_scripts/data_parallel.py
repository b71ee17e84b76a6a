"""MindSpore data-parallel training as its tutorials write it (PyNative): every rank the same
nn.Dense, its shard of each global batch, gradients averaged by nn.DistributedGradReducer
(argument "reducer"; a jit-compiled Cell with ops.AllReduce inside) or by
mint.distributed.all_reduce on each gradient, divided by the world size ("mint"), an SGD step;
or nn.TrainOneStepCell in data-parallel mode ("train_one_step": MindSpore makes the
DistributedGradReducer). Prints each rank's final weights (RESULT lines) for
test_mindspore_training.py to compare with one process's full-batch SGD."""
import sys

import numpy as np

import mindspore as ms
from mindspore import mint, nn
from mindspore.communication import get_group_size, get_rank, init

ms.set_context(mode=ms.PYNATIVE_MODE)
init()
rank, world = get_rank(), get_group_size()
STEPS, BATCH, LR = 3, 16, 0.1

net = nn.Dense(4, 2, weight_init=ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 10),
               bias_init="zeros")
optimizer = nn.SGD(net.trainable_params(), learning_rate=LR)
loss_fn = nn.MSELoss()


def forward(x, y):
    return loss_fn(net(x), y)


grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

if sys.argv[1] == "reducer":
    reducer = nn.DistributedGradReducer(optimizer.parameters, mean=True, degree=world)
else:
    def reducer(grads):
        for g in grads:
            mint.distributed.all_reduce(g)
        return tuple(g / world for g in grads)

if sys.argv[1] == "train_one_step":
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    train_step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
data = np.random.default_rng(0)
for step in range(STEPS):
    x = data.standard_normal((BATCH, 4)).astype(np.float32)
    y = data.standard_normal((BATCH, 2)).astype(np.float32)
    shard = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    if sys.argv[1] == "train_one_step":
        train_step(ms.Tensor(x[shard]), ms.Tensor(y[shard]))
        continue
    loss, grads = grad_fn(ms.Tensor(x[shard]), ms.Tensor(y[shard]))
    optimizer(reducer(grads))
print("RESULT", rank, net.weight.asnumpy().ravel().tolist(), net.bias.asnumpy().tolist(),
      flush=True)
