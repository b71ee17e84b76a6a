"""MindSpore's msrun command line on emulated ranks: a MindSpore script launched as
`msrun --worker_num=8 --local_worker_num=8 --log_dir=msrun_log --join=True train.py ARGS` runs
unmodified as `python3 -m twinccl.msrun --worker_num=8 --local_worker_num=8 --log_dir=msrun_log
--join=True train.py ARGS`.

The same launcher as twinccl.torchrun (each rank the script as its own `__main__` with its own
process state; MindSpore's communication patched when the script imports it; RANK_ID and DEVICE_ID
as msrun's workers have them; the failure report), with msrun's options: `--worker_num` ranks in
all, `--local_worker_num` of them per node (so worker_num / local_worker_num nodes), and msrun's
worker output: each rank's stdout and stderr in `LOG_DIR/worker_RANK.log` (`--worker_log_name`),
shown on the console too with `--join True` for the ranks in `--tail_worker_log` (all by default).
Accepted without effect, as they only say how processes meet or bind (the ranks are threads of
this process): `--master_addr`, `--master_port`, `--cluster_time_out`, `--bind_core`,
`--bind_numa`, `--rank_table_file`. Refused with a reason: `--node_rank` other than -1 / 0 (every
node's ranks run here), `--sim_level` (MindSpore's compile-only dry run, no communication to
emulate).
"""
import argparse
import ast
import sys

from .torchrun import add_twinccl_options, run_ranks


def parser():
    p = argparse.ArgumentParser(
        prog="python3 -m twinccl.msrun",
        description="Runs an msrun (MindSpore) training script on TwinCCL's emulated ranks "
                    "(threads of this process, each with its own process state). See "
                    "docs/python.md.")
    p.add_argument("--worker_num", type=int, default=8, help="ranks in all (msrun's; default 8)")
    p.add_argument("--local_worker_num", type=int, default=8,
                   help="ranks per node (default 8)")
    p.add_argument("--master_addr", default="127.0.0.1", help=argparse.SUPPRESS)
    p.add_argument("--master_port", type=int, default=8118, help=argparse.SUPPRESS)
    p.add_argument("--node_rank", type=int, default=-1,
                   help="-1 or 0: every node's ranks run in this process")
    p.add_argument("--log_dir", default="", help="where worker_RANK.log go (default .)")
    p.add_argument("--join", type=ast.literal_eval, choices=[True, False], default=False,
                   help="True: the workers' logs on the console too (--tail_worker_log)")
    p.add_argument("--tail_worker_log", default="-1",
                   help="with --join True, the ranks whose log reaches the console (default -1: "
                   "every rank)")
    p.add_argument("--worker_log_name", default="",
                   help="the log files' name before _RANK.log (default worker; {ip}, "
                   "{hostname})")
    for name in ("--cluster_time_out", "--bind_core", "--bind_numa", "--rank_table_file"):
        p.add_argument(name, default=None, help=argparse.SUPPRESS)
    p.add_argument("--sim_level", type=int, default=-1, help=argparse.SUPPRESS)
    p.add_argument("--sim_rank_id", type=int, default=-1, help=argparse.SUPPRESS)
    add_twinccl_options(p)
    p.add_argument("training_script", metavar="task_script", help="the script")
    p.add_argument("training_script_args", metavar="task_script_args", nargs=argparse.REMAINDER)
    p.set_defaults(module=False, virtual_local_rank=False, role=None)
    return p


def _world(p, args):
    if args.worker_num < 1 or args.local_worker_num < 1:
        p.error("--worker_num and --local_worker_num must be at least 1")
    if args.worker_num % args.local_worker_num:
        p.error("--worker_num=%d is not a whole number of nodes of --local_worker_num=%d ranks: "
                "every node's ranks run here, so give worker_num = nodes x local_worker_num"
                % (args.worker_num, args.local_worker_num))
    if args.node_rank not in (-1, 0):
        p.error("--node_rank=%d: every node's ranks run in this process; start it once, as "
                "node 0 (or without --node_rank)" % args.node_rank)
    if args.sim_level != -1:
        p.error("--sim_level=%d: MindSpore's dry run compiles without communicating; there is "
                "nothing to emulate (run it with msrun)" % args.sim_level)
    return args.local_worker_num, args.worker_num // args.local_worker_num


def main(argv=None):
    from ._rank_output import WorkerLogs
    p = parser()
    args = p.parse_args(argv)
    per_node, nodes = _world(p, args)
    if args.rank_state != "isolated":
        p.error("each rank's output goes to its own worker_RANK.log: that needs --rank-state "
                "isolated (the default)")
    try:
        output = WorkerLogs(args.log_dir, args.worker_log_name, args.join, args.tail_worker_log)
    except ValueError as e:
        p.error(str(e))
    # (MindSpore's msrun leaves OMP_NUM_THREADS as it is: torchrun's default is torchrun's)
    return run_ranks(p, args, per_node, nodes, output, False, "twinccl.msrun",
                     one_thread_default=False)


if __name__ == "__main__":
    sys.exit(main())
