"""Out of memory (docs/misuse.md 58-61): an allocation the binding or the emulator makes for a
rank that fails is twinccl.ResourceError naming what, how many bytes and which rank."""
import os
import subprocess
import sys

OUT_OF_MEMORY_CHILD = r"""
import os, resource, sys
import numpy as np
import twinccl, twinccl.distributed as dist

x_elements = 1 << 24  # 64 MiB of float32 per rank
def rank(r):
    x = np.ones(x_elements, np.float32)
    out = None
    if r == 0:
        # four arrays (one listed four times is refused: misuse 68): 256 MiB; the staging 256 MiB
        out = [np.empty_like(x) for _ in range(4)]
    dist.barrier()  # every rank's arrays exist before rank 0 stages (ranks take turns)
    dist.gather(x, out, dst=0)

page = os.sysconf("SC_PAGE_SIZE")
with open("/proc/self/statm") as f:
    now = int(f.read().split()[0]) * page
cap = now + (672 << 20)  # the ranks' arrays (512 MiB) and threads fit, the staging does not
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
try:
    twinccl.run(rank, world_size=4, timeout_s=30)
    print("returned")
except BaseException as e:
    print(type(e).__name__ + ": " + str(e))
"""


def test_out_of_memory_is_a_resource_error_in_a_capped_child():
    """Real exhaustion, in a child whose address space is capped (RLIMIT_AS): the binding's
    staging copy of gather's list cannot be allocated. Before: MemoryError: std::bad_alloc."""
    env = dict(os.environ, MALLOC_ARENA_MAX="1")  # no 64 MiB arena reservations per thread
    done = subprocess.run([sys.executable, "-c", OUT_OF_MEMORY_CHILD], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ResourceError: gather's gather_list on rank 0: could not "
                                  "allocate 268435456 bytes of host staging memory"), done.stdout
    assert "ulimit -v" in done.stdout
