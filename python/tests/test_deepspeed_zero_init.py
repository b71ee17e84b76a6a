"""DeepSpeed's zero.Init is refused on the ranks of a multi-rank run with the reason and what to do
(_deepspeed_zero_init.py): it replaces torch's tensor constructors for the whole process, which
the emulated ranks share, and DeepSpeed failed from deep inside ("Signature mismatch between
<function get_new_tensor_fn_for_dtype.<locals>.new_tensor ...>"). A package of the shape of
deepspeed.runtime.zero.partition_parameters' Init stands in for DeepSpeed."""
import sys

import pytest

import twinccl

pytest.importorskip("torch")

PARTITION_PARAMETERS = '''
PATCHED = []


class InsertPostInitMethodToModuleSubClasses:
    def __init__(self, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            PATCHED.append("torch's constructors")

    def __exit__(self, *exc):
        pass


class Init(InsertPostInitMethodToModuleSubClasses):
    def __init__(self, module=None, enabled=True):
        super().__init__(enabled)
        if module is not None:  # deepspeed.initialize's conversion of a built model
            PATCHED.append("converted")
'''


@pytest.fixture
def deepspeed_wheel(tmp_path, monkeypatch):
    libraries = tmp_path / "site-packages"
    zero = libraries / "deepspeed" / "runtime" / "zero"
    zero.mkdir(parents=True)
    for package in (zero, zero.parent, zero.parent.parent):
        (package / "__init__.py").write_text("")
    (zero / "partition_parameters.py").write_text(PARTITION_PARAMETERS)
    monkeypatch.syspath_prepend(str(libraries))
    yield
    for name in [m for m in sys.modules if m == "deepspeed" or m.startswith("deepspeed.")]:
        del sys.modules[name]


def rank_main(rank):
    from deepspeed.runtime.zero import partition_parameters as zero
    zero.Init(module="a built model")  # ZeRO-3's conversion: no `with`, nothing patched
    with zero.Init(enabled=False):
        pass
    with zero.Init():
        pass
    return zero.PATCHED


def test_refused_on_two_ranks_with_the_reason(deepspeed_wheel):
    with pytest.raises(twinccl.InvalidArgument,
                       match=r"deepspeed.zero.Init on rank \d of 2 emulated ranks: it replaces "
                             r"torch's tensor constructors.*without zero.Init"):
        twinccl.run(rank_main, world_size=2, timeout_s=30, torch_distributed=True)


def test_taken_on_one_rank_and_unwrapped_after_the_run(deepspeed_wheel):
    from deepspeed.runtime.zero import partition_parameters as zero  # imported before the run
    results = {}
    twinccl.run(lambda rank: results.__setitem__(rank, list(rank_main(rank))), world_size=1,
                timeout_s=30, torch_distributed=True)
    assert results == {0: ["converted", "torch's constructors"]}
    assert "__enter__" not in zero.Init.__dict__ and "_twinccl_refusing" not in zero.Init.__dict__
