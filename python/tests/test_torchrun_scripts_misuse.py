"""The unmodified torchrun scripts of test_torchrun_vs_gloo.py with one planted misuse each, under
`python3 -m twinccl.torchrun --nproc-per-node 4`: the run ends with torchrun's exit code 1 and a
typed error (AbortedError, MismatchError) naming the planted line of the script, long before the
launcher's deadline (--timeout-s 60: a hang would only end there). Where NCCL hangs and Gloo
aborts after its timeout. The misuses: one rank's last batch short (it runs out of batches and
returns while the others wait in DDP's gradient all_reduce), one rank passing float64 to the
data-parallel all_reduce, one rank skipping its last step's all_reduces.

CTest runs this file with test_torchrun_vs_gloo.py (python.torchrun_vs_gloo)."""
import os
import shutil
import subprocess
import sys
import time

import pytest

import launcher_support

torch = pytest.importorskip("torch")
if not hasattr(torch.distributed.distributed_c10d, "_World"):
    pytest.skip("torch %s: the scripts need torch 2.x" % torch.__version__,
                allow_module_level=True)

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchrun_scripts")
ENV = dict(launcher_support.ENV, PYTHONWARNINGS="ignore::FutureWarning")
DEADLINE_S = 60

# (script, the line as written, the same line with the misuse planted, errors that may name it)
PLANTED = {
    "short_last_batch": (
        "ddp_tutorial.py",
        "mine = TensorDataset(x[rank::world], y[rank::world])",
        "mine = TensorDataset(x[rank::world][:4 if rank == 1 else 8], y[rank::world][:4 if rank == 1 else 8])",
        "loss.backward()", ("AbortedError",)),
    "wrong_dtype_on_one_rank": (
        "megatron.py",
        "dist.all_reduce(p.grad, group=dp_group)",
        "dist.all_reduce(p.grad.double() if rank == 2 else p.grad, group=dp_group)",
        "dist.all_reduce(", ("MismatchError",)),
    "rank_skipping_a_collective": (
        "megatron.py",
        "dist.all_reduce(p.grad, group=dp_group)",
        "dist.all_reduce(p.grad, group=dp_group) if (rank, step) != (3, 2) else None",
        "dist.all_reduce(", ("AbortedError", "MismatchError")),
}


def line_number(path, text):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return number
    raise AssertionError("%s not in %s" % (text, path))


@pytest.mark.parametrize("misuse", sorted(PLANTED))
def test_a_planted_misuse_ends_typed_naming_the_scripts_line(tmp_path, misuse):
    script, written, planted, named, errors = PLANTED[misuse]
    scripts = tmp_path / "scripts"
    shutil.copytree(HERE, str(scripts))
    path = str(scripts / script)
    with open(path) as f:
        text = f.read()
    assert written in text, "%s no longer has the line this test plants into" % script
    with open(path, "w") as f:
        f.write(text.replace(written, planted, 1))
    out = tmp_path / "out"
    out.mkdir()
    command = [sys.executable, "-m", "twinccl.torchrun", "--standalone", "--nproc-per-node", "4",
               "--timeout-s", str(DEADLINE_S), path, str(out)]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=2 * DEADLINE_S,
                          env=ENV, cwd=str(out))
    seconds = time.monotonic() - start
    assert done.returncode == 1, done.stderr[-4000:]
    site = "%s:%d" % (script, line_number(path, named))
    typed = [line for line in done.stderr.splitlines()
             if any("twinccl._twinccl.%s:" % e in line for e in errors) and site in line]
    assert typed, "no %s naming %s in:\n%s" % (" or ".join(errors), site, done.stderr[-4000:])
    assert "%s FAILED" % script in done.stderr  # torchrun's failure summary
    assert seconds < DEADLINE_S / 2, "ended after %.1f s: only the deadline stopped it" % seconds
