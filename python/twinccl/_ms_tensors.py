"""MindSpore tensors (and CPU torch tensors, NumPy arrays) as the NumPy views the extension takes,
and new outputs in the input's kind: twinccl.mindspore and twinccl.mindspore_mint use these.

A CPU MindSpore Tensor's asnumpy() is a writable view of its memory and Tensor.from_numpy() wraps
an array without copying (checked by python/tests/test_mindspore_api.py), so inputs, in-place
outputs and new outputs are all zero-copy. bfloat16 travels as its int16 bits; int16 and uint16 keep their type
here and are carried by _ms_hccl_types, as complex64 is."""
import sys

import numpy as np

from ._twinccl import InvalidArgument
from ._tensors import _NUMPY_TYPES, numpy_view

_HCCL_LACKS = ("bool", "complex128", "float128", "object")  # (kConstOpHcomDataTypeMap)
_NUMPY_NAMES = {d.name for d in _NUMPY_TYPES}
SUPPORTED = ("int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, "
             "float32, float64, complex64")


def _ms():
    return sys.modules.get("mindspore")


def is_ms_tensor(t):
    ms = _ms()
    return ms is not None and isinstance(t, ms.Tensor)


def is_tensor(t):
    if isinstance(t, np.ndarray) or is_ms_tensor(t):
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(t, torch.Tensor)


def view(t, what, written=False):
    """(NumPy view sharing t's memory, TwinCCL type name). `written`: the call writes t in place,
    so a MindSpore tensor whose asnumpy() is a copy (a view at a storage offset, x[2:6]) is
    refused instead of losing the result."""
    if is_ms_tensor(t):
        if written and not t.is_contiguous():
            raise InvalidArgument("%s: the MindSpore tensor must be contiguous to be written in "
                                  "place" % what)
        a = t.asnumpy()  # a non-contiguous tensor's is a contiguous copy: fine to read
        if written and a.size and a.ctypes.data != t.asnumpy().ctypes.data:
            raise InvalidArgument("%s: this MindSpore tensor (a view at storage offset %d) hands "
                                  "out copies of its data, so the result cannot be written in "
                                  "place; pass a tensor of its own and copy it back"
                                  % (what, t.storage_offset()))
        if a.dtype.name == "bfloat16":  # MindSpore's NumPy bfloat16: hand over the bits
            return a.view(np.int16), "bfloat16"
        return _typed(a, what, t.dtype)
    if not written:  # as comm_func, a strided input is read through a contiguous copy
        if isinstance(t, np.ndarray):
            t = np.ascontiguousarray(t)
        elif hasattr(t, "is_contiguous") and not t.is_contiguous():
            t = t.contiguous()
    v, name = _typed(t, what, getattr(t, "dtype", None))
    if written and not v.flags.c_contiguous:  # reshape(-1) would write into a copy
        raise InvalidArgument("%s: the array must be C-contiguous to be written in place"
                              % what)
    return v, name


def _typed(t, what, dtype):
    """array(t, what), also for int16/uint16/complex64 (HCCL takes them; _ms_hccl_types carries
    them over the core's types), and an error naming the MindSpore type and the supported ones
    for the others."""
    a = t
    if not isinstance(t, np.ndarray) and str(dtype) in ("torch.int16", "torch.uint16", "torch.complex64"):
        a = t.detach().numpy()
    if isinstance(a, np.ndarray) and a.dtype.name in ("int16", "uint16", "complex64"):
        return a, a.dtype.name
    if isinstance(a, np.ndarray) and a.dtype.name not in _NUMPY_NAMES:
        why = "; HCCL, MindSpore's Ascend backend, has no such type either" \
            if a.dtype.name in _HCCL_LACKS else ""
        raise InvalidArgument("%s: %s tensors are not supported (%s)%s"
                              % (what, dtype, SUPPORTED, why))
    return numpy_view(a, what)


def output_and_input(output, input, what):
    """(flat view of `output`, written in place; flat view of `input`; their type name), the two
    of one type."""
    o, t = view(output, what + "'s output", written=True)
    i, t2 = view(input, what + "'s input")
    if t != t2:
        raise InvalidArgument("%s: output is %s, input is %s (one type per call)" % (what, t, t2))
    return o.reshape(-1), i.reshape(-1), t


def shape_of(t):
    return tuple(int(s) for s in t.shape)


def dtype_of(t):
    """The NumPy dtype of t's elements (MindSpore's own NumPy bfloat16 for its bfloat16)."""
    if is_ms_tensor(t):
        return t.asnumpy().dtype
    return None


def new_like(t, flat, shape, name):
    """`flat` (a 1-D array of the library's or NumPy's memory) as a tensor of t's kind, shaped."""
    out = flat.reshape(shape)
    if is_ms_tensor(t):
        if name == "bfloat16":
            out = out.view(dtype_of(t))
        return _ms().Tensor.from_numpy(out)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(t, torch.Tensor):
        o = torch.from_numpy(out)
        return o.view(torch.bfloat16) if name == "bfloat16" else o
    return out


def empty_for(v, count):
    """A new 1-D NumPy array of `count` elements of v's (view's) type."""
    return np.empty(int(count), dtype=v.dtype)


def placeholder(t, v, name):
    """MindSpore's output on ranks that get none (reduce, gather_into_tensor off the root): a
    shape-[1] tensor of zeros of t's type, with no mathematical meaning."""
    return new_like(t, np.zeros(1, dtype=v.dtype), (1,), name)


def size(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n
