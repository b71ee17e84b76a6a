"""mindspore.ops.communication (MindSpore 2.9) on TwinCCL: mint.distributed's functions, plus
set_comm_ops_inplace(False, func_list), which switches some of them to new outputs.

    set_comm_ops_inplace(False, ["all_reduce"])
    out, handle = ops.communication.all_reduce(x)        # x is left alone, as comm_func's

How it works: each rank has its own switch per function name (MindSpore keeps one per process;
every rank is one). A function MindSpore can run out of place (all_reduce,
all_gather_into_tensor, reduce_scatter_tensor, all_to_all, all_to_all_single, recv, irecv) is
answered by twinccl.mindspore's comm_func shapes while its switch is off; the others refuse, as
MindSpore does ("Non-inplace mode is currently not supported"); send/isend are the same either
way. Results and shapes follow mindspore/ops/function/comm_func.py.
"""
import threading

from . import _ms_mint_p2p, _ms_p2p
from . import mindspore as _comm_func
from . import mindspore_mint as _mint
from ._ms_common import ReduceOp
from ._ms_tensors import shape_of
from ._twinccl import InvalidArgument
from .mindspore_mint import (P2POp, TCPStore, destroy_process_group,  # noqa: F401 (the same)
                             get_backend, get_global_rank, get_group_rank,
                             get_process_group_ranks, get_rank, get_world_size,
                             init_process_group, is_available, is_initialized, new_group)

# the names set_comm_ops_inplace knows (MindSpore's comm_funcs list)
SWITCHED = ["all_reduce", "all_gather_into_tensor", "all_gather_into_tensor_uneven", "all_to_all",
            "all_to_all_single", "reduce_scatter_tensor", "reduce_scatter_tensor_uneven", "isend",
            "irecv", "send", "recv", "gather", "scatter", "all_gather", "reduce_scatter",
            "barrier", "broadcast", "reduce", "batch_isend_irecv", "all_gather_object",
            "broadcast_object_list", "gather_object", "scatter_object_list", "send_object_list",
            "recv_object_list", "gather_into_tensor", "scatter_tensor", "all_to_all_v_c"]
_local = threading.local()


def _out_of_place():
    """This rank's set of function names switched off (out of place)."""
    names = getattr(_local, "off", None)
    if names is None:
        names = _local.off = set()
    return names


def reset():
    _local.off = set()


def set_comm_ops_inplace(is_enable, func_list=None):
    """Switches the named functions (all when func_list is None) in place (True) or to new
    outputs (False), on this rank."""
    if not isinstance(is_enable, bool):
        raise InvalidArgument("set_comm_ops_inplace: is_enable must be a bool, got %r"
                              % (is_enable,))
    if func_list is None:
        names = SWITCHED
    elif not isinstance(func_list, (list, tuple)):
        raise InvalidArgument("set_comm_ops_inplace: func_list must be a list or tuple, got %r"
                              % (func_list,))
    else:
        names = list(func_list)
        for name in names:
            if name not in SWITCHED:
                raise InvalidArgument("set_comm_ops_inplace: %r is not one of MindSpore's "
                                      "communication functions (%s)" % (name, ", ".join(SWITCHED)))
    off = _out_of_place()
    for name in names:
        (off.discard if is_enable else off.add)(name)


def _in_place(name):
    return name not in _out_of_place()


def _refusing(name):
    """mint's function `name`, refused while its switch is off."""
    inner = getattr(_mint, name)

    def function(*args, **kwargs):
        if not _in_place(name):
            raise InvalidArgument("ops.communication.%s: set_comm_ops_inplace(False) was called "
                                  "for it, and MindSpore has no out-of-place %s (\"Non-inplace "
                                  "mode is currently not supported\")" % (name, name))
        return inner(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = inner.__doc__
    function.__wrapped__ = inner  # its signature is mint's
    return function


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    if _in_place("all_reduce"):
        return _mint.all_reduce(tensor, op, group, async_op)
    return _comm_func.all_reduce(tensor, op, group, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Out of place: (the gathered tensor, handle); output_tensor is not used."""
    if _in_place("all_gather_into_tensor"):
        return _mint.all_gather_into_tensor(output_tensor, input_tensor, group, async_op)
    return _comm_func.all_gather_into_tensor(input_tensor, group, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    if _in_place("reduce_scatter_tensor"):
        return _mint.reduce_scatter_tensor(output, input, op, group, async_op)
    return _comm_func.reduce_scatter_tensor(input, op, group, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Out of place: output_tensor_list holds shapes (or tensors giving them); returns (tuple of
    the received tensors, handle)."""
    if _in_place("all_to_all"):
        return _mint.all_to_all(output_tensor_list, input_tensor_list, group, async_op)
    return _comm_func.all_to_all_with_output_shape(output_tensor_list, input_tensor_list, group,
                                                   async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Out of place: (received rows, handle); as MindSpore 2.9, the even split and the rows'
    shape are the input's (output is not used)."""
    if _in_place("all_to_all_single"):
        return _mint.all_to_all_single(output, input, output_split_sizes, input_split_sizes,
                                       group, async_op)
    return _comm_func.all_to_all_single_with_output_shape(shape_of(input), input,
                                                          output_split_sizes, input_split_sizes,
                                                          group, async_op)


def recv(tensor, src=0, group=None, tag=0):
    """In place: 0; out of place: a new tensor shaped like `tensor`."""
    if _in_place("recv"):
        return _ms_mint_p2p.recv(tensor, src, group, tag)
    return _ms_p2p.recv(tensor, src, group, tag)


def irecv(tensor, src=0, group=None, tag=0):
    """In place: the handle; out of place: (new tensor, handle)."""
    if _in_place("irecv"):
        return _ms_mint_p2p.irecv(tensor, src, group, tag)
    return _ms_p2p.irecv(tensor, src, group, tag)


_OUT_OF_PLACE = {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "all_to_all",
                 "all_to_all_single", "recv", "irecv", "send", "isend"}
for _name in SWITCHED:
    if _name not in _OUT_OF_PLACE:
        globals()[_name] = _refusing(_name)
send = _mint.send
isend = _mint.isend
