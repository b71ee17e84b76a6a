"""With MindSpore installed (pip install mindspore: docs/python.md): twinccl.mindspore and
twinccl.mindspore_mint on MindSpore tensors (zero-copy, bfloat16, new outputs of MindSpore's
kind), and unmodified MindSpore scripts on emulated ranks through twinccl.run(mindspore=True):
MindSpore's own modules answer, misuse names the script's lines, the simulated time comes back,
and the API-mapping examples give torch's results. Skipped where MindSpore is not installed
(test_mindspore_api.py covers the NumPy path there)."""
import os
import runpy

import numpy as np
import pytest

import twinccl
import twinccl.mindspore as cf
import twinccl.mindspore_mint as mint
from twinccl import _ms_ops_comm as ops_comm

from conftest import run_ranks, source_dir
from test_mindspore_api import comm_func_checks, mint_checks

ms = pytest.importorskip("mindspore")
MAPPING = os.path.join(source_dir(), "examples", "python", "mindspore_mapping")


def as_ms(a):
    return ms.Tensor.from_numpy(np.ascontiguousarray(a))


def test_zero_copy_and_kinds():
    def rank(r):
        x = as_ms(np.full((2, 3), r + 1, np.float32))
        out, _ = cf.all_reduce(x)
        assert isinstance(out, ms.Tensor) and out.dtype == ms.float32
        z = as_ms(np.full(4, r + 1, np.float32))
        mint.all_reduce(z)  # in place, through the asnumpy() view of z's own memory
        assert z.asnumpy().tolist() == [3] * 4
        b = ms.Tensor(np.full(2, r + 0.5, np.float32), ms.bfloat16)
        g, h = cf.all_gather_into_tensor(b, async_op=True)
        h.wait()
        assert g.dtype == ms.bfloat16 and g.asnumpy().astype(np.float32).tolist() == [0.5, 0.5, 1.5, 1.5]
        p = cf.reduce(b, dst=0)
        assert p.dtype == ms.bfloat16 and p.shape == ((2,) if r == 0 else (1,))
        res = cf.batch_isend_irecv([cf.P2POp("isend", b, 1 - r),
                                    cf.P2POp("irecv", (2,), 1 - r, recv_dtype=ms.bfloat16)])
        assert res[1].dtype == ms.bfloat16
        assert res[1].asnumpy().astype(np.float32).tolist() == [1.5 - r] * 2
    run_ranks(rank, 2)


def test_every_function_on_mindspore_tensors():
    def rank(r):
        comm_func_checks(r, as_ms, lambda t: t.asnumpy())
        return mint_checks(r, as_ms, lambda t: t.asnumpy())
    assert all(run_ranks(rank, 3))


def test_unmodified_mindspore_module_calls():
    import mindspore.communication as comm
    import mindspore.mint.distributed as dist
    original = comm.init

    def rank(r):
        comm.init()
        comm.create_group("pair", [0, 1])
        out, _ = comm.comm_func.all_reduce(as_ms(np.array([r + 1.0], np.float32)), group="pair")
        x = as_ms(np.array([r], np.int32))
        dist.all_reduce(x)
        return comm.get_rank(), comm.get_group_size("pair"), out.asnumpy().tolist(), \
            x.asnumpy().tolist()
    got = run_ranks(rank, 2, mindspore=True)
    assert got == [(0, 2, [3.0], [1]), (1, 2, [3.0], [1])]
    assert comm.init is original  # restored after the run


def test_api_mapping_examples_agree_with_torch():
    pytest.importorskip("torch")
    results = {}

    def rank(r):
        for name in ("mindspore_code.py", "torch_code.py"):
            results[name, r] = runpy.run_path(os.path.join(MAPPING, name))["results"]
    twinccl.run(rank, world_size=4, mindspore=True, torch_distributed=True, timeout_s=60)
    for r in range(4):
        ours, theirs = results["mindspore_code.py", r], results["torch_code.py", r]
        assert sorted(ours) == ["all_gather", "all_reduce", "reduce_scatter"]
        for op in ours:
            np.testing.assert_array_equal(ours[op], theirs[op])
    x = np.arange(64, dtype=np.float32).reshape(8, 8)  # rank r's x is x + r
    np.testing.assert_array_equal(results["mindspore_code.py", 1]["reduce_scatter"],
                                  4 * x[2:4] + 6)


def test_script_misuse_names_its_line_and_time_on_a_topology(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import numpy as np\n"
        "from mindspore import Tensor\n"
        "from mindspore.communication import init, get_rank, comm_func\n"
        "init()\n"
        "n = 4 if get_rank() == 0 else 2\n"
        "out, _ = comm_func.all_reduce(Tensor(np.ones(n, np.float32)))  # mismatch\n")
    with pytest.raises(twinccl.MismatchError, match=r"train\.py:6"):
        twinccl.run(lambda r: runpy.run_path(str(script)), world_size=2, mindspore=True,
                    timeout_s=20)
    script.write_text(script.read_text().replace("4 if get_rank() == 0 else 2", "1 << 20"))
    report = twinccl.run(lambda r: runpy.run_path(str(script)), world_size=2, mindspore=True,
                         topology="dgx-h100", timeout_s=20)
    assert "all_reduce" in str(report)


def _parameters(fn):
    import inspect
    target = fn.__init__ if isinstance(fn, type) else inspect.unwrap(fn)
    return [(p.name, p.default if p.default is inspect.Parameter.empty else repr(p.default))
            for p in inspect.signature(target).parameters.values() if p.name != "self"]


@pytest.mark.parametrize("theirs, ours", [
    ("mindspore.communication.comm_func", cf), ("mindspore.mint.distributed", mint),
    ("mindspore.ops.communication", ops_comm)])
def test_every_name_with_mindspores_signature(theirs, ours):
    """Each public function of the installed MindSpore module exists here with the same
    parameter names and defaults (MindSpore's ReduceOp.SUM and world group are the same str)."""
    import importlib
    module = importlib.import_module(theirs)
    missing, differ = [], []
    for name in module.__all__:
        if name == "TCPStore":  # not provided (docs/python.md)
            continue
        if not hasattr(ours, name):
            missing.append(name)
        elif _parameters(getattr(module, name)) != _parameters(getattr(ours, name)):
            differ.append((name, _parameters(getattr(module, name)),
                           _parameters(getattr(ours, name))))
    assert not missing and not differ, (missing, differ)


def test_management_names_with_mindspores_signature():
    import mindspore.communication as comm
    names = [n for n in comm.__all__ if callable(getattr(comm, n)) and n != "GlobalComm"]
    assert {n: _parameters(getattr(comm, n)) for n in names} == \
        {n: _parameters(getattr(cf, n)) for n in names}


@pytest.mark.parametrize("rank_state", ["isolated", "shared"])
def test_mindspore_ops_on_every_rank_take_turns(rank_state):
    """MindSpore's PyNative ops from several threads at once abort the process; under
    mindspore=True the ranks run Python one at a time (rank_state="isolated": the rank baton;
    "shared": the same baton, swapping no state) and still meet."""
    def rank(r):
        x = ms.Tensor(np.full((64, 64), 1.0 / 64, np.float32))
        for _ in range(60):
            x = (ms.ops.matmul(x, x) * 1.0001 + 0.5) / 1.5 + r
            x, handle = cf.all_reduce(x, op="max", async_op=True)
            handle.wait()
        return float(x.asnumpy()[0, 0])
    got = run_ranks(rank, 8, mindspore=True, rank_state=rank_state)
    assert len(set(got)) == 1


def test_offset_view_refused_where_written_read_where_not():
    """asnumpy() of a MindSpore view at a storage offset is a copy: a result written there would
    be lost, so in-place calls refuse it; calls that only read it take it."""
    def rank(r):
        base = as_ms(np.arange(8, dtype=np.float32) + r)
        part = base[2:6]
        with pytest.raises(twinccl.InvalidArgument, match="storage offset 2"):
            mint.all_reduce(part)
        out, _ = cf.all_reduce(part)
        assert out.asnumpy().tolist() == [5, 7, 9, 11]
        turned = as_ms(np.arange(4, dtype=np.float32).reshape(2, 2)).T  # not contiguous
        with pytest.raises(twinccl.InvalidArgument, match="contiguous to be written"):
            mint.broadcast(turned, src=0)
        assert cf.all_reduce(turned)[0].asnumpy().tolist() == [[0, 4], [2, 6]]
    run_ranks(rank, 2)


def test_mindspore_seed_and_random_operations_are_per_rank():
    """Each rank its own mindspore.set_seed and random-operation counters, as each msrun
    process: rank r's draws are those of a process seeded with 100 + r, a hand-over between its
    draws or not (shared, a rank's set_seed reseeded the others and their draws interleaved), and
    the caller's seed is its own again after the run."""
    def draws():
        return ms.ops.rand(3).asnumpy().tolist(), ms.ops.randn(2).asnumpy().tolist()

    def dropped():
        return ms.ops.dropout(ms.Tensor(np.ones(16, np.float32)), p=0.5).asnumpy().tolist()

    def rank(r):
        ms.set_seed(100 + r)
        first = draws()
        cf.barrier()  # every rank sets its seed and draws before any draws again
        return first, draws(), dropped()
    ms.set_seed(5)
    caller_next = draws()
    ms.set_seed(5)
    got = run_ranks(rank, 3, mindspore=True)
    assert ms.get_seed() == 5 and draws() == caller_next  # the caller's counters untouched
    for r in range(3):
        ms.set_seed(100 + r)
        assert got[r] == (draws(), draws(), dropped()), r
