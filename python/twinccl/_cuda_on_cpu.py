"""GPU training scripts on a laptop (opt-in: twinccl.run(..., cuda_on_cpu=True), the launcher's
--cuda-on-cpu): the CUDA calls a training script makes are mapped to the CPU for the duration of
the run, so the script runs unmodified on emulated ranks.

What is mapped: `torch.cuda.is_available()` is True; `device_count()` is the ranks per node;
`set_device(local_rank)` / `current_device()` / `torch.cuda.device(d)` keep one current device per
rank (a rank global of the rank state); `synchronize()`, `empty_cache()` do nothing;
`Stream`, `Event`, `stream(s)`, `current_stream()`, `default_stream()` are CPU stand-ins (work is
done when issued: `query()` is True, `elapsed_time` is the wall time between two records);
`get_device_name()` names the GPU the rank stands for; memory statistics are 0; `manual_seed`
and `manual_seed_all` of torch.cuda do nothing (CPU tensors draw from the CPU generator), nor do
`set_rng_state(_all)`, and `get_rng_state(_all)` give the CPU generator's state. Tensors
and modules: `device="cuda"`/`"cuda:N"`/`torch.device("cuda", N)` given to torch's tensor
factories, `Tensor.to/cuda/new_*`, `Module.to/cuda` mean the CPU; `pin_memory()` returns the
tensor; DistributedDataParallel's `device_ids`/`output_device` are dropped for a module on the
CPU; a DeviceMesh of "cuda" (`init_device_mesh("cuda", ...)`) is a mesh of the CPU;
`torch.accelerator`'s device and stream functions answer as torch.cuda's (every Adam step asks
`torch.accelerator.current_stream().is_capturing()` once CUDA is available).
`torch.nn.SyncBatchNorm` synchronises its statistics over its group on the CPU
(_cuda_sync_batchnorm.py). Not mapped: names bound before the run (`from torch.cuda import synchronize`), CUDA-only
kernels and libraries (flash attention, NCCL), autocast to float16 on CUDA.
"""
import contextlib
import functools
import time

from . import _rank_state
from ._attribute_patch import OneRunAtATime, put_back, replace

GPU_NAME = "NVIDIA H100 80GB HBM3 (emulated on the CPU by TwinCCL)"

_current_device = 0  # one per rank (registered below)
_rank_state.register_rank_global(__name__, "_current_device", lambda old: 0)

_FACTORIES = ["tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn",
              "randint", "randperm", "arange", "linspace", "logspace", "eye", "zeros_like",
              "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
              "empty_strided", "scalar_tensor", "normal", "bernoulli", "multinomial", "from_numpy"]
_TENSOR_METHODS = ["new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"]


def _is_cuda(device):
    if device is None:
        return False
    if isinstance(device, int):
        return True  # torch: an int device is a CUDA ordinal
    text = str(device)
    return text == "cuda" or text.startswith("cuda:")


def _cpu(device):
    return "cpu" if _is_cuda(device) else device


def _device_kw(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "device" in kwargs:
            kwargs["device"] = _cpu(kwargs["device"])
        return fn(*args, **kwargs)
    return wrapper


def _to(fn):
    """Tensor.to / Module.to: a CUDA device (positional or keyword) means the CPU."""
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        if args and _is_cuda(args[0]) and not hasattr(args[0], "dtype"):
            args = ("cpu",) + args[1:]
        if "device" in kwargs:
            kwargs["device"] = _cpu(kwargs["device"])
        return fn(self, *args, **kwargs)
    return wrapper


class Event:
    """torch.cuda.Event on the CPU: work is done when issued."""
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._time = None

    def record(self, stream=None):
        self._time = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end._time - self._time) * 1e3  # milliseconds, as CUDA's


class Stream:
    """torch.cuda.Stream on the CPU."""
    def __init__(self, device=None, priority=0, **kwargs):
        self.device = device

    def synchronize(self):
        pass

    def query(self):
        return True

    def is_capturing(self):  # no CUDA graph is captured here (the optimizers ask)
        return False

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream)

    def __hash__(self):
        return 0


_DEFAULT_STREAM = Stream()


class _DeviceScope:
    """torch.cuda.device(d): the current device inside the block."""
    def __init__(self, device):
        self._device = _index(device)
        self._before = None

    def __enter__(self):
        global _current_device
        self._before, _current_device = _current_device, self._device

    def __exit__(self, *exc):
        global _current_device
        _current_device = self._before


def _torch():
    import torch
    return torch


def _index(device):
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is not None:
        return index
    text = str(device)
    return int(text.split(":")[1]) if ":" in text else 0


def _cuda_functions(devices):
    def set_device(device):
        global _current_device
        _current_device = _index(device)

    return {
        "is_available": lambda: True,
        "device_count": lambda: devices,
        "set_device": set_device,
        "current_device": lambda: _current_device,
        "device": _DeviceScope,
        "synchronize": lambda device=None: None,
        "empty_cache": lambda: None,
        "is_initialized": lambda: True,
        "init": lambda: None,
        "get_device_name": lambda device=None: GPU_NAME,
        "get_device_capability": lambda device=None: (9, 0),
        "manual_seed": lambda seed: None,
        "manual_seed_all": lambda seed: None,
        # no CUDA generator: a state to save (the CPU generator's, which draws for "cuda"
        # tensors here) and nothing to restore (torch.random.fork_rng(device_type="cuda"),
        # pipelining's tracer; a checkpoint's get_rng_state_all)
        "get_rng_state": lambda device="cuda": _torch().get_rng_state(),
        "get_rng_state_all": lambda: [_torch().get_rng_state() for _ in range(devices)],
        "set_rng_state": lambda new_state, device="cuda": None,
        "set_rng_state_all": lambda new_states: None,
        "memory_allocated": lambda device=None: 0,
        "max_memory_allocated": lambda device=None: 0,
        "memory_reserved": lambda device=None: 0,
        "max_memory_reserved": lambda device=None: 0,
        "reset_peak_memory_stats": lambda device=None: None,
        "Stream": Stream,
        "Event": Event,
        "stream": lambda stream=None: contextlib.nullcontext(stream),
        "current_stream": lambda device=None: _DEFAULT_STREAM,
        "default_stream": lambda device=None: _DEFAULT_STREAM,
    }


def _ddp_init(init):
    @functools.wraps(init)
    def wrapper(self, module, *args, **kwargs):
        on_cpu = all(not p.is_cuda for p in module.parameters())
        if on_cpu:
            if args:  # device_ids, output_device positionally
                args = (None, None) + args[2:] if len(args) >= 2 else (None,)
            kwargs.pop("device_ids", None)
            kwargs.pop("output_device", None)
        return init(self, module, *args, **kwargs)
    return wrapper


def _mesh_init(init):
    """DeviceMesh("cuda", ...) (init_device_mesh("cuda", ...), from_group): a mesh of the CPU,
    where the tensors are: DTensor moves a tensor to its mesh's device type and checks it there
    ("Expects DTensor to be moved to cuda but got cpu" on every DTensor of a "cuda" mesh)."""
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        if args and _is_cuda(args[0]):
            args = ("cpu",) + args[1:]
        if _is_cuda(kwargs.get("device_type")):
            kwargs["device_type"] = "cpu"
        return init(self, *args, **kwargs)
    return wrapper


_one_run = OneRunAtATime("cuda_on_cpu", "torch.cuda is replaced")


@contextlib.contextmanager
def cuda_on_cpu(devices):
    """The mapping above, process-wide while the block lasts (one such run at a time)."""
    import torch
    with _one_run.held():  # before reading torch's functions: another run may have replaced them
        saved = []
        try:
            replace(_patches(torch, devices), saved)
            yield
        finally:
            put_back(saved)


def _patches(torch, devices):
    """(owner, name, value) of each replacement."""
    patches = [(torch.cuda, name, value) for name, value in _cuda_functions(devices).items()]
    patches += [(torch, name, _device_kw(getattr(torch, name)))
                for name in _FACTORIES if hasattr(torch, name)]
    patches += [(torch.Tensor, name, _device_kw(getattr(torch.Tensor, name)))
                for name in _TENSOR_METHODS if hasattr(torch.Tensor, name)]
    patches += [(torch.Tensor, "to", _to(torch.Tensor.to)),
                (torch.Tensor, "cuda", lambda self, device=None, non_blocking=False, **kw: self),
                (torch.Tensor, "pin_memory", lambda self, *a, **kw: self),
                (torch.nn.Module, "to", _to(torch.nn.Module.to)),
                (torch.nn.Module, "cuda", lambda self, device=None: self)]
    ddp = torch.nn.parallel.DistributedDataParallel
    patches.append((ddp, "__init__", _ddp_init(ddp.__init__)))
    accelerator = getattr(torch, "accelerator", None)  # torch >= 2.6: the device-generic API
    if accelerator is not None:
        cuda = _cuda_functions(devices)
        patches += [(accelerator, name, value) for name, value in {
            "device_count": cuda["device_count"], "current_device_index": cuda["current_device"],
            "current_device_idx": cuda["current_device"], "set_device_index": cuda["set_device"],
            "set_device_idx": cuda["set_device"], "synchronize": cuda["synchronize"],
            "current_stream": lambda device=None: _DEFAULT_STREAM,
            "set_stream": lambda stream: None}.items() if hasattr(accelerator, name)]
    from . import _cuda_sync_batchnorm  # SyncBatchNorm on CPU tensors
    patches += _cuda_sync_batchnorm.patches()
    try:
        from torch.distributed.device_mesh import DeviceMesh
    except ImportError:  # torch 1.x: no DeviceMesh
        return patches
    patches.append((DeviceMesh, "__init__", _mesh_init(DeviceMesh.__init__)))
    return patches
