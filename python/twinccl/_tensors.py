"""CPU torch tensors and NumPy arrays as the extension takes them (zero-copy, in place), with
TwinCCL's type name; the Python caller's file:line for error messages."""
import os
import sys

import numpy as np

from ._twinccl import InvalidArgument

_NUMPY_TYPES = {
    np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
    np.dtype(np.int32): "int32", np.dtype(np.uint32): "uint32",
    np.dtype(np.int64): "int64", np.dtype(np.uint64): "uint64",
    np.dtype(np.float16): "float16", np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
}
_TORCH_TYPES = {"int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64",
                "float16": "float16", "bfloat16": "bfloat16", "float32": "float32",
                "float64": "float64"}
SUPPORTED = "int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, float64"


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def call_site(depth=2):
    """(file, line) of the frame `depth` levels up: the user's call of a public function; frames
    of this package above it are skipped (a public function calling another, as mint's
    broadcast_object_list calls the object collectives: the error names the user's line)."""
    frame = sys._getframe(depth)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


def array(t, what):
    """(what the extension reads in place: a NumPy array as it is, a CPU torch tensor as it is
    or, before torch 2.0, as a NumPy view of it; TwinCCL type name). InvalidArgument for anything
    that cannot be used in place: GPU or sparse tensors, unsupported types, other objects."""
    if isinstance(t, np.ndarray):
        name = _NUMPY_TYPES.get(t.dtype)
        if name is None:
            raise InvalidArgument("%s: numpy dtype %s is not supported (%s, native byte order)"
                                  % (what, t.dtype, SUPPORTED))
        return t, name
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(t, torch.Tensor):
        name = _tensor_type(torch, t, what)
        if hasattr(torch.Tensor, "nbytes") and not t.is_neg():
            # the tensor itself: the extension reads data_ptr and nbytes, its bytes read as
            # `name`. Not numpy(), which makes the storage unresizable for good (FSDP frees an
            # all-gather's output with resize_(0) after use)
            return t, name
        return _numpy_of(torch, t, name), name  # torch 1.13 (no nbytes); a negative view: refused
    raise InvalidArgument("%s: expected a torch.Tensor or numpy.ndarray, got %s"
                          % (what, type(t).__name__))


def _numpy_of(torch, t, name):
    """A NumPy view of a checked tensor (numpy() refuses a tensor that requires grad; NumPy has no
    bfloat16 or float8: their bits, as int16 / uint8, read as `name`)."""
    d = t.detach() if t.requires_grad else t
    if name == "bfloat16":
        d = d.view(torch.int16)
    elif d.dtype != torch.uint8 and name == "uint8":  # bool, float8
        d = d.view(torch.uint8)
    return d.numpy()


def _is_float8(t):
    return str(getattr(t, "dtype", "")).startswith("torch.float8_")


def refuse_float8_reduction(tensors, what):
    """InvalidArgument for a reduction of float8 tensors: they are moved as their bytes (FSDP2's
    float8 all-gather, broadcast, all_to_all, send/recv), but NCCL's float8 arithmetic (2.24+, on
    sm_90) is not emulated."""
    for t in tensors:
        if _is_float8(t):
            raise InvalidArgument("%s: %s tensors cannot be reduced on the emulator (NCCL 2.24+ "
                                  "reduces float8 on sm_90 GPUs; its arithmetic is not "
                                  "emulated); all_gather, broadcast, all_to_all, gather, "
                                  "scatter and send/recv move them. Reduce in bfloat16 or "
                                  "float32" % (what, t.dtype))


def numpy_view(t, what):
    """As array(), always as a NumPy array (the MindSpore layer reshapes and types its views;
    a torch tensor handed to it keeps an unresizable storage after, torch's rule for numpy())."""
    v, name = array(t, what)
    return (v if isinstance(v, np.ndarray) else _numpy_of(sys.modules["torch"], v, name)), name


def _tensor_type(torch, t, what):
    """TwinCCL's type name of a tensor the extension can use in place, else InvalidArgument."""
    if not t.is_cpu:
        raise InvalidArgument("%s: a %s tensor; the emulator moves CPU tensors only"
                              % (what, t.device))
    if t.layout != torch.strided:
        raise InvalidArgument("%s: %s tensors are not supported" % (what, t.layout))
    if not t.is_contiguous():
        raise InvalidArgument("%s: the tensor must be contiguous (as torch.distributed "
                              "requires)" % what)
    name = _TORCH_TYPES.get(str(t.dtype).replace("torch.", ""))
    if name is None and t.dtype == torch.bool:  # one byte, 0 or 1: as torch's NCCL backend,
        name = "uint8"                           # ncclUint8 (reductions: _torch_calls._op)
    if name is None and _is_float8(t):  # moved as its bytes, as NCCL moves ncclFloat8e4m3 /
        name = "uint8"                  # e5m2; a reduction is refused (refuse_float8_reduction)
    if name is None:
        raise InvalidArgument("%s: %s is not supported (%s; torch's bool, and float8 types moved "
                              "but not reduced)" % (what, t.dtype, SUPPORTED))
    return name


def _readable(t):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(t, torch.Tensor) and t.is_cpu and \
            t.layout == torch.strided and not t.is_contiguous():
        return t.contiguous()
    return t


def source(t, what):
    """As array(), for a tensor the call only reads: a non-contiguous one (an expanded gradient
    in torch.distributed.nn's backward, a slice) is read through a contiguous copy, as Gloo and
    torch's NCCL backend read it."""
    return array(_readable(t), what)


def sources(tensors, what):
    """As arrays(), for tensors the call only reads (see source())."""
    if isinstance(tensors, (list, tuple)):
        tensors = [_readable(t) for t in tensors]
    return arrays(tensors, what)


def arrays(tensors, what):
    """A list of tensors of one type: (list of views, type name)."""
    if not isinstance(tensors, (list, tuple)):
        raise InvalidArgument("%s: expected a list of tensors, got %s"
                              % (what, type(tensors).__name__))
    views, name = [], None
    for i, t in enumerate(tensors):
        v, n = array(t, "%s[%d]" % (what, i))
        if name is not None and n != name:
            raise InvalidArgument("%s[%d] is %s, %s[0] is %s: one type per call"
                                  % (what, i, n, what, name))
        views.append(v)
        name = n
    return views, name


def two(what, first, second):
    """The two tensor arguments of one call `what`, each (reader, value, argument name), the
    reader `array` for a tensor or `arrays` for a list of tensors: (first's view or views,
    second's, the type name), InvalidArgument unless both are of one type (an empty list, of no
    type, takes the other's)."""
    (read, value, arg), (read2, value2, arg2) = first, second
    a, name = read(value, "%s's %s" % (what, arg))
    b, name2 = read2(value2, "%s's %s" % (what, arg2))
    same_type(name or name2, name2 or name, what)
    return a, b, name or name2


def same_type(name, other, what):
    if name != other:
        raise InvalidArgument("%s: tensors of %s and %s in one call (one type per call)"
                              % (what, name, other))


def rows(t):
    """Elements per index of the first dimension (all_to_all_single's split sizes)."""
    shape = tuple(t.shape)
    if not shape:
        return 1
    n = 1
    for s in shape[1:]:
        n *= int(s)
    return n
