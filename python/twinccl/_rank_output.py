"""torchrun's worker-output options on emulated ranks: each rank's sys.stdout / sys.stderr as
torchrun gives its workers' (`--local-ranks-filter`, `-r/--redirects`, `-t/--tee`, `--log-dir`,
`--log-line-prefix-template`, `--role`).

How it works: the launcher gives every rank its own sys.stdout and sys.stderr (a part of the rank
state, _rank_state.RankStates). A stream of a rank is a RankStream writing to what torchrun would
write that worker's stream to:
* redirected (`-r`): `LOG_DIR/RUN_ID_XXXX/attempt_0/LOCAL_RANK/stdout.log` (stderr.log) only, as
  torchrun's DefaultLogsSpecs lays them out;
* tee'd (`-t`): that file, and the console with each line prefixed by the template (default
  `[${role_name}${local_rank}]:`, e.g. `[default0]:`; `--role rank` makes it `[rank0]:`);
* neither: the console as it is.
The console part is dropped for local ranks not in `--local-ranks-filter` (files are kept). Without
`--log-dir`, files go to a new temporary directory `torchelastic_XXXX`, named on stderr as torchrun
names it. Output written below Python (a C library's fprintf) is not seen here.
"""
import io
import os
import re
import socket
import string
import sys
import tempfile


def parse_std(value, option):
    """torchrun's Std.from_str: "N" (0 none, 1 stdout, 2 stderr, 3 both) for every local rank, or
    "LOCAL_RANK:N,...": a function local_rank -> N."""
    value = str(value if value is not None else "0")
    if re.fullmatch(r"[0-3]", value):
        return lambda local_rank, n=int(value): n
    if re.fullmatch(r"(\d+:[0-3],)*\d+:[0-3]", value):
        table = {int(k): int(v) for k, v in (p.split(":") for p in value.split(","))}
        return lambda local_rank: table.get(local_rank, 0)
    raise ValueError("%s=%s: give 0-3 (0 none, 1 stdout, 2 stderr, 3 both) or LOCAL_RANK:N,... "
                     "(e.g. 0:3,1:0), as torchrun takes it" % (option, value))


def parse_filter(value):
    """--local-ranks-filter: the local ranks whose output reaches the console (None: every one)."""
    if not value:
        return None
    try:
        ranks = {int(r) for r in str(value).split(",")}
    except ValueError:
        raise ValueError("--local-ranks-filter=%s must be a comma-separated list of integers "
                         "e.g. --local-ranks-filter=0,1,2" % value) from None
    return ranks


class RankStream(io.TextIOBase):
    """A text stream writing to a file (a log file, or os.devnull for a filtered rank's console
    output) and, unless console is None, to a console stream (each line prefixed, or as it is)."""

    def __init__(self, console, prefix, path):
        super().__init__()
        self._console, self._prefix = console, prefix
        self._file = open(path, "a", encoding="utf-8", buffering=1)
        self._at_line_start = True

    def writable(self):
        return True

    def write(self, text):
        self._file.write(text)
        if self._console is not None and text:
            if self._prefix:
                lines = text.split("\n")
                out = []
                for k, line in enumerate(lines):
                    if k:
                        out.append("\n")
                        self._at_line_start = True
                    if line:
                        if self._at_line_start:
                            out.append(self._prefix)
                        out.append(line)
                        self._at_line_start = False
                self._console.write("".join(out))
            else:
                self._console.write(text)
        return len(text)

    def flush(self):
        if not self._file.closed:
            self._file.flush()
        if self._console is not None:
            self._console.flush()

    def close(self):
        if not self.closed:
            super().close()  # (flushes)
        if not self._file.closed:
            self._file.close()

    def fileno(self):  # (faulthandler.enable() writes there)
        return (self._console if self._console is not None else self._file).fileno()

    def isatty(self):
        return False  # a worker's redirected or tee'd stream is a file

    @property
    def encoding(self):
        return getattr(self._console, "encoding", None) or "utf-8"


class RankOutput:
    """Each rank's (stdout, stderr) under the launcher's options; streams(rank) is called once per
    rank, at its first arrival."""

    def __init__(self, args, per_node, run_id):
        self._redirects = parse_std(args.redirects, "--redirects")
        self._tee = parse_std(args.tee, "--tee")
        self._filter = parse_filter(args.local_ranks_filter)
        self._per_node = per_node
        self._role = args.role or "default"
        template = args.log_line_prefix_template or \
            os.environ.get("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE") or \
            "[${role_name}${local_rank}]:"
        self._template = string.Template(template)
        self._log_dir, self._run_id, self._attempt_dir = args.log_dir, run_id, None
        self._console = (sys.stdout, sys.stderr)
        self._streams = {}  # rank -> (stdout, stderr)

    def active(self):
        """Whether any option changes a rank's output."""
        return self._filter is not None or any(
            self._redirects(r) or self._tee(r) for r in range(self._per_node))

    def _attempt(self):
        if self._attempt_dir is None:
            root = self._log_dir or tempfile.mkdtemp(prefix="torchelastic_")
            os.makedirs(root, exist_ok=True)
            run_dir = tempfile.mkdtemp(prefix="%s_" % self._run_id, dir=root)
            self._attempt_dir = os.path.join(run_dir, "attempt_0")
            print("twinccl.torchrun: log directory set to: %s" % run_dir, file=sys.stderr)
        return self._attempt_dir

    def streams(self, rank):
        if rank not in self._streams:
            self._streams[rank] = self._make(rank)
        return self._streams[rank]

    def close(self):
        for pair in self._streams.values():
            for stream in pair:
                if isinstance(stream, RankStream):
                    stream.close()

    def _make(self, rank):
        local = rank % self._per_node
        shown = self._filter is None or local in self._filter
        prefix = self._template.safe_substitute(role_name=self._role, local_rank=local,
                                                rank=rank, hostname="localhost")
        out = []
        for bit, name, console in ((1, "stdout", self._console[0]),
                                   (2, "stderr", self._console[1])):
            redirected, teed = self._redirects(local) & bit, self._tee(local) & bit
            if not (redirected or teed):
                out.append(console if shown else RankStream(None, None, os.devnull))
                continue
            folder = os.path.join(self._attempt(), str(local))
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, name + ".log")
            out.append(RankStream(console if teed and shown else None,
                                  prefix if teed else None, path))
        return tuple(out)


class WorkerLogs:
    """msrun's worker output (twinccl.msrun): each rank's stdout and stderr into one file,
    LOG_DIR/worker_RANK.log (`--worker_log_name NAME`: NAME_RANK.log, its {ip} and {hostname}
    filled in), written anew each launch, as msrun's workers write theirs; with `--join True` also
    to the console as it is, as msrun's `tail -f` of each log shows it (the ranks in
    `--tail_worker_log`, every rank with its default -1). The RankOutput interface."""

    def __init__(self, log_dir, log_name, join, tail):
        self._dir = log_dir or "."
        self._name = (log_name or "worker").replace("{ip}", "127.0.0.1").replace(
            "{hostname}", socket.gethostname())
        try:
            self._tail = None if str(tail) == "-1" else {int(r) for r in str(tail).split(",")}
        except ValueError:
            raise ValueError("--tail_worker_log=%s: give -1 (every worker) or a comma-separated "
                             "list of ranks, e.g. 0,1" % tail) from None
        self._join = join
        self._console = sys.stdout  # the launcher's (at a rank's arrival sys.stdout is a rank's)
        self._streams = {}  # rank -> (stream, stream): stderr into stdout's file, as msrun's

    def active(self):
        return True

    def path(self, rank):
        return os.path.join(self._dir, "%s_%d.log" % (self._name, rank))

    def streams(self, rank):
        if rank not in self._streams:
            os.makedirs(self._dir, exist_ok=True)
            path = self.path(rank)
            open(path, "w").close()  # a new log each launch
            shown = self._join and (self._tail is None or rank in self._tail)
            stream = RankStream(self._console if shown else None, None, path)
            self._streams[rank] = (stream, stream)
        return self._streams[rank]

    def close(self):
        for stream, _ in self._streams.values():
            stream.close()
