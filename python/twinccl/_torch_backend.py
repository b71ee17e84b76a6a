"""TwinCCL as a torch.distributed backend: `init_process_group("twinccl")` inside twinccl.run.

How it works: torch 2.x lets a backend's creator return a Python subclass of
`torch.distributed.ProcessGroup`; torch's Python functions call its methods directly and torch's
C++ (DDP's reducer, functional collectives, DTensor) through pybind11's trampoline, by the same
names. Each method turns the tensors into zero-copy views (twinccl._tensors.array), finds the
caller's line in the user's code (the first frame outside torch, twinccl and the standard
library) and issues the operation on the rank's emulator communicator, asynchronously; the
returned `_TwinWork` waits on the emulator's Work. So every call, from torch's Python or C++, runs
through the emulator: NCCL's results, the misuse checks naming the user's file:line, the trace.

The Work, the call site and the backend info torch asks for are in _torch_work.
"""
import functools
import threading

import torch
import torch.distributed as dist

from . import _torch_world, _twinccl, _wait_timeout
from ._twinccl import InvalidArgument
from ._tensors import array, arrays, same_type, source, sources, two
from ._torch_calls import _async, _done, _list, _op, _root
from ._torch_group_identity import GroupIdentity
from ._torch_work import BACKEND, _BackendInfo, user_site, work_of  # noqa: F401

_local = threading.local()  # .pending: the communicator made for the group being created


def _redirected(method):
    """Runs `method` on the calling rank's own group of the same name: a group object bound
    where another rank made it (a default argument `group=group.WORLD` evaluated when a module
    was first imported, on whichever rank imported it) means, under torchrun, that process's
    group; so it does here."""
    name = method.__name__

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        if _torch_world.current() is not self._owner:
            return getattr(self.here(), name)(*args, **kwargs)
        return method(self, *args, **kwargs)
    return call


class TwinProcessGroup(GroupIdentity, dist.ProcessGroup):
    """One rank's view of one group: the emulator communicator of the calling rank thread."""

    def __init__(self, comm, rank, size):
        super().__init__(rank, size)
        self._comm = comm
        self._rank_in_group = rank
        self._group_size = size
        self._owner = _torch_world.current()  # the rank's torch world (of this run)

    def here(self):
        """This group as the calling rank holds it (itself on its own rank's thread)."""
        world = _torch_world.current()
        if world is self._owner:
            return self
        name = self.getGroupName()
        for pg, other in list(world.pg_names.items()) if world is not None else []:
            if other == name and isinstance(pg, TwinProcessGroup) and pg._owner is world:
                return pg
        raise InvalidArgument("process group '%s' of rank %d is used on a thread that has no "
                              "group of that name (a rank's own groups are made by its own "
                              "calls)" % (name, self._comm.rank))

    # Identity ------------------------------------------------------------------------------
    @_redirected
    def rank(self):
        return self._rank_in_group

    def size(self):
        return self._group_size

    def getBackendName(self):
        return BACKEND

    def name(self):
        return BACKEND

    def _get_backend(self, device=None):
        """What torch asks of a group's per-device backend (batch_isend_irecv: coalescing)."""
        return _BackendInfo(self)

    @_redirected
    def set_timeout(self, timeout):
        """dist.set_timeout(timeout, group): this rank's later waits in the group (_wait_timeout)."""
        _wait_timeout.bound_waits(self._comm, timeout, "dist.set_timeout")

    def __repr__(self):
        return "<twinccl ProcessGroup rank %d of %d>" % (self._rank_in_group, self._group_size)

    # Collectives ---------------------------------------------------------------------------
    @_redirected
    def allreduce(self, tensors, opts=None, timeout=None):
        site = user_site()
        async_op = _async(opts)
        tensors = _list(tensors)
        kind, scalar = _op(opts, "all_reduce", tensors)
        works = []
        for k, t in enumerate(tensors):
            v, name = array(t, "all_reduce's tensor[%d]" % k)
            works.append(self._comm.all_reduce(v, name, kind, scalar, async_op, *site))
        return _done(works, tensors, async_op)

    allreduce_coalesced = allreduce

    @_redirected
    def broadcast(self, tensors, opts=None, timeout=None):
        site = user_site()
        async_op = _async(opts)
        root = _root(opts)
        tensors = _list(tensors)
        works = []
        for k, t in enumerate(tensors):
            v, name = array(t, "broadcast's tensor[%d]" % k)
            works.append(self._comm.broadcast(v, name, root, async_op, *site))
        return _done(works, tensors, async_op)

    @_redirected
    def reduce(self, tensors, opts=None, op=None, timeout=None):
        site = user_site()
        async_op = _async(opts)
        root = _root(opts)
        tensors = _list(tensors)
        kind, scalar = _op(op if isinstance(opts, int) else opts, "reduce", tensors)
        works = []
        for k, t in enumerate(tensors):
            v, name = array(t, "reduce's tensor[%d]" % k)
            works.append(self._comm.reduce(v, name, root, kind, scalar, async_op, *site))
        return _done(works, tensors, async_op)

    @_redirected
    def allgather(self, output_tensors, input_tensors, opts=None):
        if isinstance(input_tensors, torch.Tensor):  # allgather(outputs, input, timeout)
            output_tensors, input_tensors = [output_tensors], [input_tensors]
        site = user_site()
        async_op = _async(opts)
        works = []
        for k, (outs, t) in enumerate(zip(output_tensors, _list(input_tensors))):
            views, v, name = two("all_gather", (arrays, outs, "output_tensors[%d]" % k),
                                 (source, t, "input_tensors[%d]" % k))
            works.append(self._comm.all_gather(views, v, name, async_op, *site))
        return _done(works, output_tensors, async_op)

    allgather_coalesced = allgather

    def _allgather_base(self, output, input, opts=None):
        return self.allgather_into_tensor_coalesced([output], [input], opts)

    all_gather_single = _allgather_base

    @_redirected
    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        site = user_site()
        async_op = _async(opts)
        works = []
        for k, (output, input) in enumerate(zip(outputs, inputs)):
            o, i, name = two("all_gather_into_tensor", (array, output, "output[%d]" % k),
                             (source, input, "input[%d]" % k))
            works.append(self._comm.all_gather_into_tensor(o, i, name, async_op, *site))
        return _done(works, list(outputs), async_op)

    all_gather_single_coalesced = allgather_into_tensor_coalesced

    @_redirected
    def reduce_scatter(self, output_tensors, input_tensors, opts=None, timeout=None):
        if isinstance(output_tensors, torch.Tensor):  # reduce_scatter(output, inputs, op)
            output_tensors, input_tensors = [output_tensors], [input_tensors]
        site = user_site()
        async_op = _async(opts)
        kind, scalar = _op(opts, "reduce_scatter", _list(output_tensors))
        works = []
        for k, (out, ins) in enumerate(zip(_list(output_tensors), input_tensors)):
            o, views, name = two("reduce_scatter", (array, out, "output[%d]" % k),
                                 (sources, ins, "input_list[%d]" % k))
            works.append(self._comm.reduce_scatter(o, views, name, kind, scalar, async_op, *site))
        return _done(works, _list(output_tensors), async_op)

    def _reduce_scatter_base(self, output, input, opts=None):
        return self.reduce_scatter_tensor_coalesced([output], [input], opts)

    reduce_scatter_single = _reduce_scatter_base

    @_redirected
    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        site = user_site()
        async_op = _async(opts)
        kind, scalar = _op(opts, "reduce_scatter_tensor", outputs)
        works = []
        for k, (output, input) in enumerate(zip(outputs, inputs)):
            o, i, name = two("reduce_scatter_tensor", (array, output, "output[%d]" % k),
                             (source, input, "input[%d]" % k))
            works.append(self._comm.reduce_scatter_tensor(o, i, name, kind, scalar, async_op,
                                                          *site))
        return _done(works, list(outputs), async_op)

    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

    @_redirected
    def alltoall(self, output_tensors, input_tensors, opts=None):
        site = user_site()
        async_op = _async(opts)
        outs, ins, name = two("all_to_all", (arrays, output_tensors, "output_tensor_list"),
                              (sources, input_tensors, "input_tensor_list"))
        work = self._comm.all_to_all(outs, ins, name, async_op, *site)
        return _done([work], output_tensors, async_op)

    @_redirected
    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        from .distributed import _single
        site = user_site()
        async_op = _async(opts)
        o, i, name, os_, is_ = _single(output, input, output_split_sizes, input_split_sizes,
                                       self._group_size)
        work = self._comm.all_to_all_single(o, i, os_, is_, name, async_op, *site)
        return _done([work], [output], async_op)

    all_to_all_single = alltoall_base

    @_redirected
    def gather(self, output_tensors, input_tensors, opts=None, timeout=None):
        return self._rooted(self._comm.gather, "gather", input_tensors, output_tensors,
                            output_tensors, opts)

    @_redirected
    def gather_single(self, output_tensor, input_tensor, opts=None):
        """dist.gather_single / gather_into_tensor (torch 2.10+; NCCL >= 2.28.3: ncclGather): rank
        r's tensor into the r-th of group-size equal parts of the root's output (torch checks
        only its element count, so a flat concatenation or a stack)."""
        parts = []
        if self._rank_in_group == _root(opts):
            n, count = self._group_size, input_tensor.numel()
            if output_tensor.numel() != n * count or not output_tensor.is_contiguous():
                raise InvalidArgument(
                    "gather_single: the root's gather_tensor has %d elements%s; it must be "
                    "contiguous and hold group size x tensor = %d x %d" % (
                        output_tensor.numel(),
                        "" if output_tensor.is_contiguous() else " and is not contiguous",
                        n, count))
            flat = output_tensor.view(-1)
            parts = [flat[k * count:(k + 1) * count] for k in range(n)]
        return self._rooted(self._comm.gather, "gather", [input_tensor], [parts],
                            [output_tensor], opts)

    @_redirected
    def scatter(self, output_tensors, input_tensors, opts=None, timeout=None):
        return self._rooted(self._comm.scatter, "scatter", output_tensors, input_tensors,
                            _list(output_tensors), opts)

    def _rooted(self, call, what, tensor, lists, outputs, opts):
        """gather/scatter: the rank's tensor, and on the root rank the list (torch passes it as
        lists[0]) of the same type."""
        site = user_site()
        async_op = _async(opts)
        root = _root(opts)
        v, name = (source if what == "gather" else array)(_list(tensor)[0], "%s's tensor" % what)
        lst = []
        if self._rank_in_group == root:
            if lists and isinstance(lists[0], torch.Tensor):  # pg.gather(outputs, input, root)
                lists = [lists]
            lst, name2 = (sources if what == "scatter" else arrays)(lists[0], "%s's %s_list"
                                                                     % (what, what))
            same_type(name, name2 or name, what)
        work = call(v, lst, name, root, async_op, *site)
        return _done([work], outputs, async_op)

    @_redirected
    def barrier(self, opts=None):
        async_op = _async(opts)
        return _done([self._comm.barrier(async_op, *user_site())], [], async_op)

    def monitored_barrier(self, timeout=None, wait_all_ranks=False):
        """torch's monitored_barrier (Gloo's: a barrier that names the ranks that did not arrive
        within `timeout`), reached through _torch_session's patch of the function (torch refuses a
        group without a CPU backend registered before it calls this). The emulator's barrier,
        waited for up to `timeout`: a rank that returns or calls another operation instead is
        named with its line at once (AbortedError, MismatchError, DeadlockError), a rank still
        away after `timeout` is twinccl.TimeoutError. Every missing rank is named, as
        wait_all_ranks=True asks."""
        site = user_site()
        work = self._comm.barrier(True, *site)
        try:
            work.wait(timeout)
        except _twinccl.TimeoutError:
            # timeout=None (torch's default, the group's): the run's own deadline passed
            seconds = ("the run's timeout" if timeout is None
                       else "%.3g s" % timeout.total_seconds())
            raise _twinccl.TimeoutError(
                "monitored_barrier (%s:%d) on rank %d of a group of %d: not every rank arrived "
                "within timeout=%s; a rank that returns or calls another operation instead is "
                "named by the run's error with its line" % (site[0], site[1], self.rank(),
                                                            self.size(), seconds)) from None

    # Point-to-point (peers are ranks of this group, as torch passes them) -------------------
    def _p2p(self, is_send, tensors, peer, tag, what):
        """`tag` is accepted and not used, as torch's NCCL backend: messages of a pair are
        matched in the order they were sent (Gloo matches them by tag)."""
        site = user_site()
        tensors = _list(tensors)
        call = self._comm.send if is_send else self._comm.recv
        works = []
        for t in tensors:
            v, name = (source if is_send else array)(t, what + "'s tensor")
            works.append(call(v, name, peer, True, *site))
        return work_of(works, tensors)

    @_redirected
    def send(self, tensors, dst, tag=0):
        return self._p2p(True, tensors, dst, tag, "send")

    @_redirected
    def recv(self, tensors, src, tag=0):
        return self._p2p(False, tensors, src, tag, "recv")

    def recv_anysource(self, tensors, tag=0):
        file, line = user_site()
        raise InvalidArgument("recv on rank %d of a group of %d (%s:%d): a source rank is required "
                              "(receiving from any source, src=None, is not supported: NCCL has "
                              "no such receive; torch's NCCL backend refuses it too)"
                              % (self._rank_in_group, self._group_size, file, line))


def set_pending(comm):
    """The communicator the next group creation on this thread uses (set around torch's
    _new_process_group_helper, which calls the creator on the members only)."""
    _local.pending = comm


def create(store, rank, size, timeout):
    """torch's backend creator: the rank thread's world communicator for the default group, the
    communicator split for a new group otherwise."""
    comm = getattr(_local, "pending", None)
    _local.pending = None
    said = "new_group"
    if comm is None:
        said = "init_process_group"
        try:
            comm = _twinccl._world()
        except InvalidArgument:
            raise InvalidArgument("init_process_group(backend='twinccl') works inside "
                                  "twinccl.run(fn, world_size=N, torch_distributed=True) only; "
                                  "this thread is no emulated rank") from None
    if (comm.rank, comm.size) != (rank, size):
        raise InvalidArgument("init_process_group(backend='twinccl'): rank=%d world_size=%d, but "
                              "this thread is rank %d of twinccl.run's %d"
                              % (rank, size, comm.rank, comm.size))
    _wait_timeout.bound_new_group(comm, timeout, said)
    return TwinProcessGroup(comm, rank, size)


_registered = [False]


def register():
    """Registers the backend with torch once ('twinccl', CPU tensors)."""
    if _registered[0]:
        return
    try:
        dist.Backend.register_backend(BACKEND, create, devices=["cpu"])
    except TypeError:  # torch 1.x: no devices argument
        dist.Backend.register_backend(BACKEND, create)
    _registered[0] = True
