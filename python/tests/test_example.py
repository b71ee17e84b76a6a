"""The example under examples/python and the README's Python snippet run as a user runs them."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import source_dir


def run_python(path_or_code, code=False):
    env = dict(os.environ)
    args = [sys.executable, "-c", path_or_code] if code else [sys.executable, path_or_code]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)


def test_example_train_step():
    out = run_python(os.path.join(source_dir(), "examples", "python", "train_step.py"))
    assert out.returncode == 0, out.stderr
    assert "total simulated time" in out.stdout and "all_reduce" in out.stdout


def test_readme_snippet(capsys):
    """In this process, as its own __main__ (a child would import torch again: ~3 s; a user's
    script in a fresh interpreter is test_example_train_step's)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("the README's snippet uses torch (python3-torch)")
    with open(os.path.join(source_dir(), "README.md")) as f:
        readme = f.read()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "README.md has a ```python block"
    exec(compile(blocks[0], "README.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out
    assert "simulated on" in out and "busiest links" in out


def test_torch_is_optional_at_import():
    code = ("import sys, numpy as np, twinccl, twinccl.distributed as dist, twinccl.mindspore, "
            "twinccl.cuda_comm\n"
            "def step(rank):\n"
            "    x = np.ones(4, np.float32); dist.all_reduce(x); assert (x == 2).all()\n"
            "twinccl.run(step, world_size=2)\n"
            "assert 'torch' not in sys.modules, 'twinccl imported torch'\n"
            "print('numpy only: ok')\n")
    out = run_python(code, code=True)
    assert out.returncode == 0, out.stderr
    assert "numpy only: ok" in out.stdout
