"""multiprocessing's start method is a rank's own (_rank_objects.py): a torchrun script's
`mp.set_start_method("spawn")` runs once in each worker process, and on rank threads the second
rank's call raised RuntimeError("context has already been set")."""
import multiprocessing

import twinccl
import twinccl.distributed


def test_each_rank_sets_and_reads_its_own_start_method_and_the_callers_is_kept():
    before = multiprocessing.get_start_method(allow_none=True)
    got = {}

    def rank_main(rank):
        first = multiprocessing.get_start_method(allow_none=True)
        multiprocessing.set_start_method("fork" if rank == 0 else "spawn")  # no force=True
        twinccl.distributed.barrier()  # the other rank sets its own in between
        got[rank] = (first, multiprocessing.get_start_method(),
                     multiprocessing.get_context().get_start_method())
    twinccl.run(rank_main, world_size=2, timeout_s=30)
    assert got == {0: (before, "fork", "fork"), 1: (before, "spawn", "spawn")}, got
    assert multiprocessing.get_start_method(allow_none=True) == before
