"""One NumPy array used by several ranks (a closure variable): every rank is a thread of one
process, so the ranks would write the same memory (on GPUs each rank's buffers are its own).
The emulator refuses such a call on every rank with InvalidArgument, before writing anything
(docs/misuse.md, 53-57)."""
import numpy as np
import pytest

import twinccl
import twinccl.distributed as dist
from conftest import site_of


@pytest.mark.parametrize("algorithm", [None, "tree", "ring"])
def test_one_output_array_shared_by_every_rank_is_refused(algorithm):
    shared = np.ones(4, np.float32)  # every rank's closure sees the same array

    def rank(r):
        dist.all_reduce(shared)  # MARK-SHARED: in place, so every rank writes `shared`

    with pytest.raises(twinccl.InvalidArgument) as e:
        twinccl.run(rank, world_size=4, timeout_s=30, algorithm=algorithm)
    message = str(e.value)
    assert "all_reduce #0 on comm 'world': ranks " in message, message
    assert "share memory" in message and "output (recvbuf at 0x" in message, message
    assert site_of(__file__, "MARK-SHARED") in message, message
    assert "Nothing was written" in message, message
    # before: tree gave 8 (twice the sum), the direct path 4 or other values, silently
    assert (shared == 1).all(), shared


def test_every_rank_gets_the_error_and_shared_inputs_stay_legal():
    shared_out = np.full(8, -1.0)
    shared_in = np.arange(24, dtype=np.float64)  # only read: equal copies on GPUs, legal
    caught = [None] * 3
    results = [None] * 3

    def rank(r):
        mine = np.zeros(8)
        dist.reduce_scatter_tensor(mine, shared_in)  # legal: each rank its own output
        results[r] = mine
        try:
            dist.reduce_scatter_tensor(shared_out, shared_in)  # every rank writes shared_out
        except twinccl.InvalidArgument as error:
            caught[r] = str(error)

    twinccl.run(rank, world_size=3, timeout_s=30)
    for r in range(3):
        assert caught[r] is not None and "share memory" in caught[r], (r, caught[r])
        assert (results[r] == 3 * shared_in[8 * r:8 * r + 8]).all(), (r, results[r])
    assert (shared_out == -1).all(), shared_out


def test_send_into_the_array_the_peer_sends_from_is_refused():
    shared = np.arange(4, dtype=np.int32)

    def rank(r):
        if r == 0:
            dist.send(shared, dst=1)
        else:
            dist.recv(shared, src=0)  # MARK-RECV

    with pytest.raises(twinccl.InvalidArgument) as e:
        twinccl.run(rank, world_size=2, timeout_s=30)
    assert "send/recv on comm 'world': ranks 0 and 1 share memory" in str(e.value), str(e.value)
    assert site_of(__file__, "MARK-RECV") in str(e.value)

