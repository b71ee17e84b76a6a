"""MindSpore's communication primitives in PyNative mode, as training code calls them (in a
Cell's construct, or directly), on 4 ranks; prints one RESULT line per rank that
test_mindspore_training.py compares with NumPy. A primitive made before init() works too."""
import numpy as np

import mindspore as ms
from mindspore import nn, ops
from mindspore.communication import get_rank, init

made_early = ops.AllReduce(ops.ReduceOp.MAX)  # before init(), as a module-level Cell would
ms.set_context(mode=ms.PYNATIVE_MODE)
init()
r = get_rank()
n = 4


class SumGrads(nn.Cell):
    def __init__(self):
        super().__init__()
        self.allreduce = ops.AllReduce()

    def construct(self, x):
        return self.allreduce(x) / n


def t(a):
    return ms.Tensor(np.asarray(a))


x = t(np.arange(4, dtype=np.float32) + 10 * r)
out = {
    "cell": SumGrads()(x).asnumpy().tolist(),
    "max": made_early(x).asnumpy().tolist(),
    "int16": ops.AllReduce()(t(np.array([30000, -7], np.int16))).asnumpy().tolist(),
    "gather": ops.AllGather()(t(np.full((1, 2), r, np.int32))).asnumpy().tolist(),
    "scatter": ops.ReduceScatter(ops.ReduceOp.SUM)(t(np.arange(8, dtype=np.float32)
                                                     .reshape(4, 2))).asnumpy().tolist(),
    "broadcast": [a.asnumpy().tolist() for a in ops.Broadcast(2)((t([r, r]), t([r * 1.5])))],
    "alltoall": ops.AlltoAll(4, 0, 1)(t(np.arange(4, dtype=np.float32).reshape(4, 1) + 10 * r))
    .asnumpy().tolist(),
    "reduce": ops.Reduce(1, ops.ReduceOp.PROD)(t([r + 1.0])).asnumpy().tolist(),
    "cscatter": ops.CollectiveScatter(3)(t(np.arange(8, dtype=np.float32) * (r == 3)))
    .asnumpy().tolist(),
    "cgather": ops.CollectiveGather(0)(t([r])).asnumpy().tolist(),
    "barrier": ops.Barrier()().shape,
}
try:  # a collective inside a differentiated function: refused (one autograd state a process)
    ms.grad(lambda v: (ops.AllReduce()(v) * v).sum())(x)
except Exception as e:  # noqa: BLE001 (the refusal's type and words are the result)
    out["grad"] = "%s: %s" % (type(e).__name__, str(e)[:100])
if r % 2 == 0:
    ops.Send(0, r + 1)(t(np.array([r * 100.0, 1.0], np.float32)))
else:
    out["recv"] = ops.Receive(0, r - 1, [2], ms.float32)().asnumpy().tolist()
try:
    ops.NeighborExchange([1], [1], [[1]], [[1]], ms.float32)(t([1.0]))
except Exception as e:  # noqa: BLE001 (the refusal's type and words are the result)
    out["neighbor"] = "%s: %s" % (type(e).__name__, str(e)[:60])
print("RESULT", r, sorted(out.items()), flush=True)
