"""An unmodified MindSpore script under the launcher (`python -m twinccl.torchrun`), as msrun
would run it on 2 nodes x 2 ranks: MindSpore's modules answer with TwinCCL's once the script
imports mindspore, get_local_rank follows the nodes, GlobalComm.INITED is set by init(), a
repeated create_group/new_group is a no-op on every rank (members and not), and the edge cases
MindSpore documents (all_to_all_single receiving nothing: shape (); broadcast_object_list([]):
refused). One launch (MindSpore's import: ~4 s). The same in process, each check on its own;
groups made by their members only (MindSpore's own example); ops.communication's
out-of-place switch; misuse inside an object collective naming the script's line. Also: packages
of a site directory that a .pth file adds (a shared venv's) are libraries, one per process, not
the user's per-rank modules (runs without MindSpore)."""
import os
import subprocess
import sys
import textwrap

import pytest

import twinccl
from launcher_support import ENV


SCRIPT = textwrap.dedent('''
    import numpy as np
    from mindspore import Tensor
    from mindspore.communication import (GlobalComm, init, get_rank, get_group_size,
                                         get_local_rank, get_local_rank_size, create_group,
                                         destroy_group)
    from mindspore.communication.comm_func import all_reduce, all_to_all_single_with_output_shape
    import mindspore.mint.distributed as dist

    assert not GlobalComm.INITED
    init()
    assert GlobalComm.INITED
    r = get_rank()
    out, _ = all_reduce(Tensor(np.full(2, r + 1, np.float32)))
    create_group("odd", [1, 3])
    create_group("odd", [1, 3])  # MindSpore: "group has existed", no error
    odd = (get_rank("odd"), get_local_rank("odd"), get_local_rank_size("odd")) if r % 2 else ()
    g = dist.new_group([0, 1])
    assert dist.new_group([0, 1]) == g and (g == "") == (r > 1)
    dist.destroy_process_group(g)  # "" on non-members: accepted
    destroy_group("odd")
    create_group("odd", [1, 3])  # made again after destroy_group, on every rank
    nothing, _ = all_to_all_single_with_output_shape((0,), Tensor(np.zeros(0, np.float32)))
    try:
        dist.broadcast_object_list([], src=0)
        refused = ""
    except Exception as e:
        refused = type(e).__name__
    import os
    assert (os.environ["RANK_ID"], os.environ["DEVICE_ID"]) == (str(r), str(r % 2))  # msrun's
    print("RESULT", r, get_local_rank(), get_local_rank_size(), get_group_size(),
          out.asnumpy().tolist(), odd, nothing.shape, refused, flush=True)
''')


def test_mindspore_script_under_the_launcher_on_two_nodes(tmp_path):
    pytest.importorskip("mindspore")
    (tmp_path / "train.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "twinccl.torchrun", "--nnodes", "2",
                           "--nproc-per-node", "2", "--timeout-s", "60", "train.py"],
                          capture_output=True, text=True, timeout=180, env=ENV,
                          cwd=str(tmp_path))
    lines = sorted(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    assert done.returncode == 0, done.stderr[-3000:]
    # local ranks per node: ranks 0,1 on node 0 and 2,3 on node 1; group "odd" = {1, 3}: one
    # member per node
    assert lines == [
        "RESULT 0 0 2 4 [10.0, 10.0] () () InvalidArgument",
        "RESULT 1 1 2 4 [10.0, 10.0] (0, 0, 1) () InvalidArgument",
        "RESULT 2 0 2 4 [10.0, 10.0] () () InvalidArgument",
        "RESULT 3 1 2 4 [10.0, 10.0] (1, 0, 1) () InvalidArgument"], done.stdout[-3000:]


def test_packages_of_a_pth_site_directory_are_libraries(tmp_path):
    """A site-packages directory on sys.path (added by a .pth file: a venv over a shared one)
    holds libraries: before, each rank imported its own MindSpore there, whose C++ extension then
    failed ("Failed to attach docstring to Tensor.arcsin")."""
    from twinccl import _rank_modules
    site_dir = tmp_path / "other-venv" / "site-packages"
    (site_dir / "somelib").mkdir(parents=True)
    (site_dir / "somelib" / "__init__.py").write_text("")
    mine = tmp_path / "mymod.py"
    mine.write_text("")
    sys.path[:0] = [str(site_dir), str(tmp_path)]
    try:
        import somelib
        import mymod
        classifier = _rank_modules._Classifier()
        assert not classifier.is_user("somelib", somelib)
        assert classifier.is_user("mymod", mymod)
    finally:
        sys.path.remove(str(site_dir))
        sys.path.remove(str(tmp_path))
        sys.modules.pop("somelib", None)
        sys.modules.pop("mymod", None)


def test_group_reuse_inited_and_edge_cases_in_process():
    """The same fixes under twinccl.run(mindspore=True), each checked on its own (before: a
    repeated create_group raised on members, a repeated new_group stopped the run on
    non-members' split, GlobalComm.INITED was MindSpore's process-wide False and mint's
    is_initialized() True before init, get_local_rank_size of a group was its size,
    all_to_all_single_with_output_shape receiving nothing had shape (0,),
    broadcast_object_list([]) passed, TCPStore was MindSpore's own, a real socket store; a
    non-member's call said the rank had no such group; no RANK_ID/DEVICE_ID as msrun sets)."""
    pytest.importorskip("mindspore")
    import numpy as np
    from mindspore import Tensor
    from conftest import run_ranks

    def attempt(fn, report=lambda e: type(e).__name__):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 (each check reports its own failure)
            return report(e)

    import mindspore.mint.distributed
    their_isend, their_irecv = mindspore.mint.distributed.isend, mindspore.mint.distributed.irecv

    def ring_with_their_functions(dist, r):
        """P2POp given MindSpore's own isend/irecv, bound before the run (a module imported
        earlier): before, refused ("op must be isend or irecv")."""
        got = Tensor(np.zeros(1, np.float32))
        handles = dist.batch_isend_irecv([
            dist.P2POp(their_isend, Tensor(np.full(1, r, np.float32)), (r + 1) % 3),
            dist.P2POp(their_irecv, got, (r - 1) % 3)])
        handles[0].wait()
        return got.asnumpy().tolist()

    def rank(r):
        import mindspore.communication as comm
        import mindspore.mint.distributed as dist
        from mindspore.communication import GlobalComm
        from mindspore.communication.comm_func import all_to_all_single_with_output_shape
        got = {"inited before": (GlobalComm.INITED, dist.is_initialized())}
        comm.init()
        got["inited after"] = (GlobalComm.INITED, dist.is_initialized())
        comm.create_group("pair", [0, 1])
        got["create_group again"] = attempt(lambda: comm.create_group("pair", [0, 1]))
        got["create_group other ranks"] = attempt(lambda: comm.create_group("pair", [0, 2]))
        g = dist.new_group([1, 2])
        got["new_group again"] = attempt(lambda: dist.new_group([1, 2]) == g)
        got["destroy non-member"] = attempt(lambda: dist.destroy_process_group(g))
        got["local size of pair"] = attempt(lambda: comm.get_local_rank_size("pair"))
        got["nothing received"] = attempt(lambda: all_to_all_single_with_output_shape(
            (0, 2), Tensor(np.zeros((0, 2), np.float32)))[0].shape)
        got["empty object list"] = attempt(lambda: dist.broadcast_object_list([]))
        got["P2POp with MindSpore's isend"] = attempt(lambda: ring_with_their_functions(dist, r))
        got["non-member's call"] = attempt(lambda: comm.get_rank("pair"), str) if r == 2 else None
        got["msrun's variables"] = [os.environ.get(k) for k in ("RANK_ID", "DEVICE_ID")]
        got["TCPStore"] = attempt(lambda: dist.TCPStore("127.0.0.1", 29511, 3, r == 0))
        return got
    import mindspore.communication
    theirs = mindspore.communication.GlobalComm
    before = theirs.INITED
    got = run_ranks(rank, 3, mindspore=True)
    assert mindspore.communication.GlobalComm is theirs and theirs.INITED is before  # put back
    import twinccl.mindspore
    twinccl.run(lambda r: twinccl.mindspore.init(), world_size=1)  # no patch: theirs untouched
    assert theirs.INITED is before
    for r in range(3):
        assert got[r] == {
            "inited before": (False, False), "inited after": (True, True),
            "create_group again": None,
            "create_group other ranks": "InvalidArgument", "new_group again": True,
            "destroy non-member": None,
            "local size of pair": 2 if r < 2 else "InvalidArgument",
            "nothing received": (), "empty object list": "InvalidArgument",
            "TCPStore": "InvalidArgument", "msrun's variables": [str(r), str(r)],
            "P2POp with MindSpore's isend": [(r - 1) % 3],
            "non-member's call": None if r < 2 else
            "get_rank: rank 2 is not a member of group 'pair' (world ranks [0, 1])"}, (r, got[r])


@pytest.mark.parametrize("make", ["create_group", "new_group"])
def test_group_made_by_its_members_only(make):
    """MindSpore's create_group example calls it on the members only (`if get_rank() in
    rank_ids:`), as HCCL makes a group: it works (before: an error saying to call it on every
    rank, since a group was a split of the world). A member that never calls it is named, at
    once."""
    pytest.importorskip("mindspore")
    import numpy as np
    results = {}

    def rank(r):
        import mindspore as ms
        import mindspore.communication as comm
        import mindspore.mint.distributed as dist
        comm.init()
        got = None
        if comm.get_rank() in [0, 1]:
            group = "0-1"
            if make == "create_group":
                comm.create_group(group, [0, 1])
            else:
                group = dist.new_group([0, 1])
            x = ms.Tensor(np.array([r + 1.0], np.float32))
            dist.all_reduce(x, group=group)
            got = (float(x.asnumpy()[0]), comm.get_rank(group), comm.get_group_size(group))
        dist.barrier()
        results[r] = got
    twinccl.run(rank, world_size=3, mindspore=True)
    assert results == {0: (3.0, 0, 2), 1: (3.0, 1, 2), 2: None}

    def missing(r):
        import mindspore.communication as comm
        comm.init()
        if comm.get_rank() == 0:
            comm.create_group("0-1", [0, 1])
    with pytest.raises(twinccl.AbortedError, match=r"subcommunicator #0 on comm '0-1'.* rank 1"
                       r".* already returned without calling it"):
        twinccl.run(missing, world_size=3, mindspore=True, timeout_s=20)


def test_ops_communication_out_of_place_switch():
    """ops.communication.set_comm_ops_inplace(False) (MindSpore 2.9): all_reduce,
    all_gather_into_tensor, reduce_scatter_tensor, all_to_all, all_to_all_single, recv and irecv
    return new tensors, the others refuse, as MindSpore's; per rank (before: refused)."""
    pytest.importorskip("mindspore")
    import numpy as np
    from mindspore import Tensor
    from conftest import run_ranks

    def t(values):
        return Tensor(np.array(values, np.float32))

    def rank(r):
        import mindspore.ops.communication as oc
        oc.init_process_group()
        x = t([r + 1.0, r + 1.0])
        oc.set_comm_ops_inplace(False)
        got = {"all_reduce": oc.all_reduce(x)[0].asnumpy().tolist(), "input": x.asnumpy().tolist()}
        got["all_gather"] = oc.all_gather_into_tensor(None, x)[0].asnumpy().tolist()
        got["reduce_scatter"] = oc.reduce_scatter_tensor(None, t([1.0, 2.0]))[0].asnumpy().tolist()
        pieces, _ = oc.all_to_all([(1,), (1,)], [t([10.0 * r]), t([10.0 * r + 1])])
        got["all_to_all"] = [p.asnumpy().tolist() for p in pieces]
        got["all_to_all_single"] = \
            oc.all_to_all_single(None, t([r, r + 0.5]))[0].asnumpy().tolist()
        if r == 0:
            oc.send(t([7.0]), dst=1)
            oc.isend(t([8.0]), dst=1).wait()
        else:
            got["recv"] = oc.recv(t([0.0]), src=0).asnumpy().tolist()
            y, handle = oc.irecv(t([0.0]), src=0)
            handle.wait()
            got["irecv"] = y.asnumpy().tolist()
        try:
            oc.broadcast(x, src=0)
        except Exception as e:  # noqa: BLE001
            got["broadcast"] = type(e).__name__
        oc.set_comm_ops_inplace(True, ["all_reduce"])
        got["in place again"] = (oc.all_reduce(x), x.asnumpy().tolist())
        return got
    got = run_ranks(rank, 2, mindspore=True)
    for r in range(2):
        expected = {"all_reduce": [3.0, 3.0], "input": [r + 1.0] * 2,
                    "all_gather": [1.0, 1.0, 2.0, 2.0], "reduce_scatter": [2.0 * (r + 1)],
                    "all_to_all": [[0.0 + r], [10.0 + r]],
                    "all_to_all_single": [0.0 + r / 2, 1.0 + r / 2],
                    "broadcast": "InvalidArgument", "in place again": (None, [3.0, 3.0])}
        if r == 1:
            expected.update(recv=[7.0], irecv=[8.0])
        assert got[r] == expected, (r, got[r])


MISUSES = {  # case: (the misused call, given dist, cf, T, r; the error; what it must say)
    "object collective": (
        lambda dist, cf, T, r: dist.broadcast_object_list([1, 2] if r == 0 else [None], src=0),
        twinccl.MismatchError, "ranks disagree on count"),
    "all_to_all_v_c": (
        lambda dist, cf, T, r: cf.all_to_all_v_c(T([0] * 2), T([1] * 3), [1] * 9),
        twinccl.InvalidArgument, "all_to_all_v_c's output on rank"),
    "uneven gather": (
        lambda dist, cf, T, r: dist.all_gather_into_tensor_uneven(T([0] * 4), T([1]), [1, 2, 3]),
        twinccl.InvalidArgument, "all_gather_into_tensor_uneven's output on rank"),
}


@pytest.mark.parametrize("case", sorted(MISUSES))
def test_misuse_names_the_call_the_rank_and_the_scripts_line(case):
    """An object collective calls others inside TwinCCL, the uneven calls check their counts:
    the error names the call, the rank and the user's line (before: twinccl's
    _ms_mint_groups.py:117; "all_to_all's output has 2 elements", no rank, no line)."""
    pytest.importorskip("mindspore")
    import numpy as np
    from mindspore import Tensor
    call, error, says = MISUSES[case]

    def T(values):
        return Tensor(np.asarray(values, np.float32))

    def rank(r):
        import mindspore.mint.distributed as dist
        from mindspore.communication import comm_func as cf
        dist.init_process_group()
        call(dist, cf, T, r)
    with pytest.raises(error) as e:
        twinccl.run(rank, world_size=3, mindspore=True, timeout_s=20)
    message = str(e.value)
    assert says in message and "_ms_" not in message, message
    assert "test_mindspore_launcher.py:%d" % call.__code__.co_firstlineno in message, message
