"""Ctrl-C while twinccl.run replays the run on a topology (after the ranks returned): the replay
stops within about half a second with KeyboardInterrupt (its SimGrid child process is killed),
instead of running to the end (~15 s here) before Python sees the signal."""
import os
import signal
import threading
import time

import numpy as np

import twinccl
import twinccl.distributed as dist

RANKS = 48  # all_to_all on h100-cluster-8: about 15 s of flow simulation on a 2-core machine


def test_ctrl_c_stops_the_topology_replay():
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    def rank(r):
        x = np.ones(RANKS * 256, np.float32)
        y = np.empty_like(x)
        for _ in range(2):
            dist.all_to_all_single(y, x)
        dist.barrier()
        if r == 0:  # the ranks are done: the signal comes while the replay runs
            threading.Timer(0.5, interrupt).start()

    outcome = "returned"
    try:
        twinccl.run(rank, world_size=RANKS, topology="h100-cluster-8", timeout_s=60)
        time.sleep(5)  # the replay ended first: the signal lands here (the test fails below)
    except KeyboardInterrupt:
        outcome = "interrupted"
    stopped = time.monotonic()
    assert sent, "the timer never fired"
    assert outcome == "interrupted"
    assert stopped - sent[0] < 1.0, "KeyboardInterrupt came %.2f s after the signal" % (
        stopped - sent[0])
