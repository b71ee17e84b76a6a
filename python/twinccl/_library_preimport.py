"""The libraries a launched script imports first, imported once before its ranks start
(twinccl.torchrun, twinccl.launch), so that what a library's import sets in a process's state is
every rank's, as every torchrun worker runs that import: Lightning's import gives its logger a
handler and level INFO and sets `warnings.formatwarning`; transformers' gives its library logger
its handler and "[transformers]" format. Imported by the first rank to reach the line, those went
into that rank's per-rank state only (the logging, warnings parts of _rank_state.RankStates): the
other ranks printed no Lightning INFO line ("Initializing distributed: GLOBAL_RANK: 1", "[rank: 1]
Seed set to 0") and formatted warnings in another way. The module object is one per process
either way (a library is shared by the ranks, _rank_modules.py).

How it works: the script's source is parsed (ast) and its leading run of import statements read
(a docstring and `from __future__` skipped; the first other statement ends it: a script that sets
os.environ before an import keeps that order, and an import inside `try`, a function or an `if`
is the rank's own). Of the modules named (`import a.b`, `from a.b import c`: "a.b"), those whose
top-level package is a library (_rank_modules._Classifier; not MindSpore, which TwinCCL adjusts as
a rank imports it) are imported in the caller's state, before RankStates copies it (the launcher
puts rank 0's variables in the environment meanwhile). One that
fails to import is left for the ranks, whose own import raises it as a torchrun worker's would."""
import ast
import importlib

from ._rank_modules import _Classifier

_NOT_PREIMPORTED = ("mindspore",)


def leading_imports(source, filename="<script>"):
    """The modules of the script's leading import statements, in order."""
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # (the rank's compile reports it)
    names = []
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str):
            continue  # the docstring
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module != "__future__":
                names.append(node.module)
        else:
            break
    return names


def preimport_libraries(source, filename="<script>"):
    """Imports the libraries among the script's leading imports; returns their names."""
    done = []
    classifier = _Classifier()
    for name in leading_imports(source, filename):
        top = name.split(".")[0]
        if top in _NOT_PREIMPORTED or not classifier.is_library(top):
            continue
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001  (the rank's own import raises it, as a worker's)
            continue
        done.append(name)
    return done
