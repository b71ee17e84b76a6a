"""python3 -m twinccl.torchrun: an unmodified torchrun script on emulated ranks (the environment
torchrun gives each worker, torchrun's exit codes and failure report), and torch's "Distributed
Synchronous SGD" tutorial shape giving the weights of a reference computed rank by rank."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from launcher_support import ENV

torch = pytest.importorskip("torch")

SCRIPT = textwrap.dedent('''
    import json, os, sys
    import torch
    import torch.distributed as dist

    import mpu  # next to the script: each rank imports its own (Megatron-style globals)

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    mpu.initialize(2)
    x = torch.ones(3) * (rank + 1)
    dist.all_reduce(x)
    pair = torch.ones(1) * (rank + 1)
    dist.all_reduce(pair, group=mpu.pair_group())
    seen = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                           "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
                                           "OMP_NUM_THREADS")}
    with open(os.path.join(os.path.dirname(__file__), "rank%d.json" % rank), "w") as f:
        json.dump({"env": seen, "argv": sys.argv, "file": __file__, "sum": x.tolist(),
                   "threads": torch.get_num_threads(),
                   "main": __name__,
                   "pair": pair.item(), "pair_ranks": mpu.PAIR_RANKS}, f)
    dist.barrier()  # every rank has written its file before one fails
    if sys.argv[1] == "raise" and rank == 2:
        raise ValueError("boom on rank 2")
    if sys.argv[1] == "exit" and rank == 1:
        sys.exit(3)
    dist.barrier()
''')


MPU = textwrap.dedent('''
    import torch.distributed as dist
    _PAIR_GROUP = None
    PAIR_RANKS = None

    def initialize(size):
        global _PAIR_GROUP, PAIR_RANKS
        for start in range(0, dist.get_world_size(), size):
            ranks = list(range(start, start + size))
            group = dist.new_group(ranks)
            if dist.get_rank() in ranks:
                _PAIR_GROUP, PAIR_RANKS = group, ranks

    def pair_group():
        return _PAIR_GROUP
''')


def launch(tmp_path, *args, script=SCRIPT):
    path = tmp_path / "train.py"
    path.write_text(script)
    (tmp_path / "mpu.py").write_text(MPU)
    done = subprocess.run([sys.executable, "-m", "twinccl.torchrun"] + list(args[:-1]) +
                          [path.name] + list(args[-1]), capture_output=True, text=True,
                          timeout=120, env=ENV, cwd=str(tmp_path))  # `... train.py`, as typed
    return done


def test_each_rank_sees_torchruns_environment_and_a_failing_rank_is_reported(tmp_path):
    """One launch for both (each launch imports torch: ~5 s): every rank writes what it saw,
    then rank 2 raises. A run where every rank succeeds exits 0: test_distributed_sgd_tutorial_*
    below and test_torchrun_vs_gloo.py."""
    done = launch(tmp_path, "--nproc-per-node", "2", "--nnodes", "2", ["raise", "--lr", "0.1"])
    for rank in range(4):
        seen = json.loads((tmp_path / ("rank%d.json" % rank)).read_text())
        assert seen["env"] == {"RANK": str(rank), "LOCAL_RANK": str(rank % 2), "WORLD_SIZE": "4",
                               "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": str(rank // 2),
                               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500",
                               # torchrun's default with several workers a node (once only
                               # rank 0's: the others were given it "unless set" in rank 0's)
                               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        # as `python train.py`: argv[0] as typed, __file__ joined to the working directory
        assert seen["argv"] == ["train.py", "raise", "--lr", "0.1"]
        assert seen["file"] == str(tmp_path / "train.py")
        assert seen["sum"] == [10.0] * 3 and seen["main"] == "__main__"
        # torch's intra-op threads as OMP_NUM_THREADS sets them in a torchrun worker
        assert seen["threads"] == int(os.environ.get("OMP_NUM_THREADS", "1"))
        pair = [rank - rank % 2, rank - rank % 2 + 1]
        assert seen["pair_ranks"] == pair and seen["pair"] == sum(pair) + 2
    assert done.returncode == 1
    # torch 2.x's init_process_group prefixes the rank's traceback lines, as under torchrun.
    prefix = "[rank2]: " if "[rank2]: Traceback" in done.stderr else ""
    assert '%s    raise ValueError("boom on rank 2")\n%sValueError: boom on rank 2' \
        % (prefix, prefix) in done.stderr
    assert "_launch_rank.py" not in done.stderr  # the traceback starts at the script
    assert "train.py FAILED" in done.stderr and "<NO_OTHER_FAILURES>" in done.stderr
    assert "rank      : 2 (local_rank: 0)\n  exitcode  : 1 (pid: " in done.stderr
    assert "\n  traceback : ValueError: boom on rank 2\n" in done.stderr  # the entry names it


def test_an_exiting_rank_is_reported_with_its_exit_code(tmp_path):
    done = launch(tmp_path, "--nproc-per-node", "4", ["exit"])
    assert done.returncode == 1
    assert "rank      : 1 (local_rank: 1)\n  exitcode  : 3 (pid: " in done.stderr
    assert "\n  traceback : SystemExit: 3\n" in done.stderr


def test_a_rank_stopped_before_its_script_began_is_the_root_cause(tmp_path):
    """A rank holds its turn (in C: no TwinCCL call) past --timeout-s, then ends well; the other
    rank, which waited for its turn, is stopped before its script began: the failure is that
    rank's, named in its entry (it was reported as rank 0's, which had succeeded, with no error)."""
    script = textwrap.dedent('''
        import threading
        threading.Event().wait(1.3)  # each rank in turn: the first keeps it past --timeout-s 1
    ''')
    done = launch(tmp_path, "--nproc-per-node", "2", "--timeout-s", "1", [], script=script)
    assert done.returncode == 1, done.stderr
    root = done.stderr.split("Root Cause (first observed failure):\n")[1]
    rank = int(root.split("rank      : ")[1].split()[0])
    error = root.split("traceback : ")[1].split("\n=")[0]
    assert "AbortedError: " in error, done.stderr
    if "the run was stopped" in error:  # the waiting rank: never ran its script
        assert "rank %d waited" % rank in error, done.stderr
    else:  # (on a loaded machine the first rank may still be waiting 1 s after the stop)
        assert "stopped rank %d" % rank in error, done.stderr


def test_usage_errors_exit_as_argparse_does(tmp_path):
    done = launch(tmp_path, "--nproc-per-node", "gpu", ["ok"])
    assert done.returncode == 2 and "--nproc-per-node=gpu: give the number" in done.stderr
    done = subprocess.run([sys.executable, "-m", "twinccl.torchrun", str(tmp_path / "none.py")],
                          capture_output=True, text=True, timeout=60, env=ENV)
    assert done.returncode == 1 and "can't open file" in done.stderr


SGD = textwrap.dedent('''
    """torch's "Distributed Synchronous SGD" tutorial shape: per-rank seeds, a shuffling sampler,
    gradients averaged with all_reduce."""
    import os, sys
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset
    from torch.utils.data.distributed import DistributedSampler

    STEPS = 6

    def data():
        g = torch.Generator().manual_seed(0)
        return TensorDataset(torch.randn(96, 10, generator=g), torch.randn(96, 1, generator=g))

    def model():
        return nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 1))

    def train(rank, world, average):
        torch.manual_seed(1234)                 # the same initial weights on every rank
        net = model()
        torch.manual_seed(1234 + rank)          # each rank its own dropout and loader seed
        sampler = DistributedSampler(data(), num_replicas=world, rank=rank, shuffle=True)
        loader = DataLoader(data(), batch_size=4, sampler=sampler)
        opt = torch.optim.SGD(net.parameters(), lr=0.05)
        batches = iter(loader)
        for step in range(STEPS):
            x, y = next(batches)
            opt.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            yield net                           # the caller averages the gradients here
            average(net)
            opt.step()
        yield net

    if __name__ == "__main__":
        dist.init_process_group("gloo")
        world = dist.get_world_size()

        def average(net):
            for p in net.parameters():
                dist.all_reduce(p.grad.data, op=dist.ReduceOp.SUM)
                p.grad.data /= world
        for net in train(dist.get_rank(), world, average):
            pass
        if dist.get_rank() == 0:
            torch.save([p.detach() for p in net.parameters()], sys.argv[1])
''')


def reference_sgd(tmp_path, world):
    """The same training rank by rank in this thread: each rank's generator state is torch's
    own get/set_rng_state, gradients summed in rank order."""
    sys.path.insert(0, str(tmp_path))
    try:
        import sgd_tutorial
    finally:
        sys.path.remove(str(tmp_path))
    saved = torch.get_rng_state()
    states, trainers = {}, {}
    for rank in range(world):
        trainers[rank] = sgd_tutorial.train(rank, world, lambda net: None)
    nets = {}
    for step in range(sgd_tutorial.STEPS + 1):
        for rank in range(world):
            if rank in states:
                torch.set_rng_state(states[rank])
            nets[rank] = next(trainers[rank])
            states[rank] = torch.get_rng_state()
        if step < sgd_tutorial.STEPS:
            for params in zip(*(nets[r].parameters() for r in range(world))):
                total = sum(p.grad.data for p in params)
                for p in params:
                    p.grad.data = total / world
    torch.set_rng_state(saved)
    return [p.detach() for p in nets[0].parameters()]


def test_distributed_sgd_tutorial_gives_the_reference_weights(tmp_path):
    """Before (ranks sharing torch's generator): weights off by 1e-2 to 1, differently each run.
    Gradients are summed in another order than the reference's: equal within 1e-6."""
    (tmp_path / "sgd_tutorial.py").write_text(SGD)
    out = tmp_path / "weights.pt"
    done = subprocess.run([sys.executable, "-m", "twinccl.torchrun", "--nproc-per-node", "4",
                           str(tmp_path / "sgd_tutorial.py"), str(out)], capture_output=True,
                          text=True, timeout=120, cwd=str(tmp_path), env=ENV)
    assert done.returncode == 0, done.stderr
    got = torch.load(str(out))
    expected = reference_sgd(tmp_path, 4)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert torch.allclose(g, e, rtol=0, atol=1e-6), (g - e).abs().max()


def test_every_option_of_torchs_torchrun_is_taken():
    """A torchrun command line copied from a cluster's job script parses: every option of the
    installed torch's own parser (long, underscore and short forms) is one of the launcher's,
    with its value. Left out: --print-completion (torchrun's own shell completion script)."""
    from torch.distributed.run import get_args_parser
    from twinccl.torchrun import parser
    ours = parser()
    left_out = {"--print-completion", "--print_completion", "-h", "--help"}
    tried = 0
    for action in get_args_parser()._actions:
        for option in action.option_strings:
            if option in left_out:
                continue
            takes_value = action.nargs != 0
            value = {"--nproc-per-node": "2", "--nproc_per_node": "2", "--nnodes": "1",
                     "--node-rank": "0", "--node_rank": "0", "--master-port": "29500",
                     "--master_port": "29500", "--max-restarts": "0",
                     "--max_restarts": "0"}.get(option, "1")
            argv = [option] + ([value] if takes_value else []) + ["train.py", "--lr", "1"]
            args = ours.parse_args(argv)
            assert args.training_script == "train.py", option
            assert args.training_script_args == ["--lr", "1"], option
            tried += 1
    assert tried > 40
    assert ours.parse_args(["--virtual-local-rank", "train.py"]).virtual_local_rank


OUTPUT_SCRIPT = textwrap.dedent('''
    import os, sys
    rank = os.environ["RANK"]
    print("out of", rank, "line 1\\nline 2")
    print("err of", rank, file=sys.stderr, flush=True)
    if rank == "1" and sys.argv[1] == "raise":
        raise ValueError("boom on rank 1")
''')


def test_output_options_as_torchruns(tmp_path):
    """--local-ranks-filter, --tee with --role and --log-dir, -r: each rank's stdout and stderr
    where torchrun puts its workers' (console lines prefixed `[rank0]:` when tee'd, files
    LOG_DIR/RUN_ID_*/attempt_0/LOCAL_RANK/stdout.log). Before, accepted without effect: every
    rank's output on the console, unprefixed."""
    logs = tmp_path / "logs"
    done = launch(tmp_path, "--nproc-per-node", "2", "--local-ranks-filter", "0", "--role",
                  "rank", "--tee", "3", "--log-dir", str(logs), ["raise"], script=OUTPUT_SCRIPT)
    assert done.returncode == 1, done.stderr
    assert "[rank0]:out of 0 line 1\n[rank0]:line 2\n" in done.stdout
    assert "[rank0]:err of 0" in done.stderr and "of 1" not in done.stdout + done.stderr
    assert "rank      : 1 (local_rank: 1)" in done.stderr  # the failure is still reported
    attempt, = logs.glob("*/attempt_0")
    assert (attempt / "1" / "stdout.log").read_text() == "out of 1 line 1\nline 2\n"
    assert "ValueError: boom on rank 1" in (attempt / "1" / "stderr.log").read_text()
    assert (attempt / "0" / "stderr.log").read_text() == "err of 0\n"
    quiet = launch(tmp_path, "--nproc-per-node", "2", "-r", "1", "--log-dir", str(logs), ["ok"],
                   script=OUTPUT_SCRIPT)
    assert quiet.returncode == 0 and "out of" not in quiet.stdout, quiet.stdout
    assert "err of 0" in quiet.stderr and "err of 1" in quiet.stderr  # -r 1: stdout only
    bad = launch(tmp_path, "--nproc-per-node", "2", "--tee", "5", ["ok"], script=OUTPUT_SCRIPT)
    assert bad.returncode == 2 and "--tee=5" in bad.stderr
