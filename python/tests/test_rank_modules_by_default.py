"""megatron (megatron-core from a wheel) and deepspeed, in site-packages, are imported per rank by
default (_rank_modules._RANK_BY_DEFAULT), as each torchrun worker imports its own: megatron's
parallel_state keeps the process's model-parallel groups in module globals (shared, the second
rank's `initialize_model_parallel` raised "... group is already initialized"); DeepSpeed numbers
a process's modules for ZeRO-3 in a mutable default argument (shared, the ranks' numbers differed:
"Detected a disagreement on list contents between rank0 and rank1"). TWINCCL_SHARED_MODULES shares
them again. The packages here have the shape of those parts of theirs."""
import sys

import pytest

import twinccl
import twinccl.distributed

PACKAGES = {
    # megatron/core/parallel_state.py: groups in module globals, initialised once per process
    "megatron": ("core/parallel_state.py", '''
_TENSOR_MODEL_PARALLEL_RANK = None


def initialize_model_parallel(rank, size):
    global _TENSOR_MODEL_PARALLEL_RANK
    assert _TENSOR_MODEL_PARALLEL_RANK is None, "tensor model parallel group is already initialized"
    _TENSOR_MODEL_PARALLEL_RANK = rank % size


def get_tensor_model_parallel_rank():
    return _TENSOR_MODEL_PARALLEL_RANK
'''),
    # deepspeed/runtime/zero/parameter_offload.py: modules numbered in a mutable default argument
    "deepspeed": ("runtime/zero/parameter_offload.py", '''
def register_module(count=[0]):
    my_count = count[0]
    count[0] += 1
    return my_count
'''),
}


@pytest.fixture
def wheel(tmp_path, monkeypatch, request):
    name = request.param
    where, source = PACKAGES[name]
    libraries = tmp_path / "site-packages"  # where pip puts a library
    path = libraries / name / where
    path.parent.mkdir(parents=True)
    package = path.parent
    while package != libraries:
        (package / "__init__.py").write_text("")
        package = package.parent
    path.write_text(source)
    monkeypatch.syspath_prepend(str(libraries))
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


def rank_main(rank, name):
    if name == "megatron":
        from megatron.core import parallel_state
        parallel_state.initialize_model_parallel(rank, 2)
        twinccl.distributed.barrier()  # the other ranks initialise theirs in between
        return parallel_state.get_tensor_model_parallel_rank()
    from deepspeed.runtime.zero import parameter_offload
    ids = [parameter_offload.register_module() for _ in range(3)]
    twinccl.distributed.barrier()
    return ids + [parameter_offload.register_module()]


EXPECTED = {"megatron": {0: 0, 1: 1, 2: 0, 3: 1},
            "deepspeed": {rank: [0, 1, 2, 3] for rank in range(4)}}


@pytest.mark.parametrize("wheel", sorted(PACKAGES), indirect=True)
def test_each_ranks_own_by_default(wheel):
    results = {}
    twinccl.run(lambda rank: results.__setitem__(rank, rank_main(rank, wheel)), world_size=4,
                timeout_s=30)
    assert results == EXPECTED[wheel]


@pytest.mark.parametrize("wheel", ["megatron"], indirect=True)
def test_megatron_shared_when_the_user_says_so(wheel, monkeypatch):
    monkeypatch.setenv("TWINCCL_SHARED_MODULES", wheel)
    with pytest.raises(Exception, match="tensor model parallel group is already initialized"):
        twinccl.run(lambda rank: rank_main(rank, wheel), world_size=4, timeout_s=30)


@pytest.mark.parametrize("wheel", ["deepspeed"], indirect=True)
def test_deepspeed_shared_when_the_user_says_so(wheel, monkeypatch):
    monkeypatch.setenv("TWINCCL_SHARED_MODULES", wheel)
    results = {}
    twinccl.run(lambda rank: results.__setitem__(rank, rank_main(rank, wheel)), world_size=4,
                timeout_s=30)
    # one counter for the process: the ranks' numbers 0..15 between them, not 0..3 each
    assert sorted(i for ids in results.values() for i in ids) == list(range(16))
