"""torchrun's interface on emulated ranks: an unmodified torchrun training script runs as
`python3 -m twinccl.torchrun --nproc-per-node 8 train.py ARGS`.

Each rank runs the script as its own `__main__` (its own module globals, imports of your modules,
sys.argv, random generators and the environment torchrun gives a worker: RANK, LOCAL_RANK,
WORLD_SIZE, MASTER_ADDR... see twinccl.run's rank_state), on the emulator: torch.distributed's
calls reach TwinCCL (NCCL's exact results; misuse is a typed error naming the script's line
instead of a hang). `--topology dgx-h100` also replays the run on that topology, prints the
simulated time and writes the timeline (Perfetto). torchrun's exit codes: 0 when every rank
succeeded, else 1, after each failing rank's traceback and torchrun's failure summary (the root
cause: the first rank that failed, its exit code: 1 for an exception, N for sys.exit(N)).

    python3 -m twinccl.torchrun --nproc-per-node 4 train.py --epochs 1
    python3 -m twinccl.torchrun --nproc-per-node 8 --topology dgx-h100 train.py
"""
import argparse
import contextlib
import importlib.util
import os
import sys

from ._launch_rank import Failures, RankProgram

# torchrun options that only say how processes meet, bind to CPUs and get signals (rendezvous,
# restarts, NUMA, shutdown, log plumbing): accepted and without effect here, where the ranks are
# threads of this process. Short forms after the name.
_PROCESS_ONLY = [["--rdzv-backend"], ["--rdzv-endpoint"], ["--rdzv-id"], ["--rdzv-conf"],
                 ["--monitor-interval"], ["--start-method"], ["--local-addr"], ["--logs-specs"],
                 ["--duplicate-stdout-filters"], ["--duplicate-stderr-filters"],
                 ["--event-log-handler"], ["--numa-binding"], ["--signals-to-handle"],
                 ["--shutdown-timeout"]]
# Where each worker's output goes (_rank_output.py), and the role's name (ROLE_NAME, the prefix).
_OUTPUT = [["--role"], ["--log-dir"], ["--redirects", "-r"], ["--tee", "-t"],
           ["--log-line-prefix-template"], ["--local-ranks-filter"]]


def _env_default(name, default):
    """torchrun reads every option from PET_<NAME> too."""
    return os.environ.get("PET_" + name.upper().replace("-", "_"), default)


def parser(launch=False):
    """torchrun's options; launch: torch.distributed.launch's (torchrun's and --use-env)."""
    p = argparse.ArgumentParser(
        prog="python3 -m twinccl.launch" if launch else "python3 -m twinccl.torchrun",
        description="Runs a %s training script on TwinCCL's emulated ranks (threads of "
                    "this process, each with its own process state). See docs/python.md."
                    % ("torch.distributed.launch" if launch else "torchrun"))
    if launch:
        p.add_argument("--use-env", "--use_env", action="store_true",
                       help="as torch.distributed.launch's: the local rank in LOCAL_RANK only; "
                       "without it each rank's script also gets --local-rank=N before its "
                       "arguments")
    p.add_argument("--nproc-per-node", "--nproc_per_node",
                   default=_env_default("nproc_per_node", "1"),
                   help="ranks per node (an int)")
    p.add_argument("--nnodes", default=_env_default("nnodes", "1"),
                   help="nodes (N or N:N); every node's ranks are emulated here")
    p.add_argument("--node-rank", "--node_rank", type=int,
                   default=int(_env_default("node_rank", "0")))
    p.add_argument("--master-addr", "--master_addr",
                   default=_env_default("master_addr", "127.0.0.1"))
    p.add_argument("--master-port", "--master_port", type=int,
                   default=int(_env_default("master_port", "29500")))
    p.add_argument("--standalone", action="store_true")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    for name, *short in _PROCESS_ONLY + _OUTPUT:
        underscored = name.replace("-", "_").replace("__", "--", 1)
        forms = [name] + ([underscored] if underscored != name else []) + short
        p.add_argument(*forms, default=None,
                       help=argparse.SUPPRESS if [name] in _PROCESS_ONLY else
                       "as torchrun's (worker output: docs/python.md)")
    p.add_argument("--virtual-local-rank", "--virtual_local_rank", action="store_true",
                   help="LOCAL_RANK=0 on every rank, as torchrun's option sets it")
    p.add_argument("-m", "--module", action="store_true",
                   help="the target is a module, run as `python -m`")
    p.add_argument("--no-python", "--no_python", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--run-path", "--run_path", action="store_true", help=argparse.SUPPRESS)
    add_twinccl_options(p)
    p.add_argument("training_script", help="the script (or, with -m, the module)")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def add_twinccl_options(p):
    """The launchers' own options (twinccl.torchrun, .launch, .msrun, .spawn)."""
    twin = p.add_argument_group("TwinCCL")
    twin.add_argument("--topology", help="replay the run on this topology (preset or file): "
                      "print the simulated time, write the timeline")
    twin.add_argument("--timeline", default="twinccl_timeline.json",
                      help="with --topology: the Perfetto timeline's path "
                      "(default %(default)s)")
    twin.add_argument("--trace", help="save the recorded trace (twinccl replay PATH)")
    twin.add_argument("--check", type=int, default=1, help="0, 1 (default) or 2: TWINCCL_CHECK")
    twin.add_argument("--timeout-s", type=float, default=300.0,
                      help="longest wait for another rank (default %(default)s)")
    twin.add_argument("--algorithm", help="force an algorithm for every collective")
    twin.add_argument("--cuda-on-cpu", action="store_true",
                      help="map the script's CUDA calls (.cuda(), device='cuda', "
                      "torch.cuda.set_device, streams, events) to the CPU")
    twin.add_argument("--rank-state", choices=["isolated", "shared"], default="isolated",
                      help="isolated (default): each rank its own process state")


def _world(p, args):
    try:
        per_node = int(args.nproc_per_node)
    except ValueError:
        p.error("--nproc-per-node=%s: give the number of ranks per node (auto, cpu and gpu "
                "count this machine's devices, which emulated ranks do not need)"
                % args.nproc_per_node)
    low, _, high = str(args.nnodes).partition(":")
    try:
        nodes = int(low)
        if high and int(high) != nodes:
            raise ValueError
    except ValueError:
        p.error("--nnodes=%s: give a fixed number of nodes (N or N:N; elastic ranges need "
                "rendezvous between processes)" % args.nnodes)
    if per_node < 1 or nodes < 1:
        p.error("--nproc-per-node and --nnodes must be at least 1")
    if args.node_rank != 0:
        p.error("--node-rank=%d: every node's ranks run in this process; start it once, as "
                "node 0" % args.node_rank)
    if args.max_restarts != 0:
        p.error("--max-restarts=%d: restarts are not emulated" % args.max_restarts)
    if args.no_python:
        p.error("--no-python: ranks are threads of this Python process; the target must be a "
                "Python script or module")
    return per_node, nodes


def _program(p, args):
    """(code, path or module name, __spec__) of the target."""
    if args.module:
        try:
            spec = importlib.util.find_spec(args.training_script)
        except (ImportError, ValueError) as e:
            spec, why = None, str(e)
        else:
            why = "no module named %r" % args.training_script
        if spec is not None and spec.submodule_search_locations is not None:
            spec = importlib.util.find_spec(args.training_script + ".__main__")
        if spec is None or spec.loader is None:
            print("%s: %s" % (sys.executable, why), file=sys.stderr)
            sys.exit(1)
        return spec.loader.get_code(spec.name), spec.origin, spec
    path = args.training_script
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        print("%s: can't open file %r: [Errno %d] %s" % (sys.executable, path, e.errno,
                                                       e.strerror), file=sys.stderr)
        sys.exit(1)  # torchrun: the workers exit 2, torchrun 1
    # As `python train.py` (3.9+): __file__ and the code's file are the path joined to the
    # working directory (tracebacks and warnings name it so); sys.argv[0] stays as typed.
    where = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    return compile(source, where, "exec", dont_inherit=True), where, None


def main(argv=None, launch=False):
    """torchrun's command line; launch: torch.distributed.launch's (twinccl.launch)."""
    p = parser(launch)
    args = p.parse_args(argv)
    per_node, nodes = _world(p, args)
    from ._rank_output import RankOutput
    try:
        output = RankOutput(args, per_node, run_id="twinccl")
    except ValueError as e:
        p.error(str(e))
    if output.active() and args.rank_state != "isolated":
        p.error("--local-ranks-filter, --redirects and --tee give each rank its own sys.stdout "
                "and sys.stderr: they need --rank-state isolated (the default)")
    local_rank_argument = launch and not args.use_env  # torch's launch: --local-rank=N first
    if local_rank_argument and args.rank_state != "isolated":
        p.error("each rank's script gets its own --local-rank=N in sys.argv: that needs "
                "--rank-state isolated (the default), or --use-env")
    return run_ranks(p, args, per_node, nodes, output, local_rank_argument,
                     "twinccl.launch" if launch else "twinccl.torchrun")


def _preimport(path, rank_0_environ):
    """The libraries the script imports first, imported before its ranks start (their import-time
    logging and warnings settings every rank's: _library_preimport.py), with rank 0's variables
    in the environment, as when rank 0, the first to run, imported them (a library's constant
    read from LOCAL_RANK at import is one for all ranks either way); the caller's is put back."""
    from ._library_preimport import preimport_libraries
    try:
        with open(path, "rb") as f:
            source = f.read()
    except (OSError, TypeError):
        return
    before = {name: os.environ.get(name) for name in rank_0_environ}
    os.environ.update(rank_0_environ)
    try:
        preimport_libraries(source, path)
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _torch_threads(count):
    """torch's intra-op threads set to `count` for the run (one setting a process: the ranks take
    turns on it), as OMP_NUM_THREADS=count sets them in a torchrun worker; with the machine's
    count, a GPT-2 step of a Hugging Face Trainer summed its floats in another order than under
    torchrun (the weights 1e-7 apart)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run_ranks(p, args, per_node, nodes, output, local_rank_argument, name, one_thread_default=True):
    """The script on per_node x nodes emulated ranks (the launchers' common part); output: each
    rank's (stdout, stderr) (_rank_output.RankOutput's interface); name: the launcher's, in its
    messages; one_thread_default: torchrun's OMP_NUM_THREADS=1 (msrun sets none). Returns the
    launcher's exit code."""
    code, path, spec = _program(p, args)
    import twinccl
    if args.cuda_on_cpu:
        from ._cuda_on_cpu import cuda_on_cpu  # (its per-rank current device, before states)
    from ._rank_state import RankStates, torchrun_environ
    world = per_node * nodes
    # `python -m`: the module's file; a script: its path as typed
    script_argv = [path if args.module else args.training_script] + \
        list(args.training_script_args)
    if not args.module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as `python train.py`

    def rank_argv(rank):
        extra = ["--local-rank=%d" % (rank % per_node)] if local_rank_argument else []
        return script_argv[:1] + extra + script_argv[1:]

    import importlib.util  # MindSpore scripts too, patched when they import it (~4 s to import)
    mindspore = "on_import" if importlib.util.find_spec("mindspore") is not None else False

    # torchrun's default for several workers a node: OMP_NUM_THREADS=1 unless set, which torch
    # reads as it starts (one intra-op thread: the same float sums as a torchrun worker's)
    one_thread = one_thread_default and "OMP_NUM_THREADS" not in os.environ and per_node > 1

    def environ(rank):
        env = torchrun_environ(rank, world, per_node, args.master_addr, args.master_port)
        if args.virtual_local_rank:  # (torchrun also gives each worker one visible GPU, index 0)
            env["LOCAL_RANK"] = "0"
        if args.role:
            env["ROLE_NAME"] = args.role
        if mindspore:  # and msrun's RANK_ID, DEVICE_ID
            from ._ms_patch import msrun_environ
            env.update(msrun_environ(rank, per_node))
        if one_thread:
            env["OMP_NUM_THREADS"] = "1"
        return env
    states = None
    if args.rank_state == "isolated":
        if not args.cuda_on_cpu:  # (there a library's import must see the run's CUDA)
            _preimport(path, environ(0))
        states = RankStates(world, environ, rank_argv=rank_argv,
                            fresh_random=True,
                            rank_streams=output.streams if output.active() else None)
    else:  # one sys.argv for all (and no rank environment: RANK cannot be one per thread)
        sys.argv = list(script_argv)
    failures = Failures(args.training_script, per_node)
    program = RankProgram(code, path, spec, failures)
    try:
        import torch.distributed  # noqa: F401  (torch's functions reach the emulator)
        torch_distributed = True
    except ImportError:
        torch_distributed = False
    try:
        cuda = cuda_on_cpu(per_node) if args.cuda_on_cpu else contextlib.nullcontext()
        threads = _torch_threads(1) if one_thread and torch_distributed \
            else contextlib.nullcontext()
        if one_thread:  # (torchrun says so too: its agent's warning)
            print("*" * 41 + "\n%s: OMP_NUM_THREADS=1 for each rank%s, as torchrun sets for "
                  "several workers a node; set OMP_NUM_THREADS to choose another count\n"
                  % (name, " and torch's intra-op threads 1 for the run"
                     if torch_distributed else "") + "*" * 41, file=sys.stderr, flush=True)
        with cuda, threads:
            report = twinccl.run(program, world_size=world, topology=args.topology,
                                 check=args.check,
                                 timeout_s=args.timeout_s, trace_path=args.trace,
                                 algorithm=args.algorithm,
                                 timeline_path=args.timeline if args.topology else None,
                                 torch_distributed=torch_distributed, mindspore=mindspore,
                                 rank_state=args.rank_state, _rank_states=states,
                                 _torch_init_by_script=True, _exit_if_stuck=True)
    except twinccl.ConfigError as e:
        print("%s: %s" % (name, e), file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 (a rank's failure: reported as torchrun does)
        failures.note_run_error(e, world)
    finally:
        output.close()
    if failures:
        failures.print_summary()
        return 1
    if report is not None:
        print(report)
        print("%s: %d ranks on %s: %.1f us simulated; timeline: %s"
              % (name, world, args.topology, report.total_us, os.path.abspath(args.timeline)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
