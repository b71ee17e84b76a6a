"""The exception twinccl.run raises in a rank thread still running Python code after the run
stopped (py_interrupt.h, RunInterrupts::stop_ranks_in_python): PyThreadState_SetAsyncExc raises a
class without arguments, so the class carries the message."""


def stopped_error(aborted_type, message):
    """A subclass of twinccl.AbortedError (`aborted_type`) whose instances made without arguments
    say `message`."""
    class AbortedError(aborted_type):
        _twinccl_stopped = True  # raised again in the rank's code when it lands in a hand-over

        def __init__(self, *args):
            super().__init__(*(args or (message,)))
    AbortedError.__module__ = aborted_type.__module__
    AbortedError.__qualname__ = aborted_type.__qualname__
    return AbortedError
