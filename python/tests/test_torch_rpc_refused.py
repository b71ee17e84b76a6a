"""torch.distributed.rpc inside a run is refused at init_rpc with a typed error naming RPC
(_torch_rpc.py); before, rank 0 blocked in the agent's C++ rendezvous holding its turn and the run
stalled until timeout_s with a stuck-rank message that did not name RPC."""
import time

import pytest
import twinccl
from torch_backend_support import needs_torch2, run_script

pytestmark = needs_torch2


def test_init_rpc_raises_at_once_naming_rpc_and_what_to_run_instead():
    import torch.distributed.rpc as rpc
    original = rpc.init_rpc

    def script(rank):
        rpc.init_rpc("worker%d" % rank, rank=rank, world_size=2)
    start = time.monotonic()
    with pytest.raises(twinccl.InvalidArgument) as raised:
        run_script(script, world_size=2, timeout_s=60)
    assert time.monotonic() - start < 30  # at once, not at the run's timeout
    message = str(raised.value)
    assert "torch.distributed.rpc.init_rpc('worker" in message, message
    assert "RPC is not emulated by TwinCCL" in message and "torchrun's processes" in message
    assert rpc.init_rpc is original  # put back when the run ends
