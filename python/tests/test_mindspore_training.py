"""Unmodified MindSpore training code under the launcher (`python -m twinccl.torchrun`, 4 ranks):
the communication primitives (ops.AllReduce, AllGather, ReduceScatter, Broadcast, AlltoAll,
Reduce, CollectiveScatter/Gather, Barrier, Send/Receive) in PyNative mode, in a Cell or made
before init(), against NumPy; one inside ms.grad refused (MindSpore's autograd state is one per
process, the ranks share it) (before: MindSpore's HCCL kernel ended the process with a
segmentation fault); and data-parallel SGD whose gradients nn.DistributedGradReducer (a
jit-compiled Cell), mint.distributed.all_reduce or a data-parallel nn.TrainOneStepCell (before:
gradients summed, not averaged, its device count MindSpore's own get_group_size(), 1) average,
against one process's full-batch SGD in NumPy."""
import ast
import os
import subprocess
import sys

import numpy as np
import pytest

from launcher_support import ENV

pytest.importorskip("mindspore")
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mindspore_scripts")


def results(script, *args):
    """{rank: what its RESULT line printed} of a 4-rank launch of `script`."""
    done = subprocess.run([sys.executable, "-m", "twinccl.torchrun", "--nproc-per-node", "4",
                           "--timeout-s", "60", os.path.join(SCRIPTS, script)] + list(args),
                          capture_output=True, text=True, env=ENV, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    out = {}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            _, rank, rest = line.split(" ", 2)
            out[int(rank)] = rest
    assert sorted(out) == [0, 1, 2, 3], done.stdout[-3000:]
    return out


def test_communication_primitives_in_pynative():
    got = {r: dict(ast.literal_eval(text)) for r, text in results("primitives.py").items()}
    for r in range(4):
        g = got[r]
        assert g["cell"] == [15.0, 16.0, 17.0, 18.0]  # (sum over ranks of arange + 10r) / 4
        assert g["max"] == [30.0, 31.0, 32.0, 33.0]
        assert g["int16"] == [-11072, -28]  # 4 x 30000 wraps modulo 2^16
        assert g["gather"] == [[p, p] for p in range(4)]
        assert g["scatter"] == [[8.0 * r, 8.0 * r + 4]]
        assert g["broadcast"] == [[2, 2], [3.0]]
        assert g["alltoall"] == [[r + 10.0 * p for p in range(4)]]
        assert g["reduce"] == ([24.0] if r == 1 else [0.0])  # other ranks: shape [1]
        assert g["cscatter"] == [2.0 * r, 2.0 * r + 1]
        assert g["cgather"] == ([0, 1, 2, 3] if r == 0 else [0])
        assert g["barrier"] == (1,)
        assert g.get("recv") == (None if r % 2 == 0 else [100.0 * (r - 1), 1.0])
        assert g["grad"].startswith("InvalidArgument: all_reduce (primitives.py:48) inside a "
                                    "function MindSpore differentiates")
        assert g["neighbor"].startswith("InvalidArgument: ops.NeighborExchange is not supported")


def full_batch_sgd(steps=3, batch=16, lr=0.1):
    """data_parallel.py's model and data in one process: nn.Dense(4, 2), MSELoss, SGD."""
    w = np.arange(8, dtype=np.float64).reshape(2, 4) / 10
    b = np.zeros(2)
    data = np.random.default_rng(0)
    for _ in range(steps):
        x = data.standard_normal((batch, 4)).astype(np.float32).astype(np.float64)
        y = data.standard_normal((batch, 2)).astype(np.float32).astype(np.float64)
        dpred = 2 * (x @ w.T + b - y) / y.size
        w, b = w - lr * dpred.T @ x, b - lr * dpred.sum(axis=0)
    return w.ravel(), b


@pytest.mark.parametrize("reducer", ["reducer", "mint", "train_one_step"])
def test_data_parallel_training_matches_one_process(reducer):
    w, b = full_batch_sgd()
    for r, text in results("data_parallel.py", reducer).items():
        weight, bias = (np.array(v) for v in ast.literal_eval("(%s)" % text.replace("] [", "], [")))
        np.testing.assert_allclose(weight, w, rtol=0, atol=1e-5, err_msg="rank %d" % r)
        np.testing.assert_allclose(bias, b, rtol=0, atol=1e-5, err_msg="rank %d" % r)


def test_primitives_in_process_and_put_back_after_the_run():
    """twinccl.run(mindspore=True) in process: a primitive made before the run answers inside
    it, and MindSpore's classes are as they were after it."""
    import mindspore as ms
    from mindspore.nn.wrap.grad_reducer import DistributedGradReducer
    from mindspore.ops.operations import comm_ops
    from conftest import run_ranks

    construct = DistributedGradReducer.__dict__["construct"]
    made_before = ms.ops.AllReduce(ms.ops.ReduceOp.MAX)

    def rank(r):
        ms.communication.init()
        total = ms.ops.AllReduce()(ms.Tensor(np.full(2, r + 1, np.float32)))
        gathered = ms.ops.AllGather()(ms.Tensor(np.full((1,), r, np.int16)))
        most = made_before(ms.Tensor(np.array([r], np.int32)))
        return (total.asnumpy().tolist(), gathered.asnumpy().tolist(), most.asnumpy().tolist(),
                parallel_utils.get_group_size())  # a name MindSpore bound at import

    import mindspore.parallel._utils as parallel_utils
    assert run_ranks(rank, 3, mindspore=True) == [([6.0, 6.0], [0, 1, 2], [2], 3)] * 3
    assert parallel_utils.get_group_size is ms.communication.management.get_group_size
    assert "__call__" not in comm_ops.AllReduce.__dict__
    assert DistributedGradReducer.__dict__["construct"] is construct
    assert comm_ops.get_rank is ms.communication.management.get_rank
