"""A launched script's leading library imports run once before its ranks start
(_library_preimport.py), so that what the import sets in the process's logging and warnings state
is every rank's, as in every torchrun worker: Lightning's import gives its logger a handler and
level INFO; imported by the first rank to reach the line, only that rank printed its INFO lines."""
import json
import textwrap

from launcher_support import ENV, launch
from twinccl._library_preimport import leading_imports

# A library as Lightning's and transformers' are at import: its logger configured, a warnings
# setting made, and what the environment said then kept.
LIBRARY = textwrap.dedent('''
    import logging, os, sys, warnings
    _logger = logging.getLogger(__name__)
    _logger.setLevel(logging.INFO)
    _logger.addHandler(logging.StreamHandler(sys.stderr))
    _logger.propagate = False
    warnings.simplefilter("ignore", category=ImportWarning)
    IMPORTED_WITH = os.environ.get("FAKELIB_MODE")
    IMPORTED_ON = os.environ.get("RANK")


    def hello(rank):
        _logger.info("%s: hello from rank %d", __name__, rank)
        warnings.warn("fakelib import warning", ImportWarning)
''')

SCRIPT = textwrap.dedent('''
    """A training script."""
    from __future__ import annotations
    import json, os, sys
    import fakelib
    os.environ["FAKELIB_MODE"] = "set by the script"  # ends the leading imports
    import fakelate  # the script's order kept: imported by the ranks, after that line
    import torch.distributed as dist
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    fakelib.hello(rank)
    fakelate.hello(rank)
    with open(os.path.join(sys.argv[1], "rank%d.json" % rank), "w") as f:
        json.dump({"fakelib": fakelib.IMPORTED_WITH, "fakelate": fakelate.IMPORTED_WITH,
                   "imported_on": fakelib.IMPORTED_ON, "rank": os.environ["RANK"]}, f)
''')


def test_a_librarys_import_time_logging_is_every_ranks(tmp_path):
    libraries = tmp_path / "site-packages"  # where a library is found (_rank_modules.py)
    libraries.mkdir()
    (libraries / "fakelib.py").write_text(LIBRARY)
    (libraries / "fakelate.py").write_text(LIBRARY)
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    done = launch(script, nproc=2, cwd=tmp_path, args=[tmp_path],
                  PYTHONPATH=str(libraries) + ":" + ENV["PYTHONPATH"])
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in range(2):
        assert done.stderr.count("fakelib: hello from rank %d\n" % rank) == 1, done.stderr[-3000:]
        seen = json.loads((tmp_path / ("rank%d.json" % rank)).read_text())
        # imported with rank 0's environment, as by rank 0, the first to run; each rank's own
        assert seen == {"fakelib": None, "fakelate": "set by the script", "imported_on": "0",
                        "rank": str(rank)}
    assert "fakelib import warning" not in done.stderr  # its filter is every rank's too
    # imported by the ranks (the first to reach the line): its handler that rank's alone
    assert done.stderr.count("fakelate: hello from rank") == 1, done.stderr[-3000:]


def test_the_leading_imports_are_read_up_to_the_first_other_statement():
    source = textwrap.dedent('''
        """doc"""
        from __future__ import annotations
        import a.b, c
        from d.e import f
        from . import local
        import g as h
        x = 1
        import late
    ''')
    assert leading_imports(source) == ["a.b", "c", "d.e", "g"]
    assert leading_imports("import a\nif True:\n    import b\nimport c\n") == ["a"]
    assert leading_imports("def (") == []  # the rank's compile says what is wrong
