"""MindSpore int16, uint16 and complex64 tensors (HCCL takes them, NCCL does not) through
every collective of twinccl.mindspore (comm_func) and twinccl.mindspore_mint (mint.distributed /
ops.communication) at 4 ranks, against NumPy: sums and products that wrap around modulo 2^16,
max/min of negative numbers, data moved bit for bit, results in place where the API writes in
place and in the input's type; complex64 as float32 pairs, as MindSpore hands it to HCCL. Types
HCCL lacks (bool, complex128) stay refused, naming the call."""
import numpy as np
import pytest

import twinccl
import twinccl.mindspore as cf
import twinccl.mindspore_mint as mint

from twinccl._reduce_op import _make_nccl_premul_sum

from conftest import run_ranks

ms = pytest.importorskip("mindspore")
N = 4
OPS = ("sum", "prod", "max", "min")


def data(rank, dtype, count, salt=0):
    """Rank `rank`'s values: the type's extremes, -1/1 and random ones (the same on every rank,
    so each rank can compute the reference)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1000 * salt + rank)
    fixed = np.array([info.max, info.min, info.max - rank, -1 - rank, rank + 1, 181 + rank],
                     dtype=np.int64).astype(dtype)
    rand = rng.integers(info.min, info.max, size=max(count - fixed.size, 0), endpoint=True)
    return np.concatenate([fixed, rand.astype(dtype)])[:count]


def reference(op, arrays, dtype):
    """The reduction int16/uint16 arithmetic gives: sum and prod modulo 2^16, max/min compared in
    the type."""
    stack = np.stack(arrays)
    if op == "sum":
        return stack.astype(np.int64).sum(axis=0).astype(dtype)
    if op == "prod":
        return np.multiply.reduce(stack.astype(np.uint64), axis=0).astype(dtype)
    return (stack.max(axis=0) if op == "max" else stack.min(axis=0)).astype(dtype)


def t(a):
    return ms.Tensor.from_numpy(np.ascontiguousarray(a))


def same(tensor, expected, dtype):
    assert isinstance(tensor, ms.Tensor) and tensor.asnumpy().dtype == dtype
    assert tensor.asnumpy().tolist() == np.asarray(expected).tolist()


def comm_func_calls(r, dtype):
    def d(rank, count=8, salt=0):
        return data(rank, dtype, count, salt)
    for k, op in enumerate(OPS):
        x = t(d(r, salt=k))
        out, h = cf.all_reduce(x, op=op, async_op=(k % 2 == 1))
        if h is not None:
            h.wait()
        same(out, reference(op, [d(p, salt=k) for p in range(N)], dtype), dtype)
        same(x, d(r, salt=k), dtype)  # a new output; the input is left alone
        rs, h = cf.reduce_scatter_tensor(t(d(r, 2 * N, k).reshape(N, 2)), op=op, async_op=True)
        h.wait()
        full = reference(op, [d(p, 2 * N, k) for p in range(N)], dtype).reshape(N, 2)
        same(rs, full[r:r + 1], dtype)
        red = cf.reduce(t(d(r, salt=k)), dst=1, op=op)
        if r == 1:
            same(red, reference(op, [d(p, salt=k) for p in range(N)], dtype), dtype)
    g, h = cf.all_gather_into_tensor(t(d(r).reshape(2, 4)), async_op=True)
    h.wait()
    same(g, np.concatenate([d(p).reshape(2, 4) for p in range(N)]), dtype)
    same(cf.broadcast(t(d(r)), src=2), d(2), dtype)
    gi = cf.gather_into_tensor(t(d(r, 3)), dst=3)
    if r == 3:
        same(gi, np.concatenate([d(p, 3) for p in range(N)]), dtype)
    same(cf.scatter_tensor(t(d(r, 2 * N).reshape(N, 2)), src=0), d(0, 2 * N).reshape(N, 2)[r:r + 1],
         dtype)
    # rank r sends p + 1 elements of its data to rank p (uneven, counts unscaled)
    pieces, _ = cf.all_to_all_with_output_shape([(r + 1,)] * N,
                                                [t(d(r, 8, p)[:p + 1]) for p in range(N)])
    for p, piece in enumerate(pieces):
        same(piece, d(p, 8, r)[:r + 1], dtype)
    rows_in = [p + 1 for p in range(N)]
    src = np.concatenate([d(r, 8, p)[:2 * (p + 1)] for p in range(N)]).reshape(-1, 2)
    o, h = cf.all_to_all_single_with_output_shape((N * (r + 1), 2), t(src), [r + 1] * N, rows_in)
    same(o, np.concatenate([d(p, 8, r)[:2 * (r + 1)] for p in range(N)]).reshape(-1, 2), dtype)
    matrix = [j + 1 for i in range(N) for j in range(N)]  # rank i sends j + 1 rows to rank j
    out = t(np.zeros((N * (r + 1),), dtype))
    cf.all_to_all_v_c(out, t(np.concatenate([d(r, 8, p)[:p + 1] for p in range(N)])), matrix)
    same(out, np.concatenate([d(p, 8, r)[:r + 1] for p in range(N)]), dtype)
    nxt, prv = (r + 1) % N, (r - 1) % N
    if r % 2 == 0:
        cf.send(t(d(r)), dst=nxt)
        same(cf.recv(t(np.zeros(8, dtype)), src=prv), d(prv), dtype)
    else:
        got = cf.recv(t(np.zeros(8, dtype)), src=prv)
        cf.send(t(d(r)), dst=nxt)
        same(got, d(prv), dtype)
    got, h = cf.irecv(t(np.zeros(8, dtype)), src=prv)
    cf.isend(t(d(r)), dst=nxt).wait()
    h.wait()
    same(got, d(prv), dtype)
    res = cf.batch_isend_irecv([cf.P2POp("isend", t(d(r)), nxt),
                                cf.P2POp("irecv", (8,), prv, recv_dtype=ms.Tensor(d(r)).dtype)])
    same(res[1], d(prv), dtype)


def mint_calls(r, dtype):
    def d(rank, count=8, salt=0):
        return data(rank, dtype, count, salt)
    for k, op in enumerate(OPS):
        x = t(d(r, salt=k))
        h = mint.all_reduce(x, op=op, async_op=(k % 2 == 0))
        if h is not None:
            h.wait()
        same(x, reference(op, [d(p, salt=k) for p in range(N)], dtype), dtype)
        full = reference(op, [d(p, 2 * N, k) for p in range(N)], dtype).reshape(N, 2)
        out = t(np.zeros((1, 2), dtype))
        mint.reduce_scatter_tensor(out, t(d(r, 2 * N, k).reshape(N, 2)), op=op)
        same(out, full[r:r + 1], dtype)
        out = t(np.zeros(2, dtype))
        mint.reduce_scatter(out, [t(row) for row in d(r, 2 * N, k).reshape(N, 2)], op=op)
        same(out, full[r], dtype)
        x = t(d(r, salt=k))
        mint.reduce(x, dst=2, op=op)
        if r == 2:
            same(x, reference(op, [d(p, salt=k) for p in range(N)], dtype), dtype)
    # uneven reduce_scatter: rank p receives p + 1 elements
    counts = [p + 1 for p in range(N)]
    out = t(np.zeros(r + 1, dtype))
    h = mint.reduce_scatter_tensor_uneven(out, t(d(r, sum(counts), 7)), counts, op="min",
                                          async_op=True)
    h.wait()
    full = reference("min", [d(p, sum(counts), 7) for p in range(N)], dtype)
    same(out, full[sum(counts[:r]):sum(counts[:r + 1])], dtype)
    out = t(np.zeros((N, 3), dtype))
    mint.all_gather_into_tensor(out, t(d(r, 3).reshape(1, 3)))
    same(out, np.stack([d(p, 3) for p in range(N)]), dtype)
    out = t(np.zeros(sum(counts), dtype))
    mint.all_gather_into_tensor_uneven(out, t(d(r, r + 1)), counts)
    same(out, np.concatenate([d(p, p + 1) for p in range(N)]), dtype)
    x = t(d(r))
    mint.broadcast(x, src=1)
    same(x, d(1), dtype)
    lst = [t(np.zeros(3, dtype)) for _ in range(N)]
    mint.all_gather(lst, t(d(r, 3)))
    for p in range(N):
        same(lst[p], d(p, 3), dtype)
    lst = [t(np.zeros(3, dtype)) for _ in range(N)]
    mint.gather(t(d(r, 3)), lst if r == 0 else [], dst=0)
    if r == 0:
        for p in range(N):
            same(lst[p], d(p, 3), dtype)
    x = t(np.zeros(3, dtype))
    mint.scatter(x, [t(d(3, 3, p)) for p in range(N)] if r == 3 else [], src=3)
    same(x, d(3, 3, r), dtype)
    outs = [t(np.zeros(2, dtype)) for _ in range(N)]
    mint.all_to_all(outs, [t(d(r, 2, p)) for p in range(N)])
    for p in range(N):
        same(outs[p], d(p, 2, r), dtype)
    out = t(np.zeros(N * (r + 1), dtype))
    mint.all_to_all_single(out, t(np.concatenate([d(r, 8, p)[:p + 1] for p in range(N)])),
                           [r + 1] * N, counts)
    same(out, np.concatenate([d(p, 8, r)[:r + 1] for p in range(N)]), dtype)
    out = t(np.zeros((N, 2), dtype))
    mint.gather_into_tensor(out, t(d(r, 2).reshape(1, 2)), dst=1)
    if r == 1:
        same(out, np.stack([d(p, 2) for p in range(N)]), dtype)
    out = t(np.zeros(2, dtype))
    mint.scatter_tensor(out, t(d(2, 2 * N)), src=2)
    same(out, d(2, 2 * N)[2 * r:2 * r + 2], dtype)
    nxt, prv = (r + 1) % N, (r - 1) % N
    got = t(np.zeros(8, dtype))
    h = mint.irecv(got, src=prv)
    mint.send(t(d(r)), dst=nxt)
    h.wait()
    same(got, d(prv), dtype)
    got = t(np.zeros(8, dtype))
    hs = mint.batch_isend_irecv([mint.P2POp(mint.isend, t(d(r, 8, 1)), nxt),
                                 mint.P2POp(mint.irecv, got, prv)])
    hs[0].wait()
    same(got, d(prv, 8, 1), dtype)


@pytest.mark.parametrize("dtype", [np.int16, np.uint16], ids=["int16", "uint16"])
def test_every_collective_int16_uint16_against_numpy(dtype):
    def rank(r):
        comm_func_calls(r, np.dtype(dtype))
        mint_calls(r, np.dtype(dtype))
    run_ranks(rank, N, timeout_s=60.0)


def test_refused_types_name_the_call_the_type_and_the_supported_ones_and_avg():
    def rank(r):
        with pytest.raises(twinccl.InvalidArgument,
                           match=r"all_reduce's tensor: Bool tensors are not supported \(.*int16, "
                                 r"uint16.*\); HCCL"):
            cf.all_reduce(ms.Tensor(np.array([True, False])))
        with pytest.raises(twinccl.InvalidArgument, match="premul_sum is not supported for int16"):
            mint.all_reduce(t(np.ones(2, np.int16)), op=_make_nccl_premul_sum(2.0))
        x = t(np.array([-7 + r, 30000], np.int16))  # a refused call leaves the world usable
        mint.all_reduce(x, op="avg")  # int32's avg: the sum (-13), divided truncating toward 0
        return x.asnumpy().tolist()
    assert run_ranks(rank, 2) == [[-6, 30000]] * 2


def test_complex64_as_hccl_takes_it():
    """complex64, which MindSpore hands to HCCL as float32 pairs: moves bit for bit, sum the
    complex sum, prod/max componentwise (as on Ascend), uneven counts scaled."""
    def c(rank, count, salt=0):
        rng = np.random.default_rng(100 * salt + rank)
        return (rng.standard_normal(count) + 1j * rng.standard_normal(count)).astype(np.complex64)

    def pairs(a):
        return a.view(np.float32)

    def rank(r):
        out, _ = cf.all_reduce(t(c(r, 5)))
        want = sum(c(p, 5) for p in range(N))
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5)
        assert out.asnumpy().dtype == np.complex64
        x = t(c(r, 5, 1))
        mint.all_reduce(x, op="max", async_op=True).wait()  # the real and imaginary parts apart
        assert pairs(x.asnumpy()).tolist() == np.max([pairs(c(p, 5, 1)) for p in range(N)],
                                                     axis=0).tolist()
        counts = [p + 1 for p in range(N)]
        out = t(np.zeros(r + 1, np.complex64))
        mint.reduce_scatter_tensor_uneven(out, t(c(r, sum(counts), 2)), counts)
        full = sum(c(p, sum(counts), 2) for p in range(N))
        np.testing.assert_allclose(out.asnumpy(), full[sum(counts[:r]):sum(counts[:r + 1])],
                                   rtol=1e-5)
        g, _ = cf.all_gather_into_tensor(t(c(r, 3).reshape(1, 3)))
        assert g.asnumpy().tolist() == np.stack([c(p, 3) for p in range(N)]).tolist()
        out = t(np.zeros(N * (r + 1), np.complex64))
        mint.all_to_all_single(out, t(np.concatenate([c(r, p + 1, p) for p in range(N)])),
                               [r + 1] * N, counts)
        assert out.asnumpy().tolist() == np.concatenate([c(p, r + 1, r) for p in range(N)]).tolist()
        b = cf.broadcast(t(c(r, 4)), src=3)
        assert b.asnumpy().tolist() == c(3, 4).tolist()
        with pytest.raises(twinccl.InvalidArgument, match="Complex128 tensors are not supported"):
            cf.all_reduce(ms.Tensor(np.zeros(2, np.complex128)))
    run_ranks(rank, N)
