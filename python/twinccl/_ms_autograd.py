"""A MindSpore collective inside a differentiated function (the forward of ms.grad,
value_and_grad, GradOperation, TrainOneStepCell's grad) is refused during a mindspore=True run,
with a message, instead of failing inside MindSpore or giving a gradient without the
collective's part.

Why: MindSpore keeps one autograd state per process and the run's ranks share the process; a
rank waiting in a collective hands its turn to another rank, whose own gradient computation
then enters that state (MindSpore: "In no_grad context, you can not calculate gradient",
"GetTopCellWithInputArgsRespectTo"), and the result TwinCCL returns is not on MindSpore's tape.

How it works: PyNative's gradient functions run the forward through
mindspore.ops.composite.base._pynative_forward_run (looked up at call time); during the run it
is wrapped so that this rank's thread counts the forwards it is inside, and every collective of
the MindSpore layer checks the count (_pynative_executor's own grad flags stay set after a
gradient returned, so they cannot tell)."""
import functools
import threading

from ._twinccl import InvalidArgument

_local = threading.local()


def check(what, site):
    """InvalidArgument when this rank is inside a differentiated function's forward."""
    if getattr(_local, "depth", 0):
        raise InvalidArgument(
            "%s (%s:%d) inside a function MindSpore differentiates (ms.grad, value_and_grad, "
            "TrainOneStepCell): MindSpore keeps one autograd state per process and the emulated "
            "ranks share the process, so a collective inside the differentiated function "
            "cannot be emulated; differentiate each rank's own loss and reduce the gradients "
            "afterwards (nn.DistributedGradReducer, mint.distributed.all_reduce), as "
            "data-parallel training does" % (what, site[0].rsplit("/", 1)[-1], site[1]))


def _counted(forward_run):
    @functools.wraps(forward_run)
    def run(*args, **kwargs):
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            return forward_run(*args, **kwargs)
        finally:
            _local.depth -= 1
    return run


def reset():
    _local.depth = 0


def patches():
    """[(owner, name, value)] for _attribute_patch.replace."""
    try:
        from mindspore.ops.composite import base
    except ImportError:
        return []
    forward_run = getattr(base, "_pynative_forward_run", None)
    return [] if forward_run is None else [(base, "_pynative_forward_run", _counted(forward_run))]
