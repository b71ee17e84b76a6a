"""MindSpore's int16, uint16 and complex64 tensors (HCCL takes them, NCCL and TwinCCL's core do
not) on the emulator: the communicator the MindSpore layer talks to, wrapped so that they work.

How it works: every MindSpore-layer call reaches the extension through a Comm method whose type
name argument says "int16" or "uint16" (views of the user's memory keep their 16-bit dtype).
* Data movement (broadcast, all_gather*, all_to_all*, gather, scatter, send/recv, batches): the
  same arrays are handed over viewed as float16, the one core type of 2 bytes whose moves copy
  bits, so every count, split size and shape stays in elements, unchanged.
* Reductions (all_reduce, reduce, reduce_scatter*): each array is widened to 32 bits, reduced,
  and the result narrowed back (astype: modulo 2^16) into the caller's array, in place where the
  call writes in place. sum and prod run on uint32 (exact modulo 2^32, hence modulo 2^16, with
  no signed overflow); max and min on int32 (int16 sign-extended, uint16 zero-extended: the
  compare of the 16-bit type). avg (mint) is int32's: the sum, divided truncating toward zero.
  With async_op the narrowing happens in the handle's wait() (or once is_completed() is True).
* complex64, as MindSpore hands it to HCCL (hcom_util: "Convert it to Float32", the shape given
  a last dimension of 2): moves carry it as float64 bits (8 bytes, counts unchanged);
  reductions run on float32 pairs (the counts of reduce_scatter_v doubled), so sum and avg are
  the complex ones and prod/max/min act on real and imaginary parts apart, as on Ascend.

    comm = wrap(comm)      # any other type goes straight through
"""
import numpy as np

from ._twinccl import InvalidArgument

NARROW = {"int16": np.dtype(np.int16), "uint16": np.dtype(np.uint16)}
COMPLEX = np.dtype(np.complex64)
CARRIED = ("int16", "uint16", "complex64")
_CARRIER = {"int16": np.dtype(np.float16), "uint16": np.dtype(np.float16),
            "complex64": np.dtype(np.float64)}

# Comm method -> (index of its type name among the positional arguments, reduction?,
#                 indexes of the arrays it writes, for reductions)
_METHODS = {
    "broadcast": (1, False, ()), "send": (1, False, ()), "recv": (1, False, ()),
    "all_gather": (2, False, ()), "all_gather_into_tensor": (2, False, ()),
    "all_to_all": (2, False, ()), "gather": (2, False, ()), "scatter": (2, False, ()),
    "batch_isend_irecv": (1, False, ()), "all_gather_v": (3, False, ()),
    "all_to_all_v": (4, False, ()), "ms_all_gather_into_tensor": (1, False, ()),
    "all_reduce": (1, True, (0,)), "reduce": (1, True, (0,)), "reduce_scatter": (2, True, (0,)),
    "reduce_scatter_tensor": (2, True, (0,)), "reduce_scatter_v": (3, True, (0,)),
    "ms_all_reduce": (1, True, ()), "ms_reduce_scatter_tensor": (1, True, ()),
}


def wrap(comm):
    return _HcclTypesComm(comm)


def _map(value, f):
    """f applied to an array, to each array of a list, and to the array of a (bool, array, peer)
    tuple (batch_isend_irecv's ops); anything else as it is."""
    if isinstance(value, np.ndarray):
        return f(value)
    if isinstance(value, list):
        return [_map(v, f) for v in value]
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[1], np.ndarray):
        return (value[0], f(value[1]), value[2])
    return value


class _HcclTypesComm:
    """A Comm that also takes "int16", "uint16" and "complex64"; the rest is the wrapped Comm's."""

    def __init__(self, comm):
        self._comm = comm

    def __getattr__(self, name):
        inner = getattr(self._comm, name)
        spec = _METHODS.get(name)
        if spec is None:
            return inner
        at, reduction, written = spec
        if not reduction:
            return _moving(inner, at)

        def method(*args):
            if len(args) <= at or args[at] not in CARRIED:
                return inner(*args)
            if args[at] == "complex64":
                return _float32_pairs(inner, name, args, at)
            return _reduced(inner, name, args, at, written)
        return method


def _moving(inner, at):
    def method(*args):
        if len(args) <= at or args[at] not in CARRIED:
            return inner(*args)
        own = NARROW.get(args[at], COMPLEX)
        carrier = _CARRIER[args[at]]
        args = [_map(a, lambda x: x.view(carrier)) for a in args]
        args[at] = carrier.name
        result = inner(*args)
        if isinstance(result, tuple) and result and isinstance(result[0], np.ndarray):
            return (result[0].view(own),) + tuple(result[1:])  # ms_all_gather_into_tensor
        return result
    return method


def _float32_pairs(inner, method, args, at):
    """A complex64 reduction as HCCL runs it: on the float32 pairs, in the caller's memory."""
    args = [_map(a, lambda x: x.view(np.float32)) for a in args]
    args[at] = "float32"
    if method == "reduce_scatter_v":  # (out, in, counts, type, ...): counts of float32s
        args[2] = [2 * c for c in args[2]]
    result = inner(*args)
    if method.startswith("ms_"):  # (new float32 output, handle)
        return (result[0].view(COMPLEX),) + tuple(result[1:])
    return result


def _wide_type(name, kind, what):
    if kind in ("sum", "prod"):
        return np.dtype(np.uint32), "uint32"
    if kind in ("max", "min", "avg"):
        return np.dtype(np.int32), "int32"
    raise InvalidArgument("%s: op %s is not supported for %s tensors (sum, prod, max, min)"
                          % (what, kind, name))


def _reduced(inner, method, args, at, written):
    """The reduction on 32-bit copies of the arrays, narrowed back into the caller's."""
    name = args[at]
    kind = args[at + 2] if method == "reduce" else args[at + 1]  # reduce: (..., dst, op)
    wide, wide_name = _wide_type(name, kind, method)
    narrow = NARROW[name]
    copies = []  # (caller's array, its wide copy) for the arrays the call writes

    def widen(x):
        return x.astype(wide)
    args = list(args)
    for k, a in enumerate(args):
        if k == at:
            continue
        w = _map(a, widen)
        if k in written:
            copies.append((a, w))
        args[k] = w
    args[at] = wide_name
    result = inner(*args)
    if method.startswith("ms_"):  # (new wide output, handle): a new narrow output
        out_wide, handle = result
        out = np.empty(out_wide.size, dtype=narrow)
        copies = [(out, out_wide)]
        return out, _finish(handle, copies)
    return _finish(result, copies)


def _narrow_into(copies):
    for target, w in copies:
        target[...] = w.astype(target.dtype)


def _finish(handle, copies):
    """Narrows now (a blocking call: handle None) or in the handle's wait()."""
    if handle is None:
        _narrow_into(copies)
        return None
    return NarrowingWork(handle, copies)


class NarrowingWork:
    """The handle of a widened reduction: wait() waits, then writes the 16-bit results."""

    def __init__(self, work, copies):
        self._work, self._copies = work, copies

    def _done(self):
        if self._copies is not None:
            _narrow_into(self._copies)
            self._copies = None

    def wait(self, timeout=None):
        result = self._work.wait(timeout)
        self._done()
        return result

    def is_completed(self):
        done = self._work.is_completed()
        if done:
            self._done()
        return done

    def __getattr__(self, name):
        return getattr(self._work, name)
