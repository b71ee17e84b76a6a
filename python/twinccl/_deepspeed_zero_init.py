"""DeepSpeed's `zero.Init` refused on the ranks of a multi-rank run, with the reason and what to
do, instead of DeepSpeed's own errors from deep inside. zero.Init builds a ZeRO-3 model already
partitioned by replacing torch's tensor constructors (`torch.empty`, `torch.Tensor.__new__`...) and
`nn.Module.__init__` for the whole process while its `with` lasts: one set a process, which the
rank threads share. Under it, two ranks' partitionings met in the process's torch: "Signature
mismatch between <function get_new_tensor_fn_for_dtype.<locals>.new_tensor ...>" and "Duplicate
dispatch rule for ... _make_subclass" (each rank its own DeepSpeed, the default), or "'Init' object
has no attribute 'patched'" (one DeepSpeed shared). ZeRO-3 itself works: a model built without
zero.Init is partitioned by `deepspeed.initialize` (checked: DeepSpeed 0.19.8 on CPU, as
torchrun's).

How it works: while a torch.distributed session lasts (_torch_session.py), an import hook
(_import_hook.during) wraps `Init.__enter__` of each copy of
deepspeed.runtime.zero.partition_parameters as it is imported (each rank imports its own:
_rank_modules.py); the wrapper raises InvalidArgument on a rank of a run of two or more ranks when
the context is enabled, and calls DeepSpeed's own otherwise. Only the `with`: ZeRO-3's
`deepspeed.initialize` converts a built model's parameters with `Init(module=model)`, which
patches nothing. A copy imported before the run is wrapped at once and unwrapped
when the session ends."""
import contextlib
import functools
import sys

from . import _import_hook, _this_rank, _twinccl

MODULE = "deepspeed.runtime.zero.partition_parameters"
MESSAGE = (
    "deepspeed.zero.Init on rank {rank} of {size} emulated ranks: it replaces torch's tensor "
    "constructors and nn.Module.__init__ for the whole process while it lasts, and the emulated "
    "ranks are threads of one process, so their partitionings would meet in one torch. Build the "
    "model without zero.Init (deepspeed.initialize partitions it for ZeRO-3 all the same; for a "
    "Hugging Face model, load it before making the HfDeepSpeedConfig / TrainingArguments with "
    "stage 3), or run this script under torchrun on one process per rank")


def _wrap(init_class, patched):
    if "_twinccl_refusing" in init_class.__dict__:
        return
    own = init_class.__dict__.get("__enter__")  # (else InsertPostInitMethodToModuleSubClasses')
    original = init_class.__enter__

    @functools.wraps(original)
    def __enter__(self):
        world = _this_rank.world()
        if getattr(self, "enabled", True) and world is not None and world.size > 1:
            raise _twinccl.InvalidArgument(MESSAGE.format(rank=world.rank, size=world.size))
        return original(self)
    init_class.__enter__ = __enter__
    init_class._twinccl_refusing = True
    patched.append((init_class, own))


@contextlib.contextmanager
def refusing_zero_init():
    """zero.Init refused on the ranks of a multi-rank run while the `with` lasts."""
    patched = []

    def wrap_imported():
        init_class = getattr(sys.modules.get(MODULE), "Init", None)
        if isinstance(init_class, type):
            _wrap(init_class, patched)
    try:
        with _import_hook.during(MODULE, wrap_imported):
            yield
    finally:
        for init_class, own in patched:
            del init_class._twinccl_refusing
            if own is None:
                del init_class.__enter__
            else:
                init_class.__enter__ = own
