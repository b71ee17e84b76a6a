"""python3 -m twinccl.spawn: a script that starts its ranks with torch.multiprocessing.spawn
(PyTorch's DDP tutorial) runs unmodified on emulated ranks, with the weights real processes over
Gloo give, and a failing rank ends the call as torch's spawn does (ProcessRaisedException with the
rank's traceback, ProcessExitedException with its exit code). Before, the script's mp.spawn
started real processes on Gloo whatever the launcher: nothing ran on the emulator."""
import json
import socket
import subprocess
import sys
import textwrap

import pytest

from launcher_support import ENV

torch = pytest.importorskip("torch")

# PyTorch's DDP tutorial's basic demo on the CPU, each rank writing what it ends with.
TUTORIAL = textwrap.dedent('''
    import json, os, sys
    import torch, torch.nn as nn, torch.optim as optim
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel as DDP

    def setup(rank, world_size):
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = sys.argv[2]
        dist.init_process_group("gloo", rank=rank, world_size=world_size)

    def demo_basic(rank, world_size, out_dir):
        setup(rank, world_size)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 5))
        ddp_model = DDP(model)
        optimizer = optim.SGD(ddp_model.parameters(), lr=0.01)
        for step in range(3):
            optimizer.zero_grad()
            outputs = ddp_model(torch.randn(20, 10))  # each rank its own draws
            nn.MSELoss()(outputs, torch.randn(20, 5)).backward()
            optimizer.step()
        with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
            json.dump({"weights": [p.detach().flatten().tolist() for p in model.parameters()],
                       "pid": os.getpid(), "backend": dist.get_backend()}, f)
        dist.destroy_process_group()

    if __name__ == "__main__":
        mp.spawn(demo_basic, args=(3, sys.argv[1]), nprocs=3, join=True)
''')

FAILING = textwrap.dedent('''
    import os, sys, time
    import torch, torch.distributed as dist
    import torch.multiprocessing as mp
    from torch.multiprocessing import spawn

    def work(rank, world_size, mode):
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "29517"
        dist.init_process_group("gloo", rank=3 if mode == "wrong_rank" and rank == 1 else rank,
                                world_size=world_size)
        t = torch.ones(2)
        dist.all_reduce(t)
        if rank == 1 and mode == "raise":
            raise ValueError("bad batch on rank 1")
        if rank == 1 and mode == "exit":
            sys.exit(3)
        dist.barrier()
        dist.destroy_process_group()

    # PyTorch's "Writing Distributed Applications" shape: processes started one by one, then
    # joined; a DataLoader worker started in the parent first stays a process (a library's).
    def run(rank, size):
        tensor = torch.zeros(1)
        if rank == 0:
            tensor += 1
            dist.send(tensor=tensor, dst=1)
        else:
            dist.recv(tensor=tensor, src=0)
        t = torch.ones(1) * (rank + 1)
        dist.all_reduce(t, group=dist.new_group([0, 1]))
        print("Rank %d has data %g sum %g pid %d" % (rank, tensor[0], t[0], os.getpid()),
              flush=True)
        if rank == 1:
            raise RuntimeError("rank 1 fails")

    def init_process(rank, size, fn, backend="gloo"):
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29519"
        dist.init_process_group(backend, rank=rank, world_size=size)
        fn(rank, size)

    def processes():
        loader = torch.utils.data.DataLoader(list(range(4)), num_workers=1,
                                             multiprocessing_context="fork")
        print("loaded", sum(int(b) for b in loader), "parent", os.getpid(), flush=True)
        started = []
        for rank in range(2):
            p = mp.Process(target=init_process, args=(rank, 2, run))
            p.start()
            started.append(p)
        print("before join", [p.is_alive() for p in started], flush=True)
        for p in started:
            p.join()
        print("exitcodes", [p.exitcode for p in started],
              "alive", [p.is_alive() for p in started], flush=True)

    def send_back(rank, size, queue, pipe_end):
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29520"
        dist.init_process_group("gloo", rank=rank, world_size=size)
        t = torch.ones(1) * (rank + 1)
        dist.all_reduce(t)
        queue.put((rank, t.item()))
        if rank == 1:
            pipe_end.send("sum %g" % t.item())

    # The multiprocessing docs' order: read what the processes send back, then join them.
    def drained():
        ctx = mp.get_context("spawn")
        queue, (mine, theirs) = ctx.Queue(), ctx.Pipe()
        started = [ctx.Process(target=send_back, args=(r, 2, queue, theirs)) for r in range(2)]
        for p in started:
            p.start()
        print("pipe", mine.recv(), flush=True)
        print("queue", sorted(queue.get() for _ in started), flush=True)
        for p in started:
            p.join()
        print("exitcodes", [p.exitcode for p in started], flush=True)

    # A parent that polls its processes instead of joining them.
    def polled():
        queue, (_, theirs) = mp.SimpleQueue(), mp.Pipe()
        started = [mp.Process(target=send_back, args=(r, 2, queue, theirs)) for r in range(2)]
        for p in started:
            p.start()
        print("alive", [p.is_alive() for p in started], flush=True)
        while any(p.is_alive() for p in started):
            time.sleep(0.05)
        print("exitcodes", [p.exitcode for p in started], flush=True)

    if __name__ == "__main__":
        for mode in sys.argv[1:]:  # one spawn after another in one script
            print("== " + mode, flush=True)
            if mode in ("processes", "drained", "polled"):
                globals()[mode]()
                continue
            if mode == "no_join":
                context = spawn(work, args=(2, mode), nprocs=2, join=False)
                while not context.join():
                    pass
                print("joined", flush=True)
                continue
            try:
                spawn(work, args=(2, mode), nprocs=2)
            except Exception as e:
                print("CAUGHT %s %s %s" % (type(e).__name__, getattr(e, "error_index", None),
                                           getattr(e, "exit_code", None)))
                print(e, flush=True)
''')

GPU = textwrap.dedent('''
    import os
    import torch, torch.distributed as dist, torch.multiprocessing as mp
    from torch.nn.parallel import DistributedDataParallel as DDP

    def demo(rank, world_size):
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "29518"
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
        torch.cuda.set_device(rank)
        model = torch.nn.Linear(4, 2).to(rank)
        ddp = DDP(model, device_ids=[rank])
        ddp(torch.ones(3, 4).to(rank)).sum().backward()
        print("rank %d of %d on cuda:%d" % (rank, world_size, torch.cuda.current_device()))
        dist.destroy_process_group()

    if __name__ == "__main__":
        n = torch.cuda.device_count()
        assert n >= 2, "Requires at least 2 GPUs to run, but got %d" % n
        mp.spawn(demo, args=(n,), nprocs=n, join=True)
''')


def free_port():
    """A TCP port nothing listens on now (another suite's Gloo runs may hold a fixed one)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(tmp_path, script, *args, launcher=("-m", "twinccl.spawn")):
    path = tmp_path / "train.py"
    path.write_text(script)
    return subprocess.run([sys.executable] + list(launcher) + [str(a) for a in args[:-1]] +
                          [path.name] + [str(a) for a in args[-1]], capture_output=True,
                          text=True, timeout=180, env=ENV, cwd=str(tmp_path))


def test_the_ddp_tutorial_gives_the_weights_gloo_processes_give(tmp_path):
    (tmp_path / "gloo").mkdir()
    (tmp_path / "twin").mkdir()
    for attempt in range(2):  # real Gloo processes aborted once on a loaded host ("terminate
        # called without an active exception", SIGABRT in process 0): the reference is run again
        gloo = run(tmp_path, TUTORIAL, [tmp_path / "gloo", free_port()], launcher=())
        if "terminated with signal" not in gloo.stderr:
            break
    assert gloo.returncode == 0, gloo.stderr
    twin = run(tmp_path, TUTORIAL, [tmp_path / "twin", 29514])
    assert twin.returncode == 0, twin.stderr
    pids = set()
    for rank in range(3):
        want = json.loads((tmp_path / "gloo" / ("rank%d.json" % rank)).read_text())
        got = json.loads((tmp_path / "twin" / ("rank%d.json" % rank)).read_text())
        assert got["backend"] == want["backend"] == "gloo"
        for a, b in zip(got["weights"], want["weights"]):
            assert a == pytest.approx(b, rel=0, abs=1e-6)
        pids.add(got["pid"])
    assert len(pids) == 1  # one process: the ranks were emulated


EXPECTED = {
    "raise": ["CAUGHT ProcessRaisedException 1 None",
              "-- Process 1 terminated with the following error:",
              "ValueError: bad batch on rank 1"],
    "exit": ["CAUGHT ProcessExitedException 1 3", "process 1 terminated with exit code 3"],
    "wrong_rank": ["CAUGHT ProcessRaisedException 1 None",
                   "init_process_group: rank=3 on the thread of rank 1"],
    "no_join": ["joined"],
}


def test_a_failing_rank_ends_the_call_as_torchs_spawn_does(tmp_path):
    """One launch: four spawns, then the tutorial's processes, then processes whose results are
    read before they are joined, then processes polled with is_alive() (before: the parent waited
    for these two forever)."""
    done = run(tmp_path, FAILING, "--timeout-s", 30,
               list(EXPECTED) + ["processes", "drained", "polled"])
    assert done.returncode == 0, done.stderr
    parts = {}  # mode -> what the script printed after "== mode"
    for line in done.stdout.splitlines():
        if line.startswith("== "):
            mode = line[3:]
            parts[mode] = ""
        elif parts:
            parts[mode] += line + "\n"
    assert sorted(parts) == sorted(list(EXPECTED) + ["processes", "drained", "polled"]), \
        done.stdout
    for mode, texts in EXPECTED.items():
        for text in texts:
            assert text in parts[mode], (mode, done.stdout + done.stderr)
    # processes started one by one are the ranks of one run at the first join
    out = parts["processes"]
    parent = int(out.split("parent ")[1].split()[0])
    for rank in range(2):
        assert "Rank %d has data 1 sum 3 pid %d" % (rank, parent) in out, out  # emulated
    assert "loaded 6" in out and "before join [True, True]" in out, out
    assert "exitcodes [0, 1] alive [False, False]" in out, out
    # (Process-1 was the DataLoader's worker, as multiprocessing counts them)
    assert "Process Process-3:" in done.stderr and "RuntimeError: rank 1 fails" in done.stderr
    assert parts["drained"] == ("pipe sum 3\nqueue [(0, 3.0), (1, 3.0)]\nexitcodes [0, 0]\n"), \
        done.stdout
    assert parts["polled"] == "alive [True, True]\nexitcodes [0, 0]\n", done.stdout


def test_a_gpu_script_on_the_cpu_with_the_parents_device_count(tmp_path):
    done = run(tmp_path, GPU, "--cuda-on-cpu", "--gpus", 4, [])
    assert done.returncode == 0, done.stderr
    assert sorted(line for line in done.stdout.splitlines() if line.startswith("rank")) == \
        ["rank %d of 4 on cuda:%d" % (r, r) for r in range(4)]


STUCK = textwrap.dedent('''
    import os, threading
    import torch, torch.distributed as dist
    import torch.multiprocessing as mp

    def work(rank):
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29521"
        dist.init_process_group("gloo", rank=rank, world_size=2)
        if rank == 0:
            threading.Event().wait()  # blocked in C for good, holding its turn to run Python
        dist.all_reduce(torch.ones(1))  # rank 1 waits for it, whichever rank ran first

    if __name__ == "__main__":
        mp.spawn(work, nprocs=2)
        print("after spawn")
''')


def test_a_rank_blocked_for_good_ends_the_launch_as_torchruns_does(tmp_path):
    """Before, the launcher said the process could not end those threads, and hung."""
    done = run(tmp_path, STUCK, "--timeout-s", 1, [])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "after spawn" not in done.stdout
    assert "blocked outside Python and TwinCCL" in done.stderr, done.stderr
    assert "the launcher ends the process (exit status 1)" in done.stderr, done.stderr
