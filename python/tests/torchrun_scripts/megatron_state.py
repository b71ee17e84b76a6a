"""Megatron-LM style parallel state: the process groups live in module globals, set once by
initialize_model_parallel and read by the layers (megatron_layers.py) through getters."""
import torch.distributed as dist

_TENSOR_MODEL_PARALLEL_GROUP = None
_DATA_PARALLEL_GROUP = None
_TENSOR_MODEL_PARALLEL_RANKS = None


def initialize_model_parallel(tensor_model_parallel_size):
    """Ranks [0, tp), [tp, 2tp)... form the tensor-parallel groups; ranks equal modulo tp the
    data-parallel groups. Every rank creates every group, in the same order."""
    global _TENSOR_MODEL_PARALLEL_GROUP, _DATA_PARALLEL_GROUP, _TENSOR_MODEL_PARALLEL_RANKS
    assert _TENSOR_MODEL_PARALLEL_GROUP is None, "model parallel groups are initialized already"
    world, rank = dist.get_world_size(), dist.get_rank()
    tp = tensor_model_parallel_size
    for i in range(tp):
        ranks = list(range(i, world, tp))
        group = dist.new_group(ranks)
        if rank in ranks:
            _DATA_PARALLEL_GROUP = group
    for i in range(world // tp):
        ranks = list(range(i * tp, (i + 1) * tp))
        group = dist.new_group(ranks)
        if rank in ranks:
            _TENSOR_MODEL_PARALLEL_GROUP, _TENSOR_MODEL_PARALLEL_RANKS = group, ranks


def get_tensor_model_parallel_group():
    assert _TENSOR_MODEL_PARALLEL_GROUP is not None, "model parallel groups are not initialized"
    return _TENSOR_MODEL_PARALLEL_GROUP


def get_data_parallel_group():
    assert _DATA_PARALLEL_GROUP is not None, "data parallel group is not initialized"
    return _DATA_PARALLEL_GROUP


def get_tensor_model_parallel_rank():
    return dist.get_rank(group=get_tensor_model_parallel_group())


def get_tensor_model_parallel_world_size():
    return dist.get_world_size(group=get_tensor_model_parallel_group())
