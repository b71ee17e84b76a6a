"""torch.distributed calls a script makes besides the collectives' usual forms, each checked
against the value torchrun + Gloo gives (4 ranks; run by hand under `torchrun --nproc-per-node 4
api_calls.py`, where only the marked TwinCCL-only checks are skipped):
key-value stores used across ranks (the default store, TCPStore, FileStore; a rank waiting for a
key another rank sets), ProcessGroup's short forms (`pg.broadcast(tensor, root)`, ...), bool
tensors, send/recv with a tag, inputs that are not contiguous (torch.distributed.nn's gather
backward, a transposed all_gather input), and the refusals' messages.

Usage: torchrun --nproc-per-node 4 api_calls.py"""
import datetime
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dnn

# Before the script's init_process_group there is no group, as in a torchrun worker (scripts
# branch on is_initialized(): `rank = dist.get_rank() if dist.is_initialized() else 0`)
assert not dist.is_initialized(), "is_initialized() before init_process_group"
for call in (dist.get_rank, dist.get_backend, dist.barrier):
    try:
        call()
    except ValueError as e:
        assert "Default process group has not been initialized" in str(e), str(e)
    else:
        raise AssertionError("%s before init_process_group was answered" % call.__name__)
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
try:
    dist.init_process_group("gloo")
except ValueError as e:
    assert "initialize the default process group twice" in str(e), str(e)
else:
    raise AssertionError("a second init_process_group was accepted")
TWINCCL = "twinccl" in sys.modules  # under python -m twinccl.torchrun
assert world == 4, "run with --nproc-per-node 4"
TIMEOUT = datetime.timedelta(seconds=20)


def equal(got, expected, what):
    assert got == expected, "rank %d: %s gave %r, expected %r" % (rank, what, got, expected)


# The backend a group says it has: the one the script asked for (scripts branch on it) -------
equal(dist.get_backend(), "gloo", "get_backend()")
equal(dist.get_backend() == dist.Backend.GLOO, True, "get_backend() == Backend.GLOO")
equal(dist.get_backend_config(), "cpu:gloo,cuda:gloo", "get_backend_config()")
pair = dist.new_group([0, 1])
if rank < 2:
    equal(dist.get_backend(pair), "gloo", "new_group's backend")
equal(dist.get_backend(dist.new_group(backend="gloo")), "gloo", "new_group(backend='gloo')")


# Stores: a rank waits for keys the others set after it (rank 0 runs first under TwinCCL) ----
store = dist.distributed_c10d._get_default_store()
store.set_timeout(TIMEOUT)
store.set("api/%d" % rank, str(rank * 10))
equal(store.get("api/%d" % ((rank + 3) % world)), str((rank + 3) % world * 10).encode(),
      "default store get")
store.wait(["api/%d" % k for k in range(world)])
equal(store.multi_get(["api/0", "api/3"]), [b"0", b"30"], "multi_get")
store.barrier("api/barrier", world, TIMEOUT)
equal(store.add("api/count", 1) <= world, True, "add")

port = int(os.environ["MASTER_PORT"]) + 11
tcp = dist.TCPStore("127.0.0.1", port, world, rank == 0, timeout=TIMEOUT)  # waits for workers
tcp.set("t%d" % rank, str(rank))
tcp.wait(["t%d" % k for k in range(world)])
equal([tcp.get("t%d" % k) for k in range(world)], [b"0", b"1", b"2", b"3"], "TCPStore")
equal(tcp.compare_set("cs", "", "x"), b"x", "compare_set")
equal(dist.PrefixStore("p/", tcp).add("n", 1) <= world, True, "PrefixStore")
dist.barrier()
path = os.path.join(tempfile.gettempdir(), "twinccl_api_calls_%s" % os.environ["MASTER_PORT"])
if rank == 0 and os.path.exists(path):
    os.unlink(path)
dist.barrier()
files = dist.FileStore(path, world)
files.set("f%d" % rank, "y")
files.wait(["f%d" % k for k in range(world)], TIMEOUT)
equal(files.num_keys() >= world, True, "FileStore")
dist.barrier()

# ProcessGroup's short forms (they reach a backend's Python method as they are) -----------------
pg = dist.group.WORLD
x = torch.arange(4.0) + rank
t = x.clone()
pg.broadcast(t, 2).wait()
equal(t.tolist(), [2.0, 3.0, 4.0, 5.0], "pg.broadcast(tensor, root)")
t = x.clone()
pg.reduce(t, 1, dist.ReduceOp.MAX).wait()
if rank == 1:
    equal(t.tolist(), [3.0, 4.0, 5.0, 6.0], "pg.reduce(tensor, root, op)")
t = x.clone()
pg.allreduce(t, dist.ReduceOp.MIN).wait()
equal(t.tolist(), [0.0, 1.0, 2.0, 3.0], "pg.allreduce(tensor, op)")
outs = [torch.empty(4) for _ in range(world)]
pg.allgather(outs, x).wait()
equal([o[0].item() for o in outs], [0.0, 1.0, 2.0, 3.0], "pg.allgather(outputs, input)")
outs = [torch.empty(4) for _ in range(world)] if rank == 3 else []
pg.gather(outs, x, 3).wait()
if rank == 3:
    equal([o[0].item() for o in outs], [0.0, 1.0, 2.0, 3.0], "pg.gather(outputs, input, root)")
t = torch.empty(2)
pg.scatter(t, [torch.full((2,), 10.0 + k) for k in range(world)] if rank == 0 else [], 0).wait()
equal(t.tolist(), [10.0 + rank] * 2, "pg.scatter(output, inputs, root)")
t = torch.empty(1)
pg.reduce_scatter(t, [torch.full((1,), float(k)) for k in range(world)], dist.ReduceOp.SUM).wait()
equal(t.item(), 4.0 * rank, "pg.reduce_scatter(output, inputs, op)")

# bool tensors (Gloo: logical or / and) --------------------------------------------------------
flags = torch.tensor([rank == 0, True, False, rank < 2])
for op, expected in ((dist.ReduceOp.SUM, [True, True, False, True]),
                     (dist.ReduceOp.PRODUCT, [False, True, False, False]),
                     (dist.ReduceOp.MAX, [True, True, False, True]),
                     (dist.ReduceOp.MIN, [False, True, False, False])):
    t = flags.clone()
    dist.all_reduce(t, op=op)
    equal(t.tolist(), expected, "bool all_reduce %s" % op)
t = flags.clone()
dist.broadcast(t, src=3)
equal(t.tolist(), [False, True, False, False], "bool broadcast")
outs = [torch.empty(4, dtype=torch.bool) for _ in range(world)]
dist.all_gather(outs, flags)
equal([o[0].item() for o in outs], [True, False, False, False], "bool all_gather")

# send/recv with a tag --------------------------------------------------------------------------
if rank == 0:
    dist.send(torch.full((3,), 7.0), dst=2, tag=5)
elif rank == 2:
    t = torch.empty(3)
    dist.recv(t, src=0, tag=5)
    equal(t.tolist(), [7.0] * 3, "send/recv with tag")

# inputs that are not contiguous ---------------------------------------------------------------
m = (torch.arange(6.0).view(2, 3) + rank).t()  # a transposed input, read as its values
outs = [torch.empty(3, 2) for _ in range(world)]
dist.all_gather(outs, m)
equal(outs[1].tolist(), (torch.arange(6.0).view(2, 3) + 1).t().tolist(), "all_gather of a .t()")
if TWINCCL:  # Gloo reads the expanded gradients' memory as if contiguous: [2, 3, 4, 0] on rank 1
    a = (torch.arange(4.0) + rank).requires_grad_()
    gathered = dnn.gather(a, dst=0)
    weights = torch.arange(1.0, world + 1)
    (torch.stack([g.sum() for g in gathered]) * weights).sum().backward()
    equal(a.grad.tolist(), [rank + 1.0] * 4, "torch.distributed.nn gather's backward")

# refusals: a clear message on the calling rank -------------------------------------------------
if TWINCCL:
    try:
        dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.BAND)
    except RuntimeError as e:
        assert "ReduceOp.BAND is not supported" in str(e), str(e)
    else:
        raise AssertionError("ReduceOp.BAND was accepted")
    solo = dist.new_group([1])
    if rank == 1:
        for call in (lambda: dist.recv(torch.empty(2)),
                     lambda: dist.gather(torch.ones(2), [torch.empty(2)] * 2, dst=1, group=solo),
                     lambda: dist.all_to_all_single(torch.empty(4), torch.ones(4), [2], [2],
                                                    group=solo)):
            try:
                call()
            except RuntimeError as e:
                assert "rank " in str(e) and "api_calls.py:" in str(e), str(e)
            else:
                raise AssertionError("accepted")
dist.barrier()
print("rank %d: api calls as Gloo" % rank, flush=True)
dist.destroy_process_group()
