"""megatron (megatron-core installed from a wheel, in site-packages) is imported per rank by
default (_rank_modules._RANK_BY_DEFAULT), as each torchrun worker imports its own: its
parallel_state keeps the process's model-parallel groups in module globals, and shared, the second
rank's `initialize_model_parallel` raised "... group is already initialized".
TWINCCL_SHARED_MODULES=megatron shares it again."""
import sys

import pytest

import twinccl
import twinccl.distributed

# megatron.core.parallel_state's shape: groups in module globals, initialised once per process
PARALLEL_STATE = '''
_TENSOR_MODEL_PARALLEL_RANK = None


def initialize_model_parallel(rank, size):
    global _TENSOR_MODEL_PARALLEL_RANK
    assert _TENSOR_MODEL_PARALLEL_RANK is None, "tensor model parallel group is already initialized"
    _TENSOR_MODEL_PARALLEL_RANK = rank % size


def get_tensor_model_parallel_rank():
    return _TENSOR_MODEL_PARALLEL_RANK
'''


@pytest.fixture
def megatron_wheel(tmp_path, monkeypatch):
    package = tmp_path / "site-packages" / "megatron" / "core"  # where pip puts a library
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "parallel_state.py").write_text(PARALLEL_STATE)
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    yield
    for name in [n for n in sys.modules if n == "megatron" or n.startswith("megatron.")]:
        del sys.modules[name]


def rank_main(rank):
    from megatron.core import parallel_state
    parallel_state.initialize_model_parallel(rank, 2)
    twinccl.distributed.barrier()  # the other ranks initialise theirs in between
    return parallel_state.get_tensor_model_parallel_rank()


def test_megatron_from_a_wheel_is_each_ranks_own(megatron_wheel):
    results = {}
    twinccl.run(lambda rank: results.__setitem__(rank, rank_main(rank)), world_size=4,
                timeout_s=30)
    assert results == {0: 0, 1: 1, 2: 0, 3: 1}


def test_shared_when_the_user_says_so(megatron_wheel, monkeypatch):
    monkeypatch.setenv("TWINCCL_SHARED_MODULES", "megatron")
    with pytest.raises(Exception, match="tensor model parallel group is already initialized"):
        twinccl.run(rank_main, world_size=2, timeout_s=30)
