"""torch.distributed.checkpoint's async_save on emulated ranks: the save runs on the rank's own
thread before async_save returns, and the returned Future is done.

Why: torch's async_save hands the save to a thread it starts (AsyncCheckpointerType.THREAD, the
default) or to a daemon process (PROCESS); the save plans the checkpoint with collectives
(gather_object of every rank's plan, a barrier). A rank's emulated communicators serve the rank's
own thread only, and a rank keeps its turn to run Python while it waits on the Future, so the
thread's collectives were refused (InvalidArgument: "used on a thread that is not one of
twinccl.run's rank threads"). The process would init its own Gloo group over a TCPStore, which
has no other ranks here. Saved on the rank thread, the checkpoint's files and their contents are
torchrun's; only the overlap of the upload with the next steps is gone (emulated compute takes
no simulated time anyway). Staging (the copy to CPU memory) is unchanged.

How: while a torch_distributed run lasts, state_dict_saver's two executor classes are one that
calls torch's own save_wrapper (state_dict_saver's save) at once (_import_hook: patched when the
module is imported, or at once if it is)."""
import contextlib
import sys
from concurrent.futures import Future

from . import _import_hook
from ._attribute_patch import put_back, replace

SAVER = "torch.distributed.checkpoint.state_dict_saver"
_EXECUTORS = ("_ThreadBasedAsyncCheckpointExecutor", "_ProcessBasedAsyncCheckpointExecutor")


def _on_rank_thread_class():
    from torch.distributed.checkpoint._async_executor import _AsyncCheckpointExecutor
    from torch.distributed.checkpoint._async_thread_executor import save_wrapper

    class OnRankThreadAsyncCheckpointExecutor(_AsyncCheckpointExecutor):
        """async_save's executor on an emulated rank: saves on the calling rank's thread."""
        def execute_save(self, *args, **kwargs):
            done = Future()
            try:
                done.set_result(save_wrapper(*args, **kwargs))
            except Exception as e:  # as torch's thread: the error is the Future's
                done.set_exception(e)
            return done
    return OnRankThreadAsyncCheckpointExecutor


@contextlib.contextmanager
def saves_on_rank_threads():
    saved = []

    def patch():
        saver = sys.modules[SAVER]
        try:
            ours = _on_rank_thread_class()
        except ImportError:  # a torch without async_save's executors
            return
        replace([(saver, name, ours) for name in _EXECUTORS if hasattr(saver, name)], saved)
    try:
        with _import_hook.during(SAVER, patch):
            yield
    finally:
        put_back(saved)
