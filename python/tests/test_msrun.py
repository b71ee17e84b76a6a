"""python3 -m twinccl.msrun: MindSpore's msrun command line on emulated ranks. msrun's worker
output (each rank's stdout and stderr in LOG_DIR/worker_RANK.log, on the console too with
--join True for the ranks in --tail_worker_log) and its world (--worker_num ranks,
--local_worker_num per node); what cannot be emulated refused with the reason. Before, an msrun
line had to be rewritten as twinccl.torchrun's, and the workers' logs were not written."""
import subprocess
import sys
import textwrap

import pytest

from launcher_support import ENV
from twinccl import msrun

SCRIPT = textwrap.dedent('''
    import os, sys
    import numpy as np
    from mindspore import Tensor
    from mindspore.communication import init, get_rank, get_local_rank, get_group_size
    from mindspore.communication.comm_func import all_reduce
    init()
    r = get_rank()
    out, _ = all_reduce(Tensor(np.full(2, r + 1, np.float32)))
    print("RESULT rank %d local %d of %d %s %s"
          % (r, get_local_rank(), get_group_size(), out.asnumpy().tolist(), sys.argv[1:]))
    print("ERR rank %d" % r, file=sys.stderr)
    print("OMP_NUM_THREADS %s" % os.environ.get("OMP_NUM_THREADS"))
''')


def test_msruns_worker_logs_and_world(tmp_path):
    pytest.importorskip("mindspore")
    (tmp_path / "train.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "twinccl.msrun", "--worker_num=4",
                           "--local_worker_num=2", "--master_port=8118", "--log_dir=logs",
                           "--join=True", "--tail_worker_log=0,3",
                           "--worker_log_name=w_{hostname}", "train.py", "--lr", "1"],
                          capture_output=True, text=True, timeout=180, env=ENV,
                          cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    logs = sorted((tmp_path / "logs").iterdir())
    assert len(logs) == 4 and all(p.name.startswith("w_") for p in logs), logs
    for rank in range(4):
        [log] = [p for p in logs if p.name.endswith("_%d.log" % rank)]
        text = log.read_text()
        assert "RESULT rank %d local %d of 4 [10.0, 10.0] ['--lr', '1']" % (rank, rank % 2) \
            in text, text
        assert "ERR rank %d" % rank in text  # stderr into the same file, as msrun's
        assert text.count("RESULT") == 1 and text.count("ERR") == 1, text  # its own lines only
        # msrun sets none (torchrun's default, 1, is torchrun's)
        assert "OMP_NUM_THREADS %s" % ENV.get("OMP_NUM_THREADS") in text, text
        assert ("RESULT rank %d " % rank in done.stdout) == (rank in (0, 3)), done.stdout


@pytest.mark.parametrize("args, message", [
    (["--worker_num=6", "--local_worker_num=4"], "is not a whole number of nodes"),
    (["--node_rank=1"], "every node's ranks run in this process"),
    (["--sim_level=1"], "nothing to emulate"),
    (["--join=True", "--tail_worker_log=a"], "--tail_worker_log=a"),
    (["--rank-state=shared"], "needs --rank-state isolated"),
])
def test_what_cannot_be_emulated_is_refused_with_the_reason(capsys, args, message):
    with pytest.raises(SystemExit) as e:
        msrun.main(args + ["train.py"])
    assert e.value.code == 2
    assert message in capsys.readouterr().err
