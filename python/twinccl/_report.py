"""The simulated time of a twinccl.run on a topology."""
import os

from ._twinccl import InvalidArgument


class Report:
    """What twinccl.run(..., topology=T) returns.

    total_us: simulated time of the whole run (the last rank's end).
    ranks: per rank dicts (end_us, compute_us, comm_us, exposed_comm_us, overlapped_us).
    ops: every operation (comm, seq, kind, algorithm, protocol, nranks, bytes, start_us, end_us,
        time_us), by start time.
    links: every link direction used, busiest first (name, bytes, busy_us, utilisation).
    str(report): the same summary `twinccl replay` prints.
    """

    def __init__(self, data, trace):
        self._data = data
        self._trace = trace
        self.topology = data["topology"]
        self.total_us = data["total_us"]
        self.overlap_fraction = data["overlap_fraction"]
        self.mean_exposed_comm_us = data["mean_exposed_comm_us"]
        self.ranks = data["ranks"]
        self.ops = data["ops"]
        self.links = data["links"]

    def per_op(self):
        """{(comm, kind, bytes): (count, mean time_us)} over the operations."""
        groups = {}
        for op in self.ops:
            key = (op["comm"], op["kind"], op["bytes"])
            count, total = groups.get(key, (0, 0.0))
            groups[key] = (count + 1, total + op["time_us"])
        return {k: (n, t / n) for k, (n, t) in groups.items()}

    def busiest_links(self, n=5):
        return self.links[:n]

    def save_trace(self, path):
        """Saves the recorded trace: `twinccl replay PATH --topology A --topology B`."""
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):  # str(123) would write a file named "123"
            raise InvalidArgument("Report.save_trace: path must be a str or path, got %r"
                                  % (path,))
        self._trace.save(path)

    def __str__(self):
        return self._data["summary"]

    def __repr__(self):
        return "<twinccl.Report %s: %.2f us, %d ops, %d ranks>" % (
            self.topology, self.total_us, len(self.ops), len(self.ranks))
